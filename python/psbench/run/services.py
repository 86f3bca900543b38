"""The daemons and brokers drivers need (their manifests' `services`), started by
psbench for the runs that need them, reused across runs, and stopped afterwards.

What each one is and how it is configured: the driver's manifest.toml, read by
manifests.py and started as service_definitions.py says. A broker gets a generated
configuration bound to 127.0.0.1 (on a run across emulated hosts: inside its host, at
that host's address) and a free port, and the node is told its address (driver option
`broker`); a run that gives its own `broker` uses that one and psbench
starts none. A service psbench started that dies during a run fails that run with the
tail of its log, and the next run gets a fresh one. A per-host daemon already running
(started by someone else) is used as it is and left alone, once it serves: one that is
stopping (an earlier run's, cleaning up) is waited for, and then psbench starts its own.
"""

import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from psbench.base import manifests, programs
from psbench.base.errors import UserError
from psbench.base.signals import die_with_parent, signals_deferred
from psbench.hosts import netns
from psbench.run import keeper
from psbench.run.drivers import running_programs
from psbench.run.leftovers import remove_service_leftovers
from psbench.run.security.session import secured, session
from psbench.run.service_definitions import (
    ADDRESS_OPTION,
    LOOPBACK,
    ServiceDefinition,
    definition,
)

READY_TIMEOUT_S = 20.0
PREPARE_TIMEOUT_S = 60.0  # a service's prepare command (e.g. formatting its storage)
STOP_TIMEOUT_S = 20.0
FOREIGN_WAIT_S = 10.0  # for someone else's per-host daemon to serve or to end
LOG_TAIL_LINES = 5
NOT_STARTED_AGAIN = "the run or psbench stopped while it was down: not started again"
DEFAULT_LARGEST_MESSAGE = 4 << 20


def needed(describe: dict, transport: str | None, options: list[str] = ()) -> list[str]:
    """The services a run of this driver on this transport needs, as its manifest
    declares them (a service for one transport only on that one); none that the run's
    own `broker` option replaces. A driver from outside drivers/ (no manifest) needs none."""
    transports = (describe.get("capabilities") or {}).get("transports") or []
    chosen = transport if transport not in (None, "default") else (transports or [None])[0]
    own_broker = any(o.partition("=")[0] == ADDRESS_OPTION for o in options)
    name = describe.get("name", "")
    if name not in manifests.driver_names():
        return []
    return [
        s.name
        for s in manifests.load(name).services
        if s.transport in (None, chosen) and not (own_broker and s.broker)
    ]


def _instance(
    name: str, security: str | None, durable: bool, describe: dict | None = None
) -> tuple[str, bool, bool]:
    """(the key of the instance a run uses, it serves TLS, it keeps data): a broker serves
    one security mode and is durable or not, and runs of another version of it (a driver
    NAME@VERSION of a service, docs/versions.md) have their own, so a run with another
    needs its own."""
    broker = bool(definition(name)) and definition(name).broker
    tls = secured(security) and broker
    kept = durable and broker
    own = version_executable(describe or {}, name)
    version = f"@{(describe or {}).get('build', {}).get('version')}" if own else ""
    key = name + version + (f" ({security})" if tls else "") + (" (durable)" if kept else "")
    return key, tls, kept


def version_executable(describe: dict, name: str) -> str | None:
    """The executable of another version of the service, when the driver is built against
    it (its build.json: service_executables), else None (the manifest's)."""
    return ((describe.get("build") or {}).get("service_executables") or {}).get(name)


def instance_keys(
    describe: dict, transport: str | None, options: list[str], security: str | None, durable: bool
) -> set[str]:
    """The keys of the service instances a run needs (ServicePool.ensure would use)."""
    return {
        _instance(n, security, durable, describe)[0] for n in needed(describe, transport, options)
    }


@dataclass
class RunningService:
    definition: ServiceDefinition
    proc: subprocess.Popen | None  # None: someone else's, left alone
    log: Path | None = None  # its stdout and stderr
    port: int | None = None
    version: str | None = None
    config: list[str] = field(default_factory=list)  # its argv
    listen: str = LOOPBACK  # the address it listens at (with a port)
    host: str | None = None  # the host it runs on; None: this machine
    namespace: str | None = None  # that host's network namespace (an emulated host)
    remote: bool = False  # on a real machine, over ssh: proc is the ssh client
    folder: Path | None = None  # its folder (configuration, data) on this machine
    prepared_in_s: float | None = None  # how long its prepare command took; None: none
    started_in_s: float | None = None  # from its start until it was ready
    security: str | None = None  # the mode it serves (tls); None: plaintext
    durable: bool = False  # configured for durability persistent (its durable_config)
    argv: list[str] = field(default_factory=list)  # as started (in its namespace, if any)
    restarts: int = 0  # how often psbench killed and started it again

    @property
    def address(self) -> str | None:
        return f"{self.listen}:{self.port}" if self.port else None

    def to_json(self) -> dict:
        return {
            "name": self.definition.name,
            "host": self.host,
            "started_by_psbench": self.proc is not None,
            "pid": self.proc.pid if self.proc else None,
            "address": self.address,
            "version": self.version,
            "argv": self.config,
            "log": str(self.log) if self.log else None,
            "prepared_in_s": _rounded(self.prepared_in_s),
            "started_in_s": _rounded(self.started_in_s),
            "security": self.security,
            "durable": self.durable,
            "restarts": self.restarts,
        }

    @property
    def leftovers(self) -> tuple[str, ...]:
        return self.definition.leftovers(self.folder)

    def log_tail(self) -> str:
        if self.log is None or not self.log.exists():
            return "no log"
        lines = self.log.read_text(errors="replace").strip().splitlines()
        return " | ".join(lines[-LOG_TAIL_LINES:]) or "no output"


@dataclass
class ServicePool:
    """Use as a context manager around one run or a whole sweep. largest_message: the
    largest message any of its runs sends (a service's configuration may be sized for it).
    network, host: a run's emulated network and the host its brokers run on (one run's
    pool: the network goes with the run)."""

    largest_message: int = DEFAULT_LARGEST_MESSAGE
    services: dict[str, RunningService] = field(default_factory=dict)
    network: object = None  # psbench.hosts.emulated.EmulatedNetwork or ssh.SshNetwork
    host: str | None = None
    # How services start on real machines (remote_services.start), None: here or on
    # emulated hosts.
    start_remote: object = None
    # A run's own pool (on hosts) within a sweep's: what the sweep's keeps running is
    # alive during the run too.
    outer: "ServicePool | None" = None
    # A broker restart (restart()) runs in a thread of its own: once the pool is stopping
    # it must not start the broker again, and stop_all must see the one it started.
    _stopping: threading.Event = field(default_factory=threading.Event, repr=False)
    _starting: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _down: set = field(default_factory=set, repr=False)  # each restart's cancel event

    def __enter__(self) -> "ServicePool":
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()

    def ensure(
        self,
        describe: dict,
        transport: str | None,
        log_dir: Path,
        options: list[str] = (),
        security: str | None = None,
        durable: bool = False,
    ) -> list[RunningService]:
        """Starts what the run needs and is not running yet (its files in log_dir, the
        directory of the first run that needed it); returns what the run uses. A
        broker serves one security mode, and is durable (durability persistent) or not:
        a run with another gets one of its own."""
        used = []
        for name in needed(describe, transport, options):
            key, tls, kept = _instance(name, security, durable, describe)
            if key not in self.services:
                self.services[key] = self._start(name, log_dir, security if tls else None, kept,
                                                 version_executable(describe, name))  # fmt: skip
            used.append(self.services[key])
        return used

    def stop_unneeded(self, keep: set[str]) -> list[str]:
        """Stops the services no later run needs (keep: the instance keys they need,
        instance_keys), so that an idle broker does not sit beside other middlewares'
        runs; returns the keys stopped."""
        gone = [key for key in self.services if key not in keep]
        with signals_deferred():
            for key in gone:
                stop(self.services.pop(key))
        return gone

    def alive(self) -> list[dict]:
        """The services running now (each run records them: what shared the machine)."""
        return [
            {"key": key, "name": s.definition.name, "pid": s.proc.pid if s.proc else None}
            for key, s in self.services.items()
            if s.proc is None or s.proc.poll() is None
        ] + (self.outer.alive() if self.outer is not None else [])

    def restart(self, service: RunningService, down_s: float, on_event=None, cancel=None) -> None:
        """Kills the service (SIGKILL: a crash, nothing saved on the way out), keeps it
        down for down_s, then starts it again on the same port, configuration and data,
        and waits until it serves. on_event(name): "killed", "started", "ready", each
        as it happens (the caller stamps them). cancel (a threading.Event) set, or the
        pool stopping, during the down time ends it: the broker is not started again (a
        UserError says so), so nothing is started behind an interrupted run's back."""
        if service.proc is None or service.remote:
            raise UserError(f"{service.definition.name}: psbench restarts only a broker it "
                            f"started on this machine or its emulated hosts", 2)  # fmt: skip
        old = service.proc
        try:
            os.killpg(old.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        old.wait()
        _log_line(service.log, f"killed (SIGKILL), down for {down_s:g} s")
        if on_event is not None:
            on_event("killed")
        keeper.instance().release_service(old.pid)
        cancel = cancel or threading.Event()
        self._down.add(cancel)
        try:
            if not self._stopping.is_set():
                cancel.wait(down_s)  # ended early when set: by stop_all or the caller
        finally:
            self._down.discard(cancel)
        with self._starting:
            if self._stopping.is_set() or cancel.is_set():
                self._not_started_again(service)
            _log_line(service.log, f"started again after {down_s:g} s")
            with service.log.open("a") as out:
                # Started from the restart's thread, which ends before the broker should.
                service.proc = subprocess.Popen(
                    service.argv, **_spawned_into(out, service.folder, parent_death=False)
                )
            service.restarts += 1
            keeper.instance().watch_service(service.proc.pid, service.leftovers)
        if on_event is not None:
            on_event("started")
        _wait_ready(service)
        if on_event is not None:
            on_event("ready")

    @staticmethod
    def _not_started_again(service: RunningService):
        _log_line(service.log, NOT_STARTED_AGAIN)
        raise UserError(f"{service.definition.name}: {NOT_STARTED_AGAIN}")

    def casualties(self, used: list[RunningService]) -> list[str]:
        """Services of psbench's that died during the run, each as a message with its
        log's tail; they are forgotten, so the next run starts them again."""
        messages = []
        for service in used:
            if service.proc is None or service.proc.poll() is None:
                continue
            messages.append(
                f"{service.definition.name} (pid {service.proc.pid}) ended "
                f"during the run with exit code {service.proc.returncode}: "
                f"{service.log_tail()}; its log: {service.log}"
            )
            stop(service)
            for key in [k for k, v in self.services.items() if v is service]:
                del self.services[key]
        return messages

    def _start(
        self,
        name: str,
        log_dir: Path,
        security: str | None = None,
        durable: bool = False,
        executable: str | None = None,
    ) -> RunningService:
        declared = definition(name, executable)
        if declared is None:
            raise UserError(
                f"the driver needs service {name!r}, which no driver's manifest "
                f"declares; start it yourself, then run again"
            )
        if self.start_remote is not None:
            return self.start_remote(declared, self.network, self.host, log_dir,
                                     self.largest_message, security)  # fmt: skip
        placed = self.network.hosts[self.host] if self.network is not None else None
        if placed is not None and declared.per_host:
            raise UserError(
                f"{name} is a per-host daemon, which psbench does not start on emulated "
                f"hosts; run this driver on one host (no hosts)",
                2,
            )
        if declared.per_host and _foreign_daemon_serves(declared):
            return RunningService(declared, proc=None)  # the host's own, used as it is
        folder = log_dir / f"service-{name}"
        folder.mkdir(exist_ok=True)
        listen = placed.address if placed is not None else LOOPBACK
        tls = server_tls(declared, security, log_dir, listen)
        launch = declared.launch(folder, self.largest_message, listen, tls, durable)
        argv = self.network.argv(self.host, launch.argv) if placed is not None else launch.argv
        # Output goes to a file, never an unread pipe that could fill and stall it.
        log = log_dir / f"service-{name}.log"
        log.write_text("")
        try:
            prepared_in_s = _prepare(declared, launch.prepare, folder, log)
        except BaseException:
            remove_service_leftovers(declared.leftovers(folder))  # what it made so far
            raise
        started = time.monotonic()
        try:
            with log.open("a") as out:
                proc = subprocess.Popen(argv, **_spawned_into(out, folder))
        except OSError as exc:
            raise UserError(
                f"cannot start {name}: {exc.strerror}{_program_named(declared)} "
                f"(make setup installs it)"
            ) from None
        # The parent-death signal alone cannot stop a service that drops privileges.
        keeper.instance().watch_service(proc.pid, declared.leftovers(folder))
        service = RunningService(
            declared,
            proc=proc,
            log=log,
            port=launch.port,
            version=_version(declared),
            config=launch.argv,
            listen=listen,
            host=self.host if placed is not None else None,
            namespace=placed.namespace if placed is not None else None,
            folder=folder,
            prepared_in_s=prepared_in_s,
            security=security,
            durable=durable,
            argv=argv,
        )
        try:
            _wait_ready(service)
        except BaseException:
            stop(service)
            raise
        service.started_in_s = time.monotonic() - started
        return service

    def stop_all(self) -> None:
        self._stopping.set()
        for cancel in list(self._down):
            cancel.set()
        # A second Ctrl-C must not leave a service running; a restart's thread has either
        # started its broker by now (stopped here) or will not.
        with signals_deferred(), self._starting:
            for service in reversed(list(self.services.values())):
                stop(service)
            self.services.clear()


def server_tls(declared, security: str | None, log_dir: Path, listen: str) -> dict | None:
    """Its TLS files for a secured run (None for a plain one): a certificate for the
    address it listens at, signed by the run's CA, in psbench's own temporary folder
    (a key is never kept beside the figures)."""
    if security is None:
        return None
    if declared.spec.tls_config is None:
        raise UserError(
            f"{declared.name} has no TLS configuration (tls_config in its manifest): it "
            f"cannot serve security {security}",
            2,
        )
    return session().server_files(f"{declared.name}-{log_dir.name}", (listen,))


def broker_ready_timeout(name: str) -> float:
    """How long the service may take to serve (its manifest's, or psbench's); 0 for one
    that is not a broker psbench starts."""
    declared = definition(name)
    if declared is None or not declared.broker:
        return 0.0
    return float(declared.spec.ready_timeout_s or READY_TIMEOUT_S)


def _log_line(log: Path, text: str) -> None:
    """A line of psbench's own in a service's log, between the service's lines."""
    with log.open("a") as out:
        out.write(f"--- psbench: {text} ---\n")


def _rounded(seconds: float | None) -> float | None:
    return round(seconds, 3) if seconds is not None else None


def _program_named(declared: ServiceDefinition) -> str:
    return f" ({declared.program})" if declared.spec.executable else ""


def _spawned_into(out, folder: Path, parent_death: bool = True) -> dict:
    """How a service's processes start (its prepare step too): no input, output into its
    log, a session (process group) of their own, ended with psbench, in its folder.
    parent_death False: from a thread that ends before the service should (the signal
    follows the thread that started it, not the process); the keeper still ends it."""
    return {
        "stdin": subprocess.DEVNULL,
        "stdout": out,
        "stderr": subprocess.STDOUT,
        "start_new_session": True,
        "preexec_fn": die_with_parent if parent_death else None,
        "cwd": folder,
    }


def _prepare(declared: ServiceDefinition, argv, folder: Path, log: Path) -> float | None:
    """Runs the service's prepare command to completion (its output in the log); how
    long it took, None when it has none. One that fails is an error with its log's tail."""
    if argv is None:
        return None
    started = time.monotonic()
    try:
        with log.open("a") as out:
            done = subprocess.run(argv, timeout=PREPARE_TIMEOUT_S, **_spawned_into(out, folder))
    except OSError as exc:
        raise UserError(
            f"cannot prepare {declared.name}: {exc.strerror}{_program_named(declared)} "
            f"(make setup installs it)"
        ) from None
    except subprocess.TimeoutExpired:
        raise UserError(
            f"{declared.name}'s prepare command did not finish within "
            f"{PREPARE_TIMEOUT_S:g} s; its log: {log}"
        ) from None
    if done.returncode != 0:
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-LOG_TAIL_LINES:])
        raise UserError(
            f"{declared.name}'s prepare command ({' '.join(argv)}) failed with exit code "
            f"{done.returncode}: {tail or 'no output'}; its log: {log}"
        )
    return time.monotonic() - started


def broker_placeholder(describe: dict, transport: str | None, options: list[str]) -> list[str]:
    """What a run's node is told of the broker psbench will start for it, before it has
    started it (the address a check may judge): broker=127.0.0.1:1, or nothing."""
    names = needed(describe, transport, options)
    if any(definition(n).broker for n in names if definition(n)):
        return [f"{ADDRESS_OPTION}=127.0.0.1:1"]
    return []


def broker_options(used: list[RunningService]) -> list[str]:
    """The driver options that tell the node where its broker listens."""
    return [f"{ADDRESS_OPTION}={s.address}" for s in used if s.address]


def _version(definition: ServiceDefinition) -> str | None:
    if not definition.version_argv:
        return None
    try:
        out = programs.output(list(definition.version_argv), 10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (out.stdout + out.stderr).strip().splitlines()
    return lines[0].strip() if lines else None


def _accepts(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=0.5):
            return True
    except OSError:
        return False


def _foreign_daemon_serves(declared: ServiceDefinition) -> bool:
    """Whether someone else's per-host daemon runs and serves (its ready_socket takes a
    connection). One that runs without serving is waited for, FOREIGN_WAIT_S at most:
    False once it has ended (psbench starts its own), an error if it neither serves nor
    ends."""
    end = time.monotonic() + FOREIGN_WAIT_S
    while declared.name[:15] in running_programs():
        if declared.spec.ready_socket is None or _unix_socket_serves(declared.spec.ready_socket):
            return True
        if time.monotonic() > end:
            raise UserError(
                f"{declared.name} runs on this host (someone else's) but has not served on "
                f"{declared.spec.ready_socket} for {FOREIGN_WAIT_S:g} s; stop it, or wait "
                f"until it serves, and run again"
            )
        time.sleep(0.1)
    return False


def _unix_socket_serves(path: str) -> bool:
    """A connect names the peer only (a datagram one sends nothing): it succeeds when a
    live process has the socket bound."""
    for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
        with socket.socket(socket.AF_UNIX, kind) as probe:
            try:
                probe.connect(path)
                return True
            except OSError:
                continue
    return False


def _is_ready(service: RunningService) -> bool:
    if service.port is not None and service.namespace is not None:
        return netns.call_inside(service.namespace, lambda: _accepts(service.listen, service.port))
    if service.port is not None:
        return _accepts(service.listen, service.port)
    return service.definition.ready_line in service.log.read_text(errors="replace")


def _wait_ready(service: RunningService) -> None:
    limit = service.definition.spec.ready_timeout_s or READY_TIMEOUT_S
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if _is_ready(service):
            return
        if service.proc.poll() is not None:
            break
        time.sleep(0.05)
    ended = service.proc.poll()
    state = f"it ended with exit code {ended}" if ended is not None else "still not ready"
    raise UserError(
        f"{service.definition.name} did not become ready within "
        f"{limit:g} s ({state}): {service.log_tail()}; its log: "
        f"{service.log}"
    )


def stop(service: RunningService) -> None:
    """SIGTERM (the service cleans up), SIGKILL if it will not end, then remove what it
    was supposed to remove. On a real machine its stdin is closed first: the guard there
    stops it and removes its folder, and the ssh client ends once it has."""
    proc = service.proc
    if proc is None:
        return
    if service.remote and proc.stdin is not None and not proc.stdin.closed:
        proc.stdin.close()
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass
    remove_service_leftovers(service.leftovers)
    keeper.instance().release_service(proc.pid)
