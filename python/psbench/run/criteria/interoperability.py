"""Interoperability: the interop matrix (run/interop.py, `psbench interop`) of the
drivers that speak one wire protocol (manifests' `wire`), short. A driver's verdict
comes from its cross-vendor cells (itself against another driver, either role): yes
when, with some other driver, every cell both ways matched and delivered every sample;
partial when only some cells did; no when none did. Not applicable: no wire protocol, or
no other built driver speaking it here."""

from psbench.base import manifests
from psbench.run import interop
from psbench.run.criteria.context import Context
from psbench.run.criteria.verdict import NO, NOT_APPLICABLE, PARTIAL, YES, Verdict

NAME = "interoperability"
TITLE = "interoperability"


def judge(driver: str, wire: str | None, cells: list[dict], run_dir: str | None = None) -> Verdict:
    """cells: the matrix's cells (interop.json's: ping, pong, reliability, size, status,
    sent, delivered); only those between this driver and another count."""
    if not wire:
        return Verdict(NAME, driver, NOT_APPLICABLE,
                       "its manifest declares no wire protocol shared with other drivers")  # fmt: skip
    cross = [c for c in cells if driver in (c["ping"], c["pong"]) and c["ping"] != c["pong"]]
    if not cross:
        return Verdict(NAME, driver, NOT_APPLICABLE,
                       f"no other driver built here speaks {wire}", figures={"wire": wire})  # fmt: skip

    def works(c: dict) -> bool:
        return (
            c.get("status") == "ok"
            and c.get("sent") is not None
            and c.get("delivered") == c["sent"]
        )

    partners = sorted({c["pong"] if c["ping"] == driver else c["ping"] for c in cross})
    per_partner = {}
    for other in partners:
        mine = [c for c in cross if other in (c["ping"], c["pong"])]
        per_partner[other] = {"cells": len(mine), "worked": sum(map(works, mine)),
                              "both_ways": {c["ping"] for c in mine if works(c)} == {driver, other}}  # fmt: skip
    worked = sum(map(works, cross))
    full = [o for o, p in per_partner.items() if p["worked"] == p["cells"] and p["both_ways"]]
    verdict = YES if full else PARTIAL if worked else NO
    parts = [f"{other}: {p['worked']} of {p['cells']} cells delivered every sample"
             for other, p in per_partner.items()]  # fmt: skip
    failed = [f"{c['ping']}→{c['pong']} {c['reliability']} {c['size']} B: "
              f"{c.get('step') or c.get('status')}" for c in cross if not works(c)]  # fmt: skip
    evidence = f"interop matrix over {wire}: " + "; ".join(parts)
    if failed:
        evidence += "; failed: " + "; ".join(failed[:4]) + (" ..." if len(failed) > 4 else "")
    return Verdict(NAME, driver, verdict, evidence, experiment=f"psbench interop --wire {wire}",
                   figures={"wire": wire, "partners": per_partner, "cells": len(cross),
                            "worked": worked}, run_dir=run_dir)  # fmt: skip


def assess(ctx: Context) -> dict[str, Verdict]:
    found, wires = {}, {}
    for driver in ctx.drivers:
        wire = manifests.load(driver).wire
        if wire:
            wires.setdefault(wire, []).append(driver)
        else:
            found[driver] = judge(driver, None, [])
    for wire, chosen in wires.items():
        # Its partners: every built driver of the wire, also those --drivers left out.
        speakers = [d for d in manifests.speaking(wire) if d in ctx.built]
        cells: list[dict] = []
        out = None
        if len(speakers) > 1:
            out = ctx.folder(NAME) / wire
            out.mkdir(exist_ok=True)
            sizes = (64,) if ctx.quick else interop.SIZES
            reliabilities = ("reliable",) if ctx.quick else interop.RELIABILITIES

            def on_cell(cell, number, total):
                ctx.stop_if_interrupted(cell.status)
                state = "ok" if cell.works else (cell.step or cell.status)
                ctx.say(f"[criteria {NAME} {number}/{total}] {cell.ping} → {cell.pong} "
                        f"{cell.reliability} {cell.size} B: {state}")  # fmt: skip

            ctx.measuring(*speakers)
            done = interop.run_matrix(speakers, {d: ctx.built[d] for d in speakers}, out,
                                      ctx.env, ctx.cli_argv, ctx.pool,
                                      count=50 if ctx.quick else 200, match_timeout=10.0,
                                      reliabilities=reliabilities, sizes=sizes,
                                      on_cell=on_cell)  # fmt: skip
            cells = [c.__dict__ for c in done]
        for driver in chosen:
            found[driver] = judge(driver, wire, cells, str(out) if out else None)
    return found
