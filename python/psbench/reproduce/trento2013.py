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

import re

import numpy as np

from psbench.base.units import micros
from psbench.report.plots import PANEL_INCHES, STYLE, Drawing, _panels
from psbench.report.tables import Column, Table
from psbench.reproduce.common import (
    Section,
    not_testable,
    on_hosts,
    published_marker,
    where_measured,
)
from psbench.reproduce.trento2013_table1 import table_one_section
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet, implied_setting
from psbench.results.stats import nearest_rank

# What psbench calls each driver here, and the paper's system it stands for comes from
# the published file's `systems` (zeromq: ZeroMQ, cyclonedds: OpenDDS, fastdds: ORTE).
NAMES = {"zeromq": "ZeroMQ", "cyclonedds": "Cyclone DDS", "fastdds": "Fast DDS", "udp": "raw UDP"}
ORDER = ("zeromq", "cyclonedds", "fastdds", "udp")
# psbench's baseline: no middleware, the floor under the others (the paper had none).
FLOOR = {"udp": "floor"}
# The paper runs everything at "the maximum real-time priority" of SCHED_FIFO: 99 on
# Linux (sched_get_priority_max(SCHED_FIFO)).
FIFO_MAX = 99


def _name(driver: str) -> str:
    return NAMES.get(driver, driver)


def _paper_system(driver: str, published: dict) -> str:
    return (published.get("systems") or {}).get(driver) or FLOOR.get(driver) or "-"


def _driver_rank(driver: str) -> tuple:
    return (ORDER.index(driver) if driver in ORDER else len(ORDER), driver)


# The measured figures ---------------------------------------------------------------


def _figures(config: Config) -> dict:
    """n, average (mean), worst case (max), stdev, p99 of every sample of the
    configuration (all subscribers and repetitions together), in ns; lost summed."""
    values = config.pooled_ns
    found = {
        "n": int(values.size),
        "mean": None,
        "max": None,
        "stdev": None,
        "p99": None,
        "lost": config.counts.get("lost", 0) if config.ok_runs else None,
    }
    if values.size:
        found["mean"] = float(values.mean())
        found["max"] = float(values.max())
        found["stdev"] = float(values.std(ddof=1)) if values.size > 1 else None
        found["p99"] = float(nearest_rank(values, 99)) if values.size >= 100 else None
    return found


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
        points = sorted(
            ((implied_setting(c.params, key), c) for c in members), key=lambda item: item[0]
        )
        driver = members[0].driver
        if len(points) >= 2 and driver not in found:
            found[driver] = points
    return dict(sorted(found.items(), key=lambda item: _driver_rank(item[0])))


FIGURE_COLUMNS = [
    Column("n", "n", "count"),
    Column("average µs", "mean_ns", "us"),
    Column("worst case µs", "max_ns", "us"),
    Column("stdev µs", "stdev_ns", "us"),
    Column("p99 µs", "p99_ns", "us"),
    Column("lost", "lost", "count"),
]


def _figure_table(
    name: str,
    title: str,
    key_column: Column,
    series: dict[str, list[tuple[int, Config]]],
    published: dict,
    where: str = "over loopback (one host)",
) -> Table:
    columns = [
        Column("middleware", "middleware"),
        Column("paper's", "paper_system"),
        key_column,
        *FIGURE_COLUMNS,
    ]
    rows = []
    for driver, points in series.items():
        for value, config in points:
            f = _figures(config)
            rows.append(
                [
                    _name(driver),
                    _paper_system(driver, published),
                    value,
                    f["n"],
                    f["mean"],
                    f["max"],
                    f["stdev"],
                    f["p99"],
                    f["lost"],
                ]
            )
    notes = [
        "average = mean, worst case = maximum of every sample: all subscribers and "
        "repetitions together; one-way latency (receive time - start of the "
        f"publisher's write, on one monotonic clock), {where}",
        "paper's = the system of the paper this middleware stands for "
        "(experiments/seeds/trento2013.yaml says why); floor = psbench's raw UDP "
        "baseline, no middleware, which the paper did not have",
    ]
    return Table(name, title, columns, rows, notes)


def _drawing(
    name: str,
    title: str,
    caption: str,
    xlabel: str,
    series: dict[str, list[tuple[int, Config]]],
    published: dict,
    log_x: bool = False,
) -> Drawing:
    import matplotlib

    with matplotlib.rc_context(STYLE):
        figure, axes = _panels(2, PANEL_INCHES, 2)
        for ax, (stat, label) in zip(axes, (("mean", "average"), ("max", "worst case"))):
            for index, (driver, points) in enumerate(series.items()):
                xs = [value for value, _ in points]
                ys = [(_figures(c)[stat] or np.nan) / 1000.0 for _, c in points]
                ax.plot(
                    xs,
                    ys,
                    marker="o",
                    color=f"C{index % 10}",
                    label=f"{_name(driver)} ({_paper_system(driver, published)})",
                )
            if log_x:
                ax.set_xscale("log")
            xs_all = sorted({v for points in series.values() for v, _ in points})
            ax.set_xticks(xs_all)
            ax.set_xticklabels([str(v) for v in xs_all])
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"{label} latency (µs)")
            ax.set_ylim(bottom=0)
            ax.set_title(f"{label} one-way latency")
            ax.legend(fontsize=7)
    return Drawing(name, title, caption, figure)


# The paper's statements -------------------------------------------------------------


def _us(ns) -> str:
    return micros(ns, 1)


def _check_below(claim: dict, by_subs: dict, stat: str, only: bool = False) -> tuple[str, str]:
    """Whether each listed system's largest `stat` over the subscriber sweep is below the
    claim's bound; with only, also whether every other system's is not."""
    bound = float(claim["bound_us"]) * 1000
    listed = list(claim.get("systems") or ORDER)
    drivers = listed + ([d for d in by_subs if d not in listed] if only else [])
    parts, below = [], {}
    for driver in drivers:
        points = by_subs.get(driver)
        if not points:
            parts.append(f"{_name(driver)}: not measured")
            continue
        largest = max(_figures(c)[stat] for _, c in points)
        parts.append(f"{_name(driver)} {_us(largest)}")
        below[driver] = largest < bound
    what = "largest worst case" if stat == "max" else "largest average"
    ours = f"{what} µs over 1-{_most(by_subs)} subscribers: " + ", ".join(parts)
    if not any(d in below for d in listed):
        return ours, "not measured"
    listed_below = all(v for d, v in below.items() if d in listed)
    others_below = [d for d, v in below.items() if d not in listed and v]
    missing = [d for d in listed if d not in below]
    if not listed_below:
        return ours, "differs"
    if others_below:
        return ours, "partly (" + ", ".join(_name(d) for d in others_below) + " below it too)"
    if missing:
        return ours, "partly (" + ", ".join(_name(d) for d in missing) + " not measured)"
    return ours, "agrees"


def _most(by_subs: dict) -> int:
    return max((n for points in by_subs.values() for n, _ in points), default=1)


def _growth(points: list[tuple[int, Config]]) -> tuple[float, float] | None:
    """The average at the most subscribers minus the average at the fewest, per added
    subscriber, and its standard error (from the two means' standard errors, counted per
    message, not per pooled sample: the N subscribers' samples of one message are
    correlated, a stall delays them all)."""
    (lo, first), (hi, last) = points[0], points[-1]
    a, b = first.pooled_ns, last.pooled_ns
    if hi == lo or a.size < 2 or b.size < 2:
        return None
    error = np.sqrt(a.var(ddof=1) / (a.size / lo) + b.var(ddof=1) / (b.size / hi)) / (hi - lo)
    return float((b.mean() - a.mean()) / (hi - lo)), float(error)


def _check_scales_best(claim: dict, by_subs: dict) -> tuple[str, str]:
    """Agrees when the system's average grows least with subscribers; a smaller growth
    of another system within twice their combined standard error is no difference."""
    growth = {d: g for d, g in ((d, _growth(p)) for d, p in by_subs.items()) if g}
    ours = "average growth per added subscriber µs (± standard error): " + ", ".join(
        f"{_name(d)} {g / 1000:+.1f} ± {e / 1000:.1f}" for d, (g, e) in growth.items()
    )
    system = claim["system"]
    if system not in growth or len(growth) < 2:
        return ours if growth else "not measured", "not measured"
    best = min(growth, key=lambda d: growth[d][0])
    if best == system:
        return ours, "agrees"
    (g, e), (g_best, e_best) = growth[system], growth[best]
    if g - g_best <= 2 * np.hypot(e, e_best):
        return ours, f"within noise ({_name(best)} grows least, by less than 2 standard errors)"
    return ours, f"differs ({_name(best)} grows least)"


def _check_higher_average(claim: dict, by_subs: dict) -> tuple[str, str]:
    system, than = claim["system"], claim["than"]
    if system not in by_subs or than not in by_subs:
        return "not measured", "not measured"
    theirs = {n: _figures(c)["mean"] for n, c in by_subs[than]}
    pairs = [(n, _figures(c)["mean"], theirs[n]) for n, c in by_subs[system] if n in theirs]
    ours = f"average µs, {_name(system)} against {_name(than)}: " + ", ".join(
        f"{n} sub {_us(a)} / {_us(b)}" for n, a, b in pairs
    )
    higher = [a > b for _, a, b in pairs]
    if not higher:
        return ours, "not measured"
    return ours, "agrees" if all(higher) else (
        "differs" if not any(higher) else "partly (not at every count)"
    )


def _check_size_flat(claim: dict, by_size: dict) -> tuple[str, str]:
    factor = float(claim.get("factor") or 2)
    parts, verdicts = [], []
    for driver in claim.get("systems") or ORDER:
        points = by_size.get(driver)
        if not points:
            parts.append(f"{_name(driver)}: not measured")
            continue
        (_, first), (_, last) = points[0], points[-1]
        ratio = _figures(last)["mean"] / _figures(first)["mean"]
        parts.append(f"{_name(driver)} x{ratio:.2f}")
        verdicts.append(ratio <= factor)
    ours = "average at the largest size / at the smallest: " + ", ".join(parts)
    if not verdicts:
        return ours, "not measured"
    return ours, "agrees" if all(verdicts) else "differs"


def _check(claim: dict, by_subs: dict, by_size: dict) -> tuple[str, str]:
    """(ours, verdict) of one statement, by its kind."""
    kind = claim.get("kind")
    if kind == "worst_below":
        return _check_below(claim, by_subs, "max")
    if kind == "average_below":
        return _check_below(claim, by_subs, "mean")
    if kind == "only_below":
        return _check_below(claim, by_subs, "max", only=True)
    if kind == "scales_best":
        return _check_scales_best(claim, by_subs)
    if kind == "higher_average":
        return _check_higher_average(claim, by_subs)
    if kind == "size_flat":
        return _check_size_flat(claim, by_size)
    if kind == "not_testable":
        return "-", not_testable(claim.get("reason"))
    return "-", f"not checked (unknown kind {kind!r})"


def _one_node_only(claim: dict) -> bool:
    """A statement the paper makes of one node only: its setup names no two boards."""
    return not re.search(r"\btwo\b[^;]*\bboards\b", str(claim.get("setup") or ""))


# The published setups remark on the loopback run ("like ours", "ours is one host"):
# across hosts those remarks are not true, and the table's note says where ours ran.
OURS_REMARK = re.compile(r",? like ours|\s*\(ours is one host\)|; ours is one host")


def _paper_setup(claim: dict, across: str | None):
    setup = claim.get("setup")
    return OURS_REMARK.sub("", setup) if across and setup else setup


def _claims_table(
    by_subs: dict, by_size: dict, published: dict, across: str | None = None
) -> Table:
    """The paper's statements against ours; across: where the runs were, when they
    crossed hosts (None: one host, loopback)."""
    columns = [
        Column("claim", "id"),
        Column("source", "source"),
        Column("the paper says", "text"),
        Column("paper's setup", "setup"),
        Column("paper's bound µs", "bound_ns", "us"),
        Column("ours", "ours"),
        Column("verdict", "verdict"),
    ]
    rows = []
    for claim in published.get("claims") or []:
        if across and claim.get("kind") != "not_testable" and _one_node_only(claim):
            ours, verdict = (
                "-",
                not_testable(
                    f"the paper measured it on one node; these runs cross hosts ({across}): "
                    f"the loopback run (psbench reproduce trento2013) tests it"
                ),
            )
        else:
            ours, verdict = _check(claim, by_subs, by_size)
        bound = claim.get("bound_us")
        rows.append(
            [
                claim.get("id"),
                claim.get("source"),
                " ".join(str(claim.get("text") or "").split()),
                _paper_setup(claim, across),
                float(bound) * 1000 if bound is not None else None,
                ours,
                verdict,
            ]
        )
    ours = (
        f"Ours: {across}; a claim the paper makes of one node (the x86 study [4], "
        "Figure 3) is not testable across hosts and says so."
        if across
        else "Ours: this host, one node, loopback; a claim about two boards over Ethernet "
        "(Figures 4, 5) is checked on one host and says so in its setup."
    )
    notes = [
        published_marker(published),
        "Figures 3, 4 and 5 print no values; these statements from the paper's text "
        "are what it publishes about them. " + ours,
    ]
    notes += [
        f"{c.get('id')}: {' '.join(str(c['note']).split())}"
        for c in published.get("claims") or []
        if c.get("note")
    ]
    return Table(
        "trento2013-claims", "The paper's statements against our measurements", columns, rows, notes
    )


# Runs and their scheduling ------------------------------------------------------------


def _fifo_of(run) -> tuple[int, int]:
    """(processes at SCHED_FIFO FIFO_MAX, processes) of a run, from the nodes' summaries."""
    summaries = list(run.summaries.values())
    at_max = sum(
        1
        for s in summaries
        if (s.get("realtime") or {}).get("sched_policy") == "SCHED_FIFO"
        and (s.get("realtime") or {}).get("sched_priority") == FIFO_MAX
    )
    return at_max, len(summaries)


def _runs_section(results: ResultSet, published: dict) -> Section:
    columns = [
        Column("run", "run", "count"),
        Column("label", "label"),
        Column("middleware", "middleware"),
        Column("version", "version"),
        Column("status", "status"),
        Column(f"processes at SCHED_FIFO {FIFO_MAX}", "fifo_max", "text"),
        Column("pinned", "pinned", "yes_no"),
    ]
    rows, notes, seen = [], [], set()
    for run in results.runs:
        if run.graph_path is not None and run.run_dir in seen:
            continue  # a graph run stands for one configuration per path: listed once
        seen.add(run.run_dir)
        label = run.label.rsplit(" ", 1)[0] if run.graph_path is not None else run.label
        record = run.run_record or {}
        version = (record.get("driver") or {}).get("version")
        at_max, total = _fifo_of(run)
        pinned = (record.get("cpu_sharing") or {}).get("pinned")
        rows.append(
            [
                run.number,
                label,
                _name(run.driver),
                version,
                run.status,
                f"{at_max} of {total}" if total else "-",
                pinned,
            ]
        )
        if run.status == "ok" and at_max < total:
            notes.append(
                f"WARNING: run {run.number} ({label}) had {total - at_max} of "
                f"{total} processes not at SCHED_FIFO {FIFO_MAX}: it is not the "
                f"paper's setting (run it as root, with `fifo: {FIFO_MAX}`)"
            )
        if run.status != "ok":
            notes.append(
                f"run {run.number} ({label}) is {run.status}, left out of "
                f"every figure: {run.message or 'no message'}"
            )
    measured = {r.driver for r in results.runs if r.status == "ok"}
    for driver, system in (published.get("systems") or {}).items():
        if driver not in measured:
            notes.append(
                f"{_name(driver)} (for {system}) has no ok run here: the paper's "
                f"{system} has no counterpart in these results"
            )
    if not notes:
        notes.append(
            f"every process of every run ran at SCHED_FIFO {FIFO_MAX}, as in the "
            f"paper (a priority that cannot be set fails the run, never runs "
            f"without it)"
        )
    table = Table(
        "trento2013-runs",
        "Runs, versions and scheduling",
        columns,
        rows,
        [
            "processes: the publisher and every subscriber, or a graph's modules (each node's summary, "
            "realtime.sched_policy and sched_priority); the middleware's own "
            "threads are created by the SCHED_FIFO thread and inherit it"
        ],
    )
    return Section("Runs and their real-time scheduling", [table], [], notes)


# The sections -------------------------------------------------------------------------


def _hosts_of(value) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _placement(results: ResultSet) -> str:
    """Where the publisher and the subscribers ran (the runs' `place`)."""
    places = {
        (_hosts_of(place.get("pub")), _hosts_of(place.get("sub")))
        for place in (run.params.get("place") or {} for run in results.runs)
        if place
    }
    return "; ".join(f"the publisher on {p}, the subscribers on {s}" for p, s in sorted(places))


def _across(results: ResultSet) -> str | None:
    """Where runs that crossed hosts were, with their placement; None over loopback."""
    if not on_hosts(results):
        return None
    return f"{where_measured(results)}, {_placement(results)}"


def sections(results: ResultSet, published: dict) -> list[Section]:
    # The figures are of the pubsub runs; the graph runs make Table I.
    configs = [c for c in build_configs(results) if c.kind == "pubsub"]
    by_subs = _series(configs, "subscribers")
    by_size = _series(configs, "size")
    marker = published_marker(published)
    where, across = where_measured(results), _across(results)

    subs_notes = [
        'Paper, Figure 3: one pandaboard (OMAP4460, "an ARM core at 1 GHz"; the chip has '
        "2), 1 to 4 subscriber "
        "processes, average and worst case; Figure 4: the same with the publisher on one "
        "board and the subscribers on another. The paper prints no values of either "
        "figure (plots only): its statements are checked in the last section.",
        (
            f"Ours: {across} (Figure 4's setup; emulated hosts share one clock); "
            if across
            else "Ours: one host (both figures' setups become Figure 3's: one-way latency "
            "needs one clock), loopback; "
        )
        + _sizes_note(by_subs)
        + ".",
        marker,
    ]
    subs = Section(
        "Figure 3 (and 4): latency against the number of subscribers",
        [
            _figure_table(
                "trento2013-figure3",
                "Average and worst-case latency against subscribers (Figure 3)",
                Column("subscribers", "subscribers", "count"),
                by_subs,
                published,
                where,
            )
        ],
        [
            _drawing(
                "trento2013-figure3-plot",
                "Latency against subscribers (Figure 3)",
                "Average (left) and worst-case (right) one-way latency of each "
                "middleware against the number of subscriber processes, every "
                "subscriber's samples together; the paper's system each stands for in "
                "brackets. Published: plots without values (see the statements).",
                "subscribers",
                by_subs,
                published,
            )
        ]
        if by_subs
        else [],
        subs_notes
        if by_subs
        else subs_notes
        + ["no middleware has runs with 2 or more subscriber counts: nothing to show"],
    )

    size_notes = [
        "Paper, Figure 5: latency against message size up to 1,000 bytes, publisher and "
        "subscribers on two boards over 100 Mbit/s Ethernet; no values printed.",
        f"Ours: {across or 'one host, loopback'}, 1 subscriber; psbench's size is the "
        "whole message, its "
        "32-byte header included.",
        marker,
    ]
    size = Section(
        "Figure 5: latency against message size",
        [
            _figure_table(
                "trento2013-figure5",
                "Average and worst-case latency against message size (Figure 5)",
                Column("size B", "size", "count"),
                by_size,
                published,
                where,
            )
        ],
        [
            _drawing(
                "trento2013-figure5-plot",
                "Latency against message size (Figure 5)",
                "Average (left) and worst-case (right) one-way latency of each "
                "middleware against the message size (bytes, header included), one "
                "subscriber. Published: a plot without values.",
                "message size (bytes)",
                by_size,
                published,
                log_x=True,
            )
        ]
        if by_size
        else [],
        size_notes
        if by_size
        else size_notes + ["no middleware has runs at 2 or more sizes: nothing to show"],
    )

    claims = Section(
        "The paper's statements",
        [_claims_table(by_subs, by_size, published, across)],
        [],
        [
            "Each statement the paper's text makes about Figures 3 to 5 (and "
            "the x86 bound of its earlier study), with our figure for it and "
            "whether they agree. Table I (the 8-process cWalker application) has its "
            "own section."
        ],
    )
    table1 = table_one_section(results, published, where)
    return [subs, size, claims, table1, _runs_section(results, published)]


def _sizes_note(by_subs: dict) -> str:
    sizes = sorted({c.size for points in by_subs.values() for _, c in points if c.size})
    if not sizes:
        return "no subscriber sweep"
    return (
        "message size " + ", ".join(f"{s} B" for s in sizes) + " (the paper does not "
        "say which size its Figures 3 and 4 used)"
    )
