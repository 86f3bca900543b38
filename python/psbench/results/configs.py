"""Configurations: the runs of a result set grouped by their settings, repetitions
aggregated (median across repetitions, with their spread), and the ratio of each to the
baseline floor measured in the same result set."""

import json
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from psbench.base import manifests
from psbench.base.units import hosts_text, micros, size_text, sizes_text, value_text
from psbench.results import costs
from psbench.results.dependence import drift_text, run_drift
from psbench.results.describe import LATENCY_KEYS, STAT_KEYS, describe
from psbench.results.load import ResultSet, RunData, RunSettings, natural_key

# Drivers that measure the physical floor, no middleware (their manifests say baseline).
BASELINE_DRIVERS = manifests.baseline_drivers()
COUNT_KEYS = ("sent", "samples", "lost", "duplicated", "reordered", "late", "corrupted")
RATE_KEYS = ("samples_per_s", "mbit_per_s", "loss_percent", "offered_rate_hz", "achieved_rate_hz")


@dataclass
class Config(RunSettings):
    key: str
    params: dict
    runs: list[RunData]
    label: str = ""
    stats: dict = field(default_factory=dict)  # median across repetitions
    per_rep: list[dict] = field(default_factory=list)
    spread: dict = field(default_factory=dict)  # of p50 across repetitions
    counts: dict = field(default_factory=dict)  # summed over repetitions
    rate: dict = field(default_factory=dict)  # throughput, median across reps
    echo: dict = field(default_factory=dict)  # latency under load ({} if none)
    per_subscriber: dict = field(default_factory=dict)  # name -> stats (fan-out)
    resources: dict = field(default_factory=dict)  # costs.resources ({} if not measured)
    startup: dict = field(default_factory=dict)  # costs.startups
    warnings: list[str] = field(default_factory=list)
    baseline: dict | None = None
    # ok repetitions (1-based) whose level changed during the run: number -> the
    # stationarity check (psbench.results.dependence.stationarity)
    drift: dict = field(default_factory=dict)

    @property
    def ok_runs(self) -> list[RunData]:
        return [r for r in self.runs if r.status == "ok" and r.samples is not None]

    @property
    def placement(self) -> str:
        return self.params.get("placement") or "inter"

    @property
    def is_baseline(self) -> bool:
        return self.driver in BASELINE_DRIVERS

    @property
    def rep_samples(self) -> list[np.ndarray]:
        """The latency samples of each ok repetition (for the significance tests)."""
        return [r.latency_ns for r in self.ok_runs]

    @cached_property
    def pooled_ns(self) -> np.ndarray:
        """Every repetition's samples together."""
        parts = self.rep_samples
        return np.concatenate(parts) if parts else np.empty(0)


_median = costs.median_present


def _aggregate(config: Config, noise: float) -> None:
    ok = config.ok_runs
    config.per_rep = [describe(r.latency_ns, r.latency_streams) for r in ok]
    config.stats = {key: _median([s[key] for s in config.per_rep]) for key in LATENCY_KEYS}
    config.stats["n"] = sum(s["n"] for s in config.per_rep)
    config.counts = {key: sum(int(r.counts.get(key) or 0) for r in ok) for key in COUNT_KEYS}
    rates = [r.throughput for r in ok]
    config.rate = {key: _median([x[key] for x in rates]) for key in RATE_KEYS}
    sources = sorted({x["source"] for x in rates if x["source"]})
    config.rate["source"] = "+".join(sources) or None
    config.echo = _echo(ok)
    config.per_subscriber = _per_subscriber(ok)
    config.resources = costs.resources(ok)
    config.startup = costs.startups(ok)
    p50s = [s["p50"] for s in config.per_rep if s["p50"] is not None]
    if p50s:
        middle = float(np.median(p50s))
        relative = (max(p50s) - min(p50s)) / middle if middle > 0 else 0.0
        config.spread = {
            "reps": len(p50s),
            "p50_min": min(p50s),
            "p50_max": max(p50s),
            "relative": relative,
        }
        if len(p50s) > 1 and relative > noise:
            config.warnings.append(
                f"repetitions disagree: p50 from {micros(min(p50s))} to "
                f"{micros(max(p50s))} µs ({relative:.0%} of the median, more than the "
                f"{noise:.0%} noise threshold)"
            )
    for number, run in enumerate(ok, start=1):
        found = run_drift(run.latency_streams)
        if found:
            config.drift[number] = found
            which = "" if len(ok) == 1 else f"repetition {number} "
            config.warnings.append(which + drift_text(found))
    nonpositive = sum(int((r.latency_ns <= 0).sum()) for r in ok)
    if nonpositive:
        config.warnings.append(
            f"{nonpositive} latencies <= 0 (a clock stepped, or the two clocks differ): "
            f"kept in every statistic, but logarithmic plots cannot show them"
        )
    late = sum(int(r.samples.late.sum()) for r in ok if r.samples is not None)
    if late:
        config.warnings.append(
            f"{late} late echoes (after --sample-timeout) are in the percentiles"
        )
    failed = len(config.runs) - len(ok)
    if failed:
        config.warnings.append(f"{failed} of {len(config.runs)} runs not ok (left out)")


def _echo(runs: list[RunData]) -> dict:
    """Latency under load: RTT/2 of the echoed samples, aggregated over repetitions like
    the main series (median of each statistic, n and counts added up)."""
    echoed = [r for r in runs if r.echo_by_publisher]
    if not echoed:
        return {}
    per_rep = [describe(r.echo_latency_ns) for r in echoed]
    result: dict[str, object] = {
        key: _median([s[key] for s in per_rep]) for key in ("p50", "p99", "max")
    }
    result["n"] = sum(s["n"] for s in per_rep)
    result["reps"] = len(echoed)
    everies = sorted({r.echo_every for r in echoed if r.echo_every})
    result["every"] = everies[0] if len(everies) == 1 else None
    for key in ("expected", "received", "lost"):
        values = [r.echo_counts[key] for r in echoed if r.echo_counts]
        result[key] = sum(values) if values else None
    return result


def _per_subscriber(runs: list[RunData]) -> dict:
    """name -> one subscriber's latency and throughput over the repetitions, for runs with
    several receivers (fan-out, several topics); {} otherwise."""
    several = [r for r in runs if r.kind == "pubsub" and len(r.receivers) > 1]
    if not several:
        return {}
    gathered: dict[str, list[tuple[dict, dict]]] = {}
    for run in several:
        for name, samples in run.samples_by_receiver.items():
            stats = describe(samples.latency_ns)
            rate = run.throughput["subscribers"].get(name) or {}
            gathered.setdefault(name, []).append((stats, rate))
    found = {}
    for name, each in sorted(gathered.items(), key=lambda item: natural_key(item[0])):
        found[name] = {
            "reps": len(each),
            "n": sum(s["n"] for s, _ in each),
            "p50": _median([s["p50"] for s, _ in each]),
            "p99": _median([s["p99"] for s, _ in each]),
            "received": sum(r.get("received") or 0 for _, r in each),
            "lost": sum(r.get("lost") or 0 for _, r in each),
            "samples_per_s": _median([r.get("samples_per_s") for _, r in each]),
        }
    return found


def varying_keys(configs: list[Config]) -> list[str]:
    """Settings whose value differs between configurations, in first-seen order."""
    keys: list[str] = []
    for config in configs:
        keys.extend(k for k in config.params if k not in keys)
    return [
        k
        for k in keys
        if len({json.dumps(c.params.get(k), sort_keys=True, default=str) for c in configs}) > 1
    ]


def setting_text(key: str, value) -> str:
    if key == "hosts" and isinstance(value, dict):
        return hosts_text(value)
    return size_text(value) if key == "size" else value_text(value)


def label_keys(configs: list[Config], leave_out: str | None = None) -> list[str]:
    """The settings that name a configuration among these: driver and size (kind first
    when it varies), then the other settings that differ between them."""
    varying = varying_keys(configs)
    leading = (["kind"] if "kind" in varying else []) + ["driver", "size"]
    # A loaned (zero-copy) write is named in every label it applies to, varying or not:
    # at 16 KiB it halves some latencies, so a copy must never pass for a loan.
    if any(c.params.get("loan") is True for c in configs):
        leading.append("loan")
    # The size names pong's reply too (label_of), unless the size is left out.
    named = leading + (["reply_size"] if leave_out != "size" else [])
    return [k for k in leading + [k for k in varying if k not in named] if k != leave_out]


def label_of(config: Config, keys: list[str]) -> str:
    """e.g. "ping udp 64 B reliability=reliable", "ping udp 1 KiB -> 32 B reply" (an
    acknowledged round trip names both sizes)."""

    def text(key):
        if key == "size":
            return sizes_text(config.params[key], config.params.get("reply_size"), size_text)
        if key in ("kind", "driver"):
            return setting_text(key, config.params[key])
        if key == "loan":
            return "loan" if config.params[key] is True else ""
        return f"{key}={setting_text(key, config.params[key])}"

    return " ".join(filter(None, (text(key) for key in keys if key in config.params)))


def labels(configs: list[Config], leave_out: str | None = None) -> list[str]:
    """A name for each configuration (label_keys), without the setting leave_out."""
    keys = label_keys(configs, leave_out)
    return [label_of(config, keys) or config.driver for config in configs]


def _baselines(configs: list[Config]) -> None:
    """The floor of a configuration: the baseline with the lowest p50 among those of the
    same kind, size, placement and rate, and of the same notify mode when the result set
    has a baseline in it (a blocking wake-up is then not read against a busy-polling
    floor; without one, the lowest floor of any notify mode is used). The rate must match: an
    open-loop latency, measured from the intended send time at some rate, is not read
    against a back-to-back or closed-loop one. The reply size must match too: a 1 KiB
    message acknowledged by 32 bytes is read against a floor measured the same way."""
    for config in configs:
        floors = [
            b
            for b in configs
            if b.is_baseline
            and b.kind == config.kind
            and b.size == config.size
            and b.placement == config.placement
            and b.params.get("rate") == config.params.get("rate")
            # an acknowledged round trip (a short reply) against one of the same sizes
            and b.params.get("reply_size") == config.params.get("reply_size")
            and b.stats.get("p50")
        ]
        notify = config.params.get("notify")
        floors = [b for b in floors if b.params.get("notify") == notify] or floors
        if not floors or not config.stats.get("p50"):
            continue
        floor = min(floors, key=lambda b: b.stats["p50"])
        p99 = (
            config.stats["p99"] / floor.stats["p99"]
            if config.stats.get("p99") and floor.stats.get("p99")
            else None
        )
        config.baseline = {
            "label": floor.label,
            "driver": floor.driver,
            "p50_ratio": config.stats["p50"] / floor.stats["p50"],
            "p99_ratio": p99,
            # How far the floor itself can be trusted: a floor measured
            # once has an unknown spread, and every ratio inherits it.
            "floor_reps": floor.spread.get("reps", 0),
            "floor_spread": floor.spread.get("relative")
            if floor.spread.get("reps", 0) > 1
            else None,
        }


def build_configs(results: ResultSet, noise: float = 0.05) -> list[Config]:
    """One Config per distinct set of settings, in the order of their first run."""
    grouped: dict[str, Config] = {}
    for run in results.runs:
        config = grouped.get(run.config_key)
        if config is None:
            config = grouped[run.config_key] = Config(run.config_key, run.params, [])
        config.runs.append(run)
    configs = list(grouped.values())
    for config in configs:
        _aggregate(config, noise)
    for config, label in zip(configs, labels(configs)):
        config.label = label
    _baselines(configs)
    return configs


__all__ = ["BASELINE_DRIVERS", "Config", "STAT_KEYS", "build_configs", "varying_keys"]
