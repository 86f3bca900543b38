"""Trento 2013 (Rizano, Abeni, Palopoli, "Experimental Evaluation of the Real-Time
Performance of Publish-Subscribe Middlewares", REACTION 2013), reproduced: average and
worst-case publish-subscribe latency against 1 to 4 subscribers (the paper's Figure 3,
and Figure 4's across two boards) and against message size up to 1,000 B (Figure 5),
ZeroMQ against the RTPS implementations, every process at SCHED_FIFO 99.

The paper plots its figures without printing their values, so the published side is
what its text says about them (experiments/seeds/trento2013.published.yaml: statements
with bounds), each checked against our runs in the section *The paper's statements*.

Average is the mean and worst case the maximum of every sample of a configuration: all
its subscribers' samples together (the paper's "latency ... to the subscribers"), all
repetitions together (a worst case is the worst of everything measured, not a median of
maxima). One-way latency: receive time minus the moment the publisher's write began
(`latency_from: send` in the study's files: the paper's "generation of a message"), on
one clock: one host's, or the one the emulated hosts of the network variant share
(`--network`: the publisher on one host, the subscribers on another, as the paper's
Figures 4 and 5). A statement the paper makes of one node is not testable across hosts,
and one it makes of two boards is checked on one host over loopback: each claim's row says
which.
"""

import numpy as np

from psbench.reproduce.common import Section, on_hosts, published_marker, where_measured
from psbench.reproduce.layout import Line
from psbench.reproduce.trento2013_claims import LAYOUT, _claims_table, _figures, _name
from psbench.reproduce.trento2013_table1 import table_one_section
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet, implied_setting

# The paper runs everything at "the maximum real-time priority" of SCHED_FIFO: 99 on
# Linux (sched_get_priority_max(SCHED_FIFO)).
FIFO_MAX = 99


def _paper_system(driver: str, published: dict) -> str:
    """The paper's system a driver is or stands in for (published `systems`; "(stand-in)"
    after a stand-in's, the layout's `real`), or floor."""
    floor = (LAYOUT.data.get("floors") or {}).get(driver)
    system = (published.get("systems") or {}).get(driver)
    if system and LAYOUT.stands_in(driver):
        return f"{system} (stand-in)"
    return system or floor or "-"


# The measured figures ---------------------------------------------------------------


def _series(configs: list[Config], key: str) -> dict[str, list[tuple[int, Config]]]:
    """driver -> [(value of key, config)] of the configurations of that driver that
    differ only in key (the first such series of a driver with 2 or more values), sorted
    by the value; configurations without an ok run are left out."""
    usable = [c for c in configs if c.kind == "pubsub" and c.ok_runs and c.pooled_ns.size]
    groups: dict[str, dict] = {}
    for config in usable:
        rest = tuple(sorted((k, str(v)) for k, v in config.params.items() if k != key))
        groups.setdefault(rest, []).append(config)
    found: dict[str, list[tuple[int, Config]]] = {}
    for members in groups.values():
        points = sorted(((implied_setting(c.params, key), c) for c in members),
                        key=lambda item: item[0])  # fmt: skip
        driver = members[0].driver
        if len(points) >= 2 and driver not in found:
            found[driver] = points
    return {d: found[d] for d in LAYOUT.ranked(found)}


def _figure_table(key: str, column: tuple, series: dict, published: dict, where: str):
    rows = []
    for driver, points in series.items():
        for value, config in points:
            f = _figures(config)
            rows.append({"middleware": _name(driver), "paper_system": _paper_system(driver, published),
                         column[1]: value, **{f"{k}_ns": f[k] for k in ("mean", "max", "stdev", "p99")},
                         "n": f["n"], "lost": f["lost"]})  # fmt: skip
    return LAYOUT.table(key, rows, by_title=column[0], by=column[1], where=where)


def _drawing(key: str, series: dict, published: dict):
    return LAYOUT.drawing(key, [
        [Line([v for v, _ in points], [(_figures(c)[stat] or np.nan) / 1000.0 for _, c in points],
              f"{_name(d)} ({_paper_system(d, published)})", None,
              {"marker": "o", "color": f"C{index % 10}"})
         for index, (d, points) in enumerate(series.items())]
        for stat in ("mean", "max")
    ])  # fmt: skip


# Runs and their scheduling ------------------------------------------------------------


def _fifo_of(run) -> tuple[int, int]:
    """(processes at SCHED_FIFO FIFO_MAX, processes) of a run, from the nodes' summaries."""
    realtime = [s.get("realtime") or {} for s in run.summaries.values()]
    at_max = sum(1 for r in realtime if r.get("sched_policy") == "SCHED_FIFO"
                 and r.get("sched_priority") == FIFO_MAX)  # fmt: skip
    return at_max, len(realtime)


def _runs_section(results: ResultSet, published: dict) -> Section:
    rows, notes, seen = [], [], set()
    for run in results.runs:
        if run.graph_path is not None and run.run_dir in seen:
            continue  # a graph run stands for one configuration per path: listed once
        seen.add(run.run_dir)
        label = run.label.rsplit(" ", 1)[0] if run.graph_path is not None else run.label
        record = run.run_record or {}
        at_max, total = _fifo_of(run)
        rows.append([run.number, label, _name(run.driver), (record.get("driver") or {}).get("version"),
                     run.status, f"{at_max} of {total}" if total else "-",
                     (record.get("cpu_sharing") or {}).get("pinned")])  # fmt: skip
        if run.status == "ok" and at_max < total:
            notes.append(LAYOUT.text("not_fifo", number=run.number, label=label,
                                     missing=total - at_max, total=total, fifo=FIFO_MAX))  # fmt: skip
        if run.status != "ok":
            notes.append(LAYOUT.text("not_ok", number=run.number, label=label, status=run.status,
                                     message=run.message or "no message"))  # fmt: skip
    measured = {r.driver for r in results.runs if r.status == "ok"}
    for driver, system in (published.get("systems") or {}).items():
        stand_in = LAYOUT.real.get(driver)
        if driver in measured:
            continue
        if stand_in in measured:  # the paper's own system is not built (or failed) here
            notes.append(LAYOUT.text("real_not_measured", name=_name(driver),
                                     stand_in=_name(stand_in), driver=driver))  # fmt: skip
        elif not LAYOUT.stands_in(driver) or LAYOUT.judged(driver, measured) == driver:
            notes.append(LAYOUT.text("no_counterpart", name=_name(driver), system=system))
    table = LAYOUT.table("runs", rows, fifo=FIFO_MAX)
    return LAYOUT.section("runs", [table], notes=notes or [LAYOUT.text("all_fifo", fifo=FIFO_MAX)])


# The sections -------------------------------------------------------------------------


def _placement(results: ResultSet) -> str:
    """Where the publisher and the subscribers ran (the runs' `place`)."""

    def hosts(value) -> str:
        return ", ".join(map(str, value)) if isinstance(value, list) else str(value)

    places = {(hosts(place.get("pub")), hosts(place.get("sub")))
              for place in (run.params.get("place") or {} for run in results.runs) if place}  # fmt: skip
    return "; ".join(f"the publisher on {p}, the subscribers on {s}" for p, s in sorted(places))


def _sizes_note(by_subs: dict) -> str:
    sizes = sorted({c.size for points in by_subs.values() for _, c in points if c.size})
    if not sizes:
        return "no subscriber sweep"
    return ("message size " + ", ".join(f"{s} B" for s in sizes)
            + " (the paper does not say which size its Figures 3 and 4 used)")  # fmt: skip


def sections(results: ResultSet, published: dict) -> list[Section]:
    # The figures are of the pubsub runs; the graph runs make Table I.
    configs = [c for c in build_configs(results) if c.kind == "pubsub"]
    by_subs, by_size = _series(configs, "subscribers"), _series(configs, "size")
    marker, where = published_marker(published), where_measured(results)
    across = f"{where}, {_placement(results)}" if on_hosts(results) else None
    ours = (
        LAYOUT.text("ours_across_hosts", across=across) if across else LAYOUT.text("ours_one_host")
    )
    subs = LAYOUT.section(
        "subscribers",
        [_figure_table("figure3", ("subscribers", "subscribers"), by_subs, published, where)],
        [_drawing("figure3", by_subs, published)] if by_subs else [],
        [] if by_subs else [LAYOUT.text("no_subscriber_sweep")],
        ours=ours, sizes=_sizes_note(by_subs), marker=marker,
    )  # fmt: skip
    size = LAYOUT.section(
        "size",
        [_figure_table("figure5", ("size B", "size"), by_size, published, where)],
        [_drawing("figure5", by_size, published)] if by_size else [],
        [] if by_size else [LAYOUT.text("no_size_sweep")],
        where=across or "one host, loopback", marker=marker,
    )  # fmt: skip
    claims = LAYOUT.section("claims", [_claims_table(by_subs, by_size, published, across)])
    table1 = table_one_section(results, published, where)
    return [subs, size, claims, table1, _runs_section(results, published)]
