"""`psbench history add DIR...`, `history list`, `history trend`: result sets in one
SQLite database, and the trend of every configuration over them with the changes the
significance tests call real; `--fail-on-regression` exits 1 on a regression, for CI
(docs/history.md)."""

import argparse
import json
import shutil
import sys
from datetime import datetime
from pathlib import Path

from psbench.base import paths
from psbench.base.errors import UserError
from psbench.base.options import noise_fraction, positive_int, probability
from psbench.cli.commands import subcommands
from psbench.history import page, tables
from psbench.history.database import Database
from psbench.history.ingest import Refused, content_hash, find_sets, read_set, starts
from psbench.history.trend import (
    AXES,
    DEFAULT_MIN_RUNS,
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW,
    FAIL_ON,
    SampleSource,
    Settings,
    build_series,
    judge,
    regressions,
)
from psbench.report import formats
from psbench.results.store import INDEX_FILE

ADD_HELP = (
    "add result sets (a sweep, a run, a rate search, a criteria battery, or a folder "
    "holding them such as results/) to the history database; a set already there is "
    "left as it is, a damaged one refused with the reason"
)
LIST_HELP = "the result sets in the history: when, where, which versions, how many runs"
TREND_HELP = (
    "per configuration, p50, p99, throughput and CPU per message against date, version or "
    "machine, with the changes the significance tests call real beyond the noise learnt "
    "from repetitions; tables, PNG/SVG figures and an HTML page"
)
DB_FILE = "history.sqlite"
TREND_FORMAT = "psbench-history-trend/1"


def default_db() -> Path:
    return paths.results_dir() / DB_FILE


def _db_argument(parser) -> None:
    parser.add_argument(
        "--db",
        metavar="FILE",
        type=Path,
        default=None,
        help=f"the history database (default results/{DB_FILE}; $PSBENCH_RESULTS moves results/)",
    )


def _date(text: str) -> str:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"is a date like 2026-11-29 or 2026-11-29T12:00:00, got {text!r}"
        ) from None


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("history")
    add, listing, trend = subcommands(
        parser, {"add": ADD_HELP, "list": LIST_HELP, "trend": TREND_HELP}
    )
    add.add_argument("dirs", nargs="+", metavar="DIR", help="result sets, or folders of them")
    _db_argument(add)
    add.set_defaults(handler=add_command)
    _db_argument(listing)
    listing.add_argument("--json", action="store_true", help="the sets as JSON on stdout")
    listing.set_defaults(handler=list_command)
    _db_argument(trend)
    trend.add_argument(
        "--by", choices=AXES, default="date", help="the x axis (default date: one point per set)"
    )
    trend.add_argument("--driver", action="append", metavar="NAME", help="these drivers only")
    trend.add_argument(
        "--config", action="append", metavar="TEXT", help="series whose name holds TEXT only"
    )
    trend.add_argument("--machine", action="append", metavar="NAME", help="these machines only")
    trend.add_argument(
        "--since", type=_date, metavar="DATE", help="sets started on or after DATE only (UTC)"
    )
    trend.add_argument(
        "-o", "--output", metavar="OUT", help="where to write the page, tables and figures "
        "(default history-trend/ beside the database; an earlier trend there is replaced)"
    )  # fmt: skip
    trend.add_argument(
        "--threshold",
        type=noise_fraction,
        default=DEFAULT_THRESHOLD,
        metavar="FRACTION",
        help=f"the least noise band, whatever the repetitions say (default "
        f"{DEFAULT_THRESHOLD:g} = 5%%)",
    )
    trend.add_argument(
        "--min-runs",
        type=positive_int,
        default=DEFAULT_MIN_RUNS,
        metavar="N",
        help=f"runs of an unchanged configuration needed to learn its noise; a change with "
        f"fewer is not judged (default {DEFAULT_MIN_RUNS})",
    )
    trend.add_argument(
        "--window",
        type=positive_int,
        default=DEFAULT_WINDOW,
        metavar="N",
        help=f"a point is tested against at most the N points before it since the last "
        f"change (default {DEFAULT_WINDOW})",
    )
    trend.add_argument(
        "--alpha", type=probability, default=0.05, help="significance level (default 0.05)"
    )
    trend.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when the last change of a series is a regression (for CI)",
    )
    trend.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="p50",
        help="which metric's regression --fail-on-regression counts: p50, p99, throughput, "
        "cpu, or any of them (default p50)",
    )
    trend.add_argument("--no-plots", action="store_true", help="tables and page, no figures")
    trend.set_defaults(handler=trend_command)


def _db_path(args) -> Path:
    return (args.db if args.db is not None else default_db()).expanduser().resolve()


# add -------------------------------------------------------------------------------------


def add_command(args) -> int:
    roots = []
    for text in args.dirs:  # every argument checked before anything is written
        roots += [r for r in find_sets(text) if r not in roots]
    db_path = _db_path(args)
    leave_out = {db_path, db_path.with_name(db_path.name + "-journal")}
    refused = 0
    with Database.open(db_path, create=True) as db:
        for root in roots:
            try:
                print(_add_one(db, root, leave_out))
            except Refused as exc:
                refused += 1
                print(f"psbench: refused {root}: {exc}", file=sys.stderr)
        counts = db.counts()
    print(
        f"history: {db_path}: {counts['result_sets']} sets, {counts['configs']} "
        f"configurations, {counts['runs']} runs"
        + (f"; {refused} set{'s' if refused > 1 else ''} refused (above)" if refused else "")
    )
    return 1 if refused else 0


def _add_one(db: Database, root: Path, leave_out: set[Path]) -> str:
    """Adds one set, in one transaction; the line saying what happened."""
    identity = content_hash(root, leave_out)
    found = db.set_by_hash(identity)
    if found is not None:
        if found["path"] != str(root) and not Path(found["path"]).is_dir():
            db.move(found["id"], str(root))
            return f"moved: {root} (set {found['id']}; it was at {found['path']})"
        return f"already in the history: {root} (set {found['id']}, added {found['added_utc']})"
    row = read_set(root, leave_out, identity)
    index = (root / INDEX_FILE).read_bytes() if row.kind == "sweep" else b""
    earlier = db.sets_of_origin(row.origin)
    shorter = [e for e in earlier if starts(index, e["index_size"], e["index_sha256"])]
    longer = [e for e in earlier if starts(_index_of(e), row.index_size, row.index_sha256)]
    if longer:
        return (
            f"already in the history in a longer form: {root} is set {longer[0]['id']} "
            f"before `--resume` added runs to it; nothing added"
        )
    set_id, added = db.add(row, [e["id"] for e in shorter])
    if not added:
        return f"already in the history: {root} (set {set_id}, added by another history add)"
    what = f"{row.runs} runs in {len(row.config_rows)} configurations"
    if row.criterion_rows:
        what += f", {len(row.criterion_rows)} criteria verdicts"
    if shorter:
        replaced = ", ".join(str(e["id"]) for e in shorter)
        return f"added: {root} (set {set_id}, {what}; it replaces set {replaced}, its shorter form)"
    return f"added: {root} (set {set_id}, {what}, {row.machine}, {row.started_utc})"


def _index_of(earlier) -> bytes:
    path = Path(earlier["path"]) / INDEX_FILE
    return path.read_bytes() if path.is_file() else b""


# list ------------------------------------------------------------------------------------


def _open_existing(args) -> Database:
    return Database.open(_db_path(args), create=False)


def _sets_table(db: Database, only: set[int] | None = None):
    by_set: dict[int, list] = {}
    for config in db.configs():
        by_set.setdefault(config["set_id"], []).append(config)
    sets = [s for s in db.sets() if only is None or s["id"] in only]
    return tables.sets_table(sets, by_set)


def list_command(args) -> int:
    with _open_existing(args) as db:
        table = _sets_table(db)
        sets = table.rows
    if args.json:
        print(json.dumps(formats.json_value(table), indent=2, ensure_ascii=False))
        return 0
    if not sets:
        print(f"history: {_db_path(args)} holds no result set yet (psbench history add DIR)")
        return 0
    print(formats.terminal(table))
    return 0


# trend -----------------------------------------------------------------------------------


def _output_dir(args, db_path: Path) -> Path:
    out = Path(args.output).expanduser() if args.output else db_path.parent / "history-trend"
    if not out.parent.is_dir():
        raise UserError(
            f"-o {out}: folder {out.parent} does not exist; create it or write elsewhere"
        )
    if out.exists() and not out.is_dir():
        raise UserError(f"-o {out}: is a file; give a folder")
    return out


def _selected(rows, args) -> list:
    def keep(row) -> bool:
        if args.driver and row["driver"] not in args.driver:
            return False
        if args.machine and row["machine"] not in args.machine:
            return False
        if args.since and (row["started_utc"] or row["added_utc"]) < args.since:
            return False
        return True

    return [r for r in rows if keep(r)]


def _nothing(db_path: Path, args, rows) -> UserError:
    if not rows:
        return UserError(
            f"--db {db_path}: holds no measured configuration yet (no set, or criteria "
            f"verdicts only); psbench history add DIR first"
        )
    asked = [
        f"--{name} {value if isinstance(value, str) else ','.join(value)}"
        for name in ("driver", "config", "machine", "since")
        if (value := getattr(args, name))
    ]
    drivers = sorted({r["driver"] for r in rows if r["driver"]})
    machines = sorted({r["machine"] for r in rows if r["machine"]})
    return UserError(
        f"{' '.join(asked)}: no configuration in the history matches; it has drivers "
        f"{', '.join(drivers) or 'none'} on machines {', '.join(machines) or 'none'}"
    )


def trend_command(args) -> int:
    db_path = _db_path(args)
    out = _output_dir(args, db_path)
    settings = Settings(args.by, args.threshold, args.alpha, args.min_runs, args.window)
    with _open_existing(args) as db:
        rows = db.configs()
        series = build_series(db, _selected(rows, args), settings)
        if args.config:
            series = [s for s in series if any(text in s.label for text in args.config)]
        if not series:
            raise _nothing(db_path, args, rows)
        judge(series, settings, SampleSource(db))
        used = {set_id for one in series for p in one.points for set_id in p.set_ids}
        sets_table = _sets_table(db, used)
    summary_table = tables.last_changes_table(series, args.by)
    marked = tables.marked_table(series)
    print(formats.terminal(summary_table))
    if marked.rows:
        print("\n" + formats.terminal(marked))
    warnings = _warnings(series)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    found = regressions(series, args.fail_on)
    verdict = _verdict_line(found, args.fail_on)
    print(f"\n{verdict}")
    _write(out, args, series, [summary_table, marked, sets_table], warnings, verdict)
    print(f"trend: {out / 'trend.html'}")
    return 1 if args.fail_on_regression and found else 0


def _warnings(series) -> list[str]:
    found = []
    for one in series:
        notes = {c.note for changes in one.changes.values() for c in changes if c.note}
        found += [f"{one.label}: {note}" for note in sorted(notes)]
    return found


def _verdict_line(found, fail_on: str) -> str:
    if not found:
        return f"regression at the last point ({fail_on}): none"
    named = "; ".join(
        f"{one.label}: {c.metric} ×{c.ratio:.3f} at {one.points[c.after].shown} against "
        f"{tables.reference_text(one, c)} (beyond ±{c.threshold:.0%})"
        for one, c in found
    )
    return f"regression at the last point ({fail_on}): {named}"


def _write(out: Path, args, series, all_tables, warnings, verdict: str) -> None:
    try:
        if out.exists():
            shutil.rmtree(out)
        plots_dir = out / "plots"
        plots_dir.mkdir(parents=True)
        plots = []
        if not args.no_plots:
            from psbench.history import figures  # matplotlib: only when drawing

            plots = [figures.draw(one, args.by, plots_dir, n) for n, one in enumerate(series, 1)]
        summary = [
            f"{len(series)} series against {args.by}, from the history {_db_path(args)}",
            verdict,
            f"noise band: learnt from repetitions of each unchanged configuration, at least "
            f"{args.threshold:.0%}; judged with at least {args.min_runs} runs to learn from",
        ]
        title = f"psbench history: trend against {args.by}"
        (out / "trend.html").write_text(page.render(title, summary, warnings, all_tables, plots))
        (out / "trend.md").write_text(
            "\n".join(formats.markdown(t) for t in all_tables) + f"\n{verdict}\n"
        )
        record = {
            "format": TREND_FORMAT,
            "by": args.by,
            "threshold": args.threshold,
            "min_runs": args.min_runs,
            "window": args.window,
            "alpha": args.alpha,
            "fail_on": args.fail_on,
            "regressions": [
                tables.change_record(one, c) for one, c in regressions(series, args.fail_on)
            ],
            "series": [tables.series_record(one) for one in series],
        }
        (out / "trend.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise UserError(f"-o {out}: cannot write: {exc.strerror}", exit_code=1) from None
