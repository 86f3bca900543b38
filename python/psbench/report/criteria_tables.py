"""The criteria report's tables (psbench criteria): the matrix, one row per driver and
one column per criterion, each cell the verdict; and the evidence, one row per cell,
with the experiment, its figures, the run directory and a claim's source."""

import json
from pathlib import Path

from psbench.report.tables import Column, Table

MATRIX = "criteria-matrix"
EVIDENCE = "criteria-evidence"
# What --quick shortens, per criterion.
QUICK = {
    "interoperability": "the interop matrix at 64 B, reliable only, 50 round trips a cell",
    "discovery": "discovery with 1 and 10 subscribers (not 50)",
    "low_bandwidth": "low bandwidth 5 s at 50 Hz and 3 s as fast as possible (not 10 and 5)",
    "restart": "12 s with the broker killed 2 s in, down 1 s (not 20 s, killed 4 s in)",
    "routing": "100 round trips (not 200)",
}


def _relative(path: str | None, root: Path) -> str | None:
    if not path:
        return None
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def _cell(verdict) -> str:
    return verdict.verdict + (f" ({verdict.source})" if verdict.verdict.startswith("documented")
                              and verdict.source else "")  # fmt: skip


def matrix(record: dict, verdicts: list, with_sources: bool = False) -> Table:
    criteria = record.get("criteria") or []
    by_cell = {(v.driver, v.criterion): v for v in verdicts}
    columns = [Column("driver")] + [Column(c["title"], c["name"]) for c in criteria]
    rows = []
    for driver in record.get("drivers") or []:
        row = [driver]
        for c in criteria:
            v = by_cell.get((driver, c["name"]))
            row.append(None if v is None else _cell(v) if with_sources else v.verdict)
        rows.append(row)
    notes = [
        "each cell is psbench's verdict from an experiment or a reading on this machine "
        "(the evidence table says which, with its figures and run directory); "
        "'documented, not verified': a claim of the middleware's documentation, with its "
        "source; '-': not run (an interrupted battery, or --criteria left it out)",
    ]
    if record.get("quick"):
        names = {c["name"] for c in criteria}
        short = [text for name, text in QUICK.items() if name in names]
        notes.append("--quick: " + "; ".join(short or QUICK.values()))
    return Table(MATRIX, "Criteria matrix", columns, rows, notes)


def evidence(record: dict, verdicts: list, root: Path) -> Table:
    columns = [
        Column("driver"),
        Column("criterion"),
        Column("verdict"),
        Column("evidence"),
        Column("experiment"),
        Column("figures"),
        Column("run directory", "run_dir"),
        Column("source"),
    ]
    order = {c["name"]: i for i, c in enumerate(record.get("criteria") or [])}
    drivers = {d: i for i, d in enumerate(record.get("drivers") or [])}
    rows = [
        [
            v.driver,
            v.criterion,
            v.verdict,
            v.evidence,
            v.experiment,
            json.dumps(v.figures, ensure_ascii=False, sort_keys=True) if v.figures else None,
            _relative(v.run_dir, root),
            v.source,
        ]  # fmt: skip
        for v in sorted(
            verdicts, key=lambda v: (drivers.get(v.driver, 99), order.get(v.criterion, 99))
        )
    ]
    return Table(EVIDENCE, "Evidence", columns, rows,
                 [f"run directories relative to {root}"], folded=True)  # fmt: skip
