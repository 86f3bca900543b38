"""`psbench report DIR`: statistics, significance, tables, plots and an HTML page from the
raw samples of a results folder (docs/analysis.md)."""

from pathlib import Path

from psbench.base.options import noise_fraction, non_negative_int, probability, resamples
from psbench.report.document import Settings, build_report, terminal_text, write_report
from psbench.results.load import load_results, sweeps_inside
from psbench.results.significance import DEFAULT_RESAMPLES, DEFAULT_SEED


def add_resamples_argument(parser) -> None:
    """--resamples, kept so that older command lines (report, compare) still parse."""
    parser.add_argument(
        "--resamples",
        type=resamples,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help="accepted for older command lines; changes nothing (the intervals are "
        "computed, not resampled: docs/methodology.md, section 11)",
    )


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("report")
    parser.add_argument(
        "results",
        metavar="DIR",
        help="a sweep folder of `psbench run`, a run folder of `psbench "
        "ping|pubsub`, or a folder of run folders",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="where to write the report (default DIR/report; an earlier report there is replaced)",
    )
    parser.add_argument(
        "--noise",
        type=noise_fraction,
        default=0.05,
        metavar="FRACTION",
        help="noise threshold: repetitions whose p50 spread exceeds it are "
        "flagged, and smaller differences are 'within noise' "
        "(default 0.05)",
    )
    parser.add_argument(
        "--alpha",
        type=probability,
        default=0.05,
        help="significance level of the tests (default 0.05)",
    )
    add_resamples_argument(parser)
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=DEFAULT_SEED,
        help="accepted for older command lines; changes nothing (nothing is drawn at "
        "random: the same data give the same report)",
    )
    parser.add_argument(
        "--no-plots", action="store_true", help="tables only (faster; the HTML page has no plots)"
    )
    parser.set_defaults(handler=run_command)


def run_command(args) -> int:
    results = load_results(Path(args.results))
    settings = Settings(
        noise=args.noise,
        alpha=args.alpha,
        resamples=args.resamples,
        seed=args.seed,
        plots=not args.no_plots,
    )
    report = build_report(results, settings)
    out = Path(args.output) if args.output else results.root / "report"
    page = write_report(report, out)
    print(terminal_text(report))
    print()
    print(f"report: {page}")
    skipped = sweeps_inside(args.results)
    if skipped:
        print(
            f"skipped {len(skipped)} sweep folder{'s' if len(skipped) != 1 else ''} "
            f"inside it (a sweep is reported on its own: psbench report "
            f"{skipped[0]}): {', '.join(d.name for d in skipped)}"
        )
    print(
        f"tables: {out}/<table>.md|csv|json|tex (report.md, report.tex, report.json); "
        f"plots: {out / 'plots'}"
    )
    return 0
