"""The `ip` and `tc` commands psbench runs on its own network namespaces, as argument
lists (never a shell string). Every command names the namespace it acts in, so nothing
is created in, or changed of, the machine's own namespace."""

import ctypes
import os
import signal
import subprocess
import threading

from psbench.base import programs
from psbench.base.errors import UserError

COMMAND_TIMEOUT_S = 30.0


def run(argv: list[str]) -> str:
    """Runs one command; its stdout. A failure is a UserError with the command and what
    it printed (a missing capability says so here)."""
    try:
        out = programs.output(argv, COMMAND_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"{' '.join(argv)}: {exc}", 1) from None
    if out.returncode != 0:
        raise UserError(f"{' '.join(argv)}: {out.stderr.strip() or f'exit {out.returncode}'}", 1)
    return out.stdout


def add(name: str) -> None:
    run(["ip", "netns", "add", name])


def delete(name: str) -> None:
    """Kills what still runs inside, then deletes it (with its links, qdiscs and
    firewall rules). A namespace already gone is not an error."""
    for pid in pids(name):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    subprocess.run(
        ["ip", "netns", "delete", name],
        capture_output=True,
        timeout=COMMAND_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def pids(name: str) -> list[int]:
    out = subprocess.run(
        ["ip", "netns", "pids", name], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
    )
    return [int(p) for p in out.stdout.split()] if out.returncode == 0 else []


def existing() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30)
    return {line.split()[0] for line in out.stdout.splitlines() if line.strip()}


def ip(namespace: str, *args: str) -> str:
    return run(["ip", "-n", namespace, *args])


def tc(namespace: str, *args: str) -> str:
    return run(["tc", "-n", namespace, *args])


def exec_argv(namespace: str, argv: list[str]) -> list[str]:
    """argv run inside the namespace."""
    return ["ip", "netns", "exec", namespace, *argv]


CLONE_NEWNET = 0x40000000


def call_inside(name: str, fn):
    """fn()'s result, run on a thread of this process that has entered namespace name
    (the sockets fn makes live there; the rest of the process stays where it is)."""
    outcome = {}

    def enter_and_call():
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/run/netns/{name}", os.O_RDONLY | os.O_CLOEXEC)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns into {name}")
            finally:
                os.close(fd)
            outcome["value"] = fn()
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=enter_and_call, name=f"netns-{name}")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
