"""`psbench demo`: the quick start experiment (experiments/quickstart.yaml) through the
same executor as `psbench run`, then `psbench report` on its results: the latency table,
the ratios to the floor, what each costs in CPU and memory, and the path of the HTML
report.

Every default driver and the two baselines, inter-process ping-pong, 64 B and 16 KiB,
notify wait, closed loop. A driver that is not built is skipped with a note; a failed
run is recorded and the sweep goes on.
"""

import sys

from psbench.base import paths
from psbench.base.errors import UserError
from psbench.base.options import positive_float, positive_int
from psbench.base.units import size_text, value_text
from psbench.cli.cmd_run import expanded_record, print_problems
from psbench.report import formats
from psbench.report.document import Settings, build_report, write_report
from psbench.report.sweep_text import common_settings
from psbench.results.load import load_results
from psbench.results.store import Store, default_dir
from psbench.run import envinfo
from psbench.run.experiment import ExperimentError, prepare
from psbench.run.experiment.execute import execute
from psbench.run.experiment.schema import Assign
from psbench.run.progress import Progress

QUICKSTART = "experiments/quickstart.yaml"


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("demo")
    parser.add_argument(
        "--count", type=positive_int, help="measured samples per run (default: the file's, 10000)"
    )
    parser.add_argument(
        "--timeout", type=positive_float, help="seconds per run (default: the file's, 120)"
    )
    parser.add_argument(
        "--results", metavar="DIR", help="results directory (default results/ or $PSBENCH_RESULTS)"
    )
    parser.set_defaults(handler=run_command)


def _overrides(args) -> dict[str, Assign]:
    found = {}
    for key in ("count", "timeout"):
        value = getattr(args, key)
        if value is not None:
            found[key] = Assign(key, value, f"psbench demo --{key}", 0)
    return found


def _conditions(plan) -> str:
    """What the runs share, as the file says (it may have been edited)."""
    _, common = common_settings(plan.runs)
    parts = [
        f"{common['placement']}-process" if "placement" in common else None,
        f"notify {common['notify']}" if "notify" in common else None,
        "closed loop"
        if common.get("kind") == "ping" and not common.get("rate")
        else f"rate {value_text(common['rate'])} Hz"
        if "rate" in common
        else None,
        "pinned one role per core" if all("cpus" not in run.params for run in plan.runs) else None,
    ]
    return ", ".join(p for p in parts if p) + f" ({QUICKSTART})"


def run_command(args) -> int:
    paths.require_node()
    source = paths.REPO_ROOT / QUICKSTART
    try:
        plan = prepare(source, QUICKSTART, overrides=_overrides(args), skip_unbuilt=True)
    except ExperimentError as exc:
        print_problems(exc, QUICKSTART)
        return 2
    for run, reason in plan.skipped:
        print(f"skipped: {run.label}: {reason}", file=sys.stderr)
    env = envinfo.collect()
    store = Store.create(
        default_dir(paths.results_dir(args.results), "demo"),
        plan.source,
        expanded_record(plan),
        env,
    )
    result = execute(plan, store, env, ["psbench", *sys.argv[1:]], Progress(len(plan.selected)))
    skipped = {run.number: reason for run, reason in plan.skipped}
    page = _report(store.root)
    print("conditions: " + _conditions(plan))
    all_ok = True
    for run in plan.runs:
        entry = result.entries.get(run.number)
        status = "skipped" if run.number in skipped else entry["status"] if entry else "not run"
        if status != "ok":
            all_ok = False
            reason = skipped.get(run.number) or (entry or {}).get("message") or status
            print(f"{run.get('driver')} {size_text(run.get('size'))} {status}: {reason}")
    print(f"results: {store.root} (index.jsonl, one folder per run under runs/)")
    if page:
        print(f"report: {page}")
    if result.interrupted:
        print("demo interrupted", file=sys.stderr)
        return 130
    return 0 if all_ok else 1


def _report(root) -> str | None:
    """Prints the report's latency, floor and resources tables and returns the path of its
    HTML page; None
    when no run has results to report."""
    try:
        report = build_report(load_results(root), Settings())
    except UserError as exc:
        print(f"no report: {exc}")
        return None
    page = write_report(report, root / "report")
    print(formats.terminal(report.table("summary")))
    # The ratios to the floor, and whether the floor can carry them (measured once, or
    # repetitions apart: a 0.81 µs floor one run and 30 µs the next).
    print(formats.terminal(report.table("baseline")))
    # What each costs: CPU per round trip of every process, brokers and daemons included.
    if any(t.name == "resources" for t in report.tables):
        print(formats.terminal(report.table("resources")))
    return str(page)
