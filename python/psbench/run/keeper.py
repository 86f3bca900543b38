"""The keeper: a small process that outlives psbench, to stop what psbench started when
psbench itself cannot (SIGKILL, a crash).

The kernel's parent-death signal ends the node processes when psbench dies, but a
service that drops its privileges (as some brokers do) or daemonises loses it, and nobody would
remove what a killed run leaves in /dev/shm and /tmp. So the first service or run of a
psbench process starts one keeper in a session of its own, its stdin a pipe whose only
write end psbench holds. However psbench ends, the kernel closes that end and the keeper
reads end-of-file; what psbench had not released by then, the keeper stops and removes.

Lines psbench writes (one per event):
  service PID [LEFTOVER ...]  a service's process (its own session: group = PID) and the
                              /dev/shm names (or absolute paths) to remove once it is
                              stopped
  release PID                 psbench stopped that service itself
  run RUN_ID                  a run in flight: its nodes and its files named after it
  done RUN_ID                 psbench cleaned up after that run itself
  netns NAME                  a network namespace of emulated hosts (written before it
                              is made)
  netns-done NAME             psbench deleted it itself
  path PATH                   a folder of psbench's own (credentials) to remove
  path-done PATH              psbench removed it itself
At end-of-file: each service gets SIGTERM, SIGKILL after STOP_S; each run's node
processes STOP_S to end (the parent-death signal reached them), then SIGKILL; then every
file named after the run goes (leftovers.remove_leftovers); then each namespace goes,
with what still runs inside it and its links, qdiscs and firewall rules; then each
folder. A pidfd per
service means a recycled pid is never signalled.
"""

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

STOP_S = 3.0


# psbench's side ---------------------------------------------------------------------


class Keeper:
    """psbench's handle on its keeper, started on first use; each call writes one line.
    A keeper that is gone (it never should be) costs a line, never a run."""

    def __init__(self):
        self._proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Starts the keeper now (a run's first use would): the CLI starts it while it
        imports, so its interpreter's start does not compete with the run's nodes."""
        if self._proc is None:
            self._spawn()

    def _send(self, *words) -> None:
        if self._proc is None:
            self._spawn()
        try:
            self._proc.stdin.write((" ".join(map(str, words)) + "\n").encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def _spawn(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])  # python/, above psbench/
        env = dict(
            os.environ, PYTHONPATH=package_root + os.pathsep + os.environ.get("PYTHONPATH", "")
        )
        # Its own session: a Ctrl-C at the terminal reaches psbench, not the keeper.
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "psbench.run.keeper"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            close_fds=True,
        )

    def watch_service(self, pid: int, leftovers=()) -> None:
        self._send("service", pid, *leftovers)

    def release_service(self, pid: int) -> None:
        self._send("release", pid)

    def run_started(self, run_id: str) -> None:
        self._send("run", run_id)

    def run_done(self, run_id: str) -> None:
        self._send("done", run_id)

    def watch_netns(self, name: str) -> None:
        self._send("netns", name)

    def release_netns(self, name: str) -> None:
        self._send("netns-done", name)

    def watch_path(self, path: str) -> None:
        self._send("path", path)

    def release_path(self, path: str) -> None:
        self._send("path-done", path)


_instance = Keeper()


def instance() -> Keeper:
    return _instance


# The keeper's side ------------------------------------------------------------------


def _alive(pidfd: int) -> bool:
    return not select.select([pidfd], [], [], 0)[0]  # readable once the process ended


def _stop_service(pidfd: int, pid: int, leftovers: list[str]) -> None:
    if _alive(pidfd):
        for sig, wait in ((signal.SIGTERM, STOP_S), (signal.SIGKILL, STOP_S)):
            try:
                os.killpg(pid, sig)
            except (ProcessLookupError, PermissionError):
                signal.pidfd_send_signal(pidfd, sig)
            if select.select([pidfd], [], [], wait)[0]:
                break
    from psbench.run.leftovers import remove_service_leftovers  # here: only when needed

    remove_service_leftovers(leftovers)


def _nodes_of(run_id: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--run-id" in argv and run_id.encode() in argv:
            found.append(int(cmdline.parent.name))
    return found


def _end_run(run_id: str) -> None:
    end = time.monotonic() + STOP_S
    while _nodes_of(run_id) and time.monotonic() < end:
        time.sleep(0.05)
    for pid in _nodes_of(run_id):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    from psbench.run.leftovers import remove_leftovers  # here: only when there is work to do

    remove_leftovers(run_id)


def keep(lines) -> None:
    """Reads the lines to their end, then stops and removes what was not released."""
    services: dict[int, tuple[int, list[str]]] = {}
    runs: set[str] = set()
    namespaces: list[str] = []
    folders: list[str] = []
    for line in lines:
        word, *rest = line.decode(errors="replace").split() or [""]
        try:
            if word == "service":
                services[int(rest[0])] = (os.pidfd_open(int(rest[0])), rest[1:])
            elif word == "release":
                os.close(services.pop(int(rest[0]))[0])
            elif word == "run":
                runs.add(rest[0])
            elif word == "done":
                runs.discard(rest[0])
            elif word == "netns":
                namespaces.append(rest[0])
            elif word == "netns-done":
                namespaces.remove(rest[0])
            elif word == "path":
                folders.append(" ".join(rest))  # a temporary folder may hold a space
            elif word == "path-done":
                folders.remove(" ".join(rest))
        except (IndexError, ValueError, KeyError, OSError):
            continue  # a service already gone, a line cut short: nothing to keep
    for run_id in runs:
        _end_run(run_id)
    for pid, (pidfd, leftovers) in services.items():
        _stop_service(pidfd, pid, leftovers)
    if namespaces:
        from psbench.hosts import netns  # here: only when there is work to do

        for name in reversed(namespaces):  # the hosts, then the switch
            netns.delete(name)
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only end-of-file ends the keeper
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    keep(sys.stdin.buffer)
