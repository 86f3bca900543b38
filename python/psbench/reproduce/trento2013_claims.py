"""Trento 2013's statements about its Figures 3 to 5 (trento2013.published.yaml, `claims`)
checked on our runs: each kind of statement (a bound on the worst case or the average,
which system scales best, which average is higher, latency flat with size) is a check
here, run on the subscriber and size sweeps psbench.reproduce.trento2013 builds; each is
tested both ways on made-up data. Across hosts, a statement the paper makes of one node
is not testable and says so."""

import re

import numpy as np

from psbench.base.units import micros
from psbench.reproduce.common import published_marker
from psbench.reproduce.layout import Layout, claim_rows, not_testable
from psbench.results.configs import Config
from psbench.results.stats import nearest_rank

LAYOUT = Layout("trento2013")  # names, tables, figures: trento2013.layout.yaml
_name = LAYOUT.name


def _figures(config: Config) -> dict:
    """n, average (mean), worst case (max), stdev, p99 of every sample of the
    configuration (all subscribers and repetitions together), in ns; lost summed."""
    values = config.pooled_ns
    found = {"n": int(values.size), "mean": None, "max": None, "stdev": None, "p99": None,
             "lost": config.counts.get("lost", 0) if config.ok_runs else None}  # fmt: skip
    if values.size:
        found["mean"] = float(values.mean())
        found["max"] = float(values.max())
        found["stdev"] = float(values.std(ddof=1)) if values.size > 1 else None
        found["p99"] = float(nearest_rank(values, 99)) if values.size >= 100 else None
    return found


def _us(ns) -> str:
    return micros(ns, 1)


def _check_below(claim: dict, by_subs: dict, stat: str, only: bool = False) -> tuple[str, str]:
    """Whether each listed system's largest `stat` over the subscriber sweep is below the
    claim's bound; with only, also whether every other system's is not."""
    bound = float(claim["bound_us"]) * 1000
    listed = list(claim.get("systems") or LAYOUT.order)
    drivers = listed + ([d for d in by_subs if d not in listed] if only else [])
    parts, below = [], {}
    for driver in drivers:
        points = by_subs.get(driver)
        if not points:
            parts.append(f"{_name(driver)}: not measured")
            continue
        largest = max(_figures(c)[stat] for _, c in points)
        parts.append(f"{_name(driver)} {_us(largest)}")
        below[driver] = largest < bound
    what = "largest worst case" if stat == "max" else "largest average"
    ours = f"{what} µs over 1-{_most(by_subs)} subscribers: " + ", ".join(parts)
    if not any(d in below for d in listed):
        return ours, "not measured"
    others_below = [d for d, v in below.items() if d not in listed and v]
    missing = [d for d in listed if d not in below]
    if not all(v for d, v in below.items() if d in listed):
        return ours, "differs"
    if others_below:
        return ours, "partly (" + ", ".join(_name(d) for d in others_below) + " below it too)"
    if missing:
        return ours, "partly (" + ", ".join(_name(d) for d in missing) + " not measured)"
    return ours, "agrees"


def _most(by_subs: dict) -> int:
    return max((n for points in by_subs.values() for n, _ in points), default=1)


def _growth(points: list[tuple[int, Config]]) -> tuple[float, float] | None:
    """The average at the most subscribers minus the average at the fewest, per added
    subscriber, and its standard error (from the two means' standard errors, counted per
    message, not per pooled sample: the N subscribers' samples of one message are
    correlated, a stall delays them all)."""
    (lo, first), (hi, last) = points[0], points[-1]
    a, b = first.pooled_ns, last.pooled_ns
    if hi == lo or a.size < 2 or b.size < 2:
        return None
    error = np.sqrt(a.var(ddof=1) / (a.size / lo) + b.var(ddof=1) / (b.size / hi)) / (hi - lo)
    return float((b.mean() - a.mean()) / (hi - lo)), float(error)


def _check_scales_best(claim: dict, by_subs: dict) -> tuple[str, str]:
    """Agrees when the system's average grows least with subscribers; a smaller growth
    of another system within twice their combined standard error is no difference."""
    growth = {d: g for d, g in ((d, _growth(p)) for d, p in by_subs.items()) if g}
    ours = "average growth per added subscriber µs (± standard error): " + ", ".join(
        f"{_name(d)} {g / 1000:+.1f} ± {e / 1000:.1f}" for d, (g, e) in growth.items()
    )
    system = claim["system"]
    if system not in growth or len(growth) < 2:
        return ours if growth else "not measured", "not measured"
    best = min(growth, key=lambda d: growth[d][0])
    if best == system:
        return ours, "agrees"
    (g, e), (g_best, e_best) = growth[system], growth[best]
    if g - g_best <= 2 * np.hypot(e, e_best):
        return ours, f"within noise ({_name(best)} grows least, by less than 2 standard errors)"
    return ours, f"differs ({_name(best)} grows least)"


def _check_higher_average(claim: dict, by_subs: dict) -> tuple[str, str]:
    system, than = claim["system"], claim["than"]
    if system not in by_subs or than not in by_subs:
        return "not measured", "not measured"
    theirs = {n: _figures(c)["mean"] for n, c in by_subs[than]}
    pairs = [(n, _figures(c)["mean"], theirs[n]) for n, c in by_subs[system] if n in theirs]
    ours = f"average µs, {_name(system)} against {_name(than)}: " + ", ".join(
        f"{n} sub {_us(a)} / {_us(b)}" for n, a, b in pairs
    )
    higher = [a > b for _, a, b in pairs]
    if not higher:
        return ours, "not measured"
    if all(higher):
        return ours, "agrees"
    return ours, "differs" if not any(higher) else "partly (not at every count)"


def _check_size_flat(claim: dict, by_size: dict) -> tuple[str, str]:
    factor = float(claim.get("factor") or 2)
    parts, verdicts = [], []
    for driver in claim.get("systems") or LAYOUT.order:
        points = by_size.get(driver)
        if not points:
            parts.append(f"{_name(driver)}: not measured")
            continue
        ratio = _figures(points[-1][1])["mean"] / _figures(points[0][1])["mean"]
        parts.append(f"{_name(driver)} x{ratio:.2f}")
        verdicts.append(ratio <= factor)
    ours = "average at the largest size / at the smallest: " + ", ".join(parts)
    return ours, ("agrees" if all(verdicts) else "differs") if verdicts else "not measured"


def judged_on(claim: dict, measured) -> dict:
    """The claim with each driver it names (`system`, `than`, `systems`) replaced by the
    paper's own system where that was measured (the layout's `real`): ORTE's statements
    are checked on ORTE where it is built, on its stand-in elsewhere."""
    found = dict(claim)
    for key in ("system", "than"):
        if key in found:
            found[key] = LAYOUT.judged(found[key], measured)
    if "systems" in found:
        found["systems"] = [LAYOUT.judged(d, measured) for d in found["systems"]]
    return found


def _checks(by_subs: dict, by_size: dict, across: str | None) -> dict:
    """kind -> check(claim) of the published statements, each on the paper's own system
    where it was measured (judged_on); across hosts, a statement the paper makes of one
    node is not testable (its setup names no two boards)."""
    measured = set(by_subs) | set(by_size)
    # A stand-in whose paper system was measured itself is not one of "the middlewares".
    by_subs = {d: p for d, p in by_subs.items() if LAYOUT.judged(d, measured) == d}
    by_size = {d: p for d, p in by_size.items() if LAYOUT.judged(d, measured) == d}
    checks = {
        "worst_below": lambda c: _check_below(c, by_subs, "max"),
        "average_below": lambda c: _check_below(c, by_subs, "mean"),
        "only_below": lambda c: _check_below(c, by_subs, "max", only=True),
        "scales_best": lambda c: _check_scales_best(c, by_subs),
        "higher_average": lambda c: _check_higher_average(c, by_subs),
        "size_flat": lambda c: _check_size_flat(c, by_size),
    }
    checks = {kind: lambda c, check=check: check(judged_on(c, measured))
              for kind, check in checks.items()}  # fmt: skip
    if not across:
        return checks
    untestable = ("-", not_testable(LAYOUT.text("one_node_only", across=across)))
    return {
        kind: lambda c, check=check: check(c) if _two_boards(c) else untestable
        for kind, check in checks.items()
    }


def _two_boards(claim: dict) -> bool:
    return bool(re.search(r"\btwo\b[^;]*\bboards\b", str(claim.get("setup") or "")))


# The published setups remark on the loopback run ("like ours", "ours is one host"):
# across hosts those remarks are not true, and the table's note says where ours ran.
OURS_REMARK = re.compile(r",? like ours|\s*\(ours is one host\)|; ours is one host")


def _claims_table(by_subs: dict, by_size: dict, published: dict, across: str | None = None):
    """The paper's statements against ours; across: where the runs were, when they
    crossed hosts (None: one host, loopback)."""
    rows, notes = claim_rows(published, _checks(by_subs, by_size, across))
    for row in rows:
        bound = row.get("bound_us")
        row["bound_ns"] = float(bound) * 1000 if bound is not None else None
        if across and row.get("setup"):
            row["setup"] = OURS_REMARK.sub("", row["setup"])
    ours = LAYOUT.text("claims_across_hosts" if across else "claims_one_host", across=across)
    return LAYOUT.table("claims", rows, notes, marker=published_marker(published), ours=ours)
