"""The interoperability matrix: every ordered pair of drivers that speak one wire protocol
(their manifests' `wire`, e.g. rtps) ping-ponging with a driver per role, for each
reliability and size, each cell a psbench run kept with its run.json. A cell whose samples
did not all arrive is run once more, short, with the wire watched (run/rtps_wire.py), to
tell at which step the two part (run/interop_steps.py); the watching never runs beside a
measured cell."""

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from psbench.base import manifests
from psbench.results import rundir
from psbench.run import measure, role_drivers
from psbench.run.interop_steps import diagnose
from psbench.run.rtps_wire import WireWatch
from psbench.run.spec import MeasureSpec

FORMAT = "psbench-interop/1"
RELIABILITIES = ("best_effort", "reliable")
SIZES = (64, 65536)  # 64 KiB: past every vendor's fragment size, so fragments must agree
DIAGNOSIS_COUNT = 20
DIAGNOSIS_TRIES = 3


@dataclass
class Cell:
    ping: str
    pong: str
    reliability: str
    size: int
    status: str = "not run"
    message: str | None = None
    matched: bool | None = None
    sent: int | None = None
    delivered: int | None = None
    rtt_p50_us: float | None = None
    rtt_p99_us: float | None = None
    step: str | None = None  # where a failed cell parts (None: it did not fail)
    why: str | None = None
    wire: list[dict] = field(default_factory=list)  # the diagnosis run's announcements
    run_dir: str | None = None

    @property
    def label(self) -> str:
        return role_drivers.label({"ping": self.ping, "pong": self.pong})

    @property
    def works(self) -> bool:
        return self.status == "ok" and self.sent is not None and self.delivered == self.sent


def pairs(drivers: list[str]) -> list[tuple[str, str]]:
    """Every ordered pair, each driver with itself too (the reference a cell is read
    against): ping's driver first."""
    return [(a, b) for a in drivers for b in drivers]


def cells(drivers: list[str], reliabilities=RELIABILITIES, sizes=SIZES) -> list[Cell]:
    return [
        Cell(ping, pong, reliability, size)
        for ping, pong in pairs(drivers)
        for reliability in reliabilities
        for size in sizes
    ]


def cell_spec(
    cell: Cell, libraries: dict[str, Path], count: int, match_timeout: float, transport=None
):
    """The ping-pong of one cell: every other setting is each driver's default, the same
    for both (notify, options; the transport too unless one is given for all), so what
    is compared is the pairing alone."""
    per_role = {"ping": str(libraries[cell.ping]), "pong": str(libraries[cell.pong])}
    return MeasureSpec(
        kind="ping",
        driver=cell.label,
        driver_path=Path(per_role["ping"]),
        role_drivers=per_role,
        size=cell.size,
        count=count,
        reliability=cell.reliability,
        match_timeout=match_timeout,
        timeout=max(60.0, 4 * match_timeout),
        transport=transport,
    )


def _fill(cell: Cell, outcome) -> None:
    cell.status, cell.message, cell.run_dir = outcome.status, outcome.message, str(outcome.run_dir)
    counts = (outcome.summaries.get("ping") or {}).get("counts") or {}
    cell.sent, cell.delivered = counts.get("sent"), counts.get("received")
    # Past the handshake (pong's echo came back) both topics matched; a match timeout
    # says they did not; anything else (a refusal, a crash) says nothing of it.
    if outcome.status == "ok" or counts.get("received"):
        cell.matched = True
    elif "match timeout" in (outcome.message or ""):
        cell.matched = False
    rtt = (outcome.stats.get("ping") or {}).get("rtt") or {}
    if rtt.get("p50") is not None:
        cell.rtt_p50_us = rtt["p50"] / 1000
    if rtt.get("p99") is not None:
        cell.rtt_p99_us = rtt["p99"] / 1000


def _vendor_names(drivers: list[str]) -> dict[str, str]:
    return {m.wire_vendor: m.name for m in map(manifests.load, drivers) if m.wire_vendor}


def _diagnose(cell: Cell, spec: MeasureSpec, parent: Path, env: dict, names: dict, pool) -> None:
    """Runs the cell once more, short, with the wire watched; records the step. A busy
    machine can overrun the wire reader (it counts what it missed): then the step of a
    missing announcement is unknown, so the short run is repeated, DIAGNOSIS_TRIES at most."""
    short = replace(spec, count=DIAGNOSIS_COUNT, warmup=0)
    for _ in range(DIAGNOSIS_TRIES):
        with WireWatch() as watch:
            if not watch.available:
                cell.step, cell.why = "unknown", watch.why
                return
            outcome = measure.run(short, parent, env, ["interop", "diagnosis", cell.label], pool)
        seen = [
            replace(e, vendor=names.get(e.vendor, e.vendor))
            for e in watch.endpoints(outcome.run_id)
        ]
        cell.wire = [e.to_json() for e in seen]
        cell.step, cell.why = diagnose(seen, watch.dropped)
        if not watch.dropped:
            return


def run_matrix(
    drivers: list[str],
    libraries: dict[str, Path],
    out: Path,
    env: dict,
    cli_argv: list[str],
    pool=None,
    count: int = 200,
    match_timeout: float = 10.0,
    transport: str | None = None,
    reliabilities=RELIABILITIES,
    sizes=SIZES,
    on_cell=None,
) -> list[Cell]:
    """Runs every cell into out/ (one run directory each) and writes out/interop.json
    after each cell, so an interrupted matrix keeps what it measured. pool: the
    ServicePool that starts what a driver needs. on_cell(cell, i, n) after each cell."""
    todo = cells(drivers, reliabilities, sizes)
    names = _vendor_names(drivers)
    record = {
        "format": FORMAT,
        "created_utc": rundir.utc_now(),
        "cli_argv": cli_argv,
        "drivers": drivers,
        "count": count,
        "transport": transport,
        # No vendor configuration is added: each driver's defaults, alike in every cell.
        "configuration": "each driver's defaults (notify, options"
        + (")" if transport else ", transport)"),
        "cells": [],
    }
    for number, cell in enumerate(todo, 1):
        spec = cell_spec(cell, libraries, count, match_timeout, transport)
        outcome = measure.run(spec, out, env, cli_argv, pool)
        _fill(cell, outcome)
        if not cell.works and cell.status != "refused":
            _diagnose(cell, spec, out / "diagnosis", env, names, pool)
        record["cells"].append(cell.__dict__ | {"label": cell.label})
        (out / "interop.json").write_text(json.dumps(record, indent=1) + "\n")
        if on_cell is not None:
            on_cell(cell, number, len(todo))
    return todo
