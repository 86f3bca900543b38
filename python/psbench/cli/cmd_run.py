"""`psbench run EXPERIMENT.yaml`: every run an experiment file describes, checked before
anything runs, stored in one directory with an index (docs/experiments.md)."""

import json
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

from psbench.base import paths
from psbench.base.errors import UserError
from psbench.base.options import add_ssh_config_argument, key_value, positive_int
from psbench.hosts import inventory, ssh
from psbench.report.sweep_text import plan_listing, sweep_summary
from psbench.results.store import Store, default_dir
from psbench.run import envinfo
from psbench.run.experiment import ExperimentError, Plan, prepare
from psbench.run.experiment.execute import execute
from psbench.run.experiment.expand import DEFAULT_MAX_RUNS
from psbench.run.progress import Progress


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("run")
    parser.add_argument(
        "experiment",
        metavar="EXPERIMENT.yaml",
        help="the experiment file, e.g. experiments/quickstart.yaml",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="the sweep's results directory, new or empty (default: "
        "<UTC time>-<name>/ in results/ or $PSBENCH_RESULTS)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="check the file and list the runs; run nothing"
    )
    parser.add_argument(
        "--filter",
        type=key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="only runs with this value (e.g. driver=udp, size=16KiB, "
        "rep=1, run=3); repeat a key for either value",
    )
    parser.add_argument(
        "--max-runs",
        type=positive_int,
        default=DEFAULT_MAX_RUNS,
        metavar="N",
        help=f"refuse a file that expands to more runs than this (default "
        f"{DEFAULT_MAX_RUNS:,}; counted from the matrix, before "
        f"anything is enumerated)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the sweep in -o DIR: skip runs that already ended "
        "(ok, failed, crashed, timeout, refused), run the rest",
    )
    add_ssh_config_argument(parser)
    parser.set_defaults(handler=run_command)


def print_problems(error: ExperimentError, file: str) -> None:
    for problem in error.problems:
        print(problem, file=sys.stderr)
    count = len(error.problems)
    print(
        f"psbench run: {count} problem{'s' if count != 1 else ''} in {file}; nothing "
        f"was run (docs/experiments.md lists every key)",
        file=sys.stderr,
    )


def load_plan(args, **extra) -> Plan | None:
    """The checked plan, or None after printing every problem (exit code 2)."""
    paths.require_node()
    try:
        plan = prepare(
            Path(args.experiment),
            args.experiment,
            args.filter,
            max_runs=getattr(args, "max_runs", DEFAULT_MAX_RUNS),
            **extra,
        )
    except ExperimentError as exc:
        print_problems(exc, args.experiment)
        return None
    for note in plan.expansion.notes:
        print(f"note: {note}", file=sys.stderr)
    return plan


def expanded_record(plan: Plan) -> dict:
    """experiment.expanded.json: every run with its parameters, and the spec of each
    selected one."""
    exp = plan.experiment
    criteria = plan.criteria
    return {
        "name": exp.name,
        "description": exp.description,
        "file": str(plan.path.resolve()),
        "repetitions": exp.repetitions,
        "search": asdict(criteria) if criteria is not None else None,
        "selected": [run.number for run in plan.selected],
        "runs": [
            {
                **run.listing(),
                "spec": plan.specs[run.number].to_json() if run.number in plan.specs else None,
            }
            for run in plan.runs
        ],
    }


def open_store(args, plan: Plan, env: dict) -> Store:
    if args.resume:
        return Store.resume(
            Path(args.output).expanduser().resolve(), plan.source, args.experiment, env
        )
    root = (
        Path(args.output).expanduser().resolve()
        if args.output
        else default_dir(paths.results_dir(), plan.experiment.name)
    )
    return Store.create(root, plan.source, expanded_record(plan), env)


def execute_announced(plan: Plan, store: Store, env: dict, heading: str, resume: bool):
    """Runs the plan's selected runs into store, saying first on stderr how many and
    where (after heading), and after them the sweep's summary on stdout; the result."""
    print(f"{heading}: {len(plan.selected)} runs into {store.root}", file=sys.stderr, flush=True)
    result = execute(
        plan, store, env, ["psbench", *sys.argv[1:]], Progress(len(plan.selected)), resume=resume
    )
    print(sweep_summary(plan, result, store.root))
    return result


def exit_code(result) -> int:
    if result.interrupted:
        return 130
    return 0 if all(e["status"] == "ok" for e in result.entries.values()) else 1


def keep_recorded_selection(plan: Plan, root: Path) -> None:
    """--resume without --filter continues the runs the sweep selected when it started
    (experiment.expanded.json), not every run of the file."""
    try:
        recorded = json.loads((root / "experiment.expanded.json").read_text())["selected"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # no record of a selection: every run, as before
    numbers = set(recorded)
    plan.expansion.selected = [run for run in plan.selected if run.number in numbers]


def resume_hint(args, root: Path) -> str:
    """The exact command that continues this sweep (the selection is recorded)."""
    return shlex.join(["./psbench", "run", args.experiment, "-o", str(root), "--resume"])


def run_command(args) -> int:
    ssh.use_config(args.ssh_config)  # for hosts reached over SSH
    inventory.use(args.inventory)  # --hosts INVENTORY
    if args.resume and not args.output:
        raise UserError(
            "argument --resume: give the directory of the sweep to continue with -o DIR"
        )
    plan = load_plan(args)
    if plan is None:
        return 2
    if args.resume and not args.filter:
        keep_recorded_selection(plan, Path(args.output).expanduser().resolve())
    if args.dry_run:
        done = None
        if args.resume:
            store = Store(Path(args.output).expanduser().resolve())
            done = store.finished()
        print(plan_listing(plan, done))
        return 0
    env = envinfo.collect()
    store = open_store(args, plan, env)
    result = execute_announced(plan, store, env, plan.experiment.name, args.resume)
    if result.interrupted:
        print(
            "psbench run: interrupted; completed runs are kept in the index "
            f"(continue with: {resume_hint(args, store.root)})",
            file=sys.stderr,
        )
    return exit_code(result)
