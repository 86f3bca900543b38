"""The tables of `psbench report`: latency per configuration, delivery and repetitions,
ratio to the baseline floor, significance between configurations that differ in one
setting, and the runs that were not ok."""

import statistics
from dataclasses import dataclass

from psbench.report.conditions import clock_corrections
from psbench.report.tables import Column, Table, sides
from psbench.results.configs import Config, label_keys, label_of, setting_text
from psbench.results.dependence import drift_text
from psbench.results.describe import LATENCY_KEYS
from psbench.results.load import ResultSet, Search
from psbench.results.run_record import block
from psbench.results.significance import (
    Comparison,
    Estimate,
    compare_samples,
    estimate,
    interval_of,
)
from psbench.results.stats import INTERVAL_PERCENTILES, nearest_rank, percentile_intervals

_LATENCY_NAMES = {"stdev": "stdev", "jitter": "jitter"}


def drift_notes(configs: list[Config]) -> list[str]:
    """One line per configuration of a table whose level changed during a run (the
    stationarity check, Config.drift): every table that lists it says so."""
    return [
        f"LEVEL CHANGED: {c.label}: "
        + "; ".join(
            ("" if len(c.ok_runs) == 1 else f"repetition {k} ") + drift_text(found)
            for k, found in c.drift.items()
        )
        for c in configs
        if c.drift
    ]


def one_level(config: Config) -> bool:
    """No ok run of the configuration changed level (its stationarity check)."""
    return not config.drift


def summary_table(configs: list[Config]) -> Table:
    columns = [
        Column("configuration"),
        Column("metric"),
        Column("reps", format="count"),
        Column("n", format="count"),
    ]
    columns += [Column(f"{_LATENCY_NAMES.get(k, k)} µs", f"{k}_ns", "us") for k in LATENCY_KEYS]
    columns.append(Column("one level", "one_level", "yes_no"))
    rows = [
        [c.label, c.metric, len(c.ok_runs), c.stats.get("n") or 0]
        + [c.stats.get(k) for k in LATENCY_KEYS]
        + [one_level(c)]
        for c in configs
        if c.ok_runs
    ]
    notes = [
        "RTT/2 = one-way estimate, half the round trip; one-way = receive time - "
        "intended send time "
        + (
            "(between real machines: on two clocks, their offset taken out)"
            if any(clock_corrections(c) for c in configs)
            else "(one host, one clock)"
        )
        + (
            "; with latency_from send, receive time - start of the publisher's write "
            "(the publisher's wake-up lateness not counted)"
            if any(c.params.get("latency_from") == "send" for c in configs)
            else ""
        ),
        *(
            [
                "reaction (a graph's path) = from a source module's sample to the end of the "
                "sink's first activation holding it (docs/graphs.md)"
            ]
            if any(c.kind == "graph" for c in configs)
            else []
        ),  # fmt: skip
        "repetitions: each statistic is the median of the repetitions' values; n is their total",
        "jitter = mean |difference| between consecutive latencies; '-' = too few "
        "samples for that percentile (p99.9 needs 1000, p99.99 10000)",
        "writes copy the message into the middleware unless the label says loan "
        "(its zero-copy write)",
        "one level: no run of the configuration changed level during the run (the "
        "medians of its tenths compared by a test at level 0.1% that "
        "counts the samples' serial dependence, a change of more than 5% of the "
        "median; docs/analysis.md)",
        *drift_notes(configs),
    ]
    return Table("summary", "Latency per configuration", columns, rows, notes)


def delivery_table(configs: list[Config]) -> Table:
    columns = [
        Column("configuration"),
        Column("reps", format="count"),
        Column("p50 spread", "p50_spread", "percent"),
        Column("sent", format="count"),
        Column("received", "samples", "count"),
        Column("lost", format="count"),
        Column("lost %", "lost_fraction", "percent"),
        Column("duplicated", format="count"),
        Column("reordered", format="count"),
        Column("late", format="count"),
        Column("corrupted", format="count"),
        Column("offered /s", "offered_rate_hz", "offered"),
        Column("pub sent/s", "achieved_rate_hz", "rate"),
        Column("samples/s", "samples_per_s", "rate"),
        Column("Mbit/s", "mbit_per_s", "rate"),
    ]
    rows = []
    for c in configs:
        if not c.ok_runs:
            continue
        counts = c.counts
        expected = counts["sent"] or counts["samples"] + counts["lost"]
        rows.append(
            [
                c.label,
                len(c.ok_runs),
                c.spread.get("relative") if len(c.ok_runs) > 1 else None,
                counts["sent"],
                counts["samples"],
                counts["lost"],
                counts["lost"] / expected if expected else None,
                counts["duplicated"],
                counts["reordered"],
                counts["late"],
                counts["corrupted"],
                c.rate.get("offered_rate_hz"),
                c.rate.get("achieved_rate_hz"),
                c.rate.get("samples_per_s"),
                c.rate.get("mbit_per_s"),
            ]
        )
    notes = [
        "p50 spread = (highest - lowest p50 of the repetitions) / their median; "
        "lost % = lost / sent (what the publishers' end markers say they sent)",
        "offered /s = the rate the publishers were asked for, added up (max = as fast "
        "as possible); pub sent/s = what they sent, first to last send on each "
        "publisher's clock, added up",
        "samples/s and Mbit/s on each receiver's clock, first to last arrival, whole "
        "messages (header included), added up over the subscribers; for ping, "
        "completed round trips. Rates are medians of the repetitions",
    ]
    if any(
        (c.rate.get("source") or "").startswith("samples")
        for c in configs
        if c.ok_runs and c.kind == "pubsub"
    ):
        notes.append(
            "results without the node's throughput counts: samples/s from the "
            "recorded samples ((samples - 1) / their span), no pub sent/s"
        )
    notes += drift_notes(configs)
    return Table("delivery", "Delivery, repetitions and rate", columns, rows, notes)


def under_load_table(configs: list[Config]) -> Table | None:
    """Latency under load (echoed samples), or None when no run echoed any."""
    measured = [c for c in configs if c.ok_runs and c.echo]
    if not measured:
        return None
    columns = [
        Column("configuration"),
        Column("reps", format="count"),
        Column("every N", "every", "count"),
        Column("expected", format="count"),
        Column("echoed", "received", "count"),
        Column("lost", format="count"),
        Column("n", format="count"),
        Column("p50 µs", "p50_ns", "us"),
        Column("p99 µs", "p99_ns", "us"),
        Column("max µs", "max_ns", "us"),
        Column("one-way p50 µs", "one_way_p50_ns", "us"),
    ]
    rows = [
        [
            c.label,
            c.echo["reps"],
            c.echo["every"],
            c.echo["expected"],
            c.echo["received"],
            c.echo["lost"],
            c.echo["n"],
            c.echo["p50"],
            c.echo["p99"],
            c.echo["max"],
            c.stats.get("p50"),
        ]
        for c in measured
    ]
    notes = [
        "latency under load: during the run every Nth sample of the first publisher "
        "is written back by one subscriber; RTT/2 of those round trips on the "
        "publisher's clock (send time in the header to the echo's arrival)",
        "kept apart from the one-way series (every sample, receive - intended send "
        "time), shown beside it for reference: the round trip starts at the actual "
        "send, so a publisher running late shows in one-way, not here; statistics are "
        "medians of the repetitions",
    ]
    notes += drift_notes(measured)
    return Table("under-load", "Latency under load (echoed samples, RTT/2)", columns, rows, notes)


def subscribers_table(configs: list[Config]) -> Table | None:
    """Each subscriber of fan-out and several-topic runs, or None when there are none."""
    measured = [c for c in configs if c.ok_runs and c.per_subscriber]
    if not measured:
        return None
    columns = [
        Column("configuration"),
        Column("subscriber"),
        Column("reps", format="count"),
        Column("n", format="count"),
        Column("p50 µs", "p50_ns", "us"),
        Column("p99 µs", "p99_ns", "us"),
        Column("received", format="count"),
        Column("lost", format="count"),
        Column("samples/s", "samples_per_s", "rate"),
    ]
    rows = [
        [
            c.label,
            name,
            s["reps"],
            s["n"],
            s["p50"],
            s["p99"],
            s["received"],
            s["lost"],
            s["samples_per_s"],
        ]
        for c in measured
        for name, s in c.per_subscriber.items()
    ]
    notes = [
        "one-way latency of each subscriber's own samples; p50 and p99 are medians "
        "of the repetitions, n, received and lost their totals; samples/s on that "
        "subscriber's clock (median of the repetitions)",
        *drift_notes(measured),
    ]
    return Table(
        "subscribers", "Per subscriber (runs with several subscribers)", columns, rows, notes
    )


def _runs_passed(step: dict) -> str:
    """'passed/runs' of a step (a search.json without reruns: its one run)."""
    runs = step.get("runs") or 1
    passed = step.get("runs_passed")
    if passed is None:
        passed = int(bool(step.get("passed")))
    return f"{passed}/{runs}"


def search_table(searches: list[Search]) -> Table | None:
    """The steps of every rate search, or None when the result set has none. Rates are
    each publisher's; with several publishers the table says so and adds their total."""
    if not searches:
        return None
    several = any(search.publishers > 1 for search in searches)
    rows = [row for search in searches for row in _search_rows(search, several)]
    notes = [_search_found(search) for search in searches]
    notes.append(
        "steps in the order they ran; achieved = the slowest publisher's sent "
        "rate, loss and p99 (one-way) of the step's first run as the search "
        "judged them; runs passed = its runs that passed of its runs (a passing "
        "rate near the boundary is rerun, and one failed rerun fails it)"
    )
    if several:
        notes.append(
            "offered /s per pub is each publisher's rate; all pubs /s = pubs x "
            "that, what the subscribers were offered in all"
        )
    return Table("search", "Rate search", _search_columns(several), rows, notes)


def _search_columns(several: bool) -> list[Column]:
    """several: some search had several publishers (their count and total offered)."""
    columns = [
        Column("search"),
        Column("step", format="count"),
        Column("offered /s per pub" if several else "offered /s", "rate_hz", "offered"),
    ]
    if several:
        columns += [
            Column("pubs", "publishers", "count"),
            Column("all pubs /s", "aggregate_rate_hz", "offered"),
        ]
    return columns + [
        Column("achieved /s", "achieved_rate_hz", "rate"),
        Column("loss %", "loss_percent", "percent_value"),
        Column("p99 µs", "p99_ns", "us"),
        Column("status"),
        Column("runs passed", "runs_passed"),
        Column("passed", format="yes_no"),
        Column("why"),
        Column("folder", "run_dir"),
    ]


def _search_rows(search: Search, several: bool) -> list[list]:
    """A row per step of one search, in the order they ran."""
    pubs = search.publishers
    rows = []
    for number, step in enumerate(search.steps, start=1):
        rate = step.get("rate_hz")
        rows.append(
            [search.name, number, rate]
            + ([pubs, rate * pubs if isinstance(rate, (int, float)) else None] if several else [])
            + [
                step.get("achieved_rate_hz"),
                step.get("loss_percent"),
                step.get("p99_ns"),
                step.get("status"),
                _runs_passed(step),
                step.get("passed"),
                step.get("why"),
                step.get("run_dir"),
            ]
        )
    return rows


def _search_found(search: Search) -> str:
    """What one search found: its maximum sustainable rate, under which criteria, its
    bracket and what ended it."""
    criteria, pubs = search.criteria, search.publishers
    best = search.data.get("max_sustainable_rate_hz")
    bounds = []
    if criteria.get("max_loss_percent") is not None:
        bounds.append(f"loss <= {criteria['max_loss_percent']:g} %")
    if criteria.get("max_p99_ns") is not None:
        bounds.append(f"p99 <= {criteria['max_p99_ns'] / 1000:g} µs")
    if (criteria.get("confirm") or 1) > 1:
        bounds.append(f"{criteria['confirm']} of {criteria['confirm']} runs passed")
    bracket = search.data.get("bracket") or []
    return (
        f"{search.name}: maximum sustainable rate "
        + (
            f"{best:,.0f}/s"
            + (f" per publisher ({best * pubs:,.0f}/s from all {pubs})" if pubs > 1 else "")
            if best
            else "none found (no step passed)"
        )
        + (f" where {' and '.join(bounds)}" if bounds else "")
        + (
            f"; bracket {bracket[0]:,.0f}..{bracket[1]:,.0f}/s"
            if len(bracket) == 2 and None not in bracket
            else ""
        )
        + (f"; ended by {search.data['ended_by']}" if search.data.get("ended_by") else "")
    )


def baseline_table(configs: list[Config], noise: float = 0.05) -> Table:
    columns = [
        Column("configuration"),
        Column("floor"),
        Column("p50 ratio", "p50_ratio", "ratio"),
        Column("p99 ratio", "p99_ratio", "ratio"),
        Column("floor reps", "floor_reps", "count"),
        Column("floor p50 spread", "floor_spread", "percent"),
    ]
    measured = [c for c in configs if c.baseline and not c.is_baseline]
    rows = [
        [
            c.label,
            _floor(c)["label"],
            _floor(c)["p50_ratio"],
            _floor(c)["p99_ratio"],
            _floor(c)["floor_reps"],
            _floor(c)["floor_spread"],
        ]
        for c in measured
    ]
    notes = [
        "floor = the baseline driver (udp, shm: no middleware) with the lowest p50 "
        "at the same kind, size and placement, and the same notify mode if measured, "
        "in this result set; ratio = configuration / floor; floor p50 spread = "
        "(largest - smallest) / median of the floor's repetitions' p50"
    ]
    notes += _floor_warnings(measured, noise)
    floors = {_floor(c)["label"] for c in measured}
    notes += drift_notes(measured + [c for c in configs if c.label in floors])
    if not rows:
        notes.insert(
            0,
            "no middleware configuration has a baseline of the same kind, "
            "size and placement in this result set",
        )
    return Table("baseline", "Ratio to the baseline floor", columns, rows, notes)


def _floor(config: Config) -> dict:
    """The baseline block of a configuration measured against a floor."""
    if config.baseline is None:
        raise ValueError(f"{config.label} has no floor")
    return config.baseline


def _floor_warnings(measured: list[Config], noise: float) -> list[str]:
    """One line per floor that cannot carry its ratios: measured once (its spread is
    unknown), or repetitions further apart than the noise threshold."""
    once = sorted({_floor(c)["label"] for c in measured if _floor(c)["floor_reps"] <= 1})
    unstable = sorted(
        {
            (_floor(c)["label"], _floor(c)["floor_spread"])
            for c in measured
            if _floor(c)["floor_spread"] is not None and _floor(c)["floor_spread"] > noise
        }
    )
    notes = []
    if once:
        notes.append(
            f"floor measured once, its spread unknown ({', '.join(once)}): a "
            f"ratio is only as sure as its floor; repeat the runs "
            f"(repetitions: 3) before reading ratios close to each other"
        )
    for label, spread in unstable:
        notes.append(
            f"floor {label} is unstable: its repetitions' p50 differ by "
            f"{spread:.0%} of their median (noise threshold {noise:.0%}); "
            f"ratios to it move by as much"
        )
    return notes


@dataclass
class Pair:
    setting: str
    a: Config
    b: Config
    where: str  # the other settings that vary in the set, shared by a and b
    result: Comparison


def _differs_in_one(a: Config, b: Config) -> str | None:
    keys = set(a.params) | set(b.params)
    differing = [k for k in keys if a.params.get(k) != b.params.get(k)]
    return differing[0] if len(differing) == 1 else None


def one_setting_pairs(configs: list[Config], alpha: float, threshold: float) -> list[Pair]:
    """Every two configurations that differ in exactly one setting and measure the same
    metric, the earlier one as A."""
    measured = [c for c in configs if c.ok_runs]
    medians: dict[str, Estimate] = {}

    def median_of(config: Config) -> Estimate:
        # Once per configuration: one side's estimate serves all its comparisons.
        if config.key not in medians:
            medians[config.key] = estimate(config.rep_samples, "p50", 1 - alpha)
        return medians[config.key]

    pairs = []
    for i, a in enumerate(measured):
        for b in measured[i + 1 :]:
            setting = _differs_in_one(a, b)
            if setting is None or a.metric != b.metric:
                continue
            where = label_of(a, label_keys(measured, leave_out=setting))
            pairs.append(
                Pair(
                    setting,
                    a,
                    b,
                    where,
                    compare_samples(
                        a.rep_samples, b.rep_samples, median_of(a), median_of(b), alpha, threshold
                    ),
                )
            )
    pairs.sort(key=lambda p: (p.setting, p.where))
    return pairs


def significance_table(pairs: list[Pair], alpha: float, threshold: float) -> Table:
    columns = [
        Column("setting"),
        Column("A", "a"),
        Column("B", "b"),
        Column("at"),
        *sides("n {}", "n_{}", "count"),
        *sides("p50 {} µs", "p50_{}_ns", "us"),
        Column("B/A p50", "median_ratio", "ratio"),
        Column("CI low", "median_ratio_low", "ratio"),
        Column("CI high", "median_ratio_high", "ratio"),
        Column("CI covers", "covers"),
        Column("verdict"),
        Column("t (indep.)", "welch_t", "stat"),
        Column("df", "welch_df", "stat"),
        Column("p (t, indep.)", "welch_p", "p"),
        Column("U (indep.)", "mann_whitney_u", "stat"),
        Column("p (U, indep.)", "mann_whitney_p", "p"),
    ]
    rows = [_significance_row(pair) for pair in pairs]
    notes = [
        f"configurations that differ in one setting: p50 A and p50 B are the medians of "
        f"all samples of each side's repetitions together (nearest rank), B/A p50 their "
        f"ratio (it may differ from the summary table, whose p50 is the median of the "
        f"repetitions' p50s); CI: {1 - alpha:.0%} interval of B/A p50 (the level follows "
        f"alpha) that counts what the samples are worth: a side with one run from its "
        f"order statistics widened by the serial dependence of its samples, a side with "
        f"repetitions from how its runs' medians differ (the run is the unit); CI covers "
        f"says which",
        "within one run / (one run only): with one run a side, the interval and the "
        "verdict cover the sampling within that run only, not how a second run would differ (the "
        "machine's state, placement, another process); measure repetitions to have that",
        f"significant = the whole CI outside {1 - threshold:.2f}..{1 + threshold:.2f} "
        f"(the noise threshold); otherwise within noise; no interval: too few samples. "
        f"{len(pairs)} comparisons: at alpha {alpha:g} about {alpha * len(pairs):.1f} may "
        f"be significant by chance",
        "t, df, p (t): Welch's t-test of the means; U, p (U): Mann-Whitney; as in the "
        "seed papers, both take every sample as independent, which consecutive "
        "latencies are not, so their p-values are too small: shown for comparison "
        "with the papers, they decide nothing",
    ]
    if not pairs:
        notes.insert(0, "no two configurations differ in exactly one setting")
    notes += drift_notes(list({id(c): c for p in pairs for c in (p.a, p.b)}.values()))
    return Table(
        "significance",
        "Significance between configurations differing in one setting",
        columns,
        rows,
        notes,
    )


def _significance_row(pair: Pair) -> list:
    """One comparison: the two settings, their medians and ratio with its interval, the
    verdict (and whether it rests on one run, or on a run whose level changed), the
    papers' tests."""
    r = pair.result
    verdict = r.verdict + (f", {r.direction}" if r.direction else "")
    if r.median.covers.startswith("within one run"):
        verdict += " (one run only)"
    changed = [side for side, c in (("A", pair.a), ("B", pair.b)) if c.drift]
    if changed:
        verdict += f"; {' and '.join(changed)} changed level"
    return [
        pair.setting,
        setting_text(pair.setting, pair.a.params.get(pair.setting)),
        setting_text(pair.setting, pair.b.params.get(pair.setting)),
        pair.where,
        r.n_a,
        r.n_b,
        r.p50_a,
        r.p50_b,
        r.median.ratio,
        r.median.low,
        r.median.high,
        r.median.covers,
        verdict,
        r.welch.t,
        r.welch.df,
        r.welch.p,
        r.mann_whitney.u,
        r.mann_whitney.p,
    ]


def not_ok_table(results: ResultSet) -> Table:
    columns = [
        Column("run", format="count"),
        Column("label"),
        Column("status"),
        Column("message"),
        Column("folder", "run_dir"),
    ]
    rows = []
    for run in results.runs:
        if run.status == "ok" and run.samples is not None:
            continue
        message = (run.message or "").strip().splitlines()
        folder = str(run.run_dir.relative_to(results.root)) if run.run_dir else None
        rows.append(
            [
                run.number,
                run.label,
                run.status if run.status != "ok" else "ok, no samples",
                message[0] if message else None,
                folder,
            ]
        )
    return Table("not-ok", "Runs that were not ok (left out of the statistics)", columns, rows)


def threads_table(results: ResultSet) -> Table | None:
    """Every thread of every node process of every run, as the node found them when its
    measurement ended: where the middleware's threads ran beside the role's, and what
    they cost. None when no run recorded threads (results from before they were)."""
    columns = [
        Column("run"),
        Column("process"),
        Column("thread", "name"),
        Column("tid", format="count"),
        Column("role thread", "role_thread", "yes_no"),
        Column("CPUs", "cpus"),
        Column("policy"),
        Column("priority", format="count"),
        Column("CPU ms", "cpu_time_ms", "rate"),
        Column("voluntary switches", "voluntary_switches", "count"),
        Column("involuntary switches", "involuntary_switches", "count"),
    ]
    rows, pins = [], set()
    for run in results.runs:
        for process, summary in run.summaries.items():
            pins.add((summary.get("realtime") or {}).get("pin") or "role")
            for t in summary.get("threads") or []:
                rows.append(
                    [
                        run.label,
                        process,
                        t["name"],
                        t["tid"],
                        t["role_thread"],
                        t["cpus"],
                        t["policy"],
                        t["priority"],
                        t["cpu_time_ns"] / 1e6,
                        t["voluntary_switches"],
                        t["involuntary_switches"],
                    ]
                )
    if not rows:
        return None
    notes = [
        f"pin: {', '.join(sorted(pins))} (role: --cpu and --fifo apply to the role "
        f"thread once its endpoints are open, the middleware's threads keep the "
        f"process's CPUs and SCHED_OTHER; process: every thread confined to the roles' "
        f"CPUs; none: nothing pinned). CPU ms and switches: each thread's whole life "
        f"until the measurement ended, set-up included"
    ]
    return Table("threads", "Threads of each node process", columns, rows, notes, folded=True)


def resources_table(configs: list[Config]) -> Table | None:
    """CPU, context switches and memory over the measurement window, per configuration;
    None when no run measured them (results from before they were)."""
    measured = [c for c in configs if c.ok_runs and c.resources]
    if not measured:
        return None
    columns = [
        Column("configuration"),
        Column("reps", format="count"),
        Column("per"),
        Column("CPU µs (nodes)", "nodes_cpu_ns_per_message", "us"),
        Column("CPU µs (services)", "services_cpu_ns_per_message", "us"),
        Column("CPU µs (all)", "all_cpu_ns_per_message", "us"),
        Column("CPU % (all)", "all_utilisation", "percent"),
        Column("switches (all)", "all_switches_per_message", "stat"),
        Column("peak RSS MiB (nodes)", "nodes_peak_rss_mib", "rate"),
        Column("peak RSS MiB (services)", "services_peak_rss_mib", "rate"),
        Column("services"),
    ]
    rows = []
    for c in measured:
        r = c.resources
        mib = {
            scope: r[scope]["peak_rss_kb"] / 1024 if r[scope]["peak_rss_kb"] else None
            for scope in ("nodes", "services")
        }
        rows.append(
            [
                c.label,
                r["reps"],
                r["per"],
                r["nodes"]["cpu_ns_per_message"],
                r["services"]["cpu_ns_per_message"],
                r["all"]["cpu_ns_per_message"],
                r["all"]["utilisation"],
                r["all"]["switches_per_message"],
                mib["nodes"],
                mib["services"],
                ", ".join(r["service_names"]) or "-",
            ]
        )
    notes = [
        "over the measurement window (the senders' first measured write to the "
        "last receiver's end), every process of the run read from /proc at its "
        "edges: the node processes and the services they use (brokers, daemons); "
        "medians of the repetitions",
        "CPU µs and switches per message: per round trip (ping) or per message "
        "published (pubsub, every subscriber's delivery of it included); CPU % = CPU "
        "time / window, 100% = one CPU busy; peak RSS: the largest process of each "
        "kind, a node's over its life (the run), a service's within the window",
    ]
    for c in measured:
        r = c.resources
        if r["unmeasured"]:
            notes.append(f"{c.label}: not measured: {'; '.join(r['unmeasured'])}")
        if r["threads_ended"]:
            notes.append(
                f"{c.label}: {r['threads_ended']} threads ended inside a window; "
                f"their CPU time there is missing"
            )
        if r["lifetime_peaks"]:
            notes.append(
                f"{c.label}: peak RSS of {', '.join(r['lifetime_peaks'])} is "
                f"their lifetime peak (not started by psbench, or the reset at the "
                f"window's start was refused)"
            )
    notes += drift_notes(measured)
    return Table("resources", "Resources per message (measurement window)", columns, rows, notes)


def startup_table(configs: list[Config]) -> Table | None:
    """What each configuration took to start; None when no run recorded it."""
    measured = [c for c in configs if c.ok_runs and c.startup.get("reps")]
    if not measured:
        return None
    columns = [
        Column("configuration"),
        Column("reps", format="count"),
        Column("open to matched ms", "open_to_matched_ms", "stat"),
        Column("start to matched ms", "start_to_matched_ms", "stat"),
        Column("start to first message ms", "start_to_first_message_ms", "stat"),
    ]
    rows = [
        [c.label, c.startup["reps"]]
        + [
            c.startup[key] / 1e6 if c.startup[key] is not None else None
            for key in ("open_to_matched_ns", "start_to_matched_ns", "start_to_first_message_ns")
        ]
        for c in measured
    ]
    notes = [
        "the slowest node process of each run, medians of the repetitions; start = "
        "the node's main(), open = the driver's open before its endpoints are "
        "created, matched = every peer the role waits for matched (ping: its "
        "handshake's echo, after the start barrier)",
        "first message: of any kind (handshake, warm-up) at ping or a subscriber; it "
        "includes the start barrier, which waits for every process to match",
    ]
    notes += drift_notes(measured)
    return Table("startup", "Start-up: discovery and the first message", columns, rows, notes)


def intervals_table(configs: list[Config], alpha: float = 0.05) -> Table:
    """p50, p99 and p99.9 of every configuration's samples (all repetitions together),
    each with its interval at level 1 - alpha: one run's from its order statistics,
    widened by the serial dependence of its samples; with repetitions, from how the
    runs' own percentiles differ (the run is the unit)."""
    columns = [
        Column("configuration"),
        Column("metric"),
        Column("n", format="count"),
        Column("runs", format="count"),
    ]
    for label in INTERVAL_PERCENTILES:
        columns += [
            Column(f"{label} µs", f"{label}_ns", "us"),
            Column("low", f"{label}_low_ns", "us", missing="n too small"),
            Column("high", f"{label}_high_ns", "us", missing="n too small"),
        ]
    columns += [
        Column("covers"),
        Column("one level", "one_level", "yes_no"),
    ]
    rows = []
    for c in configs:
        samples = c.pooled_ns
        if not samples.size:
            continue
        runs = len(c.rep_samples)
        if runs == 1:
            found = percentile_intervals(samples, 1 - alpha)
        else:
            found = {
                label: interval_of(estimate(c.rep_samples, label, 1 - alpha), 1 - alpha)
                for label in INTERVAL_PERCENTILES
            }
        row = [c.label, c.metric, int(samples.size), runs]
        for label in INTERVAL_PERCENTILES:
            q = float(label[1:])
            interval = found[label] or [None, None]
            row += [float(nearest_rank(samples, q)), *interval]
        covers = "within one run" if runs == 1 else f"between {runs} runs"
        rows.append(row + [covers, one_level(c)])
    notes = [
        f"every repetition's samples together (nearest rank; the summary table gives "
        f"the median of the repetitions' values instead); low-high: {1 - alpha:.0%} "
        f"interval (the level follows --alpha)",
        "within one run: the order statistics whose ranks hold the percentile, "
        "widened by the serial dependence of the run's samples (its samples count as "
        "fewer independent ones: docs/methodology.md section 11); it covers the "
        "sampling within that run only, not how a second run would differ",
        "between k runs: the percentile x exp(-+ t(k - 1) s / sqrt(k)), s the standard "
        "deviation of the log of each run's own percentile: the run is the unit, so it "
        "holds how runs differ; 'n too small': too few samples for an interval at this "
        "level (one run at 95%: p99 needs at least 368 independent samples, p99.9 "
        "3,688; with repetitions each run needs 100 for p99, 1,000 for p99.9)",
        *drift_notes(configs),
    ]
    return Table("intervals", "Percentiles with confidence intervals", columns, rows, notes)


def network_table(configs: list[Config]) -> Table | None:
    """Each emulated link pair of each configuration: the round trip configured and the
    one measured before each run (its calibration), medians of the repetitions; None
    without emulated hosts."""
    rows = []
    for c in configs:
        pairs: dict[tuple, list[dict]] = {}
        for run in c.ok_runs:
            network = block(run.run_record, "network")
            for pair in network.get("calibration") or []:
                if "rtt_us" in pair:
                    pairs.setdefault(tuple(pair["hosts"]), []).append(pair)
        for (a, b), found in pairs.items():
            measured = statistics.median(p["rtt_us"]["p50"] for p in found)
            configured = found[0]["configured_rtt_us"]
            rows.append(
                [c.label, f"{a}-{b}", len(found), configured * 1000, measured * 1000,
                 (measured - configured) * 1000]
            )  # fmt: skip
    if not rows:
        return None
    columns = [
        Column("configuration"),
        Column("link"),
        Column("reps", format="count"),
        Column("configured RTT µs", "configured_rtt_ns", "us"),
        Column("measured RTT µs", "measured_rtt_ns", "us"),
        Column("emulation adds µs", "added_ns", "us"),
    ]
    notes = [
        "before each run, 64-byte UDP datagrams echoed between the two hosts through the "
        "run's own links and mechanisms (median round trip); configured = twice both links' "
        "delays. What the emulation adds (veth, bridge, the delay stage) is in every figure "
        "of that configuration; with delay: 0us it is the delay stage's cost alone",
    ]
    return Table(
        "network", "Emulated links: configured and measured round trip", columns, rows, notes
    )
