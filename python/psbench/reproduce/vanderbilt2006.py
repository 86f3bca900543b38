"""Vanderbilt 2006 (Parsons, Xiong, Schmidt, Edmondson, Nguyen, Ajiboye, "Evaluating the
Performance of Pub/Sub Platforms for Tactical Information Management", slides of July
2006), reproduced: average round-trip latency and jitter against sequence length for a
sequence of bytes and a sequence of the complex type (1-to-1, an acknowledgement back),
throughput in KB/s of 1-to-4/8/12 subscribers over unicast and multicast, and listener
against waitset throughput.

The slides plot every result without printing its values, so the published side is the
method and the statements the slides make about their plots
(experiments/seeds/vanderbilt2006.published.yaml), each checked against our runs in the
section *The paper's statements*.

Latency is the round trip (the paper's "avg. round-trip latency"), message out and a
32-byte acknowledgement back, on ping's clock; jitter is its standard deviation; every
sample of a configuration pooled over repetitions. A sequence of L bytes is a message of
L + 32 bytes (psbench's header first). Throughput is on the subscribers' clocks: each
subscriber's received messages per second of receiving times the sequence length; KB/s =
1000 bytes per second; "per subscriber" is the mean over the N subscribers.
"""

import numpy as np

from psbench.reproduce.common import Section, published_marker, where_measured
from psbench.reproduce.layout import Line, Settings, rounded, run_rows
from psbench.reproduce.vanderbilt2006_claims import LAYOUT, _claims_table, _kbps, _name, _sequence
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet

CAST = {"udp": "unicast", "multicast": "multicast", "shm": "shared memory (daemon)"}
_rank = LAYOUT.rank


def _paper_system(driver: str, published: dict, transport: str = "") -> str:
    """The paper's system a driver stands for; over unicast the slides compare DDS1 with
    DDS3 (DDS2 had no unicast), hence systems_unicast. "(stand-in)" after a system whose
    own driver is in the layout's `real` (DDS2: opensplice5)."""
    systems = published.get("systems_unicast" if transport == "udp" else "systems") or {}
    system = systems.get(driver) or "-"
    real = [r for r, s in LAYOUT.real.items() if s == driver]
    if real and any(systems.get(r) == system for r in real):
        return f"{system} (stand-in)"
    return system


def _usable(configs: list[Config], kind: str) -> list[Config]:
    return [c for c in configs if c.kind == kind and c.ok_runs]


# Latency ------------------------------------------------------------------------------


def _rtt(config: Config) -> dict:
    """n, average, jitter (stdev), min, max of the round trip in ns (RTT/2 doubled back),
    every sample of the configuration pooled; lost and corrupted summed."""
    values = config.pooled_ns * 2.0
    found = dict.fromkeys(("mean_ns", "stdev_ns", "min_ns", "max_ns"))
    if values.size:
        found.update(
            mean_ns=float(values.mean()),
            min_ns=float(values.min()),
            max_ns=float(values.max()),
            stdev_ns=float(values.std(ddof=1)) if values.size > 1 else None,
        )
    counts = config.counts
    return {"n": int(values.size), **found, "lost": counts.get("lost", 0),
            "corrupted": counts.get("corrupted", 0)}  # fmt: skip


def latency_series(
    configs: list[Config], complex_type: bool
) -> dict[str, list[tuple[int, Config]]]:
    """driver -> [(sequence length, config)] sorted: bytes by sequence bytes (the message
    less psbench's header), the complex type by Outer elements."""
    found: dict[str, list[tuple[int, Config]]] = {}
    for config in _usable(configs, "ping"):
        is_complex = str(config.params.get("options.type", "bytes")) == "complex"
        if is_complex != complex_type or not config.pooled_ns.size:
            continue
        elements = int(config.params.get("options.elements", 16))
        length = elements if complex_type else _sequence(config.size)
        found.setdefault(config.driver, []).append((length, config))
    return {d: sorted(found[d], key=lambda item: item[0]) for d in LAYOUT.ranked(found)}


def _latency_table(key: str, length: str, series: dict, published: dict):
    return LAYOUT.table(key, [
        {"middleware": _name(d), "paper_system": _paper_system(d, published), length: value,
         **_rtt(config)}
        for d, points in series.items() for value, config in points
    ])  # fmt: skip


def _latency_lines(series: dict, published: dict) -> list[Line]:
    return [
        Line([x for x, _ in points], [(_rtt(c)[stat] or np.nan) / 1000.0 for _, c in points],
             f"{_name(d)} ({_paper_system(d, published)}) {what}", style,
             {"marker": "o", "color": f"C{index % 10}"})
        for index, (d, points) in enumerate(series.items())
        for stat, style, what in (("mean_ns", "-", "average"), ("stdev_ns", ":", "jitter"))
    ]  # fmt: skip


# Throughput -----------------------------------------------------------------------------


def throughput_points(configs: list[Config], notify: str = "listener") -> dict[tuple, Config]:
    """(driver, transport, subscribers, size) -> config, pubsub runs in one notify mode."""
    return {
        (c.driver, str(c.params.get("transport")), int(c.params.get("subscribers") or 1),
         int(c.size)): c
        for c in _usable(configs, "pubsub") if c.params.get("notify") == notify
    }  # fmt: skip


def _throughput_lines(points: dict, published: dict, transport: str) -> list[Line]:
    lines = sorted({(k[0], k[2]) for k in points if k[1] == transport},
                   key=lambda item: (_rank(item[0]), item[1]))  # fmt: skip
    found = []
    for index, (d, n) in enumerate(lines):
        keys = sorted(k for k in points if k[:3] == (d, transport, n))
        label = f"{_name(d)} ({_paper_system(d, published, transport)}), {n} subscribers"
        found.append(Line([_sequence(k[3]) for k in keys],
                          [_kbps(points[k])["per_sub"] or np.nan for k in keys], label, "-",
                          {"marker": "o", "color": f"C{index % 10}"}))  # fmt: skip
    return found


def _system(key: tuple, published: dict) -> dict:
    """The columns that say which configuration a throughput row is."""
    driver, transport, subs, size = key
    return {"middleware": _name(driver), "paper_system": _paper_system(driver, published, transport),
            "cast": CAST.get(transport, transport), "subscribers": subs,
            "sequence": _sequence(size), "size": size}  # fmt: skip


def _throughput_table(points: dict, published: dict, where: str = "over loopback (one host)"):
    rows = []
    for key in sorted(points, key=lambda k: (_rank(k[0]), k[1] != "udp", *k[2:])):
        f = _kbps(points[key])
        rows.append({**_system(key, published), "kb_per_s_per_subscriber": rounded(f["per_sub"]),
                     "kb_per_s_total": rounded(f["total"]), "loss_percent": rounded(f["loss"], 2)})  # fmt: skip
    return LAYOUT.table("throughput", rows, where=where)


def _waitset_table(configs: list[Config], published: dict):
    listener, wait = throughput_points(configs, "listener"), throughput_points(configs, "wait")
    rows = []
    for key in sorted(wait, key=lambda k: (_rank(k[0]), *k[1:])):
        w = _kbps(wait[key])
        lst = _kbps(listener[key]) if key in listener else {"per_sub": None, "loss": None}
        ratio = (w["per_sub"] / lst["per_sub"]) if w["per_sub"] and lst["per_sub"] else None
        rows.append({**_system(key, published), "listener_kb_per_s": rounded(lst["per_sub"]),
                     "waitset_kb_per_s": rounded(w["per_sub"]), "ratio": rounded(ratio, 2),
                     "listener_loss": rounded(lst["loss"], 2), "waitset_loss": rounded(w["loss"], 2)})  # fmt: skip
    return LAYOUT.table("listener-waitset", rows)


# The sections -----------------------------------------------------------------------------


def _method_table(results: ResultSet, published: dict):
    pings = [r for r in results.runs if r.kind == "ping"]
    sizes = sorted({int(r.params["size"]) for r in pings if "options.type" not in r.params})
    return LAYOUT.table(
        "method", method=published.get("method") or {}, pings=Settings(pings),
        pubs=Settings(r for r in results.runs if r.kind == "pubsub"),
        complex=Settings(r for r in pings if r.params.get("options.type")),
        sequences=", ".join(str(_sequence(s)) for s in sizes),
        paper_subscribers=", ".join(map(str, (published.get("method") or {}).get("subscribers") or [])),
    )  # fmt: skip


def sections(results: ResultSet, published: dict) -> list[Section]:
    configs = build_configs(results)
    by_bytes = latency_series(configs, complex_type=False)
    by_elements = latency_series(configs, complex_type=True)
    points = throughput_points(configs, "listener")
    text = {"marker": published_marker(published), "where": where_measured(results)}
    latency = [_latency_table("latency-bytes", "sequence", by_bytes, published),
               _latency_table("latency-complex", "elements", by_elements, published)]  # fmt: skip
    drawings, missing = [], ["no ok latency runs: nothing to show"]
    if by_bytes or by_elements:
        panels = [_latency_lines(series, published) for series in (by_bytes, by_elements)]
        drawings, missing = [LAYOUT.drawing("latency", panels)], []
    throughput = []
    if points:
        panels = [_throughput_lines(points, published, t) for t in ("udp", "multicast")]
        throughput = [LAYOUT.drawing("throughput", panels)]
    runs, failed = run_rows(results, _name, "of every table")
    return [
        LAYOUT.section("method", [_method_table(results, published)], **text),
        LAYOUT.section("latency", latency, drawings, missing, **text),
        LAYOUT.section("throughput", [_throughput_table(points, published, text["where"])],
                       throughput, **text),
        LAYOUT.section("waitset", [_waitset_table(configs, published)], **text),
        LAYOUT.section("claims", [_claims_table(points, published, text["where"])]),
        LAYOUT.section("runs", [LAYOUT.table("runs", runs)], notes=failed),
    ]  # fmt: skip
