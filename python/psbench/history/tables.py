"""The history's tables: the sets it holds (`history list`), and for `history trend` the
last change of every series and every change called real."""

import json

from psbench.history.trend import METRICS, Change, Series
from psbench.report.tables import Column, Table


def _short_commit(row) -> str | None:
    commit = row["psbench_commit"]
    if not commit:
        return None
    return commit[:10] + ("+dirty" if row["psbench_dirty"] else "")


def _versions(configs) -> str | None:
    found = sorted({f"{c['driver']} {c['driver_version']}" for c in configs if c["driver_version"]})
    return "; ".join(found) or None


def sets_table(sets, configs_by_set: dict[int, list]) -> Table:
    columns = [
        Column("set", format="count"),
        Column("started (UTC)", "started_utc"),
        Column("name"),
        Column("kind"),
        Column("machine"),
        Column("middleware versions", "versions"),
        Column("psbench"),
        Column("configs", format="count"),
        Column("runs", format="count"),
        Column("ok", "ok_runs", "count"),
        Column("formats"),
        Column("path"),
    ]
    rows = []
    for s in sets:
        configs = configs_by_set.get(s["id"], [])
        formats = json.loads(s["formats"])
        samples = ",".join(f"v{v}" for v in formats.get("samples") or []) or "none"
        rows.append(
            [
                s["id"],
                (s["started_utc"] or "")[:19] or None,
                s["name"],
                s["kind"],
                s["machine"],
                _versions(configs),
                " ".join(filter(None, [s["psbench_version"], _short_commit(s)])) or None,
                len(configs),
                s["runs"],
                s["ok_runs"],
                f"samples {samples}",
                s["path"],
            ]
        )
    return Table("sets", "Result sets in the history", columns, rows)


def _change_text(change: Change | None) -> str | None:
    if change is None:
        return None
    if change.ratio is None:
        return change.verdict
    return f"{change.verdict} ×{change.ratio:.2f} ±{change.threshold:.0%}"


def last_changes_table(series: list[Series], axis: str) -> Table:
    columns = [Column("series"), Column("points", format="count")]
    columns.append(Column(f"last {axis}", "last"))
    for name, metric in METRICS.items():
        columns.append(Column(f"{metric.title} ({metric.unit})", f"{name}_value", "stat"))
        columns.append(Column(f"{name}: last change", f"{name}_change"))
    rows = []
    for one in series:
        last = one.points[-1]
        row = [one.label, len(one.points), last.shown]
        for name, metric in METRICS.items():
            value = last.value(metric)
            row += [None if value is None else value / metric.scale, _change_text(one.last(name))]
        rows.append(row)
    notes = [
        "last change: the verdict on the last point against its reference (the points "
        "before it since the last change), the ratio point/reference and the noise band "
        "(learnt from repetitions); trend.json has the intervals"
    ]
    return Table("trend", f"The last change of every series (against {axis})", columns, rows, notes)


def reference_text(one: Series, c: Change) -> str:
    """The points a change was tested against: one, or the first and last of several."""
    shown = [p.shown for p in one.points if p.x in c.reference] or [one.points[c.before].shown]
    if len(shown) == 1:
        return shown[0]
    return f"{shown[0]} .. {shown[-1]} ({len(shown)} points)"


def marked_table(series: list[Series]) -> Table:
    columns = [
        Column("series"),
        Column("metric"),
        Column("against", "reference"),
        Column("at"),
        Column("verdict"),
        Column("ratio", format="ratio"),
        Column("low", format="ratio"),
        Column("high", format="ratio"),
        Column("noise band", "threshold", "percent"),
        Column("learnt from runs", "learnt_from", "count"),
        Column("test"),
    ]
    rows = []
    for one in series:
        for name, changes in one.changes.items():
            for c in changes:
                if c.verdict not in ("regression", "improvement"):
                    continue
                rows.append(
                    [one.label, name, reference_text(one, c), one.points[c.after].shown,
                     c.verdict, c.ratio, c.low, c.high, c.threshold, c.learnt_from, c.test]
                )  # fmt: skip
    notes = [
        "each point is tested against the points before it since the last change called "
        "real (their runs pooled, --window at most): ratio at/against with its interval, "
        "the noise band, and the runs the band was learnt from"
    ]
    return Table("changes", "Every change called real", columns, rows, notes)


def change_record(one: Series, c: Change) -> dict:
    return {
        "series": one.label,
        "metric": c.metric,
        "reference": c.reference,
        "reference_sets": [s for p in one.points if p.x in c.reference for s in p.set_ids],
        "at": one.points[c.after].x,
        "at_sets": one.points[c.after].set_ids,
        "verdict": c.verdict,
        "ratio": c.ratio,
        "low": c.low,
        "high": c.high,
        "threshold": c.threshold,
        "learnt_from": c.learnt_from,
        "test": c.test,
        "note": c.note or None,
    }


def series_record(one: Series) -> dict:
    return {
        "series": one.label,
        "settings": one.settings,
        "machine": one.machine,
        "points": [
            {
                "x": p.x,
                "sets": p.set_ids,
                "versions": p.versions,
                "runs": len(p.runs),
                **{name: p.value(metric) for name, metric in METRICS.items()},
            }
            for p in one.points
        ],
        "changes": {
            name: [change_record(one, c) for c in changes] for name, changes in one.changes.items()
        },
    }
