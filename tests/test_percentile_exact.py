"""Percentiles by nearest rank, exactly: the q-th percentile of n values is the
ceil(q/100 * n)-th smallest. The reference here works in integers only (q in parts per
100,000, read from the percentile's label), independent of psbench's code; every
reported percentile is checked for every n from 1 to 20,000 on random data, and the
statistics every output uses (terminal, report tables, spectrum plot, significance) at
the counts where floating point used to take one rank too many (n a multiple of 1000)."""

import numpy as np
import pytest

from psbench.report.plots import spectrum_of
from psbench.results.describe import describe
from psbench.results.significance import _stat
from psbench.results.stats import PERCENTILES, nearest_rank, summarize_ns

LABELS = [label for label, _, _ in PERCENTILES]  # p50, p90, p99, p99.9, p99.99


def parts_per_100k(label: str) -> int:
    whole, _, fraction = label[1:].partition(".")
    return int(whole) * 1000 + int((fraction + "000")[:3])


def reference(values: np.ndarray, label: str) -> float:
    """sorted[ceil(q n) - 1] with q = parts / 100,000, integer arithmetic only."""
    n = len(values)
    rank = max(1, (parts_per_100k(label) * n + 99_999) // 100_000)
    return sorted(values.tolist())[rank - 1]


def test_the_reference_itself_has_known_answers():
    values = np.arange(1, 3001, dtype=np.int64)  # 1..3000: the k-th smallest is k
    assert reference(values, "p99.9") == 2997  # not 2998
    assert reference(values, "p50") == 1500
    assert reference(np.arange(1, 1001), "p99.9") == 999  # not the maximum
    assert parts_per_100k("p99.99") == 99_990 and parts_per_100k("p50") == 50_000


# Exhaustive (about 8 s of CPU): make test-long; make test keeps the boundary sizes below.
@pytest.mark.long
def test_every_percentile_for_every_n_up_to_20000():
    rng = np.random.default_rng(15)
    pool = rng.integers(0, 10**9, size=20_000)
    for n in range(1, 20_001):
        values = pool[:n]
        for label, q, _ in PERCENTILES:
            rank = max(1, (parts_per_100k(label) * n + 99_999) // 100_000)
            expected = np.partition(values, rank - 1)[rank - 1]
            assert nearest_rank(values, q) == expected, (label, n)


@pytest.mark.parametrize(
    "n", [1, 2, 9, 10, 99, 100, 999, 1000, 1001, 2000, 3000, 9999, 10_000, 10_001, 20_000]
)
def test_terminal_and_report_statistics_use_the_exact_rank(n):
    values = np.random.default_rng(n).integers(0, 10**9, size=n).astype(np.float64)
    terminal, report = summarize_ns(values), describe(values)
    for label, _, needed in PERCENTILES:
        if n >= needed:
            assert terminal[label] == reference(values, label), (label, n)
            assert report[label] == reference(values, label), (label, n)


def test_the_spectrum_plot_agrees_with_the_tables_at_its_nines():
    values = np.random.default_rng(3).integers(0, 10**9, size=3000).astype(np.float64)
    reach, latency = spectrum_of(values)
    at = dict(zip(reach.tolist(), latency.tolist()))
    assert at[1000.0] == reference(values, "p99.9")
    assert at[100.0] == reference(values, "p99")
    assert at[10.0] == reference(values, "p90")


def test_the_significance_statistics_take_the_same_rank_per_row():
    rng = np.random.default_rng(7)
    draws = rng.integers(0, 10**6, size=(4, 1000)).astype(np.float64)
    p99 = _stat(draws, "p99", axis=1)
    assert p99.tolist() == [reference(row, "p99") for row in draws]
