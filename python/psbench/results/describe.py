"""Descriptive statistics of one latency series and the throughput of one run.

Percentiles are nearest-rank (each one a latency that was observed, as in
psbench.results.stats); a percentile the sample count cannot resolve is None. stdev is the
sample standard deviation (n - 1, as R and the seed papers' tables). jitter is the mean
absolute difference between consecutive latencies (the inter-packet delay variation of
RFC 3550, without its smoothing): how much one sample differs from the one before.
"""

import numpy as np

from psbench.results.stats import PERCENTILES, nearest_rank

# Columns of a latency summary, in table order.
STAT_KEYS = ("n", "min", "p50", "mean", "stdev", "p90", "p99", "p99.9", "p99.99", "max", "jitter")
LATENCY_KEYS = STAT_KEYS[1:]  # the ones in ns


def percentile(values: np.ndarray, q: float) -> float:
    """Nearest rank, exact (psbench.results.stats.nearest_rank)."""
    return float(nearest_rank(values, q))


def describe(latency_ns: np.ndarray, streams: list[np.ndarray] | None = None) -> dict:
    """STAT_KEYS of a latency series (ns); None where the series is too short. streams:
    the series as each receiver saw it (several subscribers), so that jitter compares a
    sample with the previous one at the same receiver, not with another receiver's."""
    values = np.asarray(latency_ns, dtype=np.float64)
    n = int(values.size)
    result: dict[str, float | int | None] = dict.fromkeys(STAT_KEYS)
    result["n"] = n
    if n == 0:
        return result
    result["min"] = float(values.min())
    result["max"] = float(values.max())
    result["mean"] = float(values.mean())
    if n >= 2:
        result["stdev"] = float(values.std(ddof=1))
        each = [np.diff(np.asarray(x, dtype=np.float64)) for x in (streams or [values])]
        diffs = np.concatenate(each) if each else np.empty(0)
        result["jitter"] = float(np.abs(diffs).mean()) if diffs.size else None
    for label, q, needed in PERCENTILES:
        if n >= needed:
            result[label] = percentile(values, q)
    return result


def throughput(receive_ns: np.ndarray, size: int | None) -> dict:
    """Samples/s and Mbit/s on the receiver's clock, first to last sample received
    (the whole message, 32-byte header included); None with fewer than 2 samples."""
    receive = np.asarray(receive_ns, dtype=np.float64)
    if receive.size < 2:
        return {"samples_per_s": None, "mbit_per_s": None}
    span = float(receive.max() - receive.min())
    if span <= 0:
        return {"samples_per_s": None, "mbit_per_s": None}
    rate = (receive.size - 1) / (span / 1e9)
    return {"samples_per_s": rate, "mbit_per_s": rate * size * 8 / 1e6 if size else None}
