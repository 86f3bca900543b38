"""The `ip` and `tc` commands psbench runs on its own network namespaces, as argument
lists (never a shell string). Every command names the namespace it acts in, so nothing
is created in, or changed of, the machine's own namespace."""

import os
import signal
import subprocess

from psbench.base.errors import UserError

COMMAND_TIMEOUT_S = 30.0


def run(argv: list[str]) -> str:
    """Runs one command; its stdout. A failure is a UserError with the command and what
    it printed (a missing capability says so here)."""
    try:
        out = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
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
