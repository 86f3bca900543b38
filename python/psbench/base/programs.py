"""Short external programs whose output psbench reads (ip, openssl, a driver's
--describe, a service's version): one way to run them, so that none of them can wait
on psbench's own stdin or print into its output; and one way to end a helper psbench
started with pipes."""

import subprocess


def output(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Runs argv to its end with no stdin, its stdout and stderr kept as text. Raises
    as subprocess.run does: OSError (e.g. not installed), TimeoutExpired past timeout."""
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def finish(proc: subprocess.Popen, timeout: float) -> None:
    """Waits up to timeout for proc to end, reading what it still prints (a full pipe
    cannot hold it up), then kills it; its pipes are closed either way."""
    try:
        proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
