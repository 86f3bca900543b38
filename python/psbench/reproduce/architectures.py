"""The three architectures side by side (experiments/seeds/architectures.yaml): every
middleware on the same workloads, grouped by where its data goes, and the seed papers'
statements on architectures checked on the figures.

A driver's architecture is its manifest's (per transport where a transport changes it,
e.g. a router in the middle): peer-to-peer is decentralized, a per-host daemon or a
router is federated, a broker is centralized; the floors (raw UDP, shared memory) are the
physical floor read beside them. Per configuration, the figures are the medians over its
repetitions; per architecture, the median over its middlewares (floors left out)."""

from statistics import median

from psbench.base import manifests
from psbench.reproduce.common import Section, not_testable, where_measured
from psbench.reproduce.layout import Layout, folded
from psbench.results.load import ResultSet
from psbench.results.run_record import block

LAYOUT = Layout("architectures")  # classes, figures, tables: architectures.layout.yaml
CLASSES = LAYOUT.data["classes"]  # a manifest's architecture -> its class
ORDER = tuple(LAYOUT.order)
FAN_OUT = LAYOUT.data["fan_out"]


def architecture(driver: str, transport: str | None) -> str:
    """The class of a driver's runs on a transport (its manifest's architecture, or the
    one its `transport_architecture` gives that transport)."""
    if driver not in manifests.driver_names():
        return "unknown"
    manifest = manifests.load(driver)
    chosen = (manifest.transport_architecture or {}).get(transport or "", manifest.architecture)
    return CLASSES.get(chosen, "unknown")


def _us(ns) -> float | None:
    return None if ns is None else ns / 1000.0


def _ping_figures(run) -> dict:
    stats = block(run.run_record, "stats").get("ping") or {}
    half = stats.get("rtt_half") or {}
    resources = block(run.run_record, "resources")
    every = (resources.get("all") or {}).get("cpu_ns_per_message")
    services = (resources.get("services") or {}).get("cpu_ns_per_message")
    timing = (run.summaries.get("ping") or {}).get("timing") or {}
    first = timing.get("discovery_ns")
    return {
        "p50": _us(half.get("p50")),
        "p99": _us(half.get("p99")),
        "cpu_per_rtt": _us(every) if resources.get("measured") else None,
        "service_share": (services / every) if services and every else None,
        "first_message": None if first is None else first / 1e6,
    }


def _one_way_p50(run) -> float | None:
    stats = block(run.run_record, "stats")
    key = "all_subs" if "all_subs" in stats else "sub"
    return _us(((stats.get(key) or {}).get("one_way") or {}).get("p50"))


def _medians(values: dict[tuple, list]) -> dict[tuple, float]:
    return {k: median(v) for k, v in values.items() if v}


def measured(results: ResultSet) -> dict[tuple[str, str], dict]:
    """(driver, transport or "") -> its figures (FIGURES' keys), medians over repetitions;
    a figure whose runs did not end ok is absent. A floor is one row whatever its runs'
    transports (udp reaches several readers over multicast only)."""
    found: dict[tuple, dict[str, list]] = {}

    def put(key, figure, value):
        if value is not None:
            found.setdefault(key, {}).setdefault(figure, []).append(value)

    for run in results.ok_runs:
        transport = run.params.get("transport") or ""
        if architecture(run.driver, transport) == "floor":
            transport = ""
        key = (run.driver, transport)
        if run.kind == "ping" and run.size in (64, 16384):
            figures = _ping_figures(run)
            name = "latency_64" if run.size == 64 else "latency_16k"
            put(key, name, figures["p50"])
            put(key, f"{name}_p99", figures["p99"])
            if run.size == 64:
                for figure in ("cpu_per_rtt", "service_share", "first_message"):
                    put(key, figure, figures[figure])
        elif run.kind == "pubsub" and run.params.get("rate") == 0:
            put(key, "throughput", (run.throughput or {}).get("samples_per_s"))
        elif run.kind == "pubsub" and run.params.get("rate") == 1000:
            subscribers = run.params.get("subscribers") or 1
            if subscribers in (1, FAN_OUT):
                put(key, f"fan_out_{subscribers}", _one_way_p50(run))
    return {key: {f: median(v) for f, v in figures.items()} for key, figures in found.items()}


def _cell(value, figure: str):
    if value is None:
        return None
    if figure == "service_share":
        return f"{100 * value:.0f}%"
    if figure == "throughput":
        return round(value)
    return round(value, 2 if value < 100 else 1)


def _figures(figures: dict) -> dict:
    """A middleware's or a class's figures as the tables show them, by figure key."""
    return {f: _cell(value, f) for f, value in figures.items() if f != "members"}


def _per_middleware(ours: dict, where: str):
    ranked = sorted(ours, key=lambda k: (ORDER.index(architecture(*k)) if architecture(*k)
                                         in ORDER else len(ORDER), k))  # fmt: skip
    rows = [{"architecture": architecture(driver, transport), "driver": driver,
             "transport": transport or "default", **_figures(ours[(driver, transport)])}
            for driver, transport in ranked]  # fmt: skip
    return LAYOUT.table("per-middleware", rows, where=where, fan_out=FAN_OUT)


def per_architecture(ours: dict) -> dict[str, dict]:
    """Class -> figure -> the median over the class's middlewares (floors apart)."""
    values: dict[tuple, list] = {}
    members: dict[str, list] = {}
    for (driver, transport), figures in ours.items():
        klass = architecture(driver, transport)
        members.setdefault(klass, []).append(f"{driver}" + (f" ({transport})" if transport else ""))
        for figure, value in figures.items():
            values.setdefault((klass, figure), []).append(value)
    result = {}
    for (klass, figure), value in _medians(values).items():
        result.setdefault(klass, {"members": ", ".join(sorted(members[klass]))})[figure] = value
    return result


def _per_architecture_table(classes: dict):
    rows = [{"architecture": klass, **_figures(classes[klass]), "members": classes[klass]["members"]}
            for klass in ORDER if klass in classes]  # fmt: skip
    return LAYOUT.table("per-class", rows, fan_out=FAN_OUT)


def _verdict(claim: dict, classes: dict) -> tuple[str, str]:
    """(ours, verdict) for a claim `expect: A below|not above B` on one metric."""
    metric = claim.get("metric")
    words = str(claim.get("expect", "")).split()
    first, second = words[0], words[-1]
    a, b = (classes.get(k, {}).get(metric) for k in (first, second))
    if a is None or b is None:
        missing = [k for k, v in ((first, a), (second, b)) if v is None]
        return "-", not_testable(f"no {metric} measured for {' and '.join(missing)} here")
    ours = f"{first} {a:,.1f}, {second} {b:,.1f}"
    holds = a < b if "below" in words else a <= b
    return ours, "agrees" if holds else "differs"


def _claims(classes: dict, published: dict):
    rows = []
    for name, claim in (published.get("claims") or {}).items():
        ours, verdict = _verdict(claim, classes)
        rows.append([name, claim.get("source"), folded(claim.get("text", "")), claim.get("expect"),
                     ours, verdict])  # fmt: skip
    return LAYOUT.table("claims", rows)


def sections(results: ResultSet, published: dict) -> list[Section]:
    ours = measured(results)
    classes = per_architecture(ours)
    tables = [_per_middleware(ours, where_measured(results)), _per_architecture_table(classes),
              _claims(classes, published)]  # fmt: skip
    notes = [] if ours else ["no run of this result set ended ok: nothing to compare"]
    return [LAYOUT.section("architectures", tables, notes=notes)]
