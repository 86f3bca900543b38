"""Text reports of one measurement."""

from psbench.base import table
from psbench.base.units import hosts_text, micros, percent_text, rate_text, sizes_text
from psbench.report import run_counts as rc
from psbench.report.cpu_text import spinning_warning
from psbench.report.graph_text import graph_lines
from psbench.report.restart_text import restart_lines
from psbench.results.dependence import drift_text
from psbench.results.stats import INTERVAL_PERCENTILES, ONE_WAY_FROM, PERCENTILES
from psbench.run import measure
from psbench.run.measure import MeasureOutcome

STAT_COLUMNS = ["min"] + [label for label, _, _ in PERCENTILES] + ["max", "mean", "stdev"]


def latency_table(rows: list[tuple[str, dict]]) -> str:
    return table.render(
        ["µs"] + STAT_COLUMNS,
        [[name] + [micros(series[c]) for c in STAT_COLUMNS] for name, series in rows],
        indent="  ",
    )


def _config_line(summary: dict, sender: dict | None = None) -> str:
    """The run's settings from the receiver's summary; the warm-up is the sender's (a
    receiver sends none)."""
    cfg = summary.get("config") or {}
    history = cfg.get("history")
    if history == "keep_last" and cfg.get("history_depth") is not None:
        history = f"keep_last:{cfg['history_depth']}"
    rate = cfg.get("rate_hz")
    # Words, as the docs say them: a pubsub without a rate writes back to back.
    mode = {
        "closed_loop": "back to back" if summary.get("role") == "sub" else "closed loop",
        "open_loop": "open loop",
    }.get(str(cfg.get("mode")), cfg.get("mode"))
    parts = [
        mode,
        f"rate {rate:g} Hz" if rate else None,
        f"notify {cfg.get('notify')}",
        f"transport {cfg.get('transport')}",
        f"{cfg.get('reliability')}/{cfg.get('durability')}/{history}",
        f"warm-up {((sender or summary).get('config') or {}).get('warmup')}",
        "loaned (zero-copy) writes"
        if ((sender or summary).get("config") or {}).get("loan")
        else "copied writes",
    ]
    return ", ".join(str(p) for p in parts if p)


def _realtime_line(summaries: dict) -> str:
    parts = []
    for role, summary in summaries.items():
        rt = summary.get("realtime") or {}
        cpu = rt.get("cpu")
        flags = [f for f in ("mlockall", "dma_latency") if rt.get(f)]
        others = [t for t in summary.get("threads") or [] if not t.get("role_thread")]
        where = sorted({f"{t['cpus']} {t['policy']}" for t in others})
        parts.append(
            f"{role}: cpu {'-' if cpu is None or cpu < 0 else cpu} "
            f"{rt.get('sched_policy')}/{rt.get('sched_priority')}"
            + (f" {'+'.join(flags)}" if flags else "")
            + (f", pin {rt['pin']}" if rt.get("pin") else "")
            + (f", {len(others)} other threads on CPUs {', '.join(where)}" if others else "")
        )
    return "; ".join(parts)


def _discovery(summaries: dict) -> str | None:
    """ping's discovery, or the subscribers' (the slowest and the fastest when there are
    several, across every topic), else the publishers'; a run whose driver cannot tell
    when it matched says so (udp), so that the line is never silently missing."""

    def of(name):
        return ((summaries.get(name) or {}).get("timing") or {}).get("discovery_ns")

    for role in ("ping", "sub", "pub", "pong"):
        found = {
            name: of(name)
            for name in measure.role_names(summaries, role)
            if of(name) is not None and not summaries[name].get("late_join")
        }
        if not found:
            continue
        slowest = max(found, key=lambda name: found[name])
        if len(found) == 1:
            return f"{found[slowest] / 1e6:.2f} ms ({slowest})"
        topics = {_topic(summaries[name]) for name in found} - {None}
        across = f" on {len(topics)} topics" if len(topics) > 1 else ""
        return (
            f"{found[slowest] / 1e6:.2f} ms ({slowest}, the slowest of {len(found)} "
            f"{role}s{across}; fastest {min(found.values()) / 1e6:.2f} ms)"
        )
    if any(s.get("role") in ("sub", "pub", "ping") for s in summaries.values()):
        return "not measured (the driver cannot tell when readers and writers matched)"
    return None


def network_lines(network: dict | None, hosts: dict) -> list[str]:
    """The hosts and links (hosts: as the run was asked, in the user's words), then each
    calibrated pair: configured against measured round trip, and what the emulation adds."""
    if not network:
        return []
    lines = [f"  network:   {network['kind']} hosts {hosts_text(hosts)}, clock {network['clock']}"]
    for pair in network.get("calibration") or []:
        a, b = pair["hosts"]
        if "rtt_us" not in pair:
            lines.append(f"  link {a}-{b}: no calibration probe came back of {pair['probes']}")
            continue
        lines.append(
            f"  link {a}-{b}: round trip {pair['rtt_us']['p50']:,.0f} µs measured (median of "
            f"{pair['received']} of {pair['probes']} probes) for {pair['configured_rtt_us']:,} µs "
            f"configured: the emulation adds {pair['added_us']:,.0f} µs"
        )
    for host, count in ((network.get("traffic") or {}).get("hosts") or {}).items():
        lines.append(
            f"  traffic {host}: sent {count['tx_bytes']:,} B in {count['tx_packets']:,} packets, "
            f"received {count['rx_bytes']:,} B in {count['rx_packets']:,} (its link, while the "
            f"nodes ran, headers and all)"
        )
    return lines


def resources_text(found: dict) -> str:
    """e.g. "44.6 µs CPU per round trip (nodes 44.6, services -), 78% of one CPU, 1.99
    switches per round trip, peak RSS 6.3 MiB (nodes) / - (services)"."""
    if not found.get("measured"):
        return f"not measured ({found.get('why') or 'no record'})"

    def us(value):
        return micros(value, 1)

    def mib(value):
        return "-" if value is None else f"{value / 1024:.1f} MiB"

    per, every = found["per"], found["all"]
    if every["cpu_ns_per_message"] is None:
        return f"no {per} measured in the window"
    return (
        f"{us(every['cpu_ns_per_message'])} µs CPU per {per} (nodes "
        f"{us(found['nodes']['cpu_ns_per_message'])}, services "
        f"{us(found['services']['cpu_ns_per_message'])}), {every['utilisation']:.0%} of "
        f"one CPU, {every['switches_per_message']:.2f} switches per {per}, peak RSS "
        f"{mib(found['nodes']['peak_rss_kb'])} (nodes) / "
        f"{mib(found['services']['peak_rss_kb'])} (services)"
    )


def _topic(summary: dict) -> str | None:
    topics = (summary.get("config") or {}).get("topics") or []
    return topics[0] if topics else None


def intervals_line(series: dict, name: str) -> str | None:
    """`95% intervals of RTT (order statistics, ...), µs: p50 49.81-50.30, ...`; "n too
    small" for a percentile the sample count cannot bound."""
    intervals = series.get("intervals")
    if not intervals or not series.get("n"):
        return None
    parts = []
    for label in INTERVAL_PERCENTILES:
        bounds = intervals.get(label)
        parts.append(
            f"{label} n too small"
            if bounds is None
            else f"{label} {micros(bounds[0])}-{micros(bounds[1])}"
        )
    return (
        f"{intervals['confidence']:.0%} intervals of {name} (order statistics, widened "
        f"by the serial dependence of the samples; this run's sampling only), µs: "
        + ", ".join(parts)
    )


def drift_line(stats: dict) -> str | None:
    """The warning for a run whose latency changed level during the run (its
    stationarity check, stats.*.stationarity in run.json), or None."""
    found = stats.get("stationarity")
    if not found or not found.get("drifts"):
        return None
    return f"the latency {drift_text(found)}"


def _too_few_note(series: dict) -> str | None:
    missing = [(label, need) for label, _, need in PERCENTILES if series.get(label) is None]
    if not missing or not series.get("n"):
        return None
    return "'-' = too few samples: " + ", ".join(f"{label} needs {need}" for label, need in missing)


def throughput_lines(outcome: MeasureOutcome) -> list[str]:
    """Subscriber samples/s, Mbit/s and loss (on each subscriber's clock), the
    publishers' achieved rate against the offered one."""
    tp = outcome.throughput
    if not tp:
        return []
    lines = []
    subs = tp["subscribers"]
    rows = [
        [
            name,
            rate_text(e["samples_per_s"]),
            rate_text(e["mbit_per_s"]),
            e["received"] if e["received"] is not None else "-",
            e["lost"] if e["lost"] is not None else "-",
            percent_text(e["loss_percent"]),
        ]
        for name, e in subs.items()
    ]
    unaccounted = {n: (outcome.accounting.get(n) or {}).get("unaccounted") or 0 for n in subs}
    if len(subs) > 1:
        rows.insert(
            0,
            [
                "all",
                rate_text(tp["aggregate_samples_per_s"]),
                rate_text(tp["aggregate_mbit_per_s"]),
                sum(e["received"] or 0 for e in subs.values()),
                sum(e["lost"] or 0 for e in subs.values()),
                percent_text(tp["loss_percent"]),
            ],
        )
    headers = ["throughput", "samples/s", "Mbit/s", "received", "lost", "loss"]
    if any(unaccounted.values()):
        headers.append("unaccounted")
        for row in rows:
            row.append(sum(unaccounted.values()) if row[0] == "all" else unaccounted[row[0]])
    if rows:
        lines.append(table.render(headers, rows, indent="  "))
        lines.append(
            "  on each subscriber's clock: (received - 1) / (last arrival - first "
            "arrival); Mbit/s counts whole messages, header included"
        )
    for name, pub in tp["publishers"].items():
        offered = pub.get("offered_rate_hz")
        target = f"of {rate_text(offered, 'Hz')} offered" if offered else "(as fast as possible)"
        lines.append(
            f"  {name} rate:  achieved {rate_text(pub['achieved_rate_hz'], 'Hz')} "
            f"{target}, sent {pub['sent']}"
        )
    return lines


def under_load_lines(outcome: MeasureOutcome) -> list[str]:
    """Echo runs: the round trip of every Nth sample during the run, from pub.samples."""
    every = outcome.spec.echo_every
    if not every:
        return []
    rows = []
    for name in outcome.publisher_names:
        stats = outcome.stats.get(name)
        if stats and "rtt_half" in stats:
            rows.append((f"{name} RTT/2", stats["rtt_half"]))
    if not rows:
        return ["  under load: no echoes recorded"]
    return [
        latency_table(rows),
        f"  latency under load: every {every}th sample echoed back to the publisher; "
        f"RTT/2 of those round trips (n = " + ", ".join(f"{int(s['n'])}" for _, s in rows) + ")",
    ]


def _clock_words(outcome: MeasureOutcome) -> str:
    kind = (outcome.network or {}).get("kind")
    if kind == "ssh":
        return "clocks of several machines"
    return "one clock, emulated hosts on one machine" if kind else "one clock, one host"


def clock_lines(clock: dict | None) -> list[str]:
    """Between real machines: what was taken out of the one-way figures, and the flag
    when they cannot be trusted (psbench.results.clock_correction)."""
    if not clock:
        return []
    lines = [
        f"  clocks:    the offset between the machines' clocks "
        f"({clock['offset_removed_ns'] / 1000:,.1f} µs) is taken out; the figures are "
        f"known to ±{clock['uncertainty_ns'] / 1000:.1f} µs"
    ]
    if clock["flagged"]:
        lines.append(
            f"  warning:   one-way figures flagged: {clock['why']}; lead with RTT/2 "
            f"(kind ping, one clock) or the echo's (--echo-every)"
        )
    return lines


HIGH_LOSS_PERCENT = 1.0


def loss_hint(outcome: MeasureOutcome) -> str | None:
    """One line pointing at the likely cause when a best-effort pubsub lost more than
    1%, from the run's own figures: the rate the subscribers kept against the one
    offered, and a keep-last history that overwrites what was not taken yet."""
    tp = outcome.throughput or {}
    subs = tp.get("subscribers") or {}
    losses = [e["loss_percent"] for e in subs.values() if e.get("loss_percent") is not None]
    spec = outcome.spec
    if not losses or max(losses) <= HIGH_LOSS_PERCENT or spec.reliability == "reliable":
        return None
    worst = max(losses)
    kept = min((e["samples_per_s"] for e in subs.values() if e.get("samples_per_s")), default=None)
    offered = "back to back" if not spec.rate else f"{spec.rate:g}/s offered"
    causes = [
        f"the reader kept up with {rate_text(kept)}/s, {offered}: it was too slow "
        f"(a lower --rate, or notify poll, shows)"
        if kept
        else "the reader fell behind"
    ]
    if spec.history and spec.history.startswith("keep_last"):
        causes.append(
            f"history {spec.history} overwrites what the reader has not taken yet (keep_all shows)"
        )
    return (
        f"{percent_text(worst)} lost under best effort; likely "
        + "; or ".join(causes)
        + "; --reliability reliable, where the driver has it, "
        "delivers everything at the rate the reader keeps"
    )


def render(outcome: MeasureOutcome) -> str:
    """What `psbench ping|pubsub` prints of a run: its settings, its latency, what each
    receiver and publisher counted, and what the run as a whole says."""
    if outcome.spec.kind == "graph":
        return render_graph(outcome)
    lines = _header_lines(outcome)
    lines += _latency_lines(outcome)
    lines += _receiver_lines(outcome)
    lines += _publisher_lines(outcome)
    lines += _run_lines(outcome)
    lines.append(f"  results:   {outcome.run_dir}")
    return "\n".join(lines)


def _main_role(outcome: MeasureOutcome) -> str:
    """The role whose summary describes the run: ping, or the first subscriber."""
    subs = outcome.subscriber_names
    return "ping" if outcome.spec.kind == "ping" else (subs[0] if subs else "sub")


def _header_lines(outcome: MeasureOutcome) -> list[str]:
    """The status line, the settings as the node took them, what psbench chose."""
    spec = outcome.spec
    placement = "inter-process" if spec.placement == "inter" else "intra-process"
    # An acknowledgement (--reply-size) is not an echo: both sizes are named.
    size = sizes_text(spec.size, spec.reply_size)
    lines = [f"{spec.kind} {spec.driver} {size}, {placement}: {outcome.status}"]
    summary = outcome.summaries.get(_main_role(outcome))
    if summary:
        pubs = outcome.publisher_names
        sender = outcome.summaries.get(pubs[0]) if pubs else None
        lines.append(f"  config:    {_config_line(summary, sender)}")
    for key, why in spec.auto.items():
        lines.append(f"  chosen:    {key} {why}")
    if outcome.summaries:
        lines.append(f"  realtime:  {_realtime_line(outcome.summaries)}")
    return lines


def _latency_lines(outcome: MeasureOutcome) -> list[str]:
    """The latency table (round trip, or one way per subscriber), what it measures, its
    intervals and what could make it unsound."""
    spec, subs = outcome.spec, outcome.subscriber_names
    stats = outcome.stats.get(outcome.receiver_key)
    lines = []
    if stats and "rtt" in stats:
        lines.append(latency_table([("RTT", stats["rtt"]), ("RTT/2", stats["rtt_half"])]))
        if spec.reply_size and spec.size and spec.reply_size < spec.size:
            lines.append(
                f"  RTT is {spec.size} B out and a {spec.reply_size} B reply back; "
                f"RTT/2 is half of that round trip, not the one-way latency of "
                f"either size"
            )
        else:
            lines.append(
                "  RTT/2 is the one-way estimate: half the round trip, assuming "
                "both directions cost the same"
            )
        note = _too_few_note(stats["rtt"])
        interval = intervals_line(stats["rtt"], "RTT")
    elif stats:
        lines.append(
            latency_table(
                [("one-way", stats["one_way"])]
                + [
                    (name, outcome.stats[name]["one_way"])
                    for name in subs
                    if len(subs) > 1 and name in outcome.stats
                ]
            )
        )
        lines.append(
            f"  one-way = {ONE_WAY_FROM[outcome.spec.latency_from or 'intended']} "
            f"({_clock_words(outcome)})"
            + (f"; first row: all {len(subs)} subscribers together" if len(subs) > 1 else "")
        )
        lines.extend(clock_lines(stats.get("clock")))
        note = _too_few_note(stats["one_way"])
        interval = intervals_line(stats["one_way"], "one-way")
    else:
        note = interval = None
    for line in (interval, note):
        if line:
            lines.append(f"  {line}")
    drift = drift_line(stats or {})
    if drift:
        lines.append(f"  warning:   {drift}")
    return lines


def _receiver_lines(outcome: MeasureOutcome) -> list[str]:
    """What each receiving process (the subscribers, or ping) and each relay counted."""
    spec = outcome.spec
    lines = []
    receivers = outcome.subscriber_names if spec.kind == "pubsub" else [_main_role(outcome)]
    for name in receivers:
        summary = outcome.summaries.get(name) or {}
        if summary.get("counts"):
            lines.append(rc.counts_line(summary["counts"], f"  {name} counts: "))
        if name in outcome.accounting:
            lines.extend(rc.accounting_lines(name, outcome.accounting[name]))
            lost = outcome.accounting[name]["lost"]
            if lost and spec.reliability == "reliable":
                lines.append(
                    f"  warning:   {name} lost {lost:,} samples in a reliable run: "
                    f"a keep_last history overwrote them, or the middleware "
                    f"dropped them (see the writer's drain and the middleware "
                    f"counters)"
                )
        lines.extend(rc.kept_lines(name, summary))
        lines.extend(rc.stats_lines(name, outcome.stats.get(name) or {}))
        lines.extend(rc.counter_lines(name, summary))
    if spec.kind == "ping" and outcome.summaries.get("ping"):
        lines.extend(rc.schedule_lines("ping", outcome.summaries["ping"]))
    for name, summary in outcome.summaries.items():
        if summary.get("role") == "relay":
            lines.extend(rc.relay_lines(name, summary))
            if name in outcome.accounting:
                lines.extend(rc.accounting_lines(name, outcome.accounting[name]))
    return lines


def _publisher_lines(outcome: MeasureOutcome) -> list[str]:
    """What each publisher sent, the echoes it got back, how it kept its schedule."""
    lines = []
    for name in outcome.publisher_names if outcome.spec.kind == "pubsub" else []:
        summary = outcome.summaries[name]
        if summary.get("counts"):
            lines.append(
                rc.counts_line(
                    summary["counts"], f"  {name} counts: ", ("sent", "warmup", "write_errors")
                )
            )
        echo = summary.get("echo")
        if echo:
            lines.append(
                rc.counts_line(echo, f"  {name} echoes: ", ("expected", "received", "lost"))
            )
        lines.extend(rc.schedule_lines(name, summary))
        lines.extend(rc.writer_extra_lines(name, summary))
        lines.extend(rc.counter_lines(name, summary))
    return lines


def _run_lines(outcome: MeasureOutcome) -> list[str]:
    """What the run as a whole says: the late joiners, the broker restart, warnings,
    throughput, CPU sharing, discovery, resources, the network and its problems."""
    spec = outcome.spec
    lines = []
    for name, block in outcome.late_join.items():
        lines.extend(rc.late_join_lines(name, block, spec.late_join))
    if outcome.status != "refused":
        lines.extend(restart_lines(outcome.restart))
    lines.extend(rc.warning_lines(outcome.summaries))
    lines.extend(rc.datagram_lines(outcome.udp_datagrams))
    lines.extend(throughput_lines(outcome))
    hint = loss_hint(outcome)
    if hint:
        lines.append(f"  hint:      {hint}")
    lines.extend(under_load_lines(outcome))
    sharing = outcome.cpu_sharing
    if sharing.get("oversubscribed"):
        lines.append(
            f"  cpus:      oversubscribed, {sharing['roles']} roles on "
            f"{sharing['cpus']} CPUs ({sharing['oversubscribed']:g} per CPU"
            f"{', pinned' if sharing['pinned'] else ''})"
        )
    if sharing.get("spinning_per_cpu"):
        lines.append(f"  warning:   {spinning_warning(sharing)}")
    discovery = _discovery(outcome.summaries)
    if discovery:
        lines.append(f"  discovery: {discovery}")
    lines.append(f"  resources: {resources_text(outcome.resources)}")
    lines.extend(network_lines(outcome.network, spec.hosts))
    for problem in outcome.problems:
        lines.append(f"  problem:   {problem}")
    return lines


def render_graph(outcome: MeasureOutcome) -> str:
    spec = outcome.spec
    graph = outcome.graph or {}
    lines = [
        f"graph {graph.get('graph', spec.graph)} ({spec.mapping}) {spec.driver}, "
        f"{len(outcome.summaries)} modules: {outcome.status}"
    ]
    lines += graph_lines(outcome.graph)
    lines.extend(rc.warning_lines(outcome.summaries))
    lines.extend(network_lines(outcome.network, spec.hosts))
    for problem in outcome.problems:
        lines.append(f"  problem:   {problem}")
    lines.append(f"  results:   {outcome.run_dir}")
    return "\n".join(lines)
