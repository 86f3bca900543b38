"""The trend figures: per series, p50, p99, throughput and CPU per message against date,
version or machine (PNG and SVG, drawn as the report's plots are: matplotlib's object
API, fixed sizes, no dates in the files). Each point is the median over its runs, its
bar their range; a change called real is marked at its later point (red: regression,
green: improvement) with its ratio; on the date axis a dotted line marks where the
middleware's version changed."""

from datetime import datetime
from pathlib import Path

import matplotlib
from matplotlib import dates
from matplotlib.figure import Figure

from psbench.history.trend import METRICS, Series
from psbench.report.plots import DPI, STYLE, Plot

PANEL_INCHES = (4.0, 2.2)
MARKS = {"regression": ("#c62828", "^"), "improvement": ("#2e7d32", "v")}


def _xs(series: Series, axis: str) -> list:
    if axis == "date":
        return [datetime.fromisoformat(p.x) for p in series.points]
    return list(range(len(series.points)))


def _panel(ax, series: Series, name: str, xs: list, axis: str) -> None:
    metric = METRICS[name]
    shown = [(x, p) for x, p in zip(xs, series.points) if p.value(metric) is not None]
    ax.set_title(f"{metric.title} ({metric.unit})")
    if not shown:
        ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes)
        return
    x = [s[0] for s in shown]
    middle = [p.value(metric) / metric.scale for _, p in shown]
    low = [m - min(p.values(metric)) / metric.scale for m, (_, p) in zip(middle, shown)]
    high = [max(p.values(metric)) / metric.scale - m for m, (_, p) in zip(middle, shown)]
    ax.errorbar(x, middle, yerr=[low, high], fmt="o-", color="#1f5fa8", ms=4, lw=1, capsize=2)
    for change in series.changes.get(name) or []:
        if change.verdict not in MARKS:
            continue
        point = series.points[change.after]
        colour, marker = MARKS[change.verdict]
        at = xs[change.after]
        value = point.value(metric) / metric.scale
        ax.plot([at], [value], marker=marker, color=colour, ms=10, zorder=5)
        last = change.after == len(series.points) - 1  # its label inside the axes
        ax.annotate(
            f"×{change.ratio:.2f}",
            (at, value),
            textcoords="offset points",
            xytext=(-8, 4) if last else (8, 4),
            ha="right" if last else "left",
            color=colour,
            fontsize=7,
        )
    if axis == "date":
        for i in range(1, len(series.points)):
            if series.points[i].versions != series.points[i - 1].versions:
                ax.axvline(xs[i], color="#888888", ls=":", lw=1)
                ax.annotate(
                    ", ".join(series.points[i].versions),
                    (xs[i], 1.0),
                    xycoords=("data", "axes fraction"),
                    xytext=(2, -9),
                    textcoords="offset points",
                    fontsize=6,
                    color="#555555",
                )
        locator = dates.AutoDateLocator(minticks=3, maxticks=7)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator))
        ax.tick_params(axis="x", labelsize=6)
    else:
        ax.set_xticks(xs, [p.x for p in series.points], rotation=20, fontsize=6, ha="right")
        ax.set_xlim(-0.7, len(xs) - 0.3)  # room for the first label
    ax.set_ylim(bottom=0)


def draw(series: Series, axis: str, out_dir: Path, number: int) -> Plot:
    """The figure of one series, written as PNG and SVG."""
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(PANEL_INCHES[0] * 2 + 1.0, PANEL_INCHES[1] * 2 + 1.4))
        figure.subplots_adjust(left=0.1, right=0.97, bottom=0.15, top=0.88, hspace=0.65, wspace=0.2)
        xs = _xs(series, axis)
        for index, name in enumerate(METRICS):
            _panel(figure.add_subplot(2, 2, index + 1), series, name, xs, axis)
        figure.suptitle(series.label, fontsize=9)
        name = f"trend-{number:03d}-{series.slug}"
        png, svg = out_dir / f"{name}.png", out_dir / f"{name}.svg"
        figure.savefig(png, dpi=DPI)  # Agg writes no time into a PNG
        figure.savefig(svg, metadata={"Date": None})
    marked = sum(
        1
        for changes in series.changes.values()
        for c in changes
        if c.verdict in ("regression", "improvement")
    )
    caption = (
        f"{len(series.points)} points against {axis}; each the median of its runs, the bar "
        f"their range; {marked} changes called real are marked (red: regression, green: "
        f"improvement, with the ratio later/earlier)"
    )
    return Plot(name, series.label, caption, png, svg)
