"""`psbench compare DIR_A DIR_B`: is B slower than A? One verdict per configuration and
an exit code for CI: 0 no regression, 1 a regression, 2 bad arguments or nothing to
compare (docs/compare.md)."""

import json
from pathlib import Path

from psbench.base.errors import UserError
from psbench.base.options import noise_fraction, non_negative_int, probability
from psbench.cli.cmd_report import add_resamples_argument
from psbench.report import formats
from psbench.report.compare import (
    DEFAULT_THRESHOLD,
    FAIL_ON,
    Comparison,
    Settings,
    compare,
    summary_line,
    tables,
)
from psbench.results.load import load_results
from psbench.results.significance import DEFAULT_CONFIDENCE, DEFAULT_SEED

JSON_FORMAT = "psbench-compare/1"


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("compare")
    parser.add_argument(
        "dir_a",
        metavar="DIR_A",
        help="the reference results (e.g. of the main branch): a sweep, "
        "a run folder, or a folder of run folders",
    )
    parser.add_argument("dir_b", metavar="DIR_B", help="the candidate results")
    parser.add_argument(
        "--threshold",
        type=noise_fraction,
        default=DEFAULT_THRESHOLD,
        metavar="FRACTION",
        help=f"changes smaller than this are noise (default {DEFAULT_THRESHOLD:g} = 5%%)",
    )
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="p50",
        help="which verdict counts as a regression: p50, p99, or any of them (default p50)",
    )
    parser.add_argument(
        "--confidence",
        type=probability,
        default=DEFAULT_CONFIDENCE,
        metavar="FRACTION",
        help=f"of the confidence intervals (default {DEFAULT_CONFIDENCE:g})",
    )
    add_resamples_argument(parser)
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=DEFAULT_SEED,
        metavar="N",
        help="accepted for older command lines; changes nothing (nothing is drawn at "
        "random: the same inputs give the same output)",
    )
    parser.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown too")
    parser.add_argument("--json", metavar="FILE", help="write the tables as JSON too")
    parser.set_defaults(handler=run_command)


def output_path(option: str, text: str | None) -> Path | None:
    """Checked before the work, so that a typo does not cost a comparison."""
    if text is None:
        return None
    path = Path(text).expanduser()
    if not path.parent.is_dir():
        raise UserError(
            f"{option} {text}: folder {path.parent} does not exist; create it "
            f"or write the file elsewhere"
        )
    return path


def load_side(side: str, folder: str):
    try:
        return load_results(folder)
    except UserError as exc:
        raise UserError(f"{side}: {exc}", exc.exit_code) from None


def nothing_in_common(comparison: Comparison, dir_a: str, dir_b: str) -> UserError:
    def listing(items):
        return "; ".join(u.label for u in items) or "nothing"

    return UserError(
        f"nothing to compare: no configuration is in both A and B (a configuration is "
        f"the same when every setting is, count and warmup included)\n"
        f"  A ({dir_a}) has: {listing(comparison.only_a)}\n"
        f"  B ({dir_b}) has: {listing(comparison.only_b)}"
    )


def markdown_text(all_tables, verdict: str) -> str:
    return "\n".join(formats.markdown(t) for t in all_tables) + f"\n{verdict}\n"


def json_text(args, all_tables, comparison: Comparison, verdict: str) -> str:
    settings = comparison.settings
    record = {
        "format": JSON_FORMAT,
        "a": args.dir_a,
        "b": args.dir_b,
        "threshold": settings.threshold,
        "fail_on": settings.fail_on,
        "confidence": settings.confidence,
        "resamples": settings.resamples,
        "seed": settings.seed,
        "counts": {v: comparison.count(v) for v in ("slower", "faster", "no change")},
        "regression": comparison.regression,
        "verdict": verdict,
        "tables": [formats.json_value(t) for t in all_tables],
    }
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def write_file(option: str, path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write: {exc.strerror}", 1) from None


def run_command(args) -> int:
    markdown_path = output_path("--markdown", args.markdown)
    json_path = output_path("--json", args.json)
    results_a = load_side("A", args.dir_a)
    results_b = load_side("B", args.dir_b)
    settings = Settings(args.threshold, args.confidence, args.resamples, args.seed, args.fail_on)
    comparison = compare(results_a, results_b, settings)
    if not comparison.changes and not comparison.not_comparable:
        raise nothing_in_common(comparison, args.dir_a, args.dir_b)
    all_tables = tables(comparison, args.dir_a, args.dir_b)
    print("\n\n".join(formats.terminal(t) for t in all_tables))
    if not comparison.changes:
        raise UserError(
            "nothing to compare: the configurations in both sets have no ok "
            "samples on one side (table above); rerun the runs that failed"
        )
    verdict = summary_line(comparison)
    print(f"\n{verdict}")
    if markdown_path:
        write_file("--markdown", markdown_path, markdown_text(all_tables, verdict))
    if json_path:
        write_file("--json", json_path, json_text(args, all_tables, comparison, verdict))
    return 1 if comparison.regression else 0
