"""The tables of a report, as data: each cell keeps its raw value (for CSV and JSON) and
is formatted for people (terminal, Markdown, LaTeX, HTML) by its column's format."""

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from psbench.base.units import micros


# Column formats: how a raw value reads in a table for people.
def _us(value) -> str:
    return micros(value)


def _ratio(value) -> str:
    return f"{value:.3f}"


def _count(value) -> str:
    return f"{int(value):,}"


def _rate(value) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def _p(value) -> str:
    return "<1e-300" if value < 1e-300 else f"{value:.3g}"


def _stat(value) -> str:
    return f"{value:.3f}" if abs(value) < 1e5 else f"{value:.4g}"


def _percent(value) -> str:
    return f"{value:.1%}"


def _percent_value(value) -> str:
    """A value already in percent (search.json's loss_percent)."""
    return f"{value:.2f}"


def _offered(value) -> str:
    return "max" if value == 0 else _rate(value)


def _yes_no(value) -> str:
    return "yes" if value else "no"


FORMATS: dict[str, Callable[[Any], str]] = {
    "us": _us,
    "ratio": _ratio,
    "count": _count,
    "rate": _rate,
    "p": _p,
    "stat": _stat,
    "percent": _percent,
    "percent_value": _percent_value,
    "offered": _offered,
    "yes_no": _yes_no,
    "text": str,
}


@dataclass
class Column:
    name: str  # header for people, e.g. "p50 µs"
    # Machine name (CSV header, JSON key), e.g. "p50_ns"; left out, the name, where
    # that is one already (e.g. "metric").
    key: str = ""
    format: str = "text"
    missing: str = "-"  # what a cell without a value reads, for people

    def __post_init__(self) -> None:
        if not self.key:
            if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
                raise ValueError(f"column {self.name!r}: give its key, a machine name")
            self.key = self.name


def sides(name: str, key: str, format: str = "text") -> list[Column]:
    """One figure's two columns in a comparison, the reference A then B: name and key
    with {} where the side goes ("p50 {} µs", "p50_{}_ns")."""
    return [Column(name.format(side), key.format(side.lower()), format) for side in "AB"]


@dataclass
class Table:
    name: str  # file stem: summary, significance, ...
    title: str
    columns: list[Column]
    rows: list[list]  # raw values; None = not available
    notes: list[str] = field(default_factory=list)
    folded: bool = False  # HTML: shown collapsed whatever its length

    def cell(self, row: list, index: int) -> str:
        value = row[index]
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return self.columns[index].missing
        return FORMATS[self.columns[index].format](value)

    def text_rows(self) -> list[list[str]]:
        return [[self.cell(row, i) for i in range(len(self.columns))] for row in self.rows]

    @property
    def headers(self) -> list[str]:
        return [c.name for c in self.columns]

    def records(self) -> list[dict]:
        """Rows as {key: raw value} (CSV, JSON)."""
        return [{c.key: v for c, v in zip(self.columns, row)} for row in self.rows]
