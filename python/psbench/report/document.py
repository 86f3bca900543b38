"""`psbench report`: everything the report says, built from a result set, and the files
it writes (tables in Markdown, CSV, JSON and LaTeX; plots; one HTML page)."""

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from psbench.base.errors import UserError
from psbench.base.units import micros, size_text
from psbench.report import formats
from psbench.report.conditions import environment_warnings
from psbench.report.report_tables import (
    Pair,
    baseline_table,
    delivery_table,
    intervals_table,
    network_table,
    not_ok_table,
    one_setting_pairs,
    resources_table,
    search_table,
    significance_table,
    startup_table,
    subscribers_table,
    summary_table,
    threads_table,
    under_load_table,
)
from psbench.report.tables import Table
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet
from psbench.results.significance import DEFAULT_RESAMPLES, DEFAULT_SEED

REPORT_FORMAT = "psbench-report/1"
MARKER = "report.json"  # a folder with this file is a report psbench may replace


@dataclass
class Settings:
    noise: float = 0.05  # relative: repetitions' spread, and the significance band
    alpha: float = 0.05
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    plots: bool = True


@dataclass
class Report:
    title: str
    results: ResultSet
    configs: list[Config]
    summary: list[str]
    warnings: list[str]
    tables: list[Table]
    settings: Settings
    pairs: list[Pair] = field(default_factory=list)
    plots: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


def _status_line(results: ResultSet, configs: list[Config]) -> str:
    tally: dict[str, int] = {}
    for run in results.runs:
        tally[run.status] = tally.get(run.status, 0) + 1
    statuses = ", ".join(f"{n} {status}" for status, n in tally.items())
    return (
        f"{len(results.runs)} runs ({statuses}) in {len(configs)} configurations, "
        f"{sum(1 for c in configs if c.ok_runs)} with results"
    )


def _lowest_lines(configs: list[Config]) -> list[str]:
    """Per kind, placement and size: the configuration with the lowest p50."""
    groups: dict[tuple, list[Config]] = {}
    for c in configs:
        if c.ok_runs and c.stats.get("p50") is not None:
            groups.setdefault((c.metric, c.placement, c.size or 0), []).append(c)
    lines = []
    for (metric, placement, size), members in sorted(groups.items()):
        if len(members) < 2:
            continue
        best = min(members, key=lambda c: c.stats["p50"])
        lines.append(
            f"lowest {metric} p50 at {size_text(size)} ({placement}-process): "
            f"{best.label}, {micros(best.stats['p50'])} µs"
        )
    return lines


def build_report(results: ResultSet, settings: Settings) -> Report:
    configs = build_configs(results, settings.noise)
    if not any(c.ok_runs for c in configs):
        raise UserError(
            f"{results.root}: no run ended ok with samples "
            f"({_status_line(results, configs)}); nothing to report",
            1,
        )
    pairs = one_setting_pairs(configs, settings.alpha, settings.noise)
    optional = [
        under_load_table(configs),
        subscribers_table(configs),
        resources_table(configs),
        startup_table(configs),
        network_table(configs),
    ]
    tables = (
        [summary_table(configs), intervals_table(configs, settings.alpha), delivery_table(configs)]
        + [t for t in optional if t is not None]
        + [
            baseline_table(configs, settings.noise),
            significance_table(pairs, settings.alpha, settings.noise),
        ]
    )
    search = search_table(results.searches)
    if search is not None:
        tables.append(search)
    threads = threads_table(results)
    if threads is not None:
        tables.append(threads)
    not_ok = not_ok_table(results)
    if not_ok.rows:
        tables.append(not_ok)
    warnings = environment_warnings(results.env, configs)
    warnings += [f"{c.label}: {w}" for c in configs for w in c.warnings]
    summary = [f"{results.name}: {_status_line(results, configs)}"] + _lowest_lines(configs)
    for found in results.searches:
        best = found.data.get("max_sustainable_rate_hz")
        summary.append(
            f"rate search {found.name}: maximum sustainable rate "
            + (f"{best:,.0f}/s" if best else "not found")
            + f" ({len(found.steps)} steps)"
        )
    return Report(
        f"psbench report: {results.name}",
        results,
        configs,
        summary,
        warnings,
        tables,
        settings,
        pairs,
    )


def terminal_text(report: Report) -> str:
    parts = ["\n".join(report.summary)]
    if report.warnings:
        parts.append("\n".join(f"warning: {w}" for w in report.warnings))
    parts.extend(formats.terminal(t) for t in report.tables)
    return "\n\n".join(parts)


def _json_document(report: Report) -> dict:
    return {
        "format": REPORT_FORMAT,
        "title": report.title,
        "results": str(report.results.root),
        "summary": report.summary,
        "warnings": report.warnings,
        "settings": {
            "noise": report.settings.noise,
            "alpha": report.settings.alpha,
            "resamples": report.settings.resamples,
            "seed": report.settings.seed,
        },
        "configurations": [
            {
                "label": c.label,
                "params": c.params,
                "metric": c.metric,
                "runs": [r.number for r in c.runs],
                "stats_ns": c.stats,
                "per_repetition_ns": c.per_rep,
                # repetition (1-based, as a string) -> its stationarity check, for
                # those whose level changed during the run
                "level_changed": {str(k): found for k, found in c.drift.items()},
                "counts": c.counts,
                "rate": c.rate,
                "echo_ns": c.echo,
                "per_subscriber_ns": c.per_subscriber,
                "per_second": [r.throughput["per_bin"] for r in c.ok_runs],
                "baseline": c.baseline,
                "warnings": c.warnings,
            }
            for c in report.configs
        ],
        "comparisons": [
            {
                "setting": p.setting,
                "a": p.a.label,
                "b": p.b.label,
                "where": p.where,
                "verdict": p.result.verdict,
                "direction": p.result.direction,
                "covers": p.result.median.covers,
            }
            for p in report.pairs
        ],
        "tables": [formats.json_value(t) for t in report.tables],
        "plots": [
            {"name": p.name, "title": p.title, "png": p.png.name, "svg": p.svg.name}
            for p in report.plots
        ],
        "searches": [
            {
                "name": s.name,
                "max_sustainable_rate_hz": s.data.get("max_sustainable_rate_hz"),
                "criteria": s.criteria,
                "steps": len(s.steps),
            }
            for s in report.results.searches
        ],
        "notes": report.notes,
    }


def _prepare_folder(out: Path) -> Path:
    """A fresh temporary folder beside out; out itself must be new, empty, or a report."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise UserError(
            f"argument -o: {out} exists and is not a psbench report; choose a new folder"
        )
    staging = out.with_name(out.name + ".writing")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
    except OSError as exc:
        raise UserError(
            f"argument -o: cannot create {staging}: {exc.strerror}; choose a writable folder", 1
        ) from None
    return staging


def write_report(report: Report, out: Path) -> Path:
    """Writes every file into out (replacing an earlier report there) and returns the
    path of the HTML page. Files appear together: written aside, then moved in place."""
    from psbench.report import hgrm, html, plots  # matplotlib is slow to import
    from psbench.report.graph_drawing import write_graph_drawings

    staging = _prepare_folder(out)
    try:
        if report.settings.plots:
            (staging / "plots").mkdir()
            report.plots, skipped = plots.write_plots(
                report.configs, staging / "plots", report.results.searches
            )
            report.notes.extend(skipped)
            drawn, skipped = write_graph_drawings(report.configs, staging / "plots")
            report.plots += drawn
            report.notes.extend(skipped)
        hgrm.write_all(report.configs, staging / "hgrm")
        for t in report.tables:
            for suffix, writer in formats.WRITERS.items():
                (staging / f"{t.name}.{suffix}").write_text(writer(t))
        (staging / "report.md").write_text(
            "\n".join(
                [f"# {report.title}", "", *[f"- {s}" for s in report.summary], ""]
                + [f"> warning: {w}\n" for w in report.warnings]
                + [formats.markdown(t) for t in report.tables]
            )
        )
        (staging / "report.tex").write_text("\n".join(formats.latex(t) for t in report.tables))
        (staging / MARKER).write_text(
            json.dumps(_json_document(report), indent=2, ensure_ascii=False, default=str) + "\n"
        )
        (staging / "report.html").write_text(
            html.render_html(
                report.title,
                report.summary,
                report.warnings,
                report.tables,
                report.plots,
                report.results.env,
                report.results.experiment_text,
                report.notes,
            )
        )
        for plot in report.plots:  # the page embeds them; the files move with the folder
            plot.png = out / "plots" / plot.png.name
            plot.svg = out / "plots" / plot.svg.name
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out / "report.html"
