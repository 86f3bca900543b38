"""Latency statistics from raw samples.

Percentiles use the nearest-rank definition (numpy method "inverted_cdf"): each one is a
latency that was actually observed. A percentile is reported only when there are enough
samples for it to differ from the maximum (p99.9 needs 1000); otherwise it is None.
"""

import numpy as np

from psbench.samples import Samples

# (label, percentile, fewest samples for which it is not just the maximum)
PERCENTILES = (
    ("p50", 50.0, 2),
    ("p90", 90.0, 10),
    ("p99", 99.0, 100),
    ("p99.9", 99.9, 1000),
    ("p99.99", 99.99, 10000),
)


def summarize_ns(values: np.ndarray) -> dict:
    """count, min, percentiles, max, mean, std (sample, n - 1) of latencies in ns."""
    values = np.asarray(values)
    count = int(values.size)
    if count == 0:
        return {"count": 0, "min": None, "max": None, "mean": None, "std": None,
                **{label: None for label, _, _ in PERCENTILES}}
    result = {"count": count, "min": float(values.min())}
    for label, q, needed in PERCENTILES:
        result[label] = (float(np.percentile(values, q, method="inverted_cdf"))
                         if count >= needed else None)
    result["max"] = float(values.max())
    result["mean"] = float(values.mean())
    # Sample standard deviation (n - 1), as psbench report and the seed papers use.
    result["std"] = float(values.std(ddof=1)) if count > 1 else 0.0
    return result


ONE_WAY_FROM = {"intended": "receive time - intended send time",
                "send": "receive time - start of the publisher's write"}


def latency_stats(samples: Samples, latency_from: str = "intended") -> dict:
    """Statistics by series. rtt files also get the one-way estimate RTT/2 (the
    method of the seed benchmarks: it assumes both directions cost the same); one-way
    files say what the latency counts from (the sub's --latency-from). Beside them:
    the late echoes (kept in every statistic; with the series again without them when
    there are any), latencies <= 0 (clock trouble, counted, never dropped) and how late
    the sender's writes began against its schedule."""
    latency = samples.latency_ns
    if samples.kind == "rtt":
        result = {
            "unit": "ns",
            "rtt": summarize_ns(latency),
            "rtt_half": {"method": "one-way estimate = RTT/2",
                         **summarize_ns(latency / 2.0)},
        }
    else:
        result = {"unit": "ns", "one_way": {"method": ONE_WAY_FROM[latency_from],
                                            **summarize_ns(latency)}}
    late = samples.late
    result["late"] = {"count": int(late.sum()),
                      "max_ns": float(latency[late].max()) if late.any() else None}
    if late.any():
        on_time = latency[~late]
        result["without_late"] = (summarize_ns(on_time / 2.0) if samples.kind == "rtt"
                                  else summarize_ns(on_time))
    result["nonpositive"] = int((latency <= 0).sum())
    result["sender_lateness"] = summarize_ns(samples.lateness_ns)
    return result
