"""Signal handling shared by everything that starts processes: keeping Ctrl-C from
interrupting a cleanup, and making children end when psbench itself is killed."""

import ctypes
import signal
from contextlib import contextmanager

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent() -> None:
    """For subprocess preexec_fn: the child gets SIGTERM when psbench dies, even by
    kill -9, so a run in flight or a service never outlives the orchestrator."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


@contextmanager
def signal_handlers(handler):
    """SIGINT and SIGTERM go to handler inside the block (main thread only)."""
    try:
        old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: signals are not ours to manage
        yield
        return
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def signals_deferred():
    """Keeps a second Ctrl-C (or SIGTERM) from interrupting the cleanup."""
    return signal_handlers(signal.SIG_IGN)


@contextmanager
def signals_held():
    """Delays Ctrl-C/SIGTERM until the block is done, so that a process is never
    forked without us holding its Popen (and thus never missed by the cleanup)."""
    pending = []
    with signal_handlers(lambda *_: pending.append(1)):
        yield
    if pending:
        raise KeyboardInterrupt
