"""The daemons and brokers drivers need (their capabilities' `services`), started by
psbench for the runs that need them, reused across runs, and stopped afterwards.

A service already running on the host (started by someone else) is used as it is and
left alone. Each known service has a definition here: how to start it (an argv, never a
shell string), how to tell it is ready, and what it must not leave behind.
"""

import os
import signal
import getpass
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from psbench.drivers import running_programs
from psbench.errors import UserError
from psbench.signals import die_with_parent, signals_deferred

READY_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 20.0


@dataclass
class ServiceDefinition:
    name: str
    argv: list[str]
    ready_line: str              # printed on stdout once clients may connect
    leftovers: list[str]         # /dev/shm names it must remove when it stops


# iox-roudi is iceoryx's shared-memory daemon (Cyclone's shm transport); it has no
# network port, only shared memory, and removes it on SIGTERM.
KNOWN = {
    "iox-roudi": ServiceDefinition(
        name="iox-roudi", argv=["iox-roudi"], ready_line="RouDi is ready for clients",
        leftovers=["iceoryx_mgmt", getpass.getuser()]),
}


def needed(describe: dict, transport: str | None) -> list[str]:
    """The services a run of this driver on this transport needs (see driver.h:
    "EXE" for every run, "TRANSPORT:EXE" for runs on that transport)."""
    caps = describe.get("capabilities", {})
    transports = caps.get("transports") or []
    chosen = transport if transport not in (None, "default") else (transports or [None])[0]
    names = []
    for entry in caps.get("services") or []:
        only, _, name = entry.rpartition(":")
        if not only or only == chosen:
            names.append(name)
    return names


@dataclass
class RunningService:
    definition: ServiceDefinition
    proc: subprocess.Popen | None   # None: someone else's, left alone
    log: Path | None = None         # its stdout and stderr

    def to_json(self) -> dict:
        return {"name": self.definition.name, "started_by_psbench": self.proc is not None,
                "pid": self.proc.pid if self.proc else None,
                "log": str(self.log) if self.log else None}


@dataclass
class ServicePool:
    """Use as a context manager around one run or a whole sweep."""
    services: dict[str, RunningService] = field(default_factory=dict)

    def __enter__(self) -> "ServicePool":
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()

    def ensure(self, describe: dict, transport: str | None, log_dir: Path) -> list[dict]:
        """Starts what the run needs and is not running yet (its log in log_dir, the
        directory of the first run that needed it); returns what the run uses."""
        used = []
        for name in needed(describe, transport):
            if name not in self.services:
                self.services[name] = self._start(name, log_dir)
            used.append(self.services[name].to_json())
        return used

    def _start(self, name: str, log_dir: Path) -> RunningService:
        definition = KNOWN.get(name)
        if definition is None:
            raise UserError(f"the driver needs service {name!r}, which psbench does not know "
                            f"how to start; start it yourself, then run again")
        if name[:15] in running_programs():
            return RunningService(definition, proc=None)
        # Output goes to a file, never an unread pipe that could fill and stall it.
        log = log_dir / f"service-{name}.log"
        try:
            with log.open("w") as out:
                proc = subprocess.Popen(definition.argv, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=die_with_parent)
        except OSError as exc:
            raise UserError(f"cannot start {name}: {exc.strerror} (make setup installs it)")
        service = RunningService(definition, proc=proc, log=log)
        try:
            _wait_ready(service)
        except BaseException:
            _stop(service)
            raise
        return service

    def stop_all(self) -> None:
        with signals_deferred():  # a second Ctrl-C must not leave a service running
            for service in reversed(list(self.services.values())):
                _stop(service)
            self.services.clear()


def _wait_ready(service: RunningService) -> None:
    definition = service.definition
    end = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < end:
        text = service.log.read_text(errors="replace")
        if definition.ready_line in text:
            return
        if service.proc.poll() is not None:
            break
        time.sleep(0.05)
    tail = " | ".join(service.log.read_text(errors="replace").strip().splitlines()[-5:])
    ended = service.proc.poll()
    state = f"it ended with exit code {ended}" if ended is not None else "still not ready"
    raise UserError(f"{definition.name} did not become ready within {READY_TIMEOUT_S:g} s "
                    f"({state}): {tail or 'no output'}; its log: {service.log}")


def _stop(service: RunningService) -> None:
    """SIGTERM (the service cleans up), SIGKILL if it will not end, then remove what it
    was supposed to remove."""
    proc = service.proc
    if proc is None:
        return
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass
    for name in service.definition.leftovers:
        Path("/dev/shm", name).unlink(missing_ok=True)
