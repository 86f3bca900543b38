"""HdrHistogram percentile-distribution files (.hgrm): what HdrHistogram's
outputPercentileDistribution prints for the same samples, line for line, and its
plotters read (HistogramLogAnalyzer, hdrhistogram.github.io/HdrHistogram/plotFiles.html).

The samples are recorded as HdrHistogram records them, into a histogram with lowest
discernible value 1, highest trackable value HIGHEST (one hour of ns) and 3 significant
digits: integer ns (one-way), or the round trip in integer ns printed halved (RTT/2:
output scaling 2000 instead of 1000, so that a half nanosecond is never rounded away).
Then, as HdrHistogram (Java, AbstractHistogram and PercentileIterator):
- the levels start at 0 and step by 100 / (5 * 2^(floor(log2(100 / (100 - level))) + 1))
  percent: five per halving of the distance to 100%, then a last line at 100%;
- a level's line is the first recorded bucket whose cumulative count reaches it:
  Value is that bucket's highest equivalent value (a bucket edge, not a sample),
  TotalCount the count of values recorded at or below it;
- the footer's mean and standard deviation are those of the buckets' middle values
  (HdrHistogram's medianEquivalentValue), the standard deviation a population one (over
  n), and Max the highest equivalent value of the largest sample; then the buckets.
Printed numbers are decimal and rounded halves up, as Java's Formatter does.
tests/test_hgrm.py checks every line against HdrHistogram's Python implementation.
"""

import math
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np

TICKS_PER_HALF_DISTANCE = 5
SIGNIFICANT_DIGITS = 3
HIGHEST = 3_600_000_000_000  # the highest trackable value: one hour in ns
# 2 * 10^3 values at unit resolution need 2^11 sub-buckets; half of them per bucket.
_SUB_BUCKET_HALF_MAGNITUDE = math.ceil(math.log2(2 * 10**SIGNIFICANT_DIGITS)) - 1
SUB_BUCKETS = 1 << (_SUB_BUCKET_HALF_MAGNITUDE + 1)
_HALF = SUB_BUCKETS // 2


def bucket_count(highest: int = HIGHEST) -> int:
    """HdrHistogram's buckets for values up to `highest` (lowest discernible 1)."""
    untrackable, buckets = SUB_BUCKETS, 1
    while untrackable <= highest:
        untrackable <<= 1
        buckets += 1
    return buckets


def _bucket_of(values: np.ndarray) -> np.ndarray:
    """Bucket index of each non-negative integer value (int64, below 2^53)."""
    _, exponent = np.frexp((values | (SUB_BUCKETS - 1)).astype(np.float64))
    return exponent.astype(np.int64) - (_SUB_BUCKET_HALF_MAGNITUDE + 1)


def counts_index(values: np.ndarray) -> np.ndarray:
    """HdrHistogram's counts-array index of each value."""
    bucket = _bucket_of(values)
    sub = values >> bucket
    return ((bucket + 1) << _SUB_BUCKET_HALF_MAGNITUDE) + (sub - _HALF)


def _lowest_of_index(index: int) -> int:
    bucket, sub = (index >> _SUB_BUCKET_HALF_MAGNITUDE) - 1, (index & (_HALF - 1)) + _HALF
    if bucket < 0:
        sub -= _HALF
        bucket = 0
    return sub << bucket


def _range_of(value: int) -> tuple[int, int]:
    """(lowest equivalent value, size of the equivalent range) of a value."""
    bucket = int(_bucket_of(np.array([value], dtype=np.int64))[0])
    return (value >> bucket) << bucket, 1 << bucket


def recorded(latency_ns: np.ndarray) -> tuple[np.ndarray, int]:
    """The integers HdrHistogram records and the output scaling that prints them in
    µs: ns and 1000 when every latency is a whole ns, else twice them and 2000 (RTT/2
    of an odd round trip), else ns rounded. Below 0 is recorded as 0 and above
    HIGHEST as HIGHEST (HdrHistogram refuses both)."""
    values = np.asarray(latency_ns, dtype=np.float64)
    scaling = 1000
    if not np.all(values == np.round(values)):
        if np.all(2 * values == np.round(2 * values)):
            values, scaling = 2 * values, 2000
        values = np.round(values)
    return np.clip(values, 0, HIGHEST).astype(np.int64), scaling


def _fixed(value, scaling: int = 1, places: int = SIGNIFICANT_DIGITS) -> str:
    """Java's %.Nf: half up, from the exact quotient of an integer, or from the
    shortest decimal of a double (what Java's Formatter starts from)."""
    exact = Decimal(value) if isinstance(value, int) else Decimal(repr(float(value)))
    return str((exact / scaling).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def _next_level(level: float) -> float:
    """Java's PercentileIterator.incrementIterationLevel, in the same float steps."""
    halvings = int(math.log(100.0 / (100.0 - level)) / math.log(2))
    ticks = TICKS_PER_HALF_DISTANCE * int(math.pow(2, halvings + 1))
    return level + 100.0 / ticks


def distribution_text(latency_ns: np.ndarray) -> str:
    values, scaling = recorded(latency_ns)
    indexes, counts = np.unique(counts_index(values), return_counts=True)
    total = int(counts.sum())
    lines = [f"{'Value':>12} {'Percentile':>14} {'TotalCount':>10} {'1/(1-Percentile)':>14}", ""]
    cumulative = np.cumsum(counts)
    tops = [sum(_range_of(_lowest_of_index(int(i)))) - 1 for i in indexes]
    level = 0.0
    for top, reached in zip(tops, cumulative.tolist()):
        last = reached == total
        while (100.0 * reached) / total >= level:
            lines.append(
                f"{_fixed(top, scaling):>12} {level / 100.0:2.12f} {reached:10d} "
                f"{1 / (1.0 - level / 100.0):14.2f}"
            )
            level = _next_level(level)
            if last:  # HdrHistogram's iteration has then run out: one more line, 100%
                lines.append(f"{_fixed(top, scaling):>12} {1.0:2.12f} {reached:10d}")
                break
    middles = [_range_of(t)[0] + (_range_of(t)[1] >> 1) for t in tops]
    mean = sum(c * m for c, m in zip(counts.tolist(), middles)) / total if total else 0.0
    deviation = 0.0
    for c, m in zip(counts.tolist(), middles):
        deviation += ((m * 1.0) - mean) ** 2 * c
    std = math.sqrt(deviation / total) if total else 0.0
    largest = int(values.max()) if total else 0
    top = sum(_range_of(largest)) - 1 if largest else 0
    lines.append(
        f"#[Mean    = {_fixed(mean / scaling):>12}, StdDeviation   = {_fixed(std / scaling):>12}]"
    )
    lines.append(f"#[Max     = {_fixed(top, scaling):>12}, Total count    = {total:12d}]")
    lines.append(f"#[Buckets = {bucket_count():12d}, SubBuckets     = {SUB_BUCKETS:12d}]")
    return "\n".join(lines) + "\n"


def file_name(label: str) -> str:
    """A configuration or run label as a file name: `udp 64 B loan` -> `udp-64B-loan`."""
    name = re.sub(r"[^A-Za-z0-9.=_-]+", "-", label.replace(" B", "B")).strip("-")
    return name or "unnamed"


def write_all(configs, folder: Path) -> list[Path]:
    """One file per configuration (all ok repetitions together) and one per run, in
    folder: `<configuration>.hgrm` and `<configuration>.run-<k>.hgrm`."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for config in configs:
        if not config.ok_runs:
            continue
        stem = file_name(config.label)
        path = folder / f"{stem}.hgrm"
        path.write_text(distribution_text(config.pooled_ns))
        written.append(path)
        for k, run in enumerate(config.ok_runs, start=1):
            run_path = folder / f"{stem}.run-{k}.hgrm"
            run_path.write_text(distribution_text(run.latency_ns))
            written.append(run_path)
    return written
