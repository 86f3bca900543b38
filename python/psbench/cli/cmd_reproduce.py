"""`psbench reproduce NAME [--quick] [--network]`: one seed study rerun on this machine,
with its paper's tables and figures beside the published ones (docs/reproductions.md).

The study's experiment file (experiments/seeds/NAME[-network][-quick].yaml) runs exactly as with
`psbench run` (same checks, progress, store, faults and --resume), then the normal report
is written (`psbench report`: DIR/report/), then the paper's sections (DIR/report/paper.md,
paper.json, DIR/report/paper/*) are written and printed.
"""

import sys
from pathlib import Path

from psbench import reproduce
from psbench.base import paths
from psbench.base.errors import UserError
from psbench.cli.cmd_run import execute_announced, exit_code, expanded_record, print_problems
from psbench.report.document import Settings, build_report, write_report
from psbench.report.sweep_text import plan_listing
from psbench.reproduce import common
from psbench.results.load import load_results
from psbench.results.store import Store, default_dir
from psbench.run import envinfo
from psbench.run.experiment import ExperimentError, prepare


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("reproduce")
    parser.add_argument(
        "name", metavar="NAME", nargs="?", help="the study, e.g. zak2017 (--list lists them)"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the studies with a one-line description each"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the quick variant (NAME-quick.yaml): the same method, fewer "
        "samples, sizes or seconds",
    )
    parser.add_argument(
        "--network",
        action="store_true",
        help="the study's network variant (NAME-network[-quick].yaml): its roles on "
        "emulated hosts joined by the paper's links (root; docs/reproductions.md)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="the sweep's results directory, new or empty (default: "
        "<UTC time>-<experiment name>/ in results/ or $PSBENCH_RESULTS)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the sweep in -o DIR (as `psbench run --resume`), then report it",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the study's file and list its runs; run nothing",
    )
    parser.add_argument(
        "--no-plots",
        action="store_true",
        help="the normal report without its plots (the paper's figures are still drawn)",
    )
    parser.set_defaults(handler=run_command)


def list_text() -> str:
    width = max(len(n) for n in reproduce.STUDIES)
    lines = []
    for name, description in reproduce.STUDIES.items():
        mark = "" if reproduce.available(name) else " [not yet available]"
        lines.append(f"{name:<{width}}  {description}{mark}")
    return "\n".join(lines)


def _plan(path: Path, display: str):
    paths.require_node()
    try:
        # A middleware that is not built here is set aside with a note (the study runs
        # on what is installed), as `psbench demo` does.
        plan = prepare(path, display, skip_unbuilt=True)
    except ExperimentError as exc:
        print_problems(exc, display)
        return None
    for note in plan.expansion.notes:
        print(f"note: {note}", file=sys.stderr)
    for run, reason in plan.skipped:
        print(f"skipped: run {run.number} {run.label}: {reason}", file=sys.stderr)
    return plan


def _store(args, plan, env: dict, display: str) -> Store:
    if args.resume:
        return Store.resume(Path(args.output).expanduser().resolve(), plan.source, display, env)
    root = (
        Path(args.output).expanduser().resolve()
        if args.output
        else default_dir(paths.results_dir(), plan.experiment.name)
    )
    return Store.create(root, plan.source, expanded_record(plan), env)


def report_study(name: str, module, root: Path, quick: bool, plots: bool = True) -> str:
    """The normal report of root, then the paper's sections; returns the terminal text."""
    published = common.load_published(name)
    results = load_results(root)
    report = build_report(results, Settings(plots=plots))
    out = root / "report"
    page = write_report(report, out)
    sections = common.per_network(results, lambda subset: module.sections(subset, published))
    paper = common.write_sections(
        name, reproduce.STUDIES[name], sections, out, quick=quick, results=root, published=published
    )
    return "\n\n".join(
        [
            "\n".join(report.summary),
            *(f"warning: {w}" for w in report.warnings),
            common.terminal_text(name, sections),
            f"report: {page}\npaper: {paper} (tables and figures in {out / common.PAPER_DIR})",
        ]
    )


def run_command(args) -> int:
    if args.list:
        print(list_text())
        return 0
    if not args.name:
        raise UserError(
            "argument NAME: give the study to reproduce (one of "
            f"{reproduce.known_text()}), or --list"
        )
    module = reproduce.load(args.name)
    if args.resume and not args.output:
        raise UserError(
            "argument --resume: give the directory of the sweep to continue with -o DIR"
        )
    path = common.experiment_path(args.name, args.quick, args.network)
    display = (
        str(path.relative_to(paths.REPO_ROOT))
        if path.is_relative_to(paths.REPO_ROOT)
        else str(path)
    )
    common.load_published(args.name)  # fail before running, not after
    plan = _plan(path, display)
    if plan is None:
        return 2
    if args.dry_run:
        done = Store(Path(args.output).expanduser().resolve()).finished() if args.resume else None
        print(plan_listing(plan, done))
        return 0
    if not plan.selected:
        raise UserError(f"{display}: none of its drivers is built here; run `make build`", 1)
    env = envinfo.collect()
    store = _store(args, plan, env, display)
    heading = f"{args.name}: {plan.experiment.name}"
    result = execute_announced(plan, store, env, heading, args.resume)
    if result.interrupted:
        print(
            f"psbench reproduce: interrupted; completed runs are kept (continue with: "
            f"psbench reproduce {args.name}{' --quick' if args.quick else ''}"
            f"{' --network' if args.network else ''} "
            f"-o {store.root} --resume)",
            file=sys.stderr,
        )
        return 130
    print()
    print(report_study(args.name, module, store.root, args.quick, not args.no_plots))
    return exit_code(result)
