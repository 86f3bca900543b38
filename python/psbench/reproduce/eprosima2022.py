"""eProsima, "Benchmarking DDS Implementations" (Fast DDS vs OpenDDS, December 2022), in
the article's own form: mean latency and throughput against the Array message type, in
one process (intra) and in two (inter), per implementation, and its conclusions (latency
ratios, the runs that crashed, which implementation kept up with the 100 Hz publication
rate) beside what the article prints.

OpenDDS cannot be installed here: Cyclone DDS stands in for it (experiments/seeds/
eprosima2022.yaml says why). The article's results are figures without printed values,
so the published column holds what its text says: the ratios of its conclusion, the
crashes and the keep-up statements (experiments/seeds/eprosima2022.published.yaml).

A run that did not end ok (crashed, failed, timeout, refused) stays in every table as a
row with its status and no values, as the article shows OpenDDS's crashed runs.
"""

from dataclasses import dataclass

import matplotlib
import numpy as np

from psbench.report.plots import PANEL_INCHES, STYLE, Drawing, _log_axis, _panels, _size_axis
from psbench.report.tables import Column, Table
from psbench.reproduce.common import Section, published_marker
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet

REFERENCE = "fastdds"  # the article's subject; ratios are X / Fast DDS
NAMES = {"fastdds": "Fast DDS", "cyclonedds": "Cyclone DDS", "opendds": "OpenDDS"}
STANDS_IN = {"cyclonedds": "opendds"}  # ours -> the article's implementation it replaces
PLACEMENTS = (("intra", "Intra-process"), ("inter", "Inter-process"))
# The largest UDP payload is 65,507 bytes: a message of 64 KiB or more is fragmented.
# The article's "below UDP fragmentation" and "large data samples" are read as the two
# sides of this line (it does not say where "large" starts).
UDP_FRAGMENTATION = 65507
KEEP_UP_FRACTION = 0.95  # received rate >= 95% of offered (ratesearch's)
KIB, MIB = 1024, 1024 * 1024


def array_name(size: int | None) -> str:
    """performance_test's name for a message size: Array1k, Array60k, Array4m."""
    if size is None:
        return "-"
    if size % MIB == 0:
        return f"Array{size // MIB}m"
    if size % KIB == 0:
        return f"Array{size // KIB}k"
    return f"{size} B"


def array_size(name: str) -> int:
    """Array1m -> 1048576 (the inverse of array_name)."""
    body = name.removeprefix("Array")
    unit = {"k": KIB, "m": MIB}[body[-1].lower()]
    return int(body[:-1]) * unit


def name_of(driver: str) -> str:
    return NAMES.get(driver, driver)


@dataclass
class Cell:
    """One implementation at one placement and size: its configuration and how its runs
    ended."""

    driver: str
    placement: str
    size: int
    config: Config

    @property
    def statuses(self) -> list[str]:
        return [
            r.status if r.status != "ok" or r.samples is not None else "ok, no samples"
            for r in self.config.runs
        ]

    @property
    def ok(self) -> bool:
        return bool(self.config.ok_runs)

    @property
    def status(self) -> str:
        """ok, or what went wrong: crashed, failed, timeout, ... (with a count when only
        some repetitions did)."""
        bad = [s for s in self.statuses if s != "ok"]
        if not bad:
            return "ok"
        kinds = sorted(set(bad), key=bad.index)
        text = ", ".join(f"{bad.count(k)} {k}" if len(self.statuses) > 1 else k for k in kinds)
        return text if not self.ok else f"ok ({text} of {len(self.statuses)})"

    @property
    def mean(self) -> float | None:
        """The mean of every sample of the cell (all repetitions pooled)."""
        pooled = self.config.pooled_ns
        return float(np.mean(pooled)) if self.ok and pooled.size else None

    def stat(self, key: str):
        return self.config.stats.get(key) if self.ok else None

    def rate(self, key: str):
        return self.config.rate.get(key) if self.ok else None

    @property
    def lost(self) -> int | None:
        return self.config.counts.get("lost") if self.ok else None

    @property
    def offered(self) -> float | None:
        offered = self.config.params.get("rate")
        return float(offered) if offered else None

    @property
    def keeps_up(self) -> bool | None:
        """Received the publication rate: ok, nothing lost, and the subscriber's rate at
        least 95% of the offered one. None when it did not run to the end."""
        if not self.ok:
            return None
        received = self.rate("samples_per_s")
        if received is None or self.offered is None:
            return None
        if self.lost is None:
            return None
        return self.lost == 0 and received >= KEEP_UP_FRACTION * self.offered


def _cells(results: ResultSet) -> tuple[list[str], list[int], dict]:
    """(drivers with Fast DDS first, sizes, {(driver, placement, size): Cell}) of the
    pubsub runs."""
    cells = {}
    for config in build_configs(results):
        if config.kind != "pubsub" or config.size is None:
            continue
        key = (config.driver, config.placement, config.size)
        cells[key] = Cell(config.driver, config.placement, config.size, config)
    drivers = list(dict.fromkeys(k[0] for k in cells))
    drivers.sort(key=lambda d: d != REFERENCE)
    sizes = sorted({k[2] for k in cells})
    return drivers, sizes, cells


def _others(drivers: list[str]) -> list[str]:
    return [d for d in drivers if d != REFERENCE]


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


# What the article prints --------------------------------------------------------------


def _published_ratio(published: dict, size: int) -> str | None:
    ratio = (published.get("latency") or {}).get("mean_ratio") or {}
    side = "below_udp_fragmentation" if size < UDP_FRAGMENTATION else "large_samples"
    found = ratio.get(side)
    if not found:
        return None
    return f"{found['low']:g} to {found['high']:g}"


def _published_crashes(published: dict, metric: str) -> list[dict]:
    return list(((published.get(metric) or {}).get("crashed") or {}).get("runs") or [])


def _crashed_in_article(published: dict, metric: str, placement: str, size: int) -> list[str]:
    return [
        name_of(run["implementation"])
        for run in _published_crashes(published, metric)
        if run.get("placement") == placement and array_size(run["size"]) == size
    ]


def _keeps_up_in_article(
    published: dict, implementation: str, placement: str, size: int
) -> bool | None:
    """What the article says about one implementation keeping up at one size, or None
    when it says nothing."""
    statements = ((published.get("throughput") or {}).get("keeps_up") or {}).get("statements") or []
    for s in statements:
        if s.get("implementation") != implementation or s.get("placement") != placement:
            continue
        if s.get("sizes") == "all":
            return bool(s["keeps_up"])
        if "size" in s and array_size(s["size"]) == size:
            return bool(s["keeps_up"])
        if "up_to" in s and size <= array_size(s["up_to"]):
            return bool(s["keeps_up"])
    return None


def _published_latency_text(
    published: dict, placement: str, size: int, others: list[str]
) -> str | None:
    parts = []
    crashed = _crashed_in_article(published, "latency", placement, size)
    if crashed:
        parts.append(f"{', '.join(crashed)} crashed")
    ratio = _published_ratio(published, size)
    if ratio and not crashed and others:
        parts.append(f"OpenDDS / Fast DDS mean {ratio}")
    return "; ".join(parts) or None


def _published_throughput_text(published: dict, placement: str, size: int) -> str | None:
    parts = []
    crashed = _crashed_in_article(published, "throughput", placement, size)
    for implementation in ("fastdds", "opendds"):
        name = name_of(implementation)
        if name in crashed:
            parts.append(f"{name} crashed")
            continue
        said = _keeps_up_in_article(published, implementation, placement, size)
        if said is not None:
            parts.append(f"{name} {'keeps up' if said else 'does not keep up'}")
    return "; ".join(parts) or None


PLACEMENT_WORDS = {"intra": "in one process", "inter": "between processes"}


def _crashes_text(published: dict, metric: str) -> str | None:
    """The article's crashes of one metric in words: 'OpenDDS crashed in one process
    with Array1m and Array4m'."""
    found: dict[tuple, list[str]] = {}
    for run in _published_crashes(published, metric):
        found.setdefault((run["implementation"], run["placement"]), []).append(run["size"])
    return (
        "; ".join(
            f"{name_of(i)} crashed {PLACEMENT_WORDS.get(p, p)} with {' and '.join(sizes)}"
            for (i, p), sizes in found.items()
        )
        or None
    )


def _latency_article_note(published: dict) -> str:
    """The article's latency conclusion, from the published file's figures."""
    ratio = (published.get("latency") or {}).get("mean_ratio") or {}
    parts = [
        f"{r['low']:g} to {r['high']:g} times lower than OpenDDS's {where}"
        for key, where in (
            ("below_udp_fragmentation", "below UDP fragmentation"),
            ("large_samples", "for large samples"),
        )
        if (r := ratio.get(key))
    ]
    said = ["Fast DDS's mean latency is " + " and ".join(parts)] if parts else []
    said += [c for c in [_crashes_text(published, "latency")] if c]
    return f"The article: {'; '.join(said) or 'nothing printed'}. Here: Cyclone DDS over Fast DDS."


def _throughput_article_note(published: dict) -> str:
    """The article's throughput conclusion, from the published file's statements."""
    said = []
    for st in ((published.get("throughput") or {}).get("keeps_up") or {}).get("statements") or []:
        sizes = (
            "at every payload"
            if st.get("sizes") == "all"
            else f"up to {st['up_to']}"
            if "up_to" in st
            else f"at {st.get('size')}"
        )
        verb = "kept up" if st.get("keeps_up") else "did not keep up"
        said.append(
            f"{name_of(st['implementation'])} {verb} "
            f"{PLACEMENT_WORDS.get(st.get('placement'), st.get('placement'))} {sizes}"
        )
    said += [c for c in [_crashes_text(published, "throughput")] if c]
    rate = (published.get("method") or {}).get("rate_hz")
    return (
        f"The article, at {f'the {rate:g} Hz' if rate else 'its'} publication rate: "
        f"{'; '.join(said) or 'nothing printed'}."
    )


# Tables -------------------------------------------------------------------------------


def _latency_table(
    placement: str, title: str, drivers: list[str], sizes: list[int], cells: dict, published: dict
) -> Table:
    columns = [Column("message", "message"), Column("size", "size_bytes", "count")]
    for d in drivers:
        columns += [
            Column(f"{name_of(d)} status", f"{d}_status"),
            Column(f"{name_of(d)} n", f"{d}_n", "count"),
            Column(f"{name_of(d)} mean µs", f"{d}_mean_ns", "us"),
            Column(f"{name_of(d)} p50 µs", f"{d}_p50_ns", "us"),
            Column(f"{name_of(d)} max µs", f"{d}_max_ns", "us"),
        ]
    others = _others(drivers)
    if REFERENCE in drivers:
        columns += [
            Column(f"{name_of(d)} / Fast DDS mean", f"{d}_over_fastdds_mean", "ratio")
            for d in others
        ]
    columns.append(Column("published (other hardware, versions)", "published"))
    rows = []
    for size in sizes:
        present = [cells.get((d, placement, size)) for d in drivers]
        if not any(present):
            continue
        row = [array_name(size), size]
        for cell in present:
            row += (
                [cell.status, cell.stat("n"), cell.mean, cell.stat("p50"), cell.stat("max")]
                if cell
                else ["not run", None, None, None, None]
            )
        if REFERENCE in drivers:
            reference = cells.get((REFERENCE, placement, size))
            for d in others:
                cell = cells.get((d, placement, size))
                row.append(
                    _ratio(cell.mean if cell else None, reference.mean if reference else None)
                )
        row.append(_published_latency_text(published, placement, size, others))
        rows.append(row)
    notes = [
        "one-way latency: receive time - the start of the publisher's write "
        "(latency_from send), one host's monotonic clock, open loop at 100 Hz, as "
        "performance_test times it (receive time - the time stamped just before "
        "publishing); mean (every sample pooled) as in the article's figures, p50 "
        "and max beside it",
        "status: ok, or how the run ended (crashed = a node killed by a signal, "
        "failed, timeout, refused); such a run has no values, as the article shows "
        "OpenDDS's crashed runs",
        "published: the article's text (its figures print no values); OpenDDS there, "
        "Cyclone DDS here (OpenDDS is not installable on this machine)",
        published_marker(published),
    ]
    return Table(f"latency-{placement}", f"Latency Results: {title}", columns, rows, notes)


def _throughput_table(
    placement: str, title: str, drivers: list[str], sizes: list[int], cells: dict, published: dict
) -> Table:
    columns = [Column("message", "message"), Column("size", "size_bytes", "count")]
    for d in drivers:
        columns += [
            Column(f"{name_of(d)} status", f"{d}_status"),
            Column(f"{name_of(d)} samples/s", f"{d}_samples_per_s", "rate"),
            Column(f"{name_of(d)} Mbit/s", f"{d}_mbit_per_s", "rate"),
            Column(f"{name_of(d)} lost", f"{d}_lost", "count"),
            Column(f"{name_of(d)} keeps up", f"{d}_keeps_up", "yes_no"),
        ]
    columns.append(Column("published (other hardware, versions)", "published"))
    rows = []
    for size in sizes:
        present = [cells.get((d, placement, size)) for d in drivers]
        if not any(present):
            continue
        row = [array_name(size), size]
        for cell in present:
            row += (
                [
                    cell.status,
                    cell.rate("samples_per_s"),
                    cell.rate("mbit_per_s"),
                    cell.lost,
                    cell.keeps_up,
                ]
                if cell
                else ["not run", None, None, None, None]
            )
        row.append(_published_throughput_text(published, placement, size))
        rows.append(row)
    notes = [
        "throughput on the subscriber's clock: (received - 1) / (last - first "
        "arrival); "
        "Mbit/s counts whole messages (performance_test: received samples x message "
        "size per second)",
        f"keeps up = the run ended ok, lost nothing, and received at least "
        f"{KEEP_UP_FRACTION:.0%} of the 100 Hz publication rate; '-' when it did not "
        f"run to the end (see status). The article reads keeping up from its "
        f"throughput figure; here any loss also counts as not keeping up",
        "published: the article's text (its figures print no values); OpenDDS there, "
        "Cyclone DDS here",
        published_marker(published),
    ]
    return Table(f"throughput-{placement}", f"Throughput Results: {title}", columns, rows, notes)


def _range(values: list[float]) -> tuple[float | None, float | None]:
    values = [v for v in values if v is not None]
    return (min(values), max(values)) if values else (None, None)


def _not_ok_text(cells: dict, driver: str, placement: str) -> str:
    bad = [
        f"{array_name(c.size)} {c.status}"
        for (d, p, _), c in sorted(cells.items())
        if d == driver and p == placement and c.status != "ok"
    ]
    return ", ".join(bad) or "none"


def _latency_conclusion(
    drivers: list[str], sizes: list[int], cells: dict, published: dict
) -> Table:
    columns = [
        Column("implementation", "implementation"),
        Column("placement", "placement"),
        Column("sizes", "sizes"),
        Column("ours: / Fast DDS mean, low", "ratio_low", "ratio"),
        Column("ours: / Fast DDS mean, high", "ratio_high", "ratio"),
        Column("ours: Fast DDS lower mean at", "fastdds_lower"),
        Column("published: OpenDDS / Fast DDS mean", "published_ratio"),
        Column("ours: not ok", "not_ok"),
        Column("published: crashed", "published_crashed"),
    ]
    rows = []
    for d in _others(drivers):
        for placement, _ in PLACEMENTS:
            for label, test, side in (
                (
                    "below UDP fragmentation (< 64 KiB)",
                    lambda s: s < UDP_FRAGMENTATION,
                    "below_udp_fragmentation",
                ),
                ("large (>= 64 KiB)", lambda s: s >= UDP_FRAGMENTATION, "large_samples"),
            ):
                pairs = [
                    (cells.get((d, placement, s)), cells.get((REFERENCE, placement, s)))
                    for s in sizes
                    if test(s)
                ]
                pairs = [(c, r) for c, r in pairs if c or r]
                if not pairs:
                    continue
                ratios = [_ratio(c.mean if c else None, r.mean if r else None) for c, r in pairs]
                low, high = _range(ratios)
                measured = [x for x in ratios if x is not None]
                lower = (
                    f"{sum(x > 1 for x in measured)} of {len(measured)} sizes" if measured else None
                )
                found = ((published.get("latency") or {}).get("mean_ratio") or {}).get(side)
                crashed = [
                    f"{r['placement']} {r['size']}"
                    for r in _published_crashes(published, "latency")
                    if r.get("implementation") == STANDS_IN.get(d)
                    and r.get("placement") == placement
                    and test(array_size(r["size"]))
                ]
                not_ok = [
                    f"{array_name(c.size)} {c.status}" for c, _ in pairs if c and c.status != "ok"
                ]
                rows.append(
                    [
                        name_of(d),
                        placement,
                        label,
                        low,
                        high,
                        lower,
                        f"{found['low']:g} to {found['high']:g}" if found else None,
                        ", ".join(not_ok) or "none",
                        ", ".join(crashed) or ("none" if STANDS_IN.get(d) else None),
                    ]
                )
    notes = [
        f"{name_of(d)} stands in for {name_of(STANDS_IN[d])}: the published ratio is "
        f"OpenDDS's, ours is {name_of(d)}'s, both over Fast DDS"
        for d in _others(drivers)
        if d in STANDS_IN
    ]
    notes += [
        "ratio > 1: Fast DDS has the lower mean; 'below UDP fragmentation' = the "
        "message fits one UDP datagram (65,507 bytes); the article does not say "
        "where 'large' starts: here every size that needs fragmentation",
        "ours: not ok = runs that crashed, failed or timed out (none is dropped silently)",
        published_marker(published),
    ]
    return Table("latency-conclusion", "Latency Results: Conclusion", columns, rows, notes)


def _throughput_conclusion(
    drivers: list[str], sizes: list[int], cells: dict, published: dict
) -> Table:
    columns = [
        Column("implementation", "implementation"),
        Column("placement", "placement"),
        Column("ours: keeps up at", "keeps_up"),
        Column("ours: does not keep up at", "does_not_keep_up"),
        Column("ours: not ok", "not_ok"),
        Column("published (the article's implementation)", "published"),
    ]
    rows = []
    for d in drivers:
        article = d if d == REFERENCE else STANDS_IN.get(d)
        for placement, _ in PLACEMENTS:
            mine = [cells[(d, placement, s)] for s in sizes if (d, placement, s) in cells]
            if not mine:
                continue
            keeps = [array_name(c.size) for c in mine if c.keeps_up]
            slow = [array_name(c.size) for c in mine if c.keeps_up is False]
            said = []
            if article:
                crashed = [
                    r["size"]
                    for r in _published_crashes(published, "throughput")
                    if r.get("implementation") == article and r.get("placement") == placement
                ]
                up = [
                    array_name(s)
                    for s in sizes
                    if _keeps_up_in_article(published, article, placement, s)
                ]
                down = [
                    array_name(s)
                    for s in sizes
                    if _keeps_up_in_article(published, article, placement, s) is False
                ]
                if up:
                    said.append(f"keeps up at {', '.join(up)}")
                if down:
                    said.append(f"does not keep up at {', '.join(down)}")
                if crashed:
                    said.append(f"crashed at {', '.join(crashed)}")
                said = [f"{name_of(article)}: {'; '.join(said)}"] if said else []
            rows.append(
                [
                    name_of(d),
                    placement,
                    ", ".join(keeps) or "none",
                    ", ".join(slow) or "none",
                    _not_ok_text(cells, d, placement),
                    "; ".join(said) or None,
                ]
            )
    notes = [
        "keeps up = ended ok, lost nothing, received >= 95% of 100 Hz; the published "
        "column is what the article says at the sizes measured here",
        "the article also says OpenDDS 'showed degradation once UDP fragmentation is "
        "required' (above 64 KiB)",
        published_marker(published),
    ]
    return Table("throughput-conclusion", "Throughput Results: Conclusion", columns, rows, notes)


# Figures ------------------------------------------------------------------------------


def _figure(kind: str, drivers: list[str], sizes: list[int], cells: dict) -> Drawing | None:
    """Two panels (intra, inter): mean latency (kind latency) or received Mbit/s (kind
    throughput) against size, one line per implementation; a run that did not end ok is
    an x at the bottom of the panel, labelled with its status."""
    placements = [
        (p, t) for p, t in PLACEMENTS if any((d, p, s) in cells for d in drivers for s in sizes)
    ]
    if not placements or len(sizes) < 2:
        return None
    with matplotlib.rc_context(STYLE):
        figure, axes = _panels(len(placements), PANEL_INCHES, len(placements))
        for ax, (placement, title) in zip(axes, placements):
            for index, d in enumerate(drivers):
                mine = [cells[(d, placement, s)] for s in sizes if (d, placement, s) in cells]
                ok = [c for c in mine if c.ok]
                colour = f"C{index % 10}"
                if kind == "latency":
                    values = [c.mean / 1000.0 for c in ok]
                else:
                    values = [c.rate("mbit_per_s") or np.nan for c in ok]
                ax.plot([c.size for c in ok], values, marker="o", color=colour, label=name_of(d))
                for c in mine:
                    if not c.ok:
                        ax.plot(
                            [c.size],
                            [0.0],
                            marker="x",
                            markersize=9,
                            color=colour,
                            transform=ax.get_xaxis_transform(),
                            clip_on=False,
                        )
                        ax.annotate(
                            c.status,
                            (c.size, 0.02),
                            xycoords=("data", "axes fraction"),
                            color=colour,
                            fontsize=6,
                            rotation=90,
                            va="bottom",
                        )
            if kind == "throughput":
                ax.plot(
                    sizes,
                    [100 * s * 8 / 1e6 for s in sizes],
                    linestyle=":",
                    color="0.4",
                    label="100 Hz x size",
                )
            _size_axis(ax, sizes)
            ax.set_yscale("log")
            _log_axis(ax.yaxis)
            ax.set_ylabel("mean latency (µs)" if kind == "latency" else "received Mbit/s")
            ax.set_title(f"{'Latency' if kind == 'latency' else 'Throughput'}: {title}")
            ax.legend(loc="upper left")
    if kind == "latency":
        caption = (
            "Mean one-way latency (receive time - start of the publisher's write) "
            "against the "
            "Array message size, 100 Hz, reliable, keep last 16; one line per "
            "implementation, as the article's latency figures. An x at the bottom "
            "marks a run that did not end ok, with its status."
        )
        return Drawing("latency-vs-size", "Mean latency against message size", caption, figure)
    caption = (
        "Megabits received per second on the subscriber's clock (whole messages) "
        "against the Array message size at 100 Hz; the dotted line is 100 messages "
        "per second of that size: on it, the implementation kept up. An x at the "
        "bottom marks a run that did not end ok, with its status."
    )
    return Drawing("throughput-vs-size", "Throughput against message size", caption, figure)


# The sections -------------------------------------------------------------------------


def _results_section(
    kind: str, note: str, table, drivers, sizes, cells, published: dict
) -> Section:
    """The article's "Latency Results" or "Throughput Results": one table per placement
    and the figure of both."""
    section = Section(f"{kind.capitalize()} Results", notes=[note])
    for placement, title in PLACEMENTS:
        section.tables.append(table(placement, title, drivers, sizes, cells, published))
    figure = _figure(kind, drivers, sizes, cells)
    if figure:
        section.drawings.append(figure)
    return section


def sections(results: ResultSet, published: dict) -> list[Section]:
    drivers, sizes, cells = _cells(results)
    substitution = (
        "OpenDDS 3.13.2 is not installable here: Cyclone DDS stands in for it "
        "(the other DDS implementation psbench drives); Fast DDS is the "
        "`fastdds` driver's version, not 2.8.0."
    )
    latency = _results_section(
        "latency",
        "The article's latency figures: mean latency against the Array type, "
        "intra- and inter-process, one publisher and one subscriber, 100 Hz, reliable, "
        "volatile, keep last 16. " + substitution,
        _latency_table,
        drivers,
        sizes,
        cells,
        published,
    )
    latency_end = Section(
        "Latency Results: Conclusion",
        tables=[_latency_conclusion(drivers, sizes, cells, published)],
        notes=[_latency_article_note(published)],
    )
    throughput = _results_section(
        "throughput",
        "The article's throughput figures: what the subscriber received per "
        "second at a 100 Hz publication rate, against the Array type, intra- and "
        "inter-process. " + substitution,
        _throughput_table,
        drivers,
        sizes,
        cells,
        published,
    )
    throughput_end = Section(
        "Throughput Results: Conclusion",
        tables=[_throughput_conclusion(drivers, sizes, cells, published)],
        notes=[_throughput_article_note(published)],
    )
    return [latency, latency_end, throughput, throughput_end]
