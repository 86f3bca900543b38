"""Text for people: the runs of a plan (--dry-run) and the summary after a sweep."""

import json

from psbench.base import table
from psbench.base.units import micros, size_text, value_text
from psbench.results.configs import setting_text
from psbench.run.experiment.execute import SweepResult
from psbench.run.experiment.expand import Run
from psbench.run.experiment.plan import Plan

MESSAGE_LINES = 4


def common_settings(runs: list[Run]) -> tuple[list[str], dict]:
    """Keys whose value differs between runs, and the common values of the others."""
    keys: list[str] = []
    for run in runs:
        keys.extend(k for k in run.params if k not in keys)
    values = {k: {json.dumps(r.params.get(k), sort_keys=True) for r in runs} for k in keys}
    varying = [k for k in keys if len(values[k]) > 1]
    # Flags left off are not worth a word.
    common = {
        k: runs[0].params[k]
        for k in keys
        if len(values[k]) == 1 and k in runs[0].params and runs[0].params[k] is not False
    }
    return varying, common


def plan_listing(plan: Plan, done: dict[str, dict] | None = None) -> str:
    """What `psbench run --dry-run` prints; done: finished runs of the store (--resume)."""
    exp, expansion = plan.experiment, plan.expansion
    runs = plan.selected
    head = f"experiment {exp.name} ({plan.file}): {len(expansion.runs)} runs"
    parts = []
    if expansion.points:
        parts.append(f"{expansion.points} matrix points")
    if expansion.excluded:
        parts.append(f"{expansion.excluded} excluded")
    if exp.runs:
        parts.append(f"{len(exp.runs)} listed in runs")
    if exp.repetitions > 1:
        parts.append(f"{exp.repetitions} repetitions each")
    if parts:
        head += f" ({', '.join(parts)})"
    if len(runs) != len(expansion.runs):
        head += f"; {len(runs)} selected by --filter"
    lines = [head]
    if exp.description:
        lines.append(f"  {exp.description.strip()}")
    if plan.criteria is not None:
        lines.append("each run is a rate search: " + search_text(plan.criteria))
    varying, common = common_settings(runs)
    if common:
        lines.append(
            "same in every run: "
            + ", ".join(f"{k} {setting_text(k, v)}" for k, v in common.items())
        )
    pinned = {
        value_text(plan.specs[r.number].cpus) or "none"
        for r in runs
        if r.number in plan.specs and "cpus" not in r.params
    }
    if pinned:
        lines.append(
            "cpu pinning where a run sets no cpus (one process per core, round-robin): "
            + "; ".join(sorted(pinned))
        )
    headers = ["#", "run"] + varying + (["rep"] if exp.repetitions > 1 else [])
    if done is not None:
        headers.append("resume")
    rows = []
    for run in runs:
        row = [run.number, run.label] + [
            setting_text(k, run.params[k]) if k in run.params else "-" for k in varying
        ]
        if exp.repetitions > 1:
            row.append(run.rep)
        if done is not None:
            entry = done.get(run.identity)
            row.append(f"skip ({entry['status']})" if entry else "run")
        rows.append(row)
    lines.append(table.render(headers, rows))
    for run, reason in plan.skipped:
        lines.append(f"skipped: run {run.number} {run.label}: {reason}")
    return "\n".join(lines)


def search_text(c) -> str:
    top = f"up to {c.max_rate_hz:g} Hz" if c.max_rate_hz else "no maximum rate"
    return (
        f"loss <= {c.max_loss_percent:g}%, p99 <= {c.max_p99_ns / 1e3:g} µs, from "
        f"{c.start_rate_hz:g} Hz, {top}, precision {c.precision:g}, at most "
        f"{c.max_steps} steps, a rate sustainable once it passed {c.confirm} "
        f"run{'s' if c.confirm > 1 else ''}; rates are each publisher's"
    )


def _max_rate(entry: dict | None) -> str:
    found = (entry or {}).get("search") or {}
    rate = found.get("max_sustainable_rate_hz")
    return "-" if rate is None else f"{rate:,.0f}"


def _latency(entry: dict | None, key: str) -> str:
    """A latency figure of the run, marked * when the run's level changed."""
    latency = (entry or {}).get("latency") or {}
    if not latency:
        return "-"
    return micros(latency.get(key)) + ("*" if latency.get("level_changed") else "")


def sweep_summary(plan: Plan, result: SweepResult, root) -> str:
    """What `psbench run` prints at the end: a row per run, what its figures mean, the
    runs that were not ok and why, the tally."""
    runs = plan.selected
    searched = plan.criteria is not None
    headers = ["#", "run", "driver", "kind", "size", "status"] + (
        ["max rate Hz", "lowest fail Hz", "steps", "ended by"]
        if searched
        else ["p50 µs", "p99 µs", "samples", "lost"]
    )
    lines = [table.render(headers, [_summary_row(run, result, searched) for run in runs])]
    lines += _legend_lines(plan, result)
    lines += _not_ok_lines(runs, result, root)
    lines.append("")
    lines.append(f"{len(runs)} runs: {_tally(runs, result)}")
    lines.append(f"results: {root} (index.jsonl; one folder per run under runs/)")
    return "\n".join(lines)


def _summary_row(run, result: SweepResult, searched: bool) -> list:
    """A run's row: what it is, its status, and what its search found or its latency."""
    entry = result.entries.get(run.number)
    counts = (entry or {}).get("counts") or {}
    status = entry["status"] if entry else "not run"
    if run.number in result.earlier:
        status += " (earlier)"
    row = [
        run.number,
        run.label,
        run.get("driver"),
        run.get("kind"),
        size_text(run.get("size")),
        status,
    ]
    if searched:
        found = (entry or {}).get("search") or {}
        bracket = found.get("bracket") or [None, None]
        return row + [
            _max_rate(entry),
            "-" if bracket[1] is None else f"{bracket[1]:,.0f}",
            found.get("steps", "-"),
            found.get("ended_by") or "-",
        ]
    return row + [
        _latency(entry, "p50"),
        _latency(entry, "p99"),
        counts.get("samples", "-"),
        counts.get("lost", "-"),
    ]


def _legend_lines(plan: Plan, result: SweepResult) -> list[str]:
    """What the table's figures are: the search's criteria, or which latency each kind
    shows and what a * means."""
    if plan.criteria is not None:
        return [
            "each run is a rate search: "
            + search_text(plan.criteria)
            + "; search.json in each run's folder"
        ]
    runs = plan.selected
    kinds = {run.get("kind") for run in runs}
    meaning = {
        "ping": "RTT/2 for ping (one-way estimate, half the round trip)",
        "pubsub": "one-way for pubsub (receive time - intended send time)",
    }
    lines = ["latency: " + "; ".join(meaning[k] for k in sorted(kinds) if k in meaning)]
    if any(
        ((result.entries.get(run.number) or {}).get("latency") or {}).get("level_changed")
        for run in runs
    ):
        lines.append(
            "* the run's latency changed level during the run (the medians of its "
            "tenths differ): one p50 describes more than one level; psbench report "
            "gives the tenths"
        )
    return lines


def _not_ok_lines(runs, result: SweepResult, root) -> list[str]:
    """Each run that was not ok: its status, the first lines of its message, its folder."""
    bad = [
        (run, result.entries[run.number])
        for run in runs
        if run.number in result.entries and result.entries[run.number]["status"] != "ok"
    ]
    if not bad:
        return []
    lines = ["", "runs not ok:"]
    for run, entry in bad:
        message = (entry.get("message") or "no message").strip().splitlines()
        more = f" (+{len(message) - MESSAGE_LINES} lines)" if len(message) > MESSAGE_LINES else ""
        lines.append(
            f"  {run.number} {run.label}: {entry['status']}: "
            + "\n      ".join(message[:MESSAGE_LINES])
            + more
        )
        if entry.get("run_dir"):
            lines.append(f"      {root / entry['run_dir']}")
    return lines


def _tally(runs, result: SweepResult) -> str:
    """How many runs ended how: 3 ok, 1 failed, 2 not run (1 done earlier, kept)."""
    counts: dict[str, int] = {}
    for entry in result.entries.values():
        counts[entry["status"]] = counts.get(entry["status"], 0) + 1
    not_run = len(runs) - len(result.entries)
    tally = ", ".join(f"{n} {status}" for status, n in counts.items())
    if not_run:
        tally += f", {not_run} not run"
    if result.earlier:
        tally += f" ({len(result.earlier)} done earlier, kept)"
    return tally
