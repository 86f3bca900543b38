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
from psbench.hosts.links import is_real, parse_shape
from psbench.report.tables import Column, Table
from psbench.reproduce.common import (
    Section,
    not_testable,
    on_hosts,
    published_marker,
    where_measured,
)
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet

NAMES = {
    "cyclonedds": "Cyclone DDS",
    "fastdds": "Fast DDS",
    "zeromq": "ZeroMQ",
    "iceoryx": "iceoryx",
    "mqtt": "MQTT (Mosquitto)",
    "nats": "NATS",
    "redis": "Redis",
    "udp": "raw UDP",
    "shm": "shared memory",
}
ORDER = ("cyclonedds", "fastdds", "zeromq", "iceoryx", "mqtt", "nats", "redis", "udp", "shm")
BASELINES = ("udp", "shm")

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


PERSISTENCE_DOCUMENTED = {
    "cyclonedds": "TRANSIENT and PERSISTENT durability are not implemented in 0.10 (no "
    "durability service)",
    "fastdds": "Persistence Service: TRANSIENT durability with the built-in SQLite3 "
    "plugin (present in Debian's 2.9.1 build), not driven by psbench",
    "mqtt": "the broker keeps one retained message per topic and persistent sessions "
    "(QoS 1/2), not driven by psbench",
    "nats": "JetStream (a separate API), not driven by psbench; core NATS keeps nothing",
    "redis": "none for pub/sub (Streams persist, a separate API)",
    "zeromq": "none",
    "iceoryx": "none across restarts",
}


def _name(driver: str) -> str:
    return NAMES.get(driver, driver)


def _rank(driver: str) -> tuple:
    return (ORDER.index(driver) if driver in ORDER else len(ORDER), driver)


def _stand_ins(published: dict) -> dict[str, str]:
    """driver -> the paper's system it stands for (published `systems`)."""
    return {
        v["driver"]: v["name"] for v in (published.get("systems") or {}).values() if v.get("driver")
    }


def _paper_key(driver: str, published: dict) -> str | None:
    for key, value in (published.get("systems") or {}).items():
        if value.get("driver") == driver:
            return key
    return None


def _relays(config: Config) -> int:
    return int(config.params.get("relays") or 0)


def _usable(configs: list[Config]) -> list[Config]:
    return [c for c in configs if c.kind == "pubsub" and c.ok_runs and c.pooled_ns.size]


def _sorted(configs: list[Config]) -> list[Config]:
    return sorted(configs, key=lambda c: (_rank(c.driver), c.size or 0))


# The links ---------------------------------------------------------------------------

# The paper's network: both hops of the echo and the throughput on 1 Gbit/s Ethernet.
PAPER_LINK_BPS = 1_000_000_000


def _link_bps(config: Config) -> int | None:
    """The slowest link rate (bit/s) among a configuration's emulated hosts; None on one
    host, on real machines (their links are not shaped) or when no link is rate-limited."""
    hosts = config.params.get("hosts") or {}
    rates = [
        parse_shape("hosts", link or {}).rate_bps for link in hosts.values() if not is_real(link)
    ]
    return min((r for r in rates if r), default=None)


def _bps_text(bps: float) -> str:
    for unit, factor in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= factor:
            return f"{bps / factor:g} {unit}"
    return f"{bps:g} bit/s"


def _slow(config: Config) -> bool:
    """Whether a configuration crossed a link slower than the paper's."""
    rate = _link_bps(config)
    return rate is not None and rate < PAPER_LINK_BPS


def _slow_reason(configs: list[Config]) -> str | None:
    """Why the paper's figures for its 1 Gbit/s Ethernet cannot be tested on these
    configurations: when every one crossed a slower link; None otherwise."""
    if not configs or not all(map(_slow, configs)):
        return None
    rates = sorted({_link_bps(c) for c in configs})
    return (
        "the paper's figure is for 1 Gbit/s Ethernet; these runs cross a link of "
        + " and ".join(_bps_text(r) for r in rates)
    )


# Latency: Figures 3 and 4 -----------------------------------------------------------


def _latency_rows(configs: list[Config], published: dict) -> list[list]:
    paper = (published.get("latency_min_us") or {}).get("values") or {}
    rows = []
    for config in _sorted([c for c in _usable(configs) if _relays(c) == 1]):
        values = config.pooled_ns
        low, median = float(values.min()), float(np.median(values))
        key = _paper_key(config.driver, published)
        theirs = (paper.get(key) or {}).get(config.size) if key else None
        rows.append(
            [
                _name(config.driver),
                _stand_ins(published).get(config.driver, "-"),
                config.size,
                int(values.size),
                low,
                median,
                low / 2,
                median / 2,
                None if theirs is None else theirs * 1000.0,
                config.counts.get("lost", 0),
            ]
        )
    return rows


def _latency_section(
    configs: list[Config], published: dict, marker: str, where: str = "over loopback (one host)"
) -> Section:
    columns = [
        Column("middleware", "middleware"),
        Column("paper's", "paper_system"),
        Column("size B", "size", "count"),
        Column("n", "n", "count"),
        Column("min µs (2 hops)", "min_ns", "us"),
        Column("median µs (2 hops)", "median_ns", "us"),
        Column("min µs (/2)", "min_half_ns", "us"),
        Column("median µs (/2)", "median_half_ns", "us"),
        Column("paper min µs", "paper_min_ns", "us"),
        Column("lost", "lost", "count"),
    ]
    rows = _latency_rows(configs, published)
    table = Table(
        "ijraset-latency",
        "Figures 3 and 4: minimum and median latency against payload (P1 -> P2 -> P3)",
        columns,
        rows,
        [
            "2 hops: P3's receive time - the start of P1's write (its write time), "
            f"on one monotonic clock, {where}; /2: halved, the paper's (receive_time - "
            "write_time) / 2",
            "paper min: Table 1 (printed for 32 and 8,192 B only); the paper's "
            "Figures 3 and 4 print no values",
            "paper's = the system of the paper this middleware stands for "
            "(experiments/seeds/ijraset.yaml says why)",
            marker,
        ],
    )
    notes = []
    if not rows:
        notes.append("no latency run (relays: 1) succeeded in these results")
    return Section("Latency: minimum and median against payload (Figures 3, 4)", [table], [], notes)


# Throughput: Figure 7 ---------------------------------------------------------------


def _throughput_rows(configs: list[Config]) -> list[list]:
    rows = []
    for config in _sorted([c for c in _usable(configs) if _relays(c) == 0]):
        rate = config.rate or {}
        rows.append(
            [
                _name(config.driver),
                config.size,
                config.params.get("rate"),
                rate.get("achieved_rate_hz"),
                rate.get("samples_per_s"),
                rate.get("mbit_per_s"),
                rate.get("loss_percent"),
            ]
        )
    return rows


def _published_throughput_note(published: dict) -> str:
    """What Table 1's throughput figures would need at the paper's own stated rate."""
    note = "one figure per system, no payload size given"
    setup = published.get("throughput_setup") or {}
    values = [
        v.get("value")
        for v in ((published.get("throughput_mbit_s") or {}).get("values") or {}).values()
        if v.get("value")
    ]
    if not setup or not values:
        return note
    (low, high), largest = setup["rate_per_s"], setup["max_payload_bytes"]
    needs = max(values) * 1e6 / 8 / high
    if needs <= largest:
        return note
    return (
        f"{note}; at {low:,}-{high:,} samples/s, {max(values):g} Mbit/s needs "
        f"{needs:,.0f} B per sample or more, beyond the paper's largest payload of "
        f"{largest:,} B: the figures cannot come from the stated offered rate (see "
        f"the statements)"
    )


def _throughput_note(configs: list[Config]) -> str:
    """What a throughput figure at a fixed offered rate says: over loopback or a fast
    link, the offered load; over a slow link, what the link let through."""
    rates = sorted({r for r in map(_link_bps, configs) if r})
    if not rates:
        return (
            "at a fixed offered rate, Mbit/s grows with the payload (rate x size): "
            "ours shows what 5,500 samples/s of each size is; it is not a bandwidth "
            "limit"
        )
    return (
        f"the runs cross a link of {' and '.join(_bps_text(r) for r in rates)}: where the "
        "offered rate x size is more than the link carries, Mbit/s is what the link let "
        "through of whole messages, not what was offered (see the low-bandwidth section)"
    )


def _throughput_section(configs: list[Config], published: dict, marker: str) -> Section:
    columns = [
        Column("middleware", "middleware"),
        Column("size B", "size", "count"),
        Column("offered /s", "offered_rate_hz", "rate"),
        Column("sent /s", "achieved_rate_hz", "rate"),
        Column("received /s", "samples_per_s", "rate"),
        Column("Mbit/s", "mbit_per_s", "stat"),
        Column("loss %", "loss_percent", "percent_value"),
    ]
    rows = _throughput_rows(configs)
    table = Table(
        "ijraset-throughput",
        "Figure 7: throughput at the offered rate (P1 -> P2)",
        columns,
        rows,
        [
            "received /s and Mbit/s on the sub's clock ((received - 1) / (last - first "
            "arrival)); Mbit/s counts whole messages, psbench's 32-byte header "
            "included; sent /s on the pub's clock",
            marker,
        ],
    )
    paper = (published.get("throughput_mbit_s") or {}).get("values") or {}
    prows = [
        [(published.get("systems") or {}).get(k, {}).get("name", k), v.get("value"), v.get("text")]
        for k, v in paper.items()
    ]
    ptable = Table(
        "ijraset-throughput-published",
        "Table 1: throughput as the paper prints it",
        [
            Column("system", "system"),
            Column("Mbit/s", "mbit_per_s", "stat"),
            Column("as printed", "text"),
        ],
        prows,
        [_published_throughput_note(published), marker],
    )
    notes = [_throughput_note(configs)]
    if not rows:
        notes.append("no throughput run (relays: 0) succeeded in these results")
    return Section("Throughput at the offered rate (Figure 7, Table 1)", [table, ptable], [], notes)


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
    cap = (
        "transient_local (late joiners get recent history); volatile"
        if "transient_local" in durability
        else "volatile only"
        if durability
        else "not described"
    )
    documented = PERSISTENCE_DOCUMENTED.get(driver)
    if documented:
        return f"{cap} through psbench; {documented}", "capability + documented"
    return cap, "capability"


def _measured(driver: str, configs: list[Config]) -> tuple[str, str]:
    lat = sorted(
        (c for c in _usable(configs) if c.driver == driver and _relays(c) == 1),
        key=lambda c: c.size or 0,
    )
    tput = sorted(
        (c for c in _usable(configs) if c.driver == driver and _relays(c) == 0),
        key=lambda c: c.size or 0,
    )
    latency = (
        "; ".join(
            f"{float(c.pooled_ns.min()) / 2000:.0f} µs for {c.size} B"
            for c in (lat[:1] + lat[-1:] if len(lat) > 1 else lat)
        )
        or "not measured here"
    )
    parts = []
    for c in tput[:1] + tput[-1:] if len(tput) > 1 else tput:
        r = c.rate or {}
        if r.get("mbit_per_s") is not None:
            parts.append(
                f"{r['mbit_per_s']:.1f} Mbit/s ({r.get('samples_per_s') or 0:,.0f}/s) at {c.size} B"
            )
    return latency, "; ".join(parts) or "not measured here"


def _criteria_section(configs: list[Config], published: dict, marker: str) -> Section:
    described = _capabilities()
    measured_drivers = {c.driver for c in _usable(configs)}
    drivers = sorted(set(described) | measured_drivers, key=_rank)
    columns = [
        Column("middleware", "middleware"),
        Column("version", "version"),
        Column("paper's", "paper_system"),
        Column("architecture", "architecture"),
        Column("interoperability", "interoperability"),
        Column("persistence", "persistence"),
        Column("routing", "routing"),
        Column("monitoring", "monitoring"),
        Column("licence", "licence"),
        Column("latency (min, /2)", "latency"),
        Column("throughput", "throughput"),
        Column("sources", "sources"),
    ]
    rows = []
    stand_ins = _stand_ins(published)
    for driver in drivers:
        if driver in BASELINES:
            continue
        info = described.get(driver) or {}
        caps = info.get("capabilities") or {}
        doc = documented(driver)
        persistence, p_source = _persistence(driver, caps)
        latency, throughput = _measured(driver, configs)
        transports = ", ".join(caps.get("transports") or []) or "?"
        interop = doc.get("interoperability", "-")
        interop = f"{interop}; transports here: {transports}"
        sources = (
            f"version, transports, persistence: {p_source} (psbench drivers --json); "
            f"latency, throughput: measured; architecture, interoperability, "
            f"routing, monitoring, licence: documented ({doc.get('source', '-')})"
        )
        rows.append(
            [
                _name(driver),
                info.get("version") or "not described",
                stand_ins.get(driver, "-"),
                doc.get("architecture", "-"),
                interop,
                persistence,
                doc.get("routing", "-"),
                doc.get("monitoring", "-"),
                doc.get("licence", "-"),
                latency,
                throughput,
                sources,
            ]
        )
    table = Table(
        "ijraset-criteria",
        "Table 1: the criteria, for the middlewares psbench drives",
        columns,
        rows,
        [
            "latency: minimum of the three-process echo, halved as the paper does, "
            "at the smallest and largest payload measured; throughput at the "
            "offered rate, smallest and largest payload; 'not measured here': the "
            "driver is built but these results have no run of it",
            "low-bandwidth support: the section on low bandwidth when the runs "
            "crossed a slow link (`--network`); OS and language (the paper's other "
            "criteria) are not in psbench's scope and are left out",
        ],
    )
    criteria = (published.get("criteria") or {}).get("values") or {}
    lat = (published.get("latency_min_us") or {}).get("values") or {}
    tput = (published.get("throughput_mbit_s") or {}).get("values") or {}
    systems = published.get("systems") or {}
    pcols = [
        Column("system", "system"),
        Column("stand-in here", "stand_in"),
        Column("architecture", "architecture"),
        Column("interoperability", "interoperability"),
        Column("persistence", "persistence"),
        Column("routing", "routing"),
        Column("monitoring", "monitoring"),
        Column("low bandwidth", "low_bandwidth"),
        Column("licence", "licence"),
        Column("latency", "latency"),
        Column("throughput", "throughput"),
    ]
    prows = []
    for key, value in criteria.items():
        system = systems.get(key) or {}
        published_latency = lat.get(key) or {}
        prows.append(
            [
                system.get("name", key),
                _name(system["driver"])
                if system.get("driver")
                else "none (cannot be installed here)",
                value.get("architecture"),
                value.get("interoperability"),
                value.get("persistence"),
                value.get("routing"),
                value.get("monitoring"),
                value.get("low_bandwidth"),
                value.get("licence"),
                "; ".join(f"{v} us for {s} bytes" for s, v in published_latency.items()),
                (tput.get(key) or {}).get("text"),
            ]
        )
    ptable = Table(
        "ijraset-criteria-published",
        "Table 1 as the paper prints it",
        pcols,
        prows,
        [f"source: {(published.get('criteria') or {}).get('source')}", marker],
    )
    notes = [
        f"{len(rows)} middlewares psbench drives (raw UDP and shared memory, "
        f"psbench's baselines, are no middleware and left out); every cell names "
        f"its source"
    ]
    if not described:
        notes.append(
            "WARNING: no driver could be described (is build/core/psbench-node "
            "built?): capabilities and versions are missing"
        )
    return Section("The criteria table (Table 1)", [table, ptable], [], notes)


# The paper's statements -------------------------------------------------------------

# "around 950 Mbit/s": psbench reads "around" as at least 90% of the figure.
AROUND = 0.9


def _min_range_verdict(mins_us: list[float], low: float, high: float) -> str:
    """The paper's minimum latencies lie within [low, high]: agrees when every one of
    ours does, partly when some do, differs when none does."""
    if not mins_us:
        return "not measured"
    inside = sum(low <= m <= high for m in mins_us)
    if inside == len(mins_us):
        return "agrees"
    return f"partly ({inside} of {len(mins_us)} within)" if inside else "differs"


def _needs(mbit: float, size: int, setup: dict) -> str:
    low, high = setup["rate_per_s"]
    return (
        f"{mbit:g} Mbit/s at {size:,} B needs {mbit * 1e6 / (size * 8):,.0f} "
        f"samples/s; the paper states {low:,}-{high:,} (at most "
        f"{high * size * 8 / 1e6:.0f} Mbit/s)"
    )


def _throughput_verdict(
    mbit: float,
    size: int,
    setup: dict,
    ours: float | None,
    fraction: float = 1.0,
    untestable: str | None = None,
) -> str:
    """A throughput figure of the paper at a payload against ours. Mbit/s is samples/s x
    bytes x 8, so a figure above the paper's own stated rate x payload is inconsistent in
    the paper, whatever we measure; otherwise not testable for the reason given (ours
    crossed a slower link than the paper's), else it agrees when ours reaches fraction of
    it."""
    if mbit > setup["rate_per_s"][1] * size * 8 / 1e6:
        return f"inconsistent in the paper: {_needs(mbit, size, setup)}"
    if untestable:
        return not_testable(untestable)
    if ours is None:
        return "not measured"
    return "agrees" if ours >= fraction * mbit else "differs"


def _offered_rate_verdict(sent: list[float], setup: dict) -> str:
    """Our publishers sent within the paper's stated rate: the same method."""
    low, high = setup["rate_per_s"]
    if not sent:
        return "not measured"
    return "same method" if low <= min(sent) and max(sent) <= high else "differs"


def _mbit(config: Config) -> float:
    return (config.rate or {}).get("mbit_per_s") or 0.0


def _latency_claims(lat: list[Config], claims: dict, where: str | None = None) -> dict:
    """The paper's range of minimum latencies against ours; where: the hosts the runs
    crossed (None: one host, loopback). On a link slower than the paper's, not testable."""
    if not lat:
        return {}
    mins = [float(c.pooled_ns.min()) / 2000 for c in lat]
    low, high = claims["min-range"]["range_us"]
    slow = _slow_reason(lat)
    judged = [float(c.pooled_ns.min()) / 2000 for c in lat if not _slow(c)]
    return {
        "min-range": (
            f"ours (/2): {min(mins):.0f} to {max(mins):.0f} µs",
            not_testable(slow) if slow else _min_range_verdict(judged, low, high),
            f"both hops {where}"
            if where
            else "one host over loopback, no Ethernet hop: no wire time",
        )
    }


def _small_sizes_spread(lat: list[Config], up_to: int) -> str | None:
    """Each stand-in's largest median/min up to the paper's small sizes (its "variation
    between minimum and median"): shown beside a claim that cannot be tested here."""
    spread: dict[str, float] = {}
    for c in lat:
        if (c.size or 0) <= up_to:
            ratio = float(np.median(c.pooled_ns)) / float(c.pooled_ns.min())
            spread[c.driver] = max(spread.get(c.driver, 0.0), ratio)
    return (
        "; ".join(
            f"{_name(d)}: median/min up to {spread[d]:.2f}" for d in sorted(spread, key=_rank)
        )
        or None
    )


def _best_judged(configs: list[Config]) -> float | None:
    """The best Mbit/s of the configurations whose link was not slower than the paper's."""
    return max((_mbit(c) for c in configs if not _slow(c)), default=None)


def _throughput_claims(tput: list[Config], stand_ins: dict, claims: dict, setup: dict) -> dict:
    """The throughput paragraph's figures of OpenSplice and Fast RTPS against their
    stand-ins (judged against the paper itself first, so even without runs), and the
    offered rate against ours."""
    mine = [c for c in tput if c.driver in stand_ins]
    # Shown as measured; judged only where the link was as fast as the paper's.
    slow = _slow_reason(mine)
    found = {}
    best = max(mine, key=_mbit, default=None)
    largest = setup["max_payload_bytes"]
    found["bandwidth"] = (
        f"ours: at most {_mbit(best):.1f} Mbit/s ({_name(best.driver)}, {best.size} B)"
        if best
        else "not measured",
        _throughput_verdict(
            claims["bandwidth"]["mbit_s"], largest, setup, _best_judged(mine), AROUND, slow
        ),
        "the paper's figure at its largest payload against our best",
    )
    size = claims["tput-1024"]["size_bytes"]
    at_size = sorted((c for c in mine if int(c.size or 0) == size), key=lambda c: _rank(c.driver))
    found["tput-1024"] = (
        f"ours at {size:,} B: "
        + ("; ".join(f"{_name(c.driver)} {_mbit(c):.1f} Mbit/s" for c in at_size) or "-"),
        _throughput_verdict(
            claims["tput-1024"]["mbit_s"], size, setup, _best_judged(at_size), untestable=slow
        ),
        "-",
    )
    if not tput:
        return found
    sent = sorted(
        {float(c.rate["achieved_rate_hz"]) for c in tput if (c.rate or {}).get("achieved_rate_hz")}
    )
    offered = sorted({float(c.params["rate"]) for c in tput if c.params.get("rate")})
    verdict = _offered_rate_verdict(sent, setup)
    low, high = setup["rate_per_s"]
    found["offered-rate"] = (
        f"offered {', '.join(f'{o:g}' for o in offered)}/s"
        + (f"; sent {sent[0]:,.0f}-{sent[-1]:,.0f}/s" if sent else ""),
        verdict,
        f"a publisher did not keep {low:,}-{high:,} samples/s" if verdict == "differs" else "-",
    )
    return found


def _untestable(claims: dict, setup: dict) -> dict:
    """The statements about systems that cannot run here: not testable, whatever the
    data; where the paper's own figures also contradict its setup, the why says so."""
    coredx, opendds = claims["tput-coredx"], claims["tput-opendds"]
    return {
        "small-sizes": (
            "-",
            not_testable(
                "OpenSplice's RT Networking cannot run here; its "
                "stand-in Cyclone DDS is a different "
                "implementation"
            ),
            "-",
        ),
        "large-sizes": ("-", not_testable("RTI Connext cannot be installed here"), "-"),
        "tput-connext": ("-", not_testable("RTI Connext cannot be installed here"), "-"),
        "tput-coredx": (
            "-",
            not_testable("CoreDX cannot be installed here"),
            "and " + _needs(coredx["mbit_s"], coredx["size_bytes"], setup),
        ),
        "tput-opendds": (
            "-",
            not_testable("OpenDDS cannot be installed here"),
            f"and {opendds['size_bytes']:,} B is beyond the paper's largest "
            f"stated payload of {setup['max_payload_bytes']:,} B",
        ),
    }


def _claim_rows(configs: list[Config], published: dict, where: str | None = None) -> list[list]:
    # The paper's systems are DDS implementations: their stand-ins only (not ZeroMQ).
    stand_ins = _stand_ins(published)
    claims = {c["id"]: c for c in published.get("claims") or []}
    setup = published["throughput_setup"]
    lat = [c for c in _usable(configs) if _relays(c) == 1 and c.driver in stand_ins]
    tput = [c for c in _usable(configs) if _relays(c) == 0]
    found = _untestable(claims, setup)
    spread = _small_sizes_spread(lat, claims["small-sizes"]["up_to_bytes"])
    if spread:
        found["small-sizes"] = (spread, *found["small-sizes"][1:])
    found.update(_latency_claims(lat, claims, where))
    found.update(_throughput_claims(tput, stand_ins, claims, setup))
    rows = []
    for claim in published.get("claims") or []:
        ours, verdict, why = found.get(claim["id"], ("not measured", "not measured", "-"))
        rows.append(
            [claim["id"], claim["source"], " ".join(claim["text"].split()), ours, verdict, why]
        )
    return rows


def _claims_section(
    configs: list[Config], published: dict, marker: str, where: str | None = None
) -> Section:
    table = Table(
        "ijraset-claims",
        "The paper's statements against our measurements",
        [
            Column("id", "id"),
            Column("source", "source"),
            Column("paper", "text"),
            Column("ours", "ours"),
            Column("verdict", "verdict"),
            Column("why", "why"),
        ],
        _claim_rows(configs, published, where),
        [marker],
    )
    return Section("The paper's statements", [table], [], [])


# Low bandwidth: Section III.E -------------------------------------------------------

# Section III.E, verbatim: the paper's low-bandwidth statement prints no figure, so it
# gets no verdict; the section shows what a slow link left of each figure instead.
LOW_BANDWIDTH_TEXT = (
    'Section III.E: "DDS performance in constrained network environments such as '
    "Tactical radio links and satellite links is very poor. It takes very long discovery "
    "time and gives very low effective throughput because of the chatty discovery "
    "protocol, large size protocol header (56 bytes), non-compressed data and "
    'non-optimized QOS"; RTI DDS and Fast-RTPS offer a limited-bandwidth plugin, '
    "OpenSplice ZLIB compression and static discovery."
)


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
        row += [int(values.size), float(values.min()), float(np.median(values))]
        row.append(lat.counts.get("lost", 0))
    else:
        row += [None, None, None, None]
    rate = (tput.rate or {}) if tput else {}
    mbit = rate.get("mbit_per_s")
    row += [
        None if mbit is None else mbit * 1000,
        None if mbit is None else 100 * mbit * 1e6 / link,
        rate.get("loss_percent"),
        _discovery_ms(tput),
    ]
    return row


def _discovery_ms(config: Config | None) -> float | None:
    found = (config.startup or {}).get("open_to_matched_ns") if config else None
    return None if found is None else found / 1e6


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
    rows = [
        _low_bandwidth_row(pair.get(1), pair.get(0), published)
        for _, pair in sorted(pairs.items(), key=lambda item: item[0])
    ]
    columns = [
        Column("middleware", "middleware"),
        Column("paper's", "paper_system"),
        Column("link", "link"),
        Column("size B", "size", "count"),
        Column("echo n", "echo_n", "count"),
        Column("echo min µs (2 hops)", "echo_min_ns", "us"),
        Column("echo median µs (2 hops)", "echo_median_ns", "us"),
        Column("echo lost", "echo_lost", "count"),
        Column("received kbit/s", "received_kbit_s", "stat"),
        Column("of the link %", "of_link_percent", "percent_value"),
        Column("loss %", "loss_percent", "percent_value"),
        Column("discovery ms", "discovery_ms", "stat"),
    ]
    table = Table(
        "ijraset-low-bandwidth",
        "Low bandwidth (Section III.E): what a slow, lossy link leaves",
        columns,
        rows,
        [
            "link: the slowest link the run crossed (its rate each way; docs/network.md); "
            "echo: the three-process echo (relays 1), both hops across that link; "
            "received kbit/s: whole messages (psbench's 32-byte header included) on the "
            "sub's clock at the offered rate (relays 0), and that as a share of the "
            "link's rate: the rest went to protocol headers, discovery and repair "
            "traffic, or to messages that lost a packet; loss %: of the messages sent",
            "discovery ms: the throughput run's slowest process, from opening the "
            "driver to every peer matched across the link",
            marker,
        ],
    )
    low = {
        (published.get("systems") or {}).get(k, {}).get("name", k): v.get("low_bandwidth")
        for k, v in ((published.get("criteria") or {}).get("values") or {}).items()
    }
    notes = [
        LOW_BANDWIDTH_TEXT,
        "Table 1, low bandwidth support: " + ", ".join(f"{k} {v}" for k, v in low.items()),
        "The paper prints no figure for it, so no verdict: these are ours, each middleware "
        "with its defaults. psbench drives neither eProsima's limited-bandwidth plugin "
        "nor OpenSplice's compression or static discovery, so Table 1's low-bandwidth "
        "support itself is not testable here.",
    ]
    return Section("Low bandwidth (Section III.E, Table 1)", [table], [], notes)


# The sections -----------------------------------------------------------------------


def sections(results: ResultSet, published: dict) -> list[Section]:
    configs = build_configs(results)
    marker = published_marker(published)
    failed = [
        f"run {r.number} ({r.label}) is {r.status}, left out: {r.message or '-'}"
        for r in results.runs
        if r.status != "ok"
    ]
    where = where_measured(results) if on_hosts(results) else None
    low = _low_bandwidth_section(configs, published, marker)
    out = [
        _latency_section(configs, published, marker, where_measured(results)),
        _throughput_section(configs, published, marker),
        *([low] if low else []),
        _criteria_section(configs, published, marker),
        _claims_section(configs, published, marker, where),
    ]
    out[0].notes.extend(failed)
    return out
