"""Vanderbilt 2006's statements about its throughput plots (vanderbilt2006.published.yaml,
`claims`) checked on our runs: multicast above unicast, the gap growing with the
subscribers, throughput levelling off less over multicast; each check is tested both
ways on made-up data. And what they and the tables read: KB/s per subscriber of a
sequence of bytes (the message less psbench's 32-byte header)."""

import numpy as np

from psbench.reproduce.common import published_marker
from psbench.reproduce.layout import Layout, claim_rows
from psbench.results.configs import Config

LAYOUT = Layout("vanderbilt2006")  # names, tables, figures: vanderbilt2006.layout.yaml
HEADER = 32  # psbench's header: a sequence of L bytes is a message of L + 32
_name = LAYOUT.name


def _sequence(size) -> int:
    """The byte sequence a message of `size` carries after psbench's header."""
    return int(size) - HEADER


def _kbps(config: Config) -> dict:
    """Total and per-subscriber KB/s (1000 B/s of sequence bytes) on the subscribers'
    clocks, and loss %."""
    n = int(config.params.get("subscribers") or 1)
    rate = config.rate.get("samples_per_s")
    total = rate * _sequence(config.size) / 1000.0 if rate is not None else None
    per_sub = total / n if total is not None else None
    return {"subscribers": n, "total": total, "per_sub": per_sub,
            "loss": config.rate.get("loss_percent")}  # fmt: skip


def _verdict(verdicts: list[bool], partly: bool = False) -> str:
    if not verdicts:
        return "not measured"
    if all(verdicts):
        return "agrees"
    return "partly" if partly and any(verdicts) else "differs"


def _check_multicast_above(claim: dict, points: dict) -> tuple[str, str]:
    n = int(claim["subscribers"])
    need = float(claim.get("min_fraction") or 0.75)
    parts, verdicts = [], []
    for d in claim.get("systems") or LAYOUT.order:
        sizes = sorted({k[3] for k in points if k[0] == d and k[2] == n})
        pairs = [
            (s, points.get((d, "udp", n, s)), points.get((d, "multicast", n, s))) for s in sizes
        ]
        pairs = [
            (_sequence(s), _kbps(u)["per_sub"], _kbps(m)["per_sub"]) for s, u, m in pairs if u and m
        ]
        # A run whose every subscriber got fewer than 2 messages has no rate.
        pairs = [(s, u, m) for s, u, m in pairs if u is not None and m is not None]
        if not pairs:
            parts.append(f"{_name(d)}: not measured")
            continue
        above = sum(1 for _, u, m in pairs if m > u)
        each = ", ".join(f"{s} B {m:.0f}/{u:.0f}" for s, u, m in pairs)
        parts.append(
            f"{_name(d)} multicast above unicast at {above} of {len(pairs)} sizes ({each})"
        )
        verdicts.append(above / len(pairs) >= need)
    ours = f"1-to-{n}, KB/s per subscriber multicast/unicast: " + "; ".join(parts)
    return ours, _verdict(verdicts)


def _ratio_at(points: dict, driver: str, n: int) -> float | None:
    """The mean over sizes of multicast KB/s / unicast KB/s at n subscribers."""
    ratios = []
    for (d, transport, subs, size), config in points.items():
        if d == driver and transport == "multicast" and subs == n:
            other = points.get((driver, "udp", n, size))
            m, u = _kbps(config)["per_sub"], _kbps(other)["per_sub"] if other else None
            if m and u:
                ratios.append(m / u)
    return float(np.mean(ratios)) if ratios else None


def _check_gap_grows(claim: dict, points: dict) -> tuple[str, str]:
    fewer, more = int(claim["fewer"]), int(claim["more"])
    parts, verdicts = [], []
    for d in claim.get("systems") or LAYOUT.order:
        a, b = _ratio_at(points, d, fewer), _ratio_at(points, d, more)
        if a is None or b is None:
            parts.append(f"{_name(d)}: not measured")
            continue
        parts.append(f"{_name(d)} x{a:.2f} at {fewer}, x{b:.2f} at {more}")
        verdicts.append(b > a)
    return "multicast/unicast KB/s (mean over sizes): " + "; ".join(parts), _verdict(verdicts)


def _levels_off(points: dict, driver: str, transport: str, n: int) -> tuple | None:
    """KB/s per subscriber at the largest sequence over that at a quarter of it: how much
    throughput still grows at the top of the size range (1 = levelled off)."""
    sizes = sorted(k[3] for k in points if k[:3] == (driver, transport, n))
    if len(sizes) < 2:
        return None
    top = sizes[-1]
    lower = [s for s in sizes if _sequence(s) <= _sequence(top) // 4] or sizes[:1]
    a = _kbps(points[(driver, transport, n, lower[-1])])["per_sub"]
    b = _kbps(points[(driver, transport, n, top)])["per_sub"]
    return (_sequence(lower[-1]), _sequence(top), b / a) if a and b else None


def _check_levels_off_less(claim: dict, points: dict) -> tuple[str, str]:
    parts, verdicts = [], []
    for d in claim.get("systems") or LAYOUT.order:
        for n in claim.get("subscribers") or (4,):
            uni, multi = (_levels_off(points, d, t, int(n)) for t in ("udp", "multicast"))
            if uni is None or multi is None:
                parts.append(f"{_name(d)} 1-to-{n}: not measured")
                continue
            parts.append(f"{_name(d)} 1-to-{n} KB/s at {multi[1]} B / at {multi[0]} B: "
                         f"multicast x{multi[2]:.2f}, unicast x{uni[2]:.2f}")  # fmt: skip
            verdicts.append(multi[2] > uni[2])
    return "; ".join(parts), _verdict(verdicts, partly=True)


CHECKS = {"multicast_above": _check_multicast_above, "gap_grows": _check_gap_grows,
          "levels_off_less": _check_levels_off_less}  # fmt: skip


def _claims_table(points: dict, published: dict, where: str = "over loopback (one host)"):
    checks = {
        kind: lambda claim, check=check: check(claim, points) for kind, check in CHECKS.items()
    }
    rows, notes = claim_rows(published, checks)
    return LAYOUT.table("claims", rows, notes, marker=published_marker(published), where=where)
