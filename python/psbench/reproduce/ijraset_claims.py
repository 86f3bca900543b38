"""The IJRASET paper's statements (Section III.H) against our runs, and what both they and
the study's tables read from the runs: the driver that stands for each of the paper's
systems (its published `systems`), the echo (relays 1) and throughput (relays 0)
configurations, and the links they crossed (the paper's figures are for 1 Gbit/s
Ethernet: on a slower link they are not testable). psbench.reproduce.ijraset builds the
tables and sections."""

import numpy as np

from psbench.hosts.links import is_real, parse_shape
from psbench.reproduce.common import not_testable
from psbench.reproduce.layout import Layout, folded
from psbench.results.configs import Config

LAYOUT = Layout("ijraset")  # names, order, tables: ijraset.layout.yaml
_name, _rank = LAYOUT.name, LAYOUT.rank


def _drivers(system: dict) -> list[str]:
    """The drivers that stand for one of the paper's systems: `driver`, one or a list."""
    found = system.get("driver")
    return [] if not found else [found] if isinstance(found, str) else list(found)


def _stand_ins(published: dict) -> dict[str, str]:
    """driver -> the paper's system it is or stands for (published `systems`), with
    "(stand-in)" after a stand-in's where the paper's own system is a driver too (the
    layout's `real`)."""
    systems = (published.get("systems") or {}).values()
    return {d: v["name"] + (" (stand-in)" if LAYOUT.stands_in(d) else "")
            for v in systems for d in _drivers(v)}  # fmt: skip


def _paper_key(driver: str, published: dict) -> str | None:
    systems = (published.get("systems") or {}).items()
    return next((key for key, value in systems if driver in _drivers(value)), None)


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
    """The statements about systems that cannot run here (the layout's `untestable`): not
    testable, whatever the data; where the paper's own figures also contradict its
    setup, the why says so."""
    coredx, opendds = claims["tput-coredx"], claims["tput-opendds"]
    why = {
        "tput-coredx": "and " + _needs(coredx["mbit_s"], coredx["size_bytes"], setup),
        "tput-opendds": f"and {opendds['size_bytes']:,} B is beyond the paper's largest "
        f"stated payload of {setup['max_payload_bytes']:,} B",
    }
    reasons = LAYOUT.data["untestable"]
    return {
        claim: ("-", not_testable(reason), why.get(claim, "-")) for claim, reason in reasons.items()
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
        rows.append([claim["id"], claim["source"], folded(claim["text"]), ours, verdict, why])
    return rows
