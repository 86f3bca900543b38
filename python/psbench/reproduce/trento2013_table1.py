"""Trento 2013's Table I: the 8-process cWalker application (graphs/cwalker.yaml) under
the paper's three mappings of modules onto two boards, latency at the Audio Visual
Interface (AVI), max / avg / stdev in µs per mapping and protocol, beside ours, and the
paper's two statements about it checked on our data.

The paper does not define its figure beyond "the worst-case and average latencies
measured [at] the output of the AVI module". Its averages (0.5 to 6 ms) are far below
the sampling delay a 10 ms periodic AVI adds to any chain, so psbench reads them as the
latency of the messages AVI takes (each one's write to its arrival at AVI, every input
together), and shows beside them the end-to-end reaction of the pose chain (LOC -> AVI's
output, docs/graphs.md), which includes that sampling."""

import numpy as np

from psbench.reproduce.common import Section, not_testable, published_marker
from psbench.reproduce.trento2013_claims import LAYOUT
from psbench.results.graph_records import RecordFileError, read_stream
from psbench.results.load import ResultSet
from psbench.results.run_record import block

SINK = "AVI"
CHAIN = "pose_to_avi"  # graphs/cwalker.yaml: LOC -> AVI
BOUND_US = 10_000
CELLS = (
    "max",
    "avg",
    "stdev",
    "chain_p50",
    "chain_max",
)  # the paper's smallest period, which both statements compare with


def _runs(results: ResultSet) -> dict[tuple[int, str], list]:
    """(mapping number, driver) -> the ok graph runs of the cWalker, each once (a graph
    run stands for one configuration per path in a result set)."""
    found: dict[tuple[int, str], dict] = {}
    for run in results.runs:
        graph = block(run.run_record, "graph")
        if run.kind != "graph" or run.status != "ok" or graph.get("graph") != "cwalker":
            continue
        number = int(str(graph["mapping"]).removeprefix("mapping") or 0)
        found.setdefault((number, run.driver), {})[str(run.run_dir)] = run
    return {key: list(runs.values()) for key, runs in found.items()}


def _arrivals_us(runs: list) -> np.ndarray:
    """Every message AVI took in these runs: arrival minus write, µs."""
    each = []
    for run in runs:
        try:
            arrivals = read_stream(run.run_dir / f"{SINK}.arrivals", "arrivals")
        except RecordFileError:
            continue
        each.append((arrivals["arrival_ns"] - arrivals["send_ns"]) / 1000.0)
    return np.concatenate(each) if each else np.empty(0)


def _chain(runs: list) -> tuple[float | None, float | None]:
    """The pose chain's reaction p50 and max, µs: the median of the runs' p50, the
    largest max."""
    paths = [(r.run_record["graph"]["paths"].get(CHAIN) or {}).get("reaction") or {} for r in runs]
    p50s = [p["p50"] for p in paths if p.get("p50") is not None]
    maxes = [p["max"] for p in paths if p.get("max") is not None]
    return (float(np.median(p50s)) / 1000 if p50s else None,
            max(maxes) / 1000 if maxes else None)  # fmt: skip


def measured(results: ResultSet) -> dict[tuple[int, str], dict]:
    """(mapping, driver) -> ours: max, avg, stdev of AVI's messages (µs), n, runs, and
    the pose chain's reaction p50 and max."""
    found = {}
    for key, runs in _runs(results).items():
        taken = _arrivals_us(runs)
        if not taken.size:
            continue
        p50, worst = _chain(runs)
        found[key] = {
            "max": float(taken.max()),
            "avg": float(taken.mean()),
            "stdev": float(taken.std(ddof=1)) if taken.size > 1 else 0.0,
            "n": int(taken.size),
            "runs": len(runs),
            "chain_p50": p50,
            "chain_max": worst,
        }
    return found


def _table(ours: dict, published: dict, where: str):
    # The drivers in each protocol's role (published `systems`): a row for each.
    drivers_of: dict[str, list] = {}
    for driver, name in (published.get("systems") or {}).items():
        drivers_of.setdefault(name, []).append(driver)
    rows = []
    printed = (published.get("table_1") or {}).get("rows") or []
    for row, driver in ((r, d) for r in printed for d in drivers_of.get(r["protocol"]) or [None]):
        mine = ours.get((int(row["mapping"]), driver)) or {}
        cell = {k: None if mine.get(k) is None else round(mine[k], 1) for k in CELLS}.get
        rows.append([
            row["mapping"], row["protocol"], row["max"], row["avg"], row["stdev"],
            f"{driver} ({'stand-in, ' if LAYOUT.stands_in(driver) else ''}"
            f"{'measured' if mine else 'not measured'})", cell("max"), cell("avg"),
            cell("stdev"), mine.get("n"), cell("chain_p50"), cell("chain_max"),
        ])  # fmt: skip
    return LAYOUT.table("table1", rows, marker=published_marker(published), where=where)


def _claims(ours: dict, published: dict):
    """The two statements of Section IV on Table I, on our figures."""
    mappings = sorted({m for m, _ in ours})
    where = f"mapping{'s' if len(mappings) > 1 else ''} " + ", ".join(map(str, mappings))
    drivers = {d for _, d in ours}
    # A stand-in is left out where the paper's own system was measured (the layout's `real`).
    drivers = {d for d in drivers if LAYOUT.judged(d, drivers) == d}
    averages = {d: max(v["avg"] for key, v in ours.items() if key[1] == d) for d in drivers}
    worst = {d: max(v["max"] for key, v in ours.items() if key[1] == d) for d in drivers}
    rows = []
    if not ours:
        verdict = not_testable("no cWalker graph run ended ok in this result set")
        rows = [["table1-average-below-10ms", "-", verdict],
                ["table1-only-zeromq-worst-below-10ms", "-", verdict]]  # fmt: skip
    else:
        text = ", ".join(f"{d} {averages[d]:,.1f}" for d in sorted(averages))
        rows.append(["table1-average-below-10ms", f"largest average µs over {where}: {text}",
                     "agrees" if all(a < BOUND_US for a in averages.values()) else "differs"])  # fmt: skip
        text = ", ".join(f"{d} {worst[d]:,.1f}" for d in sorted(worst))
        zeromq = worst.get("zeromq")
        others = [d for d in worst if d != "zeromq"]
        if zeromq is None or not others:
            verdict = "partly (" + ("ZeroMQ" if zeromq is None else "the others") + " not measured)"
        elif zeromq < BOUND_US and all(worst[d] >= BOUND_US for d in others):
            verdict = "agrees"
        elif zeromq < BOUND_US:
            below = sorted(d for d in others if worst[d] < BOUND_US)  # not the set's order
            verdict = "partly (" + ", ".join(below) + " below it too)"
        else:
            verdict = "differs"
        rows.append(["table1-only-zeromq-worst-below-10ms",
                     f"largest worst case µs over {where}: {text}", verdict])  # fmt: skip
    texts = LAYOUT.text("table1_claims")
    rows = [[claim, texts[claim], mine, verdict] for claim, mine, verdict in rows]
    return LAYOUT.table("table1-claims", rows, marker=published_marker(published))


def table_one_section(results: ResultSet, published: dict, where: str) -> Section:
    ours = measured(results)
    notes = []
    if not ours:
        notes.append("no cWalker graph run ended ok here: the table shows the paper's "
                     "figures only (the experiment file's graph runs do this)")  # fmt: skip
    return LAYOUT.section("table1", [_table(ours, published, where), _claims(ours, published)],
                          notes=notes)  # fmt: skip
