"""The plots of a report, each written as PNG and SVG: latency against message size, the
percentile spectrum, histograms, latency over time, throughput against size, latency
against the subscriber count, throughput over time, latency against the offered rate and
the curve of each rate search.

Figures are drawn with matplotlib's object API (no pyplot: no display, no global figure
list to close; PNG is rendered by Agg). The same data gives byte-identical files: fixed
sizes and resolution, a constant SVG hash salt, no dates in the files.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib import ticker
from matplotlib.figure import Figure

from psbench.results.configs import Config, labels, setting_text, varying_keys
from psbench.results.load import Search, implied_setting

STYLE = {
    "svg.hashsalt": "psbench",  # SVG ids come from this salt, not a random one
    "svg.fonttype": "none",  # text stays text: searchable, editable, smaller
    "font.size": 8,
    "axes.titlesize": 9,
    "legend.fontsize": 7,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.prop_cycle": cycler(color=matplotlib.color_sequences["tab10"]),
}
DPI = 110
PANEL_INCHES = (4.3, 2.7)  # the axes of one plot
SMALL_PANEL_INCHES = (2.7, 1.7)  # the axes of one of the small multiples
SMALL_COLUMNS = 3
MAX_LINES = 8  # lines per axes before a figure is split
MAX_PANELS = 12  # small multiples per figure
HISTOGRAM_BINS = 60
TIME_BINS = 200
SPECTRUM_POINTS = 161  # 1/(1-q) from 1 (p0) to 10^4 (p99.99), log-spaced
SPECTRUM_TICKS = {1: "0", 2: "50", 10: "90", 100: "99", 1000: "99.9", 10000: "99.99"}
SIZE_TICKS_MAX = 8
# left, right, bottom, top edges and the space between panels across and down (inches)
MARGIN_INCHES = (0.65, 0.2, 0.45, 0.3, 0.75, 0.7)


@dataclass
class Plot:
    name: str  # file stem, e.g. "latency-vs-size"
    title: str
    caption: str  # what is shown and how to read it
    png: Path
    svg: Path


@dataclass
class Drawing:
    """A figure drawn but not yet written."""

    name: str
    title: str
    caption: str
    figure: Figure


def write_plots(
    configs: list[Config], out_dir: Path, searches: Sequence[Search] = ()
) -> tuple[list[Plot], list[str]]:
    """Writes every plot the configurations (and rate searches) allow into out_dir (PNG
    and SVG of each); returns them, and a note for each plot left out saying why."""
    usable = [c for c in configs if c.ok_runs and c.pooled_ns.size]
    if not usable:
        return [], ["no plots: no configuration has an ok run with samples"]
    out_dir.mkdir(parents=True, exist_ok=True)
    plots: list[Plot] = []
    notes: list[str] = []
    with matplotlib.rc_context(STYLE):
        for draw in (
            latency_vs_size,
            percentile_spectra,
            histograms,
            latency_over_time,
            throughput_vs_size,
            latency_vs_subscribers,
            throughput_over_time,
            latency_vs_rate,
        ):
            drawings, skipped = draw(usable)
            plots.extend(_save(d, out_dir) for d in drawings)
            notes.extend(skipped)
        if searches:
            drawings, skipped = rate_searches(list(searches))
            plots.extend(_save(d, out_dir) for d in drawings)
            notes.extend(skipped)
    return plots, notes


def _save(drawing: Drawing, out_dir: Path) -> Plot:
    png, svg = out_dir / f"{drawing.name}.png", out_dir / f"{drawing.name}.svg"
    drawing.figure.savefig(png, dpi=DPI)  # Agg writes no time into a PNG
    drawing.figure.savefig(svg, metadata={"Date": None})
    return Plot(drawing.name, drawing.title, drawing.caption, png, svg)


# Grouping -----------------------------------------------------------------------------


def _by(configs: list[Config], key) -> dict:
    """Configurations grouped by key(config), groups in order of first appearance."""
    groups: dict = {}
    for config in configs:
        groups.setdefault(key(config), []).append(config)
    return groups


def _by_metric(configs: list[Config]) -> dict[str, list[Config]]:
    # One metric per kind: RTT/2 (ping) and one-way (pubsub) never share an axis.
    return _by(configs, lambda c: c.metric)


def series_along(configs: list[Config], x_key: str) -> list[list[Config]]:
    """Series of configurations equal in every setting but x_key, each sorted by it."""

    def rest(config):
        return json.dumps(
            {k: v for k, v in config.params.items() if k != x_key}, sort_keys=True, default=str
        )

    with_x = [c for c in configs if isinstance(implied_setting(c.params, x_key), (int, float))]
    return [
        sorted(group, key=lambda c: implied_setting(c.params, x_key))
        for group in _by(with_x, rest).values()
    ]


def _chunks(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _numbered(name: str, index: int, count: int) -> str:
    return name if count == 1 else f"{name}-{index + 1}"


def _of(index: int, count: int) -> str:
    return "" if count == 1 else f" ({index + 1} of {count})"


# Axes ---------------------------------------------------------------------------------


def _us(ns) -> float:
    return np.nan if ns is None else ns / 1000.0


def _panels(
    count: int, inches: tuple[float, float], columns: int, legend_inches: float = 0.0
) -> tuple[Figure, list]:
    """A figure of count panels of the given size (inches), in rows of columns; with
    legend_inches, that much room right of every panel for a legend (_legend_beside)."""
    columns = min(columns, count)
    rows = -(-count // columns)
    left, right, bottom, top, across, down = MARGIN_INCHES
    right, across = right + legend_inches, across + legend_inches
    width = left + right + columns * inches[0] + (columns - 1) * across
    height = bottom + top + rows * inches[1] + (rows - 1) * down
    figure = Figure(figsize=(width, height), dpi=DPI)
    # Fixed margins: a layout engine would measure every tick label on each save and
    # take most of the plotting time.
    figure.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=bottom / height,
        top=1 - top / height,
        wspace=across / inches[0],
        hspace=down / inches[1],
    )
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for unused in axes[count:]:
        unused.set_visible(False)
    return figure, list(axes[:count])


def _log_axis(axis) -> None:
    """Log scale in plain numbers (20, 50, 100), minor ticks labelled on short ranges;
    the default 10^n labels would also need mathtext, the slowest part of a draw."""
    axis.set_major_formatter(ticker.LogFormatter())
    axis.set_minor_formatter(ticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.5)))


def _size_axis(ax, sizes: list[int]) -> None:
    ax.set_xscale("log", base=2)
    distinct = sorted(set(sizes))
    if len(distinct) <= SIZE_TICKS_MAX:
        ax.xaxis.set_major_locator(ticker.FixedLocator(distinct))
    else:
        ax.xaxis.set_major_locator(ticker.LogLocator(base=2, numticks=SIZE_TICKS_MAX))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.xaxis.set_major_formatter(
        ticker.FuncFormatter(lambda x, _: setting_text("size", int(round(x))))
    )
    ax.set_xlabel("message size")


def _at_least_a_decade(ax) -> None:
    """Widens a log y axis to a factor of 10 around its data, so that a rate that hardly
    changes (a fixed publish rate) looks flat instead of filling the axis."""
    low, high = ax.get_ylim()
    if high < 10 * low:
        middle = np.sqrt(low * high)
        ax.set_ylim(middle / np.sqrt(10), middle * np.sqrt(10))


def _positive(values: np.ndarray) -> np.ndarray:
    # Log axes cannot show 0 or less; a latency is never that on one clock anyway.
    return values[values > 0]


# Latency against message size --------------------------------------------------------


def latency_vs_size(configs: list[Config]) -> tuple[list[Drawing], list[str]]:
    panels, notes = [], []
    for metric, group in _by_metric(configs).items():
        series = [s for s in series_along(group, "size") if len(s) >= 2]
        if series:
            panels.append((metric, series))
        else:
            notes.append(
                f"latency against message size, {metric}: no series of "
                f"configurations differing only in size has 2 or more sizes"
            )
    if not panels:
        return [], notes
    figure, axes = _panels(len(panels), PANEL_INCHES, len(panels))
    for ax, (metric, series) in zip(axes, panels):
        names = labels([s[0] for s in series], leave_out="size")
        for index, (label, members) in enumerate(zip(names, series)):
            colour = f"C{index % 10}"
            sizes = [c.size for c in members]
            p50 = [_us(c.stats.get("p50")) for c in members]
            p99 = [_us(c.stats.get("p99")) for c in members]
            ax.plot(sizes, p50, marker="o", color=colour, label=label)
            ax.fill_between(sizes, p50, p99, color=colour, alpha=0.18, linewidth=0)
        _size_axis(ax, [c.size for s in series for c in s if c.size is not None])
        ax.set_yscale("log")
        _log_axis(ax.yaxis)
        ax.set_ylabel(f"{metric} latency (µs)")
        ax.set_title(f"{metric} latency against message size")
        ax.legend(loc="upper left")
    caption = (
        "Line: median latency (p50, median across repetitions) of each series of "
        "configurations that differ only in message size; shaded band: from p50 up "
        "to p99. Both axes are logarithmic; a band that widens with size means the "
        "tail grows faster than the median."
    )
    return [Drawing("latency-vs-size", "Latency against message size", caption, figure)], notes


# Percentile spectrum -----------------------------------------------------------------


def _spectrum_groups(configs: list[Config]) -> list[tuple[str, str, list[Config]]]:
    """(name suffix, title suffix, configurations) per figure: one figure per kind, split
    by size and then into chunks when there are too many lines for one figure."""
    groups = []
    for kind, members in _by(configs, lambda c: c.kind).items():
        if len(members) <= MAX_LINES:
            groups.append((kind, "", members))
            continue
        for size, same_size in _by(members, lambda c: c.size).items():
            size_name = setting_text("size", size).replace(" ", "")
            chunks = _chunks(same_size, MAX_LINES)
            groups.extend(
                (
                    _numbered(f"{kind}-{size_name}", i, len(chunks)),
                    f", {setting_text('size', size)}{_of(i, len(chunks))}",
                    chunk,
                )
                for i, chunk in enumerate(chunks)
            )
    return groups


def spectrum_of(latency_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(1/(1-q), latency ns at q) from p0 up to p99.99, stopping where the sample count
    can no longer tell a percentile from the maximum."""
    # 12 significant digits: 10**3 from logspace is 999.9999999999999, and p99.9 must be
    # the rank it is in the tables.
    reach = np.array([float(f"{r:.12g}") for r in np.logspace(0, 4, SPECTRUM_POINTS)])
    n = latency_ns.size
    reach = reach[reach <= max(n, 1)]
    if n == 0:
        return reach, np.empty(0)
    # Nearest rank of q = 1 - 1/r among n: ceil(n - n/r) = n - floor(n/r).
    ranks = np.maximum(n - np.floor(n / reach).astype(np.int64), 1)
    ordered = np.sort(latency_ns)
    return reach, ordered[ranks - 1]


def percentile_spectra(configs: list[Config]) -> tuple[list[Drawing], list[str]]:
    drawings = []
    for suffix, title_suffix, members in _spectrum_groups(configs):
        figure, (ax,) = _panels(1, PANEL_INCHES, 1)
        for index, (label, config) in enumerate(zip(labels(members), members)):
            reach, latency = spectrum_of(config.pooled_ns)
            ax.plot(reach, latency / 1000.0, color=f"C{index % 10}", label=label)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(ticker.FixedLocator(list(SPECTRUM_TICKS)))
        ax.xaxis.set_major_formatter(ticker.FixedFormatter(list(SPECTRUM_TICKS.values())))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.set_xlim(1, max(SPECTRUM_TICKS))
        ax.set_xlabel("percentile (%)")
        ax.set_yscale("log")
        _log_axis(ax.yaxis)
        metric = members[0].metric
        ax.set_ylabel(f"{metric} latency (µs)")
        title = f"Percentile spectrum, {metric}{title_suffix}"
        ax.set_title(title)
        ax.legend(loc="upper left")
        caption = (
            f"{metric} latency at each percentile of the samples of all repetitions "
            f"together (nearest rank), from the minimum (0) to p99.99, on a "
            f"1/(1-q) axis that gives each added nine the same room. A line ends "
            f"where its sample count cannot resolve a higher percentile."
        )
        drawings.append(Drawing(f"percentile-spectrum-{suffix}", title, caption, figure))
    return drawings, []


# Histograms --------------------------------------------------------------------------


def histograms(configs: list[Config]) -> tuple[list[Drawing], list[str]]:
    pages = _chunks(configs, MAX_PANELS)
    drawings = []
    for page_index, page in enumerate(pages):
        pooled = [_positive(c.pooled_ns) / 1000.0 for c in page]
        low, high = min(v.min() for v in pooled), max(v.max() for v in pooled)
        edges = np.geomspace(
            low, high * 1.0001 if high > low else low * 1.01, HISTOGRAM_BINS + 1
        )  # shared, so panels compare directly
        figure, axes = _panels(len(page), SMALL_PANEL_INCHES, SMALL_COLUMNS)
        for ax, config, values in zip(axes, page, pooled):
            counts, _ = np.histogram(values, bins=edges)
            ax.stairs(counts, edges, fill=True, alpha=0.5, color="C0")
            for stat, style in (("p50", "-"), ("p99", "--")):
                if config.stats.get(stat) is not None:
                    ax.axvline(_us(config.stats[stat]), color="C3", linestyle=style, linewidth=0.8)
            ax.set_xscale("log")
            _log_axis(ax.xaxis)
            ax.set_yscale("log")
            _log_axis(ax.yaxis)
            ax.set_ylim(bottom=0.7)
            ax.set_title(config.label)
            ax.set_xlabel(f"{config.metric} latency (µs)")
            ax.set_ylabel("samples")
        title = f"Latency histograms{_of(page_index, len(pages))}"
        caption = (
            "Samples of all repetitions of each configuration in logarithmic "
            "latency bins shared by the panels of this figure, counts on a "
            "logarithmic axis; solid line: p50, dashed: p99. Two humps mean two "
            "paths (e.g. a wake-up that sometimes sleeps)."
        )
        drawings.append(
            Drawing(_numbered("latency-histograms", page_index, len(pages)), title, caption, figure)
        )
    return drawings, []


# Latency over time -------------------------------------------------------------------


def binned_over_time(receive_ns: np.ndarray, latency_ns: np.ndarray, bins: int):
    """(bin centre s, min, median, max) of the latencies in each non-empty time bin; time
    in seconds since the first sample was received."""
    order = np.argsort(receive_ns, kind="stable")
    seconds = (receive_ns[order] - receive_ns[order[0]]) / 1e9
    latency = latency_ns[order]
    edges = np.linspace(0.0, seconds[-1], bins + 1)
    starts = np.searchsorted(seconds, edges[1:-1], side="right")
    parts = [
        (centre, part)
        for centre, part in zip((edges[:-1] + edges[1:]) / 2, np.split(latency, starts))
        if part.size
    ]
    centres = np.array([c for c, _ in parts])
    return (
        centres,
        np.array([p.min() for _, p in parts]),
        np.array([np.median(p) for _, p in parts]),
        np.array([p.max() for _, p in parts]),
    )


def latency_over_time(configs: list[Config]) -> tuple[list[Drawing], list[str]]:
    pages = _chunks(configs, MAX_PANELS)
    drawings = []
    for page_index, page in enumerate(pages):
        figure, axes = _panels(len(page), SMALL_PANEL_INCHES, SMALL_COLUMNS)
        for ax, config in zip(axes, page):
            run = next(r for r in config.ok_runs if r.latency_ns.size)
            # about 5 samples a bin at least, or min, median and max would coincide
            bins = min(TIME_BINS, max(1, run.latency_ns.size // 5))
            t, low, middle, high = binned_over_time(run.receive_ns, run.latency_ns / 1000.0, bins)
            ax.fill_between(t, low, high, color="C0", alpha=0.25, linewidth=0, label="min to max")
            ax.plot(t, middle, color="C0", linewidth=0.9, label="median")
            ax.set_yscale("log")
            _log_axis(ax.yaxis)
            ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=4))
            ax.set_title(f"{config.label} (rep {run.rep})")
            ax.set_xlabel("time since first sample (s)")
            ax.set_ylabel(f"{config.metric} latency (µs)")
        axes[0].legend(loc="upper right")
        title = f"Latency over time{_of(page_index, len(pages))}"
        caption = (
            f"The first ok repetition of each configuration: latency against time "
            f"since its first sample arrived (receiver's clock), in up to "
            f"{TIME_BINS} time bins; line: median of each bin, shaded: its minimum "
            f"to maximum. Spikes are stalls; a drift is warm-up or interference."
        )
        drawings.append(
            Drawing(_numbered("latency-over-time", page_index, len(pages)), title, caption, figure)
        )
    return drawings, []


# Throughput against size -------------------------------------------------------------


def throughput_vs_size(configs: list[Config]) -> tuple[list[Drawing], list[str]]:
    pubsub = [c for c in configs if c.kind == "pubsub"]
    series = [s for s in series_along(pubsub, "size") if len(s) >= 2]
    if not series:
        reason = (
            "no pubsub runs"
            if not pubsub
            else "no pubsub series of configurations differing only in size has 2 or more sizes"
        )
        return [], [f"throughput against message size: {reason}"]
    figure, (rate_ax, bits_ax) = _panels(2, PANEL_INCHES, 2)
    names = labels([s[0] for s in series], leave_out="size")
    for index, (label, members) in enumerate(zip(names, series)):
        sizes = [c.size for c in members]
        for ax, key in ((rate_ax, "samples_per_s"), (bits_ax, "mbit_per_s")):
            values = [np.nan if c.rate.get(key) is None else c.rate[key] for c in members]
            ax.plot(sizes, values, marker="o", color=f"C{index % 10}", label=label)
    all_sizes = [c.size for s in series for c in s if c.size is not None]
    for ax, unit in ((rate_ax, "samples/s"), (bits_ax, "Mbit/s")):
        _size_axis(ax, all_sizes)
        ax.set_yscale("log")
        _at_least_a_decade(ax)
        _log_axis(ax.yaxis)
        ax.set_ylabel(f"received {unit}")
        ax.set_title(f"Subscriber throughput ({unit})")
        ax.legend(loc="upper left")
    caption = (
        "Messages (left) and megabits (right, whole messages, header included) "
        "received per second on the subscriber's clock, first to last sample, "
        "median across repetitions. At a fixed publish rate this shows whether the "
        "rate was kept; back to back (rate 0) it shows capacity."
    )
    return [Drawing("throughput-vs-size", "Throughput against message size", caption, figure)], []


# Latency against subscriber count ----------------------------------------------------


def _legend_inches(names: list[str]) -> float:
    """Room for a legend of these series names beside a panel (7-point text)."""
    return min(4.5, 0.45 + 0.055 * max((len(n) for n in names), default=0))


def _legend_beside(ax) -> None:
    """The legend right of the axes, where it hides no line however many series."""
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0.0,
        title="solid p50, dashed p99",
        title_fontsize=7,
    )


def _p50_p99_lines(ax, xs, members, colour: str, label: str) -> None:
    """One series: p50 solid with circles (named in the legend), p99 dashed."""
    ax.plot(xs, [_us(c.stats.get("p50")) for c in members], marker="o", color=colour, label=label)
    ax.plot(
        xs, [_us(c.stats.get("p99")) for c in members], marker="v", linestyle="--", color=colour
    )


def _panels_along(configs: list[Config], key: str, keep=None) -> list:
    """(metric, series) for each metric with series of 2 or more configurations that
    differ only in key (of those keep accepts, with keep)."""
    panels = []
    for metric, group in _by_metric(configs).items():
        series = series_along(group, key)
        if keep is not None:
            series = [[c for c in s if keep(c)] for s in series]
        series = [s for s in series if len(s) >= 2]
        if series:
            panels.append((metric, series))
    return panels


def _series_panels(panels: list, leave_out: str) -> tuple[Figure, list]:
    """A figure of one panel per (metric, series) of panels, with room for a legend of
    the series' names (their labels without leave_out); (figure, [(ax, metric, series,
    names)]) in the panels' order."""
    names_of = [labels([s[0] for s in series], leave_out=leave_out) for _, series in panels]
    figure, axes = _panels(
        len(panels),
        PANEL_INCHES,
        len(panels),
        _legend_inches([n for names in names_of for n in names]),
    )
    placed = [(ax, m, series, names) for ax, (m, series), names in zip(axes, panels, names_of)]
    return figure, placed


def _finish_latency_panel(ax, metric: str, against: str) -> None:
    """A latency panel's log y axis, its labels and its legend beside it."""
    ax.set_yscale("log")
    _log_axis(ax.yaxis)
    ax.set_ylabel(f"{metric} latency (µs)")
    ax.set_title(f"{metric} latency against {against}")
    _legend_beside(ax)


def _latency_along(configs: list[Config], setting: str, against: str, points: str, x_of,
                   x_axis, caption: str, keep=None) -> tuple[list[Drawing], list[str]]:  # fmt: skip
    """p50 and p99 latency against one setting, a line per series of configurations
    that differ only in it: x_of(config) its x, x_axis(ax) the axis's scale and label;
    points: what a series needs 2 or more of."""
    if setting not in varying_keys(configs):
        return [], [f"latency against {against}: no run varies {setting}"]
    panels = _panels_along(configs, setting, keep=keep)
    if not panels:
        return [], [
            f"latency against {against}: no series of configurations differing only in "
            f"{setting} has 2 or more {points}"
        ]
    figure, placed = _series_panels(panels, setting)
    for ax, metric, series, names in placed:
        for index, (label, members) in enumerate(zip(names, series)):
            _p50_p99_lines(ax, [x_of(c) for c in members], members, f"C{index % 10}", label)
        x_axis(ax)
        _finish_latency_panel(ax, metric, against)
    return [Drawing(f"latency-vs-{setting}", f"Latency against {against}", caption, figure)], []


def _count_axis(ax) -> None:
    ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax.set_xlabel("subscribers")


def latency_vs_subscribers(configs: list[Config]) -> tuple[list[Drawing], list[str]]:
    caption = (
        "p50 (solid) and p99 (dashed) latency, medians across repetitions, of each "
        "series of configurations that differ only in the number of subscribers; "
        "the slope is the cost of one more subscriber."
    )
    return _latency_along(configs, "subscribers", "subscriber count", "counts",
                          lambda c: implied_setting(c.params, "subscribers"), _count_axis,
                          caption)  # fmt: skip


# Throughput over time ----------------------------------------------------------------


def full_seconds(per_bin: list[int]) -> list[int]:
    """The per-second series without its last bin, which ends at the last arrival and so
    covers only part of a second."""
    return list(per_bin[:-1])


def throughput_over_time(configs: list[Config]) -> tuple[list[Drawing], list[str]]:
    series = []
    for config in configs:
        if config.kind != "pubsub":
            continue
        run = config.ok_runs[0]
        seconds = full_seconds(run.throughput["per_bin"])
        if len(seconds) >= 2:
            series.append((config, run, seconds))
    if not series:
        return [], [
            "throughput over time: no pubsub run received for 3 seconds or more (2 whole seconds)"
        ]
    pages = _chunks(series, MAX_LINES)
    drawings = []
    for page_index, page in enumerate(pages):
        figure, (ax,) = _panels(1, PANEL_INCHES, 1)
        for index, (config, run, seconds) in enumerate(page):
            ax.plot(
                np.arange(len(seconds)) + 0.5,
                seconds,
                marker=".",
                color=f"C{index % 10}",
                label=f"{config.label} (rep {run.rep})",
            )
        longest = max(len(seconds) for _, _, seconds in page)
        highest = max(max(seconds) for _, _, seconds in page)
        ax.set_xlim(0, longest)
        ax.set_ylim(0, max(highest, 1) * 1.15)
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:,.0f}"))
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.set_xlabel("time since the first arrival (s)")
        ax.set_ylabel("received samples/s")
        title = f"Throughput over time{_of(page_index, len(pages))}"
        ax.set_title(title)
        ax.legend(loc="lower left")
        caption = (
            "Samples received in each second of the first ok repetition of each "
            "configuration, on the subscribers' clocks (seconds counted from each "
            "subscriber's first arrival, all subscribers added up); the last, "
            "partial second is left out. A dip is a stall; a slope is a queue "
            "filling or draining."
        )
        drawings.append(
            Drawing(
                _numbered("throughput-over-time", page_index, len(pages)), title, caption, figure
            )
        )
    return drawings, []


# Latency against offered rate --------------------------------------------------------


def _offered(config: Config) -> float | None:
    rate = config.params.get("rate")
    return float(rate) if isinstance(rate, (int, float)) and rate > 0 else None


def _rate_axis(ax) -> None:
    ax.set_xscale("log")
    _log_axis(ax.xaxis)
    ax.set_xlabel("offered rate (samples/s per publisher)")


def latency_vs_rate(configs: list[Config]) -> tuple[list[Drawing], list[str]]:
    caption = (
        "p50 (solid) and p99 (dashed) latency, medians across repetitions, of each "
        "series of configurations that differ only in the publish rate (rate 0, "
        "as fast as possible, has no place on this axis). Both axes are "
        "logarithmic; where p99 turns upward the middleware starts to queue."
    )
    return _latency_along(configs, "rate", "offered rate", "rates above 0", _offered,
                          _rate_axis, caption, keep=_offered)  # fmt: skip


# Rate search -------------------------------------------------------------------------


def rate_searches(searches: list[Search]) -> tuple[list[Drawing], list[str]]:
    drawings, notes = [], []
    for index, search in enumerate(searches):
        steps = [
            (number, step)
            for number, step in enumerate(search.steps, start=1)
            if isinstance(step.get("rate_hz"), (int, float)) and step["rate_hz"] > 0
        ]
        if not steps:
            notes.append(f"rate search {search.name}: no step with a rate above 0")
            continue
        drawings.append(_search_drawing(search, steps, index, len(searches)))
    return drawings, notes


def _draw_steps(ax, points: list[tuple[float, float, bool, int]]) -> None:
    """The steps (rate, value, passed, number) joined in rate order, marked passed or
    failed, each labelled with its number."""
    if points:
        ax.plot(
            [p[0] for p in points], [p[1] for p in points], color="0.6", linewidth=0.8, zorder=1
        )
    for passed, marker, colour, name in (
        (True, "o", "C2", "passed"),
        (False, "X", "C3", "failed"),
    ):
        chosen = [p for p in points if p[2] == passed]
        ax.scatter(
            [p[0] for p in chosen],
            [p[1] for p in chosen],
            marker=marker,
            color=colour,
            label=name,
            zorder=3,
        )
    for rate, value, _, number in points:
        ax.annotate(
            str(number),
            (rate, value),
            textcoords="offset points",
            xytext=(3, 3),
            fontsize=6,
            color="0.3",
        )


def _draw_rate_axis(ax, search: Search) -> None:
    """The offered rate, log scale, with the highest rate found sustainable."""
    best = search.data.get("max_sustainable_rate_hz")
    if best:
        ax.axvline(
            best,
            color="C2",
            linestyle=":",
            linewidth=1.0,
            label=f"max sustainable {best:,.0f}/s" + (" per pub" if search.publishers > 1 else ""),
        )
    ax.set_xscale("log")
    _log_axis(ax.xaxis)
    ax.set_xlabel(
        "offered rate (samples/s)"
        if search.publishers == 1
        else f"offered rate per publisher (samples/s; {search.publishers} "
        f"publishers offer {search.publishers}x)"
    )
    ax.legend(loc="upper left")


def _search_drawing(
    search: Search, steps: list[tuple[int, dict]], index: int, count: int
) -> Drawing:
    figure, (p99_ax, loss_ax) = _panels(2, PANEL_INCHES, 2)
    criteria = search.criteria
    ordered = sorted(steps, key=lambda item: item[1]["rate_hz"])
    for ax, key, scale, bound in (
        (p99_ax, "p99_ns", 1 / 1000.0, criteria.get("max_p99_ns")),
        (loss_ax, "loss_percent", 1.0, criteria.get("max_loss_percent")),
    ):
        points = [
            (s["rate_hz"], s[key] * scale, bool(s.get("passed")), number)
            for number, s in ordered
            if isinstance(s.get(key), (int, float))
        ]
        _draw_steps(ax, points)
        if bound is not None:
            ax.axhline(bound * scale, color="C3", linestyle="--", linewidth=0.9, label="bound")
        _draw_rate_axis(ax, search)
    p99_ax.set_yscale("log")
    _log_axis(p99_ax.yaxis)
    p99_ax.set_ylabel("p99 one-way latency (µs)")
    p99_ax.set_title("p99 latency at each step")
    loss_ax.set_ylim(bottom=0)
    loss_ax.set_ylabel("loss (%)")
    loss_ax.set_title("Loss at each step")
    title = f"Rate search ({search.name})"
    caption = (
        "Each step of the search at its offered rate, numbered in the order it ran: "
        "circles passed both bounds, crosses failed one; dashed red: the bound "
        "(p99 left, loss right); dotted green: the highest rate found sustainable. "
        "The search doubles the rate until a step fails, then bisects between the "
        "last pass and the first failure; a passing rate near the boundary counts "
        "only once its reruns passed too."
        + (
            f" Rates are each of the {search.publishers} publishers' rate."
            if search.publishers > 1
            else ""
        )
    )
    return Drawing(_numbered("rate-search", index, count), title, caption, figure)
