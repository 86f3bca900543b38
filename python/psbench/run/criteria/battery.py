"""Runs the criteria's experiments one after another and keeps every verdict in the
result set's criteria.json, written after each criterion (an interrupted battery keeps
what it found), so the report can be rendered again from it alone."""

import importlib
import json
from pathlib import Path

from psbench.base.errors import UserError
from psbench.results import rundir
from psbench.run.criteria import documented
from psbench.run.criteria.context import Context
from psbench.run.criteria.verdict import Verdict

FORMAT = "psbench-criteria/1"
RECORD = "criteria.json"
# The criteria with an experiment (or a reading) of psbench's, in the matrix's order.
CRITERIA = ("architecture", "licence", "interoperability", "persistence", "restart",
            "monitoring", "discovery", "low_bandwidth", "routing")  # fmt: skip


def module(name: str):
    return importlib.import_module(f"psbench.run.criteria.{name}")


def titles(names) -> dict[str, str]:
    return {n: module(n).TITLE if n in CRITERIA else n for n in names}


def write(out: Path, record: dict) -> None:
    (out / RECORD).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def run(ctx: Context, chosen: tuple[str, ...] = CRITERIA, with_claims: bool = True) -> dict:
    """Every chosen criterion for every driver, then the documented ones; returns the
    record written to ctx.out/criteria.json."""
    claimed = documented.untested(ctx.drivers, list(CRITERIA)) if with_claims else []
    record = {
        "format": FORMAT,
        "created_utc": rundir.utc_now(),
        "finished_utc": None,
        "cli_argv": ctx.cli_argv,
        "quick": ctx.quick,
        "drivers": ctx.drivers,
        "criteria": [{"name": n, "title": t} for n, t in titles([*chosen, *claimed]).items()],
        "verdicts": [],
        "env": ctx.env,
    }
    write(ctx.out, record)
    for name in chosen:
        ctx.say(f"[criteria] {name}: {len(ctx.drivers)} driver(s)")
        try:
            found = module(name).assess(ctx)
        except KeyboardInterrupt:
            record["interrupted_in"] = name
            write(ctx.out, record)
            ctx.say(f"[criteria] interrupted in {name}; what was found is in {ctx.out} "
                    f"(psbench criteria --report {ctx.out} renders it)")  # fmt: skip
            raise
        record["verdicts"] += [found[d].to_json() for d in ctx.drivers]
        write(ctx.out, record)
    for name in claimed:
        found = documented.assess(ctx.drivers, name)
        record["verdicts"] += [found[d].to_json() for d in ctx.drivers]
    record["finished_utc"] = rundir.utc_now()
    write(ctx.out, record)
    return record


def load(path: Path) -> tuple[dict, list[Verdict]]:
    """A result set's criteria.json (path: the folder or the file) and its verdicts."""
    if not path.exists():
        raise UserError(f"argument --report: {path}: no such folder", 2)
    file = path / RECORD if path.is_dir() else path
    try:
        record = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{file}: cannot be read ({exc}); give a folder `psbench criteria` "
                        f"wrote", 2) from None  # fmt: skip
    if record.get("format") != FORMAT:
        raise UserError(f"{file}: format is {record.get('format')!r}, not {FORMAT}", 2)
    return record, [Verdict.from_json(v) for v in record.get("verdicts") or []]
