"""HdrHistogram percentile-distribution files (.hgrm), the text HdrHistogram's
outputPercentileDistribution writes and its plotters read (HistogramLogAnalyzer,
hdrhistogram.github.io/HdrHistogram/plotFiles.html): one line per percentile level,
`Value Percentile TotalCount 1/(1-Percentile)`, values in µs.

Written from the raw samples, exactly: each value is the nearest-rank latency at that
level (psbench.results.stats), not a bucket's upper edge as a recorded histogram would give, and
the footer's mean and standard deviation are those of the samples. The levels are
HdrHistogram's: from 0, each step half as wide as the distance to 100% allows, five
steps per halving (ticks_per_half_distance = 5), so every added nine gets as many
lines; the last line is 100%.
"""

import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np

from psbench.results.stats import index_at

TICKS_PER_HALF_DISTANCE = 5
UNIT_NS = 1000.0  # values in µs, as HdrHistogram's output scaling ratio 1000 gives


def levels(n: int) -> list[Fraction]:
    """Percentile levels (exact fractions) HdrHistogram iterates, up to the first whose
    rank is the last sample; 1 is added by the writer."""
    found, level = [], Fraction(0)
    while True:
        found.append(level)
        if math.ceil(level * n) >= n:
            return found
        halvings = (1 / (1 - level)).__floor__().bit_length() - 1  # floor(log2(1/(1-p)))
        level += Fraction(1, TICKS_PER_HALF_DISTANCE * 2 ** (halvings + 1))


def distribution_text(latency_ns: np.ndarray) -> str:
    values = np.sort(np.asarray(latency_ns, dtype=np.float64))
    n = values.size
    lines = [f"{'Value':>12} {'Percentile':>14} {'TotalCount':>10} {'1/(1-Percentile)':>14}", ""]
    for level in levels(n) if n else []:
        index = index_at(level, n)  # nearest rank, exact
        lines.append(
            f"{values[index] / UNIT_NS:12.3f} {float(level):14.12f} {index + 1:10d} "
            f"{float(1 / (1 - level)):14.2f}"
        )
    if n:
        lines.append(f"{values[-1] / UNIT_NS:12.3f} {1.0:14.12f} {n:10d}")
        mean, std = values.mean() / UNIT_NS, (values.std(ddof=1) if n > 1 else 0.0) / UNIT_NS
        lines.append(f"#[Mean    = {mean:12.3f}, StdDeviation   = {std:12.3f}]")
        lines.append(f"#[Max     = {values[-1] / UNIT_NS:12.3f}, Total count    = {n:12d}]")
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
