"""A study's tables, figures and sections as data: experiments/seeds/NAME.layout.yaml,
beside its experiment and its published figures, rendered here for every study alike.

The layout file holds what a study shows and how: the names its tables give each driver
and their order (`names`, `order`), the drivers that play each of the paper's roles
(`roles`, or the study's own key: `stand_ins`, `floors`), the paper's own systems built
here and the driver that stands in for each where they are not (`real`), every table (its file name,
title, columns, notes, and its `rows` where they are data too), every figure (name,
title, caption, axes, panels) and every section (title, notes). Texts are templates: `{where}`, `{marker}` and the
like are filled from what the study module passes (str.format). The study module keeps
only what reads the measurements and decides the paper's claims: it hands this module
rows (lists in column order, or dicts by column key) and lines, and gets back the
report's Table, Drawing and Section objects (psbench.reproduce.common).

Columns are [title, key] or [title, key, format] (report.tables.FORMATS); an entry that is
a name stands for the columns listed under that name in `column_groups`, and one like
{each: drivers, columns: [...]} repeats its columns for each item of the list `drivers`
the study passes (each a dict whose keys fill the templates).
"""

import re
import string
from dataclasses import dataclass, field
from functools import cached_property

import yaml

from psbench.base.errors import UserError
from psbench.report.plots import (
    DPI,
    MARGIN_INCHES,
    PANEL_INCHES,
    STYLE,
    Drawing,
    _log_axis,
    _panels,
    _size_axis,
)
from psbench.report.tables import FORMATS, Column, Table
from psbench.reproduce import common
from psbench.reproduce.common import Section, not_testable
from psbench.results.run_record import driver_version

WHOLE_FIELD = re.compile(r"^\{([^{}:!]+)\}$")


def _fill(text, context: dict):
    """text with its {fields} from context; a list or dict filled throughout. A text that
    is one field and nothing else ("{method[ack_bytes]}") is that value itself, not its
    text: a number stays a number in a table's CSV and JSON."""
    if isinstance(text, str):
        if whole := WHOLE_FIELD.match(text):
            return string.Formatter().get_field(whole[1], (), context)[0]
        return text.format(**context) if "{" in text else text
    if isinstance(text, list):
        return [_fill(t, context) for t in text]
    if isinstance(text, dict):
        return {k: _fill(v, context) for k, v in text.items()}
    return text


def folded(text) -> str:
    """A text on one line, runs of white space as one space (a published statement)."""
    return " ".join(str(text or "").split())


@dataclass
class Mark:
    """A run that did not end ok, at x: an x at the bottom of the panel, labelled with
    its status."""

    x: float
    text: str
    colour: str

    def draw(self, ax) -> None:
        ax.plot([self.x], [0.0], marker="x", markersize=9, color=self.colour,
                transform=ax.get_xaxis_transform(), clip_on=False)  # fmt: skip
        ax.annotate(self.text, (self.x, 0.02), xycoords=("data", "axes fraction"),
                    color=self.colour, fontsize=6, rotation=90, va="bottom")  # fmt: skip


@dataclass
class Line:
    """One series of a panel: ax.plot(xs, ys, style, label=..., **options)."""

    xs: list
    ys: list
    label: str | None = None
    style: str | None = None
    options: dict = field(default_factory=dict)


class Layout:
    """One study's layout file."""

    def __init__(self, name: str):
        self.study = name
        path = common.seeds_dir() / f"{name}.layout.yaml"
        try:
            self.data = yaml.safe_load(path.read_text()) or {}
        except FileNotFoundError:
            raise UserError(f"study {name!r}: its layout {path} is missing", 2) from None

    # Drivers: what the tables call them, in which order, what they stand for ------------

    @cached_property
    def names(self) -> dict[str, str]:
        return self.data.get("names") or {}

    @cached_property
    def order(self) -> tuple:
        return tuple(self.data.get("order") or ())

    def name(self, driver: str) -> str:
        return self.names.get(driver, driver)

    def rank(self, driver: str) -> tuple:
        """Sort key: the layout's order first, then by name."""
        order = self.order
        return (order.index(driver) if driver in order else len(order), driver)

    def ranked(self, drivers) -> list[str]:
        return sorted(drivers, key=self.rank)

    def role(self, role: str) -> list[str]:
        """The drivers that play one of the paper's roles (`roles`), in order."""
        return list((self.data.get("roles") or {}).get(role) or [])

    # The paper's own systems where they are built here (`real`: the driver of a paper's
    # system -> the driver that stands in for it on a machine without that build).

    @cached_property
    def real(self) -> dict[str, str]:
        return self.data.get("real") or {}

    def stands_in(self, driver: str) -> bool:
        """Whether the driver stands in for a paper's system another driver is."""
        return driver in self.real.values()

    def judged(self, driver: str, measured) -> str:
        """The driver a statement about `driver`'s paper system is checked on: the real
        system's where it was measured (in `measured`), else `driver` itself."""
        return next((r for r, s in self.real.items() if s == driver and r in measured), driver)

    def text(self, key: str, **context):
        """A text (or a list or dict of them) from `texts`, filled from context."""
        return _fill(self.data["texts"][key], context)

    # Tables ------------------------------------------------------------------------------

    def columns(self, entries: list, context: dict) -> list[Column]:
        found = []
        for entry in entries:
            if isinstance(entry, str):
                found += self.columns(self.data["column_groups"][entry], context)
            elif isinstance(entry, dict):
                for item in context[entry["each"]]:
                    found += self.columns(entry["columns"], {**context, **item})
            elif len(entry) in (2, 3) and (len(entry) == 2 or entry[2] in FORMATS):
                found.append(Column(*_fill(list(entry), context)))
            else:
                raise ValueError(f"{self.study}: a column is [title, key] or [title, key, "
                                 f"format], not {entry!r} (a comma in a title needs quotes)")  # fmt: skip
        return found

    def table(self, key: str, rows=None, notes=None, lead=None, **context) -> Table:
        """Table `key` of `tables`, with rows (lists in column order, or dicts by column
        key; without them, the layout's own `rows`, filled) and its notes (`lead`, the
        layout's, filled, then `notes`)."""
        spec = self.data["tables"][key]
        columns = self.columns(spec["columns"], context)
        if rows is None:
            rows = _fill(spec["rows"], context)
        rows = [[row.get(c.key) for c in columns] if isinstance(row, dict) else row
                for row in rows]  # fmt: skip
        found = list(lead or []) + _fill(spec.get("notes") or [], context) + list(notes or [])
        return Table(_fill(spec["name"], context), _fill(spec["title"], context), columns,
                     rows, found)  # fmt: skip

    # Sections ------------------------------------------------------------------------------

    def section(self, key: str, tables=(), drawings=(), notes=None, **context) -> Section:
        """Section `key` of `sections`: its title and notes (the layout's, filled, then
        `notes`), with these tables and drawings."""
        spec = self.data["sections"][key]
        found = _fill(spec.get("notes") or [], context) + list(notes or [])
        return Section(_fill(spec["title"], context), list(tables), list(drawings), found)

    # Figures -------------------------------------------------------------------------------

    def drawing(self, key: str, panels: list[list], each=None, **context) -> Drawing:
        """Figure `key` of `figures`: one panel per list of lines (Line, Mark), side by
        side, each with the axes the layout gives it (its `panels` entry, or the figure's
        one `panel`, over the figure's `axes`), filled from context and each[index]."""
        import matplotlib

        spec = self.data["figures"][key]
        with matplotlib.rc_context(STYLE):
            if "legend_right_inches" in spec:
                figure, axes = _row(len(panels), spec["legend_right_inches"])
            else:
                figure, axes = _panels(len(panels), PANEL_INCHES, spec.get("columns", 2))
            for index, (ax, lines) in enumerate(zip(axes, panels)):
                own = spec["panels"][index] if "panels" in spec else spec["panel"]
                own = _fill(
                    {**spec.get("axes", {}), **own},
                    {**context, **(each or [{}] * len(panels))[index]},
                )
                legend = _panel(ax, lines, own)
                if "legend_of_panel" in own:  # another panel's legend, beside this one
                    other, options = own["legend_of_panel"]
                    ax.add_artist(legend)
                    handles, names = axes[other].get_legend_handles_labels()
                    if handles:
                        ax.legend(handles, names, **options)
        return Drawing(_fill(spec["name"], context), _fill(spec["title"], context),
                       _fill(spec["caption"], context), figure)  # fmt: skip


def _row(count: int, legend_inches: float):
    """A figure of count panels in one row, with legend_inches of room right of the last
    one only (report.plots._panels leaves room beside every panel)."""
    from matplotlib.figure import Figure

    left, right, bottom, top, across, _ = MARGIN_INCHES
    width = left + count * PANEL_INCHES[0] + (count - 1) * across + legend_inches + right
    height = bottom + PANEL_INCHES[1] + top
    figure = Figure(figsize=(width, height), dpi=DPI)
    figure.subplots_adjust(
        left=left / width,
        right=1 - (right + legend_inches) / width,
        bottom=bottom / height,
        top=1 - top / height,
        wspace=across / PANEL_INCHES[0],
    )
    return figure, list(figure.subplots(1, count))


def _panel(ax, lines: list[Line], axes: dict):
    """Draws lines on ax, then its axes as the layout says, in matplotlib's order (a scale
    before ticks, ticks before labels, every line before the legend)."""
    import matplotlib

    for line in lines:
        if isinstance(line, Mark):
            line.draw(ax)
            continue
        args = (line.xs, line.ys) + ((line.style,) if line.style else ())
        ax.plot(*args, **({"label": line.label} if line.label else {}), **line.options)
    lines = [line for line in lines if isinstance(line, Line)]
    x = axes.get("xscale")
    if x == "size":
        _size_axis(ax, axes.get("sizes") or sorted({v for line in lines for v in line.xs}))
    elif x == "log2":
        ax.set_xscale("log", base=2)
    elif x == "log":
        ax.set_xscale("log")
    if axes.get("yscale") == "log":
        ax.set_yscale("log")
    if axes.get("ylog_labels"):
        _log_axis(ax.yaxis)
    if axes.get("xticks") == "values":
        ticks = sorted({v for line in lines for v in line.xs})
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(v) for v in ticks])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    if "xlabel" in axes:
        ax.set_xlabel(axes["xlabel"])
    if "ylabel" in axes:
        ax.set_ylabel(axes["ylabel"])
    if "ylim_bottom" in axes:
        ax.set_ylim(bottom=axes["ylim_bottom"])
    if "title" in axes:
        ax.set_title(axes["title"])
    legend = axes.get("legend")
    if legend is not None and (lines or not axes.get("legend_if_lines")):
        return ax.legend(**legend)
    return None


def claim_rows(published: dict, checks: dict) -> tuple[list[dict], list[str]]:
    """Every statement of the published file (its `claims`) with ours and a verdict:
    checks[kind](claim) gives (ours, verdict); a not_testable claim says why whatever the
    data, and a kind with no check says so. Rows by column key (the claim's own keys, its
    text on one line, ours, verdict); notes: each claim's `note`, with its id."""
    rows = []
    claims = published.get("claims") or []
    for claim in claims:
        kind = claim.get("kind")
        if kind == "not_testable":
            ours, verdict = "-", not_testable(claim.get("reason"))
        elif kind in checks:
            ours, verdict = checks[kind](claim)
        else:
            ours, verdict = "-", f"not checked (unknown kind {kind!r})"
        rows.append({**claim, "text": folded(claim.get("text")), "ours": ours, "verdict": verdict})
    notes = [f"{c.get('id')}: {folded(c['note'])}" for c in claims if c.get("note")]
    return rows, notes


def rounded(value, digits: int = 1):
    return None if value is None else round(float(value), digits)


class Settings(dict):
    """settings[key]: the values a setting takes over runs, ordered, as text ("-": none);
    for a layout's templates, e.g. "{pings[warmup]}"."""

    def __init__(self, runs):
        super().__init__()
        self.runs = list(runs)

    def __missing__(self, key: str) -> str:
        found = {r.params.get(key) for r in self.runs if r.params.get(key) is not None}
        ordered = sorted(found, key=lambda v: (0, float(v), "") if _number(v) else (1, 0, str(v)))
        return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in ordered) or "-"


def _number(value) -> bool:
    try:
        float(value)
        return True
    except (TypeError, ValueError):
        return False


def run_rows(results, name, left_out: str) -> tuple[list[list], list[str]]:
    """Every run of a result set as [number, label, middleware, version, status], and a
    note for each that did not end ok ("run N (LABEL) is STATUS, left out LEFT_OUT: ...")."""
    rows, notes = [], []
    for run in results.runs:
        version = driver_version(run.run_record)
        rows.append([run.number, run.label, name(run.driver), version, run.status])
        if run.status != "ok":
            notes.append(
                f"run {run.number} ({run.label}) is {run.status}, left out {left_out}: "
                f"{run.message or 'no message'}"
            )
    return rows, notes
