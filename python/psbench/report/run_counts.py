"""The lines of a run's terminal report that say where every sample went: each
receiver reconciled with its writers, each hop of a relay, how the senders kept their
schedule, what a store could not keep, late echoes, impossible latencies, drains,
injected faults and the middleware's own counters."""

from psbench.base.units import micros

COUNT_KEYS = (
    "sent",
    "received",
    "samples",
    "lost",
    "duplicated",
    "reordered",
    "late",
    "corrupted",
    "write_errors",
)


def counts_line(counts: dict, prefix: str = "", keys=COUNT_KEYS) -> str:
    return prefix + ", ".join(
        f"{k} {'-' if counts[k] is None else counts[k]}" for k in keys if k in counts
    )


def _ms(ns) -> str:
    ms = ns / 1e6
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.3g} ms"


def accounting_lines(name: str, a: dict) -> list[str]:
    published = "-" if a["published"] is None else f"{a['published']:,}"
    parts = [f"writers sent {published}", f"received {a['received']:,}"]
    if a["beyond_capacity"]:
        parts.append(
            f"of which {a['beyond_capacity']:,} beyond --max-samples (counted, not stored)"
        )
    parts.append(f"lost {'-' if a['lost'] is None else format(a['lost'], ',')}")
    if not a["complete"]:
        parts.append(
            f"unaccounted {'-' if a['unaccounted'] is None else format(a['unaccounted'], ',')}"
            f" (stopped on {a['ended_by']} before every end marker)"
        )
    for key in ("corrupted", "duplicated"):
        if a[key]:
            parts.append(f"{key} {a[key]:,}")
    return [f"  {name} accounting: " + ", ".join(parts)]


def schedule_lines(name: str, summary: dict) -> list[str]:
    """An open-loop sender that fell behind says so: what was due and not sent, how many
    writes began more than one period late, and the worst."""
    s = summary.get("schedule")
    if not s:
        return []
    timing = summary.get("timing") or {}
    window = (timing.get("measure_end_ns") or 0) - (timing.get("measure_start_ns") or 0)
    offered = 1e9 / s["period_ns"] if s.get("period_ns") else None
    rate = (
        f" ({s['attempted'] / (window / 1e9):,.0f} Hz of {offered:,.0f} Hz offered, "
        f"over the window)"
        if window > 0 and offered
        else ""
    )
    line = (
        f"  {name} schedule: due {s['due']:,}, written {s['attempted']:,}{rate}, not "
        f"sent {s['not_sent']:,}, over one period late {s['behind']:,} (largest "
        f"{_ms(s['max_lateness_ns'])})"
    )
    if s["not_sent"]:
        line += (
            "; the sender fell behind: the offered rate was not offered "
            f"({s['not_sent']:,} messages due in the window were never sent)"
        )
    elif s["behind"] > s["due"] // 100:
        line += (
            f"; {100 * s['behind'] / max(s['due'], 1):.3g}% of writes began over one "
            f"period late: latency from the schedule includes the sender's delay"
        )
    return [line]


def kept_lines(name: str, summary: dict) -> list[str]:
    kept = summary.get("kept") or {}
    beyond = kept.get("beyond_capacity")
    last = kept.get("last_kept_arrival_ns")
    timing = summary.get("timing") or {}
    if not beyond or last is None:
        return []
    start, end = timing.get("measure_start_ns"), timing.get("measure_end_ns")
    part = ""
    if start is not None and end is not None and end > start:
        part = f": the first {(last - start) / 1e9:.3g} s of the {(end - start) / 1e9:.3g} s run"
    samples = (summary.get("counts") or {}).get("samples")
    return [
        f"  {name} kept {samples:,} samples, {beyond:,} arrived after --max-samples "
        f"was full; its percentiles describe the part of the run that was kept{part}"
    ]


def stats_lines(name: str, stats: dict) -> list[str]:
    lines = []
    late = stats.get("late") or {}
    if late.get("count"):
        without = stats.get("without_late") or {}
        p99 = without.get("p99")
        lines.append(
            f"  {name} late: {late['count']:,} echoes came after --sample-timeout "
            f"(the largest {micros(late['max_ns'], grouping=True)} µs); they are in the "
            f"percentiles above"
            + (f"; without them p99 = {micros(p99, grouping=True)} µs" if p99 is not None else "")
        )
    lateness = stats.get("sender_lateness") or {}
    if lateness.get("max"):
        lines.append(
            f"  {name} sender lateness (write start - due time): p50 "
            f"{micros(lateness['p50'], grouping=True)} µs, p99 "
            + ("-" if lateness.get("p99") is None else micros(lateness["p99"], grouping=True))
            + f" µs, max {micros(lateness['max'], grouping=True)} µs"
        )
    if stats.get("nonpositive"):
        lines.append(
            f"  {name} clock: {stats['nonpositive']:,} latencies <= 0 (a clock "
            f"stepped, or sender and receiver clocks differ); kept in the "
            f"statistics, left out of log-scale plots"
        )
    return lines


def relay_lines(name: str, summary: dict) -> list[str]:
    counts = summary.get("counts") or {}
    return [
        f"  {name} counts: took {counts.get('received', '-')}, forwarded "
        f"{counts.get('sent', '-')}, write_errors {counts.get('write_errors', '-')}, "
        f"ended by {summary.get('ended_by')}"
    ]


def writer_extra_lines(name: str, summary: dict) -> list[str]:
    lines = []
    drain = summary.get("drain") or {}
    if drain.get("result") not in (None, "none"):
        lines.append(
            f"  {name} drain: {drain['result']} in {_ms(drain['ns'])} before the end marker"
        )
    injected = {k: v for k, v in (summary.get("injected") or {}).items() if v}
    if injected:
        lines.append(
            f"  {name} injected faults (test hook): "
            + ", ".join(f"{k} {v}" for k, v in injected.items())
        )
    return lines


def counter_lines(name: str, summary: dict) -> list[str]:
    counters = summary.get("middleware_counters") or {}
    parts = [
        f"{side} {key} {value:,}"
        for side in ("reader", "writer")
        for key, value in (counters.get(side) or {}).items()
    ]
    return [f"  {name} middleware: " + ", ".join(parts)] if parts else []


def warning_lines(summaries: dict) -> list[str]:
    return [
        f"  warning:   {name}: {s['warning']}" for name, s in summaries.items() if s.get("warning")
    ]


def datagram_lines(block: dict | None) -> list[str]:
    """UDP datagrams per message written, when the run sent any UDP at all."""
    if not block or not block.get("datagrams") or block.get("per_message") is None:
        return []
    return [
        f"  udp:       {block['per_message']:.3g} datagrams sent per message written "
        f"({block['datagrams']:,} / {block['messages_written']:,}; the whole network "
        f"namespace, discovery and anything else sending UDP included)"
    ]


OUTSIDE_PAUSE = (
    " (NOT in the publisher's pause: the machine was busy; what was written before it "
    "joined is not the samples before the pause)"
)


def late_join_lines(name: str, block: dict, after_s) -> list[str]:
    """What a late joiner got of the time before it joined (its writers' history).
    block: its run.json late_join record (results/accounting.py late_join)."""
    history = block.get("history") or 0
    got = (
        f"{history} written before it joined (seq {block['history_first_seq']}-"
        f"{block['history_last_seq']})"
        if history
        else "nothing written before it joined"
    )
    live = block.get("first_live_seq")
    when = f"{after_s:g} s after the start" if after_s is not None else "late"
    if block.get("before_pause_after_join"):
        when += (f" (in the publisher's pause, but {block['before_pause_after_join']} written "
                 f"before it were still on their way: its history is not the pause's)")  # fmt: skip
    elif block.get("in_pause") is not None:
        when += " (in the publisher's pause)" if block["in_pause"] else OUTSIDE_PAUSE
    return [
        f"  {name}: joined {when}; history: {got}; live from "
        f"{'seq ' + str(live) if live is not None else '(nothing live)'}; "
        f"{block.get('samples') or 0:,} samples in all"
    ]
