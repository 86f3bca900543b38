"""IJRASET DDS criteria paper (RTI Connext, Vortex OpenSplice, OpenDDS, CoreDX DDS,
eProsima Fast RTPS), reproduced: minimum and median latency against payload over the
three-process echo (P1 publishes, P2 echoes on a second topic, P3 records; the paper's
Figures 3 and 4, Table 1's latency column), throughput at the paper's 5,000-6,000
samples/s offered rate (Figure 7, Table 1's throughput column), and the paper's criteria
table (Table 1) filled for the middlewares psbench drives.

Latency: the runs with `relays: 1` (pub -> relay -> sub). Our figure is the sub's
one-way latency over both hops, P3's receive time minus the start of P1's write
(`latency_from: send`: the paper's write time) on one clock (P1 and P3 on one host, as
in the paper; emulated hosts share the machine's clock besides); the paper's is
(receive_time - write_time) / 2 over the same echo, so the table shows ours halved
beside it. Throughput: the runs with `relays: 0`, on the sub's clock ((received - 1) /
(last - first arrival), Mbit/s of whole messages).

Over a network (`--network`: P2 on another emulated host behind a slow, lossy link),
the paper's figures for its 1 Gbit/s Ethernet are not testable on a slower link, and a
section on the paper's low-bandwidth criterion (Section III.E) shows what such a link
leaves of the latency, the throughput and the discovery time.

Every cell of the criteria table says where it comes from: `capability` (the driver's
own `--describe`, as `psbench drivers --json` prints it), `measured` (this result set)
or `documented` (the middleware's documentation, with its address).
"""

import numpy as np

from psbench.base import manifests
from psbench.reproduce.common import Section, on_hosts, published_marker, where_measured
from psbench.reproduce.ijraset_claims import (
    LAYOUT,
    _bps_text,
    _claim_rows,
    _drivers,
    _link_bps,
    _name,
    _paper_key,
    _rank,
    _relays,
    _slow,
    _sorted,
    _stand_ins,
    _usable,
)
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet

# Documented facts for the criteria the drivers cannot tell (architecture, routing,
# monitoring, licence, interoperability) are each driver's manifest's [claims], each with
# the page it comes from; psbench checks none of it.
DOCUMENTED_CRITERIA = ("architecture", "interoperability", "routing", "monitoring", "licence")


def documented(driver: str) -> dict[str, str]:
    """criterion -> the claim's text, and "source": the claims' sources, from the
    driver's manifest ([claims.<criterion>]); {} for a driver without claims."""
    if driver not in manifests.driver_names():
        return {}
    claims = manifests.load(driver).claims
    found = {c: claims[c].text for c in DOCUMENTED_CRITERIA if c in claims}
    sources = dict.fromkeys(claims[c].source for c in DOCUMENTED_CRITERIA if c in claims)
    if sources:
        found["source"] = "; ".join(sources)
    return found


# Latency (Figures 3 and 4) and throughput (Figure 7) ------------------------------------


def _latency_section(configs: list[Config], published: dict, marker: str, where: str) -> Section:
    paper = (published.get("latency_min_us") or {}).get("values") or {}
    rows = []
    for config in _sorted([c for c in _usable(configs) if _relays(c) == 1]):
        values = config.pooled_ns
        low, median = float(values.min()), float(np.median(values))
        key = _paper_key(config.driver, published)
        theirs = (paper.get(key) or {}).get(config.size) if key else None
        rows.append([_name(config.driver), _stand_ins(published).get(config.driver, "-"),
                     config.size, int(values.size), low, median, low / 2, median / 2,
                     None if theirs is None else theirs * 1000.0, config.counts.get("lost", 0)])  # fmt: skip
    table = LAYOUT.table("latency", rows, where=where, marker=marker)
    return LAYOUT.section("latency", [table], notes=[] if rows else [LAYOUT.text("no_latency")])


def _published_throughput_note(published: dict) -> str:
    """What Table 1's throughput figures would need at the paper's own stated rate."""
    note = LAYOUT.text("published_throughput")
    setup = published.get("throughput_setup") or {}
    printed = ((published.get("throughput_mbit_s") or {}).get("values") or {}).values()
    values = [v.get("value") for v in printed if v.get("value")]
    if not setup or not values:
        return note
    (low, high), largest = setup["rate_per_s"], setup["max_payload_bytes"]
    needs = max(values) * 1e6 / 8 / high
    if needs <= largest:
        return note
    return LAYOUT.text("published_throughput_beyond", note=note, low=low, high=high,
                       mbit=max(values), needs=needs, largest=largest)  # fmt: skip


def _throughput_note(configs: list[Config]) -> str:
    """What a throughput figure at a fixed offered rate says: over loopback or a fast
    link, the offered load; over a slow link, what the link let through."""
    rates = sorted({r for r in map(_link_bps, configs) if r})
    if not rates:
        return LAYOUT.text("offered_load")
    return LAYOUT.text("link_load", rates=" and ".join(_bps_text(r) for r in rates))


def _throughput_section(configs: list[Config], published: dict, marker: str) -> Section:
    rows = [[_name(c.driver), c.size, c.params.get("rate"), *((c.rate or {}).get(k) for k in (
                "achieved_rate_hz", "samples_per_s", "mbit_per_s", "loss_percent"))]
            for c in _sorted([c for c in _usable(configs) if _relays(c) == 0])]  # fmt: skip
    systems = published.get("systems") or {}
    paper = (published.get("throughput_mbit_s") or {}).get("values") or {}
    printed = [
        [systems.get(k, {}).get("name", k), v.get("value"), v.get("text")] for k, v in paper.items()
    ]
    tables = [LAYOUT.table("throughput", rows, marker=marker),
              LAYOUT.table("throughput-published", printed, marker=marker,
                           note=_published_throughput_note(published))]  # fmt: skip
    notes = [_throughput_note(configs)] + ([] if rows else [LAYOUT.text("no_throughput")])
    return LAYOUT.section("throughput", tables, notes=notes)


# The criteria table: Table 1 --------------------------------------------------------


def _capabilities() -> dict[str, dict]:
    """driver -> its --describe (psbench drivers --json); {} when the node is missing."""
    try:
        from psbench.run import drivers

        return {info.name: info.describe for info in drivers.discover() if info.describe}
    except Exception:  # noqa: BLE001 - the table then says "not described"
        return {}


def _persistence(driver: str, caps: dict) -> tuple[str, str]:
    """What psbench can drive (the driver's durability), then what the middleware's
    documentation says beyond it."""
    durability = caps.get("durability") or []
    cap = ("transient_local (late joiners get recent history); volatile"
           if "transient_local" in durability else "volatile only" if durability else "not described")  # fmt: skip
    said = (LAYOUT.data.get("persistence_documented") or {}).get(driver)
    if said:
        return f"{cap} through psbench; {said}", "capability + documented"
    return cap, "capability"


def _measured(driver: str, configs: list[Config]) -> tuple[str, str]:
    """The criteria table's latency and throughput cells: the smallest and the largest
    payload measured."""
    mine = [c for c in _usable(configs) if c.driver == driver]
    lat = sorted((c for c in mine if _relays(c) == 1), key=lambda c: c.size or 0)
    tput = sorted((c for c in mine if _relays(c) == 0), key=lambda c: c.size or 0)
    ends = lambda found: found[:1] + found[-1:] if len(found) > 1 else found  # noqa: E731
    latency = "; ".join(
        f"{float(c.pooled_ns.min()) / 2000:.0f} µs for {c.size} B" for c in ends(lat)
    )
    parts = [f"{r['mbit_per_s']:.1f} Mbit/s ({r.get('samples_per_s') or 0:,.0f}/s) at {c.size} B"
             for c in ends(tput) if (r := c.rate or {}).get("mbit_per_s") is not None]  # fmt: skip
    return latency or "not measured here", "; ".join(parts) or "not measured here"


def _criteria_section(configs: list[Config], published: dict, marker: str) -> Section:
    described = _capabilities()
    drivers = sorted(set(described) | {c.driver for c in _usable(configs)}, key=_rank)
    rows = []
    for driver in (d for d in drivers if d not in LAYOUT.data["baselines"]):
        info = described.get(driver) or {}
        caps = info.get("capabilities") or {}
        doc = documented(driver)
        persistence, p_source = _persistence(driver, caps)
        latency, throughput = _measured(driver, configs)
        transports = ", ".join(caps.get("transports") or []) or "?"
        sources = LAYOUT.text("sources", persistence=p_source, documented=doc.get("source", "-"))
        rows.append([_name(driver), info.get("version") or "not described",
                     _stand_ins(published).get(driver, "-"), doc.get("architecture", "-"),
                     f"{doc.get('interoperability', '-')}; transports here: {transports}", persistence,
                     doc.get("routing", "-"), doc.get("monitoring", "-"), doc.get("licence", "-"),
                     latency, throughput, sources])  # fmt: skip
    criteria = published.get("criteria") or {}
    lat = (published.get("latency_min_us") or {}).get("values") or {}
    tput = (published.get("throughput_mbit_s") or {}).get("values") or {}
    printed = []
    for key, value in (criteria.get("values") or {}).items():
        system = (published.get("systems") or {}).get(key) or {}
        here = [_name(d) + (" (stand-in)" if LAYOUT.stands_in(d) else "") for d in _drivers(system)]
        stand_in = ", ".join(here) or "none (cannot be installed here)"
        latency = "; ".join(f"{v} us for {s} bytes" for s, v in (lat.get(key) or {}).items())
        printed.append({**value, "system": system.get("name", key), "stand_in": stand_in,
                        "latency": latency, "throughput": (tput.get(key) or {}).get("text")})  # fmt: skip
    tables = [LAYOUT.table("criteria", rows),
              LAYOUT.table("criteria-published", printed, source=criteria.get("source"), marker=marker)]  # fmt: skip
    notes = [LAYOUT.text("described", count=len(rows))]
    return LAYOUT.section(
        "criteria", tables, notes=notes + ([] if described else [LAYOUT.text("not_described")])
    )


# Low bandwidth: Section III.E -------------------------------------------------------


def _low_bandwidth_row(lat: Config | None, tput: Config | None, published: dict) -> list:
    """One middleware and payload on a slow link: the echo's latency and loss (relays 1),
    what arrived at the offered rate (relays 0) against the link's rate, and discovery."""
    either = lat or tput
    link = _link_bps(either)
    row = [
        _name(either.driver),
        _stand_ins(published).get(either.driver, "-"),
        _bps_text(link),
        either.size,
    ]
    if lat:
        values = lat.pooled_ns
        row += [
            int(values.size),
            float(values.min()),
            float(np.median(values)),
            lat.counts.get("lost", 0),
        ]
    else:
        row += [None, None, None, None]
    rate = (tput.rate or {}) if tput else {}
    mbit = rate.get("mbit_per_s")
    found = (tput.startup or {}).get("open_to_matched_ns") if tput else None
    return row + [None if mbit is None else mbit * 1000, None if mbit is None else 100 * mbit * 1e6 / link,
                  rate.get("loss_percent"), None if found is None else found / 1e6]  # fmt: skip


def _low_bandwidth_section(configs: list[Config], published: dict, marker: str):
    """Only for runs that crossed a link slower than the paper's: the paper's
    low-bandwidth criterion, measured; None otherwise."""
    slow = [c for c in _usable(configs) if _slow(c)]
    if not slow:
        return None
    pairs: dict[tuple, dict[int, Config]] = {}
    for config in _sorted(slow):
        key = (_link_bps(config), _rank(config.driver), config.size or 0)
        pairs.setdefault(key, {})[_relays(config)] = config
    rows = [_low_bandwidth_row(pair.get(1), pair.get(0), published)
            for _, pair in sorted(pairs.items(), key=lambda item: item[0])]  # fmt: skip
    systems = published.get("systems") or {}
    low = {systems.get(k, {}).get("name", k): v.get("low_bandwidth")
           for k, v in ((published.get("criteria") or {}).get("values") or {}).items()}  # fmt: skip
    support = LAYOUT.text(
        "low_bandwidth_support", support=", ".join(f"{k} {v}" for k, v in low.items())
    )
    table = LAYOUT.table("low-bandwidth", rows, marker=marker)
    return LAYOUT.section("low-bandwidth", [table], support=support)


# The sections -----------------------------------------------------------------------


def sections(results: ResultSet, published: dict) -> list[Section]:
    configs = build_configs(results)
    marker = published_marker(published)
    failed = [
        LAYOUT.text(
            "failed", number=r.number, label=r.label, status=r.status, message=r.message or "-"
        )
        for r in results.runs
        if r.status != "ok"
    ]
    where = where_measured(results) if on_hosts(results) else None
    low = _low_bandwidth_section(configs, published, marker)
    claims = LAYOUT.table("claims", _claim_rows(configs, published, where), marker=marker)
    out = [
        _latency_section(configs, published, marker, where_measured(results)),
        _throughput_section(configs, published, marker),
        *([low] if low else []),
        _criteria_section(configs, published, marker),
        LAYOUT.section("claims", [claims]),
    ]
    out[0].notes.extend(failed)
    return out
