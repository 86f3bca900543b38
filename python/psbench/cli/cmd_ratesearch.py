"""`psbench ratesearch`: the maximum sustainable rate of one pubsub configuration."""

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from psbench.base import paths, table
from psbench.base.errors import UserError
from psbench.base.units import micros, percent_text, rate_text
from psbench.cli import run_options
from psbench.cli.cmd_measure import spec_from_args
from psbench.results import rundir
from psbench.run import envinfo, ratesearch, run_rules, services
from psbench.run.parameters import cli_term
from psbench.run.progress import Progress


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("ratesearch")
    run_options.add_run_arguments(parser, "pubsub", leave_out=("rate",))
    run_options.add_search_arguments(parser)
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="the search folder, new or empty (default: <UTC time>-"
        "ratesearch-<driver>-<size>B/ in results/ or $PSBENCH_RESULTS)",
    )
    parser.set_defaults(handler=run_command, kind="pubsub")


def criteria_from_args(args) -> ratesearch.Criteria:
    problem = run_rules.search_bounds_problem(args.start_rate, args.max_rate, cli_term)
    if problem is not None:
        raise UserError(problem)
    return ratesearch.Criteria(
        max_loss_percent=args.max_loss,
        max_p99_ns=args.max_p99,
        start_rate_hz=args.start_rate,
        max_rate_hz=args.max_rate,
        precision=args.precision,
        max_steps=args.max_steps,
        confirm=args.confirm,
    )


def _folder(args, spec) -> Path:
    if args.output:
        root = Path(args.output).expanduser().resolve()
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise UserError(
                f"argument -o: {root} already exists and is not empty; choose a new directory"
            )
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(
                f"argument -o: cannot create {root}: {exc.strerror}; choose a writable directory"
            ) from None
        return root
    return rundir.create(
        paths.results_dir(args.results),
        f"{rundir.utc_stamp()}-ratesearch-{spec.driver}-{spec.size}B",
    )


def rate_heading(publishers: int) -> str:
    """The rate column's name: each publisher's rate when there are several."""
    return "rate Hz" if publishers <= 1 else "rate Hz per pub"


def curve_table(result: ratesearch.SearchResult, publishers: int = 1) -> str:
    rows = [
        [i, rate_text(s.rate_hz)]
        + ([rate_text(s.rate_hz * publishers)] if publishers > 1 else [])
        + [
            s.status,
            rate_text(s.achieved_rate_hz),
            percent_text(s.loss_percent),
            micros(s.p99_ns),
            f"{s.runs_passed}/{s.runs}",
            _verdict(s, result.criteria),
        ]
        for i, s in enumerate(result.steps, 1)
    ]
    return table.render(
        ["step", rate_heading(publishers)]
        + ([f"all {publishers} Hz"] if publishers > 1 else [])
        + ["status", "achieved Hz", "loss", "p99 µs", "runs passed", "result"],
        rows,
    )


def _verdict(step: ratesearch.Step, criteria: ratesearch.Criteria) -> str:
    if not step.passed:
        return f"fail: {step.why}"
    if step.confirmed:
        return "pass, confirmed" if criteria.confirm > 1 else "pass"
    return (
        "pass (not rerun: below the boundary)"
        if step.runs == 1
        else f"pass, not yet confirmed ({step.runs} of {criteria.confirm} runs)"
    )


def result_text(result: ratesearch.SearchResult, publishers: int = 1) -> str:
    c = result.criteria
    bounds = (
        f"loss <= {c.max_loss_percent:g}%, p99 <= {c.max_p99_ns / 1e3:g} µs, "
        f"passed {c.confirm} of {c.confirm} run{'s' if c.confirm > 1 else ''}"
    )
    ended = {
        "precision": f"the bracket is within {c.precision:g}",
        "max_rate": f"the maximum rate {rate_text(c.max_rate_hz, 'Hz')} passed",
        "max_steps": f"the step limit ({c.max_steps})",
        "min_rate": "no rate down to 1 Hz passed",
        "interrupted": "interrupted",
        "error": "an error",
    }.get(result.ended_by, result.ended_by)
    bracket = (
        f"bracket [{rate_text(result.lo)}, {rate_text(result.hi)}] Hz; "
        f"ended by {ended} after {len(result.steps)} steps, {result.runs} runs"
    )
    best = result.max_sustainable_rate_hz
    if best is None:
        return f"no sustainable rate ({bounds}); {bracket}"
    per = (
        f" per publisher ({rate_text(best * publishers, 'Hz')} offered by all "
        f"{publishers} together)"
        if publishers > 1
        else ""
    )
    return f"max sustainable rate: {rate_text(best, 'Hz')}{per} ({bounds}); {bracket}"


def _run_label(step: ratesearch.Step, criteria: ratesearch.Criteria) -> str:
    rate = f"{rate_text(step.rate_hz)} Hz"
    return rate if step.runs == 1 else f"{rate} run {step.runs} of {criteria.confirm}"


def _run_status(step: ratesearch.Step) -> str:
    last = step.confirmations[-1] if step.confirmations else None
    if last is None:
        return "pass" if step.passed else f"fail ({step.why})"
    if not last["passed"]:
        return f"fail ({last['why']})"
    return "pass, confirmed" if step.confirmed else "pass"


def run_command(args: argparse.Namespace) -> int:
    paths.require_node()
    criteria = criteria_from_args(args)
    if args.count is None and args.duration is None:
        args.duration = ratesearch.DEFAULT_STEP_S
    spec = spec_from_args(args)
    folder = _folder(args, spec)
    env = envinfo.collect()
    cli_argv = ["psbench", *sys.argv[1:]]
    publishers = spec.publishers or 1
    most = criteria.max_steps * criteria.confirm
    progress = Progress(most, at_most=True)
    started = {}

    def on_start(rate: float) -> None:
        started["t"] = time.monotonic()
        progress.start(f"{rate_text(rate)} Hz")

    def on_run(result: ratesearch.SearchResult, step: ratesearch.Step) -> None:
        # A bound of the runs: those done, this one, and the most still to come.
        progress.total = progress.done + 1 + ratesearch.runs_left_at_most(result)
        failed = not (step.confirmations[-1]["passed"] if step.confirmations else step.passed)
        progress.finish(
            _run_label(step, criteria),
            _run_status(step),
            time.monotonic() - started.pop("t", time.monotonic()),
            failed=failed,
            note=f"bracket [{rate_text(result.lo)}, {rate_text(result.hi)}]",
        )

    print(_plan_line(spec, criteria, folder), file=sys.stderr, flush=True)
    try:
        with services.ServicePool(largest_message=spec.size) as pool:
            result = ratesearch.run_search(
                replace(spec, rate=criteria.start_rate_hz),
                criteria,
                folder,
                env,
                cli_argv,
                services=pool,
                on_start=on_start,
                on_run=on_run,
                extra={
                    "kind": "ratesearch",
                    "driver": spec.driver,
                    "size": spec.size,
                    "cli_argv": cli_argv,
                },
            )
    except KeyboardInterrupt:  # between steps, or while services started or stopped
        result = None
    finally:
        progress.close()
    return _finish(result, folder, publishers)


def _plan_line(spec, criteria: ratesearch.Criteria, folder: Path) -> str:
    """What the search will do, at most, and where it writes."""
    publishers = spec.publishers or 1
    most = criteria.max_steps * criteria.confirm
    per = (
        f"; rates are each of the {publishers} publishers' (all together offer {publishers} x rate)"
        if publishers > 1
        else ""
    )
    return (
        f"ratesearch {spec.driver} {spec.size} B: at most {criteria.max_steps} steps "
        f"(rates), each at most {criteria.confirm} run{'s' if criteria.confirm > 1 else ''}"
        f" (at most {most} runs); a rate is sustainable once it passed "
        f"{criteria.confirm} of {criteria.confirm}{per}; into {folder}"
    )


def _finish(result: ratesearch.SearchResult | None, folder: Path, publishers: int) -> int:
    """The curve and the result (what was found, or that it was interrupted); the exit
    code: 0 with a sustainable rate, 1 without, 130 interrupted."""
    if result is None:
        print(
            f"psbench ratesearch: interrupted; completed steps are in {folder / 'search.json'}",
            file=sys.stderr,
        )
        return 130
    print(curve_table(result, publishers))
    print(result_text(result, publishers))
    print(f"results: {folder} (search.json; one run directory per run, reruns included)")
    if result.ended_by == "interrupted":
        print(
            "psbench ratesearch: interrupted; completed steps are kept in search.json",
            file=sys.stderr,
        )
        return 130
    return 0 if result.max_sustainable_rate_hz is not None else 1
