"""Launches the node processes of one run and makes sure none outlives it.

Each process starts in its own session (so a terminal's Ctrl-C reaches only us, and we
can kill its whole process group), with stdin/stdout pipes for the stdio barrier and
stderr in a file in the run directory. Whatever happens (normal end, timeout, Ctrl-C,
an exception here), every process still running is sent SIGTERM, then SIGKILL after a
grace period, and the run's leftovers (in /dev/shm and the temporary directory, named
after the run id) are removed.
"""

import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from psbench.base.signals import die_with_parent, signals_deferred, signals_held
from psbench.hosts import ssh
from psbench.run import keeper, progress_lines
from psbench.run.leftovers import remove_leftovers, run_cleanup_command

KILL_GRACE_S = 2.0
# A node on a real machine told to stop: its SIGTERM, writing its files, an ssh round trip.
REMOTE_STOP_GRACE_S = 10.0
# How long the peers of a failed process may take to end by themselves.
FAIL_GRACE_S = 2.0
# How long the node may take beyond its own --timeout to write its results and exit.
EXIT_GRACE_S = 10.0
# Node exit codes (docs/node.md).
EXIT_OK, EXIT_FAILED, EXIT_REFUSED, EXIT_TIMEOUT = 0, 1, 2, 3
# A sender's measurement window begins or ends (node --window-lines).
WINDOW_PREFIX = "WINDOW "


@dataclass
class NodeProcess:
    name: str  # its output files' stem; several subs: sub-1, sub-2...
    roles: list[str]
    argv: list[str]
    stderr_path: Path
    popen: subprocess.Popen | None = None
    ready: bool = False
    stdout_text: bytearray = field(default_factory=bytearray)
    killed: bool = False  # we had to stop it
    start_after: float | None = None  # a late joiner: started this long after GO

    @property
    def label(self) -> str:
        return self.name

    @property
    def output_names(self) -> list[str]:
        """Stems of the summaries it writes: its name, or each role's (intra)."""
        return [self.name] if len(self.roles) == 1 else list(self.roles)

    @property
    def returncode(self) -> int | None:
        return None if self.popen is None else self.popen.returncode

    def stderr_text(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace").strip()
        except OSError:
            return ""

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "roles": self.roles,
            "argv": self.argv,
            "pid": None if self.popen is None else self.popen.pid,
            "exit_code": self.returncode,
            "killed_by_launcher": self.killed,
            "ready": self.ready,
            "stderr_file": self.stderr_path.name,
        }


@dataclass
class RunResult:
    run_id: str
    run_dir: Path
    status: str  # ok | failed | crashed | timeout | refused | interrupted
    message: str | None
    processes: list[NodeProcess]
    summaries: dict[str, dict]  # output name (role, or sub-1...) -> parsed <name>.json
    summary_errors: dict[str, str]
    leftovers_removed: list[str]
    cleanup: dict | list | None = None  # the driver's cleanup outcome (a list: one per driver)

    @property
    def exit_codes(self) -> dict[str, int | None]:
        return {p.label: p.returncode for p in self.processes}

    def failed_stderr(self) -> dict[str, str]:
        return {
            p.label: p.stderr_text()
            for p in self.processes
            if p.returncode not in (0, None) and not p.killed
        }


class _Deadline(Exception):
    def __init__(self, message: str):
        super().__init__(message)


def _start(proc: NodeProcess, cwd: Path) -> None:
    with open(proc.stderr_path, "wb") as stderr:
        proc.popen = subprocess.Popen(
            proc.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
            preexec_fn=die_with_parent,
        )


def _drain(selector: selectors.BaseSelector, timeout: float) -> list[tuple[NodeProcess, str]]:
    """Reads whatever stdout the processes wrote; returns the complete new lines."""
    lines = []
    for key, _ in selector.select(timeout=max(timeout, 0.0)):
        proc: NodeProcess = key.data
        chunk = os.read(key.fd, 65536)
        if not chunk:  # end of file: it closed stdout or ended
            selector.unregister(key.fileobj)
            continue
        before = proc.stdout_text.count(b"\n")
        proc.stdout_text += chunk
        all_lines = proc.stdout_text.decode(errors="replace").split("\n")[:-1]
        lines.extend((proc, line.strip()) for line in all_lines[before:])
    return lines


def _wait_ready(procs, selector, deadline: float) -> None:
    """Until every process printed READY. Returns early when one ends (the caller
    then finds out why); raises _Deadline when the time is up."""
    while not all(p.ready for p in procs):
        if any(p.popen.poll() is not None and not p.ready for p in procs):
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            waiting = ", ".join(p.label for p in procs if not p.ready)
            raise _Deadline(f"no READY from {waiting} within the start timeout")
        for proc, line in _drain(selector, min(remaining, 0.1)):
            if line == "READY":
                proc.ready = True


def _answer(proc: NodeProcess, line: bytes) -> bool:
    """Whether the line reached its stdin."""
    try:
        proc.popen.stdin.write(line)
        proc.popen.stdin.flush()
        return True
    except (BrokenPipeError, OSError, ValueError):
        return False  # it ended; its exit code tells why


def _send_go(procs) -> None:
    for proc in procs:
        _answer(proc, b"GO\n")


def _start_late(procs, selector, run_dir: Path, go_at: float) -> None:
    """Starts the late joiners whose time has come (they take no part in the barrier)."""
    for proc in procs:
        if (
            proc.popen is None
            and proc.start_after is not None
            and time.monotonic() >= go_at + proc.start_after
        ):
            with signals_held():
                _start(proc, run_dir)
            selector.register(proc.popen.stdout, selectors.EVENT_READ, proc)
            proc.ready = True


def _wait_exit(
    procs,
    selector,
    deadline: float,
    peer_grace: float,
    start_late=lambda: None,
    on_progress=None,
    on_window=None,
) -> None:
    """Until every process ended, reading stdout so that a chatty node never blocks.

    Once one process ended, the others get a grace period to end on their own:
    peer_grace after a success (e.g. pong waits for ping's end message), FAIL_GRACE_S
    after a failure (a peer of a failed process may wait for it forever). Raises
    _Deadline when a grace period or the run timeout is over. on_progress(label, fields)
    gets each PROGRESS line a node prints while it measures; on_window(edge, process, procs)
    each WINDOW line, as soon as it is read (a sender's "begin" is answered SAMPLED after
    on_window returns: it measures only then)."""
    first_end = None
    while True:
        start_late()
        running = [p for p in procs if p.popen is None or p.popen.poll() is None]
        # A late joiner not yet started is not waited for once the others have ended.
        if all(p.popen is None for p in running):
            return
        if not running:
            return
        names = ", ".join(p.label for p in running)
        now = time.monotonic()
        ended = [p for p in procs if p.popen is not None and p.returncode is not None]
        if ended:
            first_end = first_end or now
            grace = FAIL_GRACE_S if any(p.returncode != 0 for p in ended) else peer_grace
            if now - first_end > grace:
                done = ", ".join(f"{p.label} (exit code {p.returncode})" for p in ended)
                raise _Deadline(f"{names} still running {grace:g} s after {done} ended")
        if now >= deadline:
            raise _Deadline(f"{names} still running at the run timeout")
        for proc, line in _drain(selector, min(deadline - now, 0.1)):
            if line.startswith(WINDOW_PREFIX):
                edge = line[len(WINDOW_PREFIX) :]
                if on_window:
                    on_window(edge, proc, procs)
                if edge == "begin":  # the sender waits for this before measuring
                    _answer(proc, b"SAMPLED\n")
                continue
            fields = progress_lines.parse(line) if on_progress else None
            if fields is not None:
                on_progress(proc.label, fields)


def _stop(procs) -> None:
    """SIGTERM to the process group of every process still running, then SIGKILL. A
    node on a real machine is told over its stdin (its guard there sends the SIGTERM,
    and keeps what it writes for fetching), and given REMOTE_STOP_GRACE_S; then its ssh
    client is stopped like any process (the guard then kills it and drops its files)."""
    alive = [p for p in procs if p.popen is not None and p.popen.poll() is None]
    now = time.monotonic()
    ends = {}
    for proc in alive:
        proc.killed = True
        if ssh.is_ssh(proc.argv) and _answer(proc, ssh.STOP_LINE):
            ends[proc.name] = now + REMOTE_STOP_GRACE_S
        else:
            _signal_group(proc, signal.SIGTERM)
            ends[proc.name] = now + KILL_GRACE_S
    for proc in alive:
        try:
            proc.popen.wait(timeout=max(ends[proc.name] - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGTERM if ssh.is_ssh(proc.argv) else signal.SIGKILL)
            try:
                proc.popen.wait(timeout=KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.popen.wait()
    for proc in procs:
        if proc.popen is not None:
            for pipe in (proc.popen.stdin, proc.popen.stdout):
                try:
                    pipe.close()
                except OSError:
                    pass


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def _signal_group(proc: NodeProcess, sig: int) -> None:
    try:
        os.killpg(proc.popen.pid, sig)  # its own session: group id == pid
    except ProcessLookupError:
        pass


def _read_summaries(run_dir: Path, names) -> tuple[dict, dict]:
    summaries, errors = {}, {}
    for name in names:
        path = run_dir / f"{name}.json"
        if not path.exists():
            errors[name] = f"{path.name} was not written"
            continue
        try:
            summaries[name] = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            errors[name] = f"{path.name} is not valid JSON: {exc}"
    return summaries, errors


def _first_failure(procs, code: int | None = None) -> NodeProcess | None:
    """The process that failed on its own (not one we stopped), optionally by exit code."""
    for proc in procs:
        rc = proc.returncode
        if rc in (None, 0) or proc.killed:
            continue
        if code is None or rc == code:
            return proc
    return None


STDERR_TAIL_LINES = 20


def _message(proc: NodeProcess, summaries: dict) -> str:
    """Why proc failed: the tail of its stderr (the node's own words), else its summary's
    error, else how it ended."""
    lines = proc.stderr_text().splitlines()
    rc = proc.returncode
    if rc is not None and rc < 0:
        how = f"{proc.label} killed by signal {-rc} ({_signal_name(-rc)})"
        return "\n".join([how, *lines[-STDERR_TAIL_LINES:]])
    if lines:
        # Which of several subscribers said it: the node's own lines name only the role.
        named = [f"{proc.name}:"] if proc.roles != [proc.name] and len(proc.roles) == 1 else []
        return "\n".join(named + lines[-STDERR_TAIL_LINES:])
    for name in proc.output_names:
        error = summaries.get(name, {}).get("error")
        if error:
            return str(error)
    rc = proc.returncode
    if rc == EXIT_TIMEOUT:
        return f"{proc.label} reached the node's --timeout (exit code 3)"
    how = f"killed by signal {-rc}" if rc < 0 else f"exit code {rc}"
    return f"{proc.label} ended with {how} and no message"


def _classify(procs, summaries, summary_errors, deadline_message, interrupted):
    """(status, message) for the run; the node's own stderr is passed on verbatim.
    Processes we stopped are not blamed: they failed because we stopped them."""
    if interrupted:
        return "interrupted", "interrupted (Ctrl-C or SIGTERM); node processes stopped"
    refused = _first_failure(procs, EXIT_REFUSED)
    if refused:
        return "refused", _message(refused, summaries)
    crashed = next(
        (p for p in procs if p.returncode is not None and p.returncode < 0 and not p.killed), None
    )
    if crashed:
        return "crashed", _message(crashed, summaries)
    failed = _first_failure(procs, EXIT_FAILED)
    if failed:
        return "failed", _message(failed, summaries)
    timed_out = _first_failure(procs, EXIT_TIMEOUT)
    if timed_out:
        stopped = [p.label for p in procs if p.killed]
        hung = f"{', '.join(stopped)} did not end and was stopped; " if stopped else ""
        return "timeout", hung + _message(timed_out, summaries)
    other = _first_failure(procs)
    if other:
        return "failed", _message(other, summaries)
    if deadline_message:
        return "timeout", deadline_message
    if any(p.killed for p in procs):
        return "failed", "stopped by the launcher: " + ", ".join(p.label for p in procs if p.killed)
    if summary_errors:
        return "failed", "; ".join(summary_errors.values())
    return "ok", None


def _start_now(procs, selector, run_dir: Path, on_started) -> None:
    """Starts the processes that start at once, each watched for its stdout lines."""
    for proc in procs:
        with signals_held():
            _start(proc, run_dir)
        selector.register(proc.popen.stdout, selectors.EVENT_READ, proc)
    if on_started:
        on_started(procs)


def _release(procs, selector, barrier: bool, ready_by: float) -> bool:
    """With the barrier: waits for every READY, then sends GO; False when one never
    became ready (nobody may measure)."""
    if not barrier:
        return True
    _wait_ready(procs, selector, ready_by)
    if not all(p.ready for p in procs):
        return False
    _send_go(procs)
    return True


def _tear_down(procs, selector, run_id: str, cleanup_commands, on_stopped):
    """Every process stopped, what they left removed, the drivers' cleanup run, the
    files of real machines fetched: (leftovers removed, cleanup outcome, fetch
    problems). Signals wait until it is done."""
    with signals_deferred():
        _stop(procs)
        selector.close()
        leftovers = remove_leftovers(run_id)
        outcomes = [run_cleanup_command(argv) for argv in cleanup_commands]
        # One driver's outcome as it is; a driver per role: each one's.
        cleanup = outcomes[0] if len(outcomes) == 1 else outcomes or None
        fetched = on_stopped() if on_stopped is not None else []
        keeper.instance().run_done(run_id)
    return leftovers, cleanup, fetched


def launch(
    run_id: str,
    run_dir: Path,
    commands: list[tuple[str, list[str], list[str]]],
    barrier: bool,
    start_timeout: float,
    run_timeout: float,
    peer_grace: float = 15.0,
    on_started=None,
    cleanup_commands: list[list[str]] = (),
    start_after: dict[str, float] | None = None,
    on_progress=None,
    on_window=None,
    on_stopped=None,
) -> RunResult:
    """Runs the node processes of one run to the end.

    commands: (name, roles, argv) per process, started in this order; name is unique
    in the run and names its files (<name>.stderr, <name>.json). barrier: use the stdio
    barrier (READY/GO); start_timeout bounds the wait for READY, run_timeout the whole
    run, peer_grace how long the others may run on once one process ended well.
    on_started(processes) is called once all processes exist (to record pids).
    cleanup_commands: the drivers' cleanup argvs, each run once the processes are gone.
    start_after: name -> seconds after GO at which that process starts (a late joiner,
    outside the barrier); the others start at once. on_progress(label, fields): called
    with each PROGRESS line of a node that was given --progress. on_window(edge, process,
    processes): called with each WINDOW line of a node given --window-lines, at once.
    on_stopped(): called once every process has ended, before the summaries are read
    (nodes on real machines: their files are fetched then); it returns problems (text)
    that fail the run.
    """
    late = start_after or {}
    procs = [
        NodeProcess(
            name=name,
            roles=list(roles),
            argv=list(argv),
            stderr_path=run_dir / f"{name}.stderr",
            start_after=late.get(name),
        )
        for name, roles, argv in commands
    ]
    now_procs = [p for p in procs if p.start_after is None]
    selector = selectors.DefaultSelector()
    deadline_message, interrupted = None, False
    started = time.monotonic()
    keeper.instance().run_started(run_id)  # cleans up after the run if psbench is killed
    try:
        _start_now(now_procs, selector, run_dir, on_started)
        ready_by = started + min(start_timeout, run_timeout)
        # Without GO nobody can measure: one ended before READY, stop the rest now.
        if _release(now_procs, selector, barrier, ready_by):
            go_at = time.monotonic()
            _wait_exit(
                procs,
                selector,
                started + run_timeout,
                peer_grace,
                lambda: _start_late(procs, selector, run_dir, go_at),
                on_progress,
                on_window,
            )
    except _Deadline as exc:
        deadline_message = f"{exc} ({time.monotonic() - started:.1f} s); processes stopped"
    except KeyboardInterrupt:
        interrupted = True
    finally:
        leftovers, cleanup, fetched = _tear_down(
            procs, selector, run_id, cleanup_commands, on_stopped
        )
    _save_stdout(procs, run_dir)
    names = [name for proc in procs for name in proc.output_names]
    summaries, summary_errors = _read_summaries(run_dir, names)
    for number, problem in enumerate(fetched):
        summary_errors[f"fetch-{number}"] = problem
    status, message = _classify(procs, summaries, summary_errors, deadline_message, interrupted)
    return RunResult(
        run_id=run_id,
        run_dir=run_dir,
        status=status,
        message=message,
        processes=procs,
        summaries=summaries,
        summary_errors=summary_errors,
        leftovers_removed=leftovers,
        cleanup=cleanup,
    )


def _save_stdout(procs, run_dir: Path) -> None:
    """Keeps anything a node printed besides READY and its progress lines, for diagnosis."""
    for proc in procs:
        text = proc.stdout_text.decode(errors="replace")
        extra = [
            line
            for line in text.splitlines()
            if line.strip() != "READY"
            and not line.startswith(progress_lines.PREFIX)
            and not line.startswith(WINDOW_PREFIX)
        ]
        if extra:
            (run_dir / f"{proc.label}.stdout").write_text("\n".join(extra) + "\n")
