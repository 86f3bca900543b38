"""What security costs (experiments/seeds/security.yaml): every middleware that can run
secured, plain and in each of its security modes, on the same workloads, so that each
secured configuration is read against the same configuration without security.

DDS Security for the DDS implementations (authentication only; with access control;
encrypted submessages, payloads, or both), mutual TLS for the brokers and for Zenoh (peer
to peer and through its router). Per secured
configuration: the round trip's median (RTT/2) as a ratio to the plain one with its 95%
interval (the repetitions the unit, or one run's dependence-aware interval:
results/significance.py), the
same for p99 where there are samples enough, the maximum throughput and the CPU per
round trip (nodes and brokers) as ratios of medians over repetitions, and the discovery
time the security handshake adds (the driver's open to every peer matched).

None of the seed papers measured security; IJRASET (seed 002) sends whoever needs it to
a commercial DDS, a statement the last table checks on what ran here."""

import json
from statistics import median

from psbench.reproduce.common import Section, not_testable, where_measured
from psbench.reproduce.layout import Layout, folded
from psbench.results import significance
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet

PLAIN = "none"
P99_MIN_SAMPLES = 1000  # p99 of fewer is too close to the maximum to compare
NOISE = 0.05  # a ratio whose interval lies within 1 +- this is "within noise"
LAYOUT = Layout("security")  # names, tables: security.layout.yaml
NAMES = LAYOUT.names
DDS = tuple(LAYOUT.data["dds"])


def _mode(config: Config) -> str:
    return config.params.get("security") or PLAIN


def _without_security(config: Config) -> str:
    params = {k: v for k, v in config.params.items() if k not in ("security", "rep")}
    return json.dumps(params, sort_keys=True, default=str)


def pairs(configs: list[Config]) -> list[tuple[Config, Config]]:
    """(plain, secured) for every secured configuration whose plain twin ran: the same
    settings but security."""
    plain = {_without_security(c): c for c in configs if _mode(c) == PLAIN and c.ok_runs}
    return [
        (plain[_without_security(c)], c)
        for c in configs
        if _mode(c) != PLAIN and _without_security(c) in plain
    ]


def _us(ns) -> float | None:
    return None if ns is None else ns / 1000.0


def _ratio(a, b) -> float | None:
    return None if a in (None, 0) or b is None else b / a


def _cost(low: float, high: float) -> str:
    if low > 1 + NOISE:
        return "costs more"
    if high < 1 - NOISE:
        return "costs less"
    return "within noise"


def _interval(a: Config, b: Config, statistic: str) -> tuple | None:
    """(ratio, low, high) of statistic(secured) / statistic(plain), or None."""
    if not a.ok_runs or not b.ok_runs:
        return None
    if statistic == "p99" and min(a.pooled_ns.size, b.pooled_ns.size) < P99_MIN_SAMPLES:
        return None
    ci = significance.ratio_ci(a.rep_samples, b.rep_samples, statistic)
    if ci.low is None:
        return None
    return ci.ratio, ci.low, ci.high


def _latency_rows(found: list[tuple[Config, Config]]) -> list[list]:
    rows = []
    for plain, secured in found:
        if plain.kind != "ping":
            continue
        p50 = _interval(plain, secured, "p50")
        p99 = _interval(plain, secured, "p99")
        rows.append(
            [
                NAMES.get(plain.driver, plain.driver),
                _transport(plain),
                _mode(secured),
                plain.size,
                _round(_us(plain.stats.get("p50"))),
                _round(_us(secured.stats.get("p50"))) if secured.ok_runs else "failed",
                *(_three(p50) if p50 else ["-", "-", "-"]),
                _cost(*p50[1:]) if p50 else "-",
                *(_three(p99) if p99 else ["-", "-", "-"]),
            ]
        )
    return rows


def _transport(config: Config) -> str:
    return config.params.get("transport") or "default"


def _three(ci: tuple) -> list:
    return [round(v, 3) for v in ci]


def _round(value):
    if value is None:
        return None
    return round(value, 2 if value < 100 else 1)


def _latency_table(found, where: str):
    return LAYOUT.table("latency", _latency_rows(found), where=where, above=1 + NOISE,
                        below=1 - NOISE, p99_min=P99_MIN_SAMPLES)  # fmt: skip


def _per_rep_median(config: Config, value_of) -> float | None:
    values = [v for r in config.ok_runs if (v := value_of(r)) is not None]
    return median(values) if values else None


def _throughput(run) -> float | None:
    return (run.throughput or {}).get("samples_per_s")


def _cpu(config: Config) -> float | None:
    return _us(((config.resources or {}).get("all") or {}).get("cpu_ns_per_message"))


def _discovery_ms(config: Config) -> float | None:
    found = (config.startup or {}).get("open_to_matched_ns")
    return None if found is None else found / 1e6


def _costs_rows(found: list[tuple[Config, Config]]) -> list[list]:
    rows: dict[tuple, list] = {}
    for plain, secured in found:
        key = (plain.driver, _transport(plain), _mode(secured))
        row = rows.setdefault(key, [NAMES.get(plain.driver, plain.driver), *key[1:]] + [None] * 9)
        if plain.kind == "pubsub" and plain.params.get("rate") == 0:
            a, b = (_per_rep_median(c, _throughput) for c in (plain, secured))
            row[3:6] = [_round(a), _round(b), _rounded_ratio(a, b)]
        elif plain.kind == "ping" and plain.size == 64:
            a, b = _cpu(plain), _cpu(secured)
            row[6:9] = [_round(a), _round(b), _rounded_ratio(a, b)]
            a, b = _discovery_ms(plain), _discovery_ms(secured)
            row[9:12] = [_round(a), _round(b), _round(b - a) if None not in (a, b) else None]
    return list(rows.values())


def _rounded_ratio(a, b):
    ratio = _ratio(a, b)
    return None if ratio is None else round(ratio, 3)


def _costs_table(found):
    return LAYOUT.table("costs", _costs_rows(found))


def _commercial_claim(configs: list[Config], published: dict):
    rows = []
    for name, claim in (published.get("claims") or {}).items():
        secured = [
            c for c in configs if c.driver in DDS and _mode(c) == claim.get("mode") and c.ok_runs
        ]
        if claim.get("check") != "open-source-dds-secured":
            verdict = not_testable("no check of this claim is defined")
            ours = "-"
        elif secured:
            ran = sorted({NAMES.get(c.driver, c.driver) for c in secured})
            ours = f"{', '.join(ran)} (open source) ran {claim['mode']} to the end"
            verdict = "differs"
        else:
            ours = "-"
            verdict = not_testable(f"no DDS run with security {claim.get('mode')} ended ok here")
        rows.append([name, claim.get("source"), folded(claim.get("text", "")), ours, verdict])
    return LAYOUT.table("claims", rows)


def sections(results: ResultSet, published: dict) -> list[Section]:
    configs = build_configs(results)
    found = pairs(configs)
    notes = [] if found else ["no secured run has a plain twin that ended ok: nothing to compare"]
    failed = sorted(
        {f"{c.driver} {_mode(c)}" for c in configs if _mode(c) != PLAIN and not c.ok_runs}
    )
    if failed:
        notes.append("secured configurations with no ok run: " + ", ".join(failed))
    tables = [_latency_table(found, where_measured(results)), _costs_table(found),
              _commercial_claim(configs, published)]  # fmt: skip
    return [LAYOUT.section("security", tables, notes=notes)]
