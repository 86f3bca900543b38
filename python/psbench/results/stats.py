"""Latency statistics from raw samples.

Percentiles use the nearest-rank definition: the q-th percentile of n values is the
ceil(q/100 * n)-th smallest, so each one is a latency that was actually observed. The
rank is computed in integers from q as an exact decimal fraction (99.9 = 999/1000), never
in floating point, where 99.9/100 * 3000 = 2997.0000000000005 would take the 2998th. A
percentile is reported only when there are enough samples for it to differ from the
maximum (p99.9 needs 1000); otherwise it is None.
"""

from fractions import Fraction

import numpy as np

from psbench.results.dependence import stationarity
from psbench.results.ranks import index_at, nearest_rank, nearest_rank_index  # noqa: F401
from psbench.results.samples import Samples

# (label, percentile, fewest samples for which it is not just the maximum)
PERCENTILES = (
    ("p50", 50.0, 2),
    ("p90", 90.0, 10),
    ("p99", 99.0, 100),
    ("p99.9", 99.9, 1000),
    ("p99.99", 99.99, 10000),
)


# Percentiles shown with a confidence interval from order statistics.
INTERVAL_PERCENTILES = ("p50", "p99", "p99.9")
CONFIDENCE = 0.95


def interval_ranks(q, n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (l, u) of the order statistics that hold the q-th percentile with at
    least `confidence` for n *independent* samples, whatever the distribution: with
    B ~ Binomial(n, q/100) the count of samples below it, P(X(l) <= x_q <= X(u)) =
    P(l <= B <= u - 1); l is the largest rank with P(B <= l - 1) <= alpha/2, u the
    smallest with P(B <= u - 1) >= 1 - alpha/2. None when n is too small for such ranks
    to exist (u > n, or l < 1). percentile_intervals uses these where a run shows no
    serial dependence (psbench.results.dependence)."""
    from psbench.results.dependence import independent_ranks

    return independent_ranks(float(Fraction(str(q)) / 100), n, (1.0 - confidence) / 2.0)


def percentile_intervals(values: np.ndarray, confidence: float = CONFIDENCE) -> dict:
    """label -> [low, high] (observed values) for INTERVAL_PERCENTILES, or None where n is
    too small for an interval; `values` in the order they were taken (one run), whose
    serial dependence widens the interval (psbench.results.dependence.quantile_interval);
    "tau" holds each percentile's variance inflation (1: none found)."""
    from psbench.results.dependence import quantile_interval

    values = np.asarray(values)
    found: dict[str, list[float] | None] = {}
    inflation: dict[str, float] = {}
    for label, q, _ in PERCENTILES:
        if label not in INTERVAL_PERCENTILES:
            continue
        interval = quantile_interval(q, values, confidence)
        inflation[label] = interval.tau
        if interval.ranks is None:
            found[label] = None
            continue
        low, high = (r - 1 for r in interval.ranks)
        low, high = np.partition(values, [low, high])[[low, high]]
        found[label] = [float(low), float(high)]
    return {**found, "tau": inflation}


def summarize_ns(values: np.ndarray) -> dict:
    """n, min, percentiles, max, mean, stdev (sample, n - 1) of latencies in ns: the
    names every output uses (report tables, run.json, index.jsonl)."""
    values = np.asarray(values)
    count = int(values.size)
    if count == 0:
        return {
            "n": 0,
            "min": None,
            "max": None,
            "mean": None,
            "stdev": None,
            **{label: None for label, _, _ in PERCENTILES},
        }
    result: dict[str, object] = {"n": count, "min": float(values.min())}
    for label, q, needed in PERCENTILES:
        result[label] = float(nearest_rank(values, q)) if count >= needed else None
    result["max"] = float(values.max())
    result["mean"] = float(values.mean())
    # Sample standard deviation (n - 1), as psbench report and the seed papers use.
    result["stdev"] = float(values.std(ddof=1)) if count > 1 else 0.0
    result["intervals"] = {"confidence": CONFIDENCE, **percentile_intervals(values)}
    return result


ONE_WAY_FROM = {
    "intended": "receive time - intended send time",
    "send": "receive time - start of the publisher's write",
}


def latency_stats(samples: Samples, latency_from: str = "intended") -> dict:
    """Statistics by series. rtt files also get the one-way estimate RTT/2 (the
    method of the seed benchmarks: it assumes both directions cost the same); one-way
    files say what the latency counts from (the sub's --latency-from). Beside them:
    the late echoes (kept in every statistic; with the series again without them when
    there are any), latencies <= 0 (clock trouble, counted, never dropped) and how late
    the sender's writes began against its schedule."""
    latency = samples.latency_ns
    result: dict[str, object]
    if samples.kind == "rtt":
        result = {
            "unit": "ns",
            "rtt": summarize_ns(latency),
            "rtt_half": {"method": "one-way estimate = RTT/2", **summarize_ns(latency / 2.0)},
        }
    else:
        result = {
            "unit": "ns",
            "one_way": {"method": ONE_WAY_FROM[latency_from], **summarize_ns(latency)},
        }
    late = samples.late
    result["late"] = {
        "count": int(late.sum()),
        "max_ns": float(latency[late].max()) if late.any() else None,
    }
    if late.any():
        on_time = latency[~late]
        result["without_late"] = (
            summarize_ns(on_time / 2.0) if samples.kind == "rtt" else summarize_ns(on_time)
        )
    result["nonpositive"] = int((latency <= 0).sum())
    # Does the run keep one level from start to end (psbench.results.dependence)? Of
    # the series the report gives: RTT/2 for a round trip.
    result["stationarity"] = stationarity(latency / 2.0 if samples.kind == "rtt" else latency)
    result["sender_lateness"] = summarize_ns(samples.lateness_ns)
    return result
