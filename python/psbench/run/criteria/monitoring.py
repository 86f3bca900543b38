"""Monitoring: whether a standard tool observes the middleware's traffic, checked by
running it beside a short psbench run. The tool, and what its output shows when it sees
the traffic, are the driver's manifest's (`[monitor] argv`, `expect`, `timeout_s`;
{broker}, {host} and {port} are the address of the broker psbench started, {service_dir}
its folder; {build} in argv[0], the build directory, for a tool the build makes; a
leading ~ of argv[0] or `name` is the home folder; `env`, `options` and `stop_signal`:
docs/criteria.md). Yes: its output showed `expect` by the end of the run or within the
tool's timeout_s of its start (a tool that reads the run's records from their beginning
may see them after); no: it ran that long and did not. A driver that declares no tool, or whose tool is not installed, is not testable
here."""

import contextlib
import functools
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

from psbench.base import manifests, paths
from psbench.base.errors import UserError
from psbench.base.signals import die_with_parent
from psbench.run.criteria.context import Context
from psbench.run.criteria.verdict import NO, NOT_TESTABLE, YES, Verdict
from psbench.run.service_definitions import find_executable
from psbench.run.spec import MeasureSpec

NAME = "monitoring"
TITLE = "monitoring"
SETTLE_S = 1.0  # for the tool to connect and subscribe before the run starts
OUTPUT_LIMIT = 1 << 20  # bytes of its output read


def judge(driver: str, tool: str, expect: str, output: str | None, run_status: str,
          run_message: str | None = None, run_dir: str | None = None,
          experiment: str | None = None) -> Verdict:  # fmt: skip
    """output: what the tool printed during the run (None: it could not be started)."""

    def verdict(value: str, evidence: str, figures=None) -> Verdict:
        return Verdict(NAME, driver, value, evidence, experiment=experiment,
                       figures=figures or {}, run_dir=run_dir)  # fmt: skip

    if output is None:
        return verdict(NOT_TESTABLE, f"{tool} could not be started")
    if run_status != "ok":
        return verdict(NOT_TESTABLE, f"the run it watched ended {run_status}: {run_message or '-'}")
    match = re.search(expect, output, re.M)
    lines = output.count("\n")
    figures = {"tool": tool, "expect": expect, "output_lines": lines}
    if match:
        seen = output[match.start() : match.end()].strip()[:80]
        return verdict(YES, f"{tool} observed the run: its output ({lines} lines) shows "
                       f"/{expect}/, e.g. {seen!r}", figures)  # fmt: skip
    return verdict(NO, f"{tool} ran through the run and its output ({lines} lines) never "
                   f"showed /{expect}/", figures)  # fmt: skip


def _not_testable(driver: str, why: str) -> Verdict:
    claim = manifests.load(driver).claims.get(NAME)
    text = f"; documented, not verified: {claim.text}" if claim else ""
    return Verdict(NAME, driver, NOT_TESTABLE, why + text, source=claim.source if claim else None)


def _argv(template: tuple[str, ...], address: str | None, folder: Path | None = None) -> list[str]:
    host, _, port = (address or "").rpartition(":")
    values = {"{broker}": address or "", "{host}": host, "{port}": port,
              "{service_dir}": str(folder or "")}  # fmt: skip
    out = []
    for arg in template:
        for key, value in values.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


def _program(name: str) -> str | None:
    """The tool's path: {build} is the build directory (a tool the build makes), a
    leading ~ the home folder."""
    return find_executable(os.path.expanduser(name.replace("{build}", str(paths.build_dir()))))


def _env(monitor: manifests.MonitorSpec, folder: Path) -> dict | None:
    """psbench's environment and the manifest's env ({folder}: the driver's folder)."""
    if not monitor.env:
        return None
    own = {k: v.replace("{folder}", str(folder)) for k, v in monitor.env.items()}
    return {**os.environ, **own}


def _child(stop: signal.Signals) -> None:
    """preexec_fn: dies with psbench, and takes its stop signal the default way even if
    psbench was started with it ignored (a background job ignores SIGINT)."""
    die_with_parent()
    signal.signal(stop, signal.SIG_DFL)


STOP_WAIT_S = 5.0  # for the tool's process group to end after `stop`, before SIGKILL


def _stop(proc: subprocess.Popen, stop: signal.Signals = signal.SIGTERM) -> None:
    """Ends the tool and whatever it started (its own process group, which may outlive
    the tool itself: a wrapper's children) with `stop`, then SIGKILL; safe twice."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, stop)
    end = time.monotonic() + STOP_WAIT_S
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=STOP_WAIT_S)
    while _group_alive(proc.pid) and time.monotonic() < end:
        time.sleep(0.05)
    if _group_alive(proc.pid) or proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=STOP_WAIT_S)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member that changed its user: still there
        return True
    return True


def _watch(ctx: Context, driver: str, folder: Path) -> Verdict:
    manifest = manifests.load(driver)
    monitor = manifest.monitor
    tool = monitor.argv[0]
    for program in dict.fromkeys(p for p in (tool, monitor.name) if p):
        if _program(program) is None:
            if "{build}" in program:
                built = "make build-all builds the monitoring tools"
                return _not_testable(
                    driver, f"its monitoring tool {Path(program).name} is not built ({built})"
                )
            packages = f" (Debian: {', '.join(monitor.debian)})" if monitor.debian else ""
            return _not_testable(
                driver,
                f"its monitoring tool {os.path.expanduser(program)} is not installed{packages}",
            )
    used = ctx.pool.ensure(ctx.describes[driver], None, folder) if ctx.pool else []
    broker = next((s for s in used if s.definition.broker and s.address), None)
    argv = _argv(monitor.argv, broker and broker.address, broker and broker.folder)
    argv[0] = _program(tool)
    stop = signal.Signals[f"SIG{monitor.stop_signal}"]
    tool = monitor.name or Path(tool).name  # what the evidence calls it
    log = folder / f"{driver}-{tool}.log"
    spec = MeasureSpec(kind="pubsub", driver=driver, driver_path=ctx.libraries[driver], size=64,
                       count=2000, rate=1000.0, timeout=60.0,
                       options=list(monitor.options))  # fmt: skip
    given = "".join(f" --option {o}" for o in monitor.options)
    experiment = f"{' '.join(argv)} during pubsub --count 2000 --rate 1000{given}"
    with open(log, "wb") as out:
        try:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env=_env(monitor, manifest.path.parent),
                                    preexec_fn=functools.partial(_child, stop))  # fmt: skip
        except OSError as exc:
            return judge(driver, tool, monitor.expect, None, "not run", str(exc),
                         experiment=experiment)  # fmt: skip
        # The tool runs timeout_s at most, however long the run takes.
        deadline = threading.Timer(monitor.timeout_s, _stop, (proc, stop))
        deadline.daemon = True
        deadline.start()
        started = time.monotonic()
        try:
            time.sleep(SETTLE_S)
            try:
                outcome = ctx.run(NAME, spec, folder)
                status, message, run_dir = outcome.status, outcome.message, str(outcome.run_dir)
            except UserError as exc:
                status, message, run_dir = "refused", str(exc), None
            # Output still on its way (a tool slow to start on a loaded machine, one that
            # reads the run's records from their beginning) is waited for, within the
            # tool's timeout; a tool that prints what it gathered when interrupted
            # (stop_signal INT) is given a second.
            until = started + monitor.timeout_s
            if stop == signal.SIGINT:
                until = min(until, time.monotonic() + 1.0)
            _await_output(log, monitor.expect, until)
        finally:
            deadline.cancel()
            _stop(proc, stop)
    with open(log, "rb") as done:
        output = done.read(OUTPUT_LIMIT).decode(errors="replace")
    verdict = judge(driver, tool, monitor.expect, output, status, message, run_dir, experiment)
    verdict.figures["log"] = str(log)
    return verdict


def _await_output(log: Path, expect: str, until: float) -> None:
    """Returns once the tool's output shows `expect`, or at `until` (monotonic)."""
    pattern = re.compile(expect, re.M)
    while time.monotonic() < until:
        with open(log, "rb") as written:
            if pattern.search(written.read(OUTPUT_LIMIT).decode(errors="replace")):
                return
        time.sleep(0.2)


def assess(ctx: Context) -> dict[str, Verdict]:

    def assess_one(driver: str) -> Verdict:
        if manifests.load(driver).monitor is None:
            return _not_testable(driver, "no standard monitoring tool is declared or "
                                 "installed for it here")  # fmt: skip
        return _watch(ctx, driver, ctx.folder(NAME))

    return ctx.each_driver(NAME, assess_one)
