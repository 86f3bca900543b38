"""Intervals and verdicts that count serial dependence, checked on synthetic series whose
truth is known: Gaussian AR(1) series (phi 0, 0.5, 0.9; the median is the mean, 0), a
series that switches between two regimes, and repetitions whose runs differ. A 95%
interval must hold the truth in about 95% of the series; the independent order-statistic
interval psbench gave before visibly does not at phi 0.9. The stationarity check must
false-alarm at most at its stated rate on stationary series and flag a run whose level
changes. Every series is drawn from a fixed seed: the counts are the same at every run.

The bands: with R series and a true coverage of 95%, the count covered has a standard
deviation of sqrt(R 0.95 0.05); the bands below are about +-3 of those."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.signal import lfilter
from scipy.stats import norm

from psbench.results.dependence import (
    DRIFT_ALPHA,
    long_run,
    quantile_interval,
    stationarity,
)
from psbench.results.significance import estimate, interval_of, ratio_ci
from psbench.results.stats import interval_ranks, percentile_intervals

N = 2000
SERIES = 400
BAND = (0.92, 0.98)  # 0.95 +- 2.75 standard deviations of a count of 400


def ar1(rng: np.random.Generator, phi: float, n: int, rows: int) -> np.ndarray:
    """Stationary Gaussian AR(1) series of unit variance, one per row."""
    shocks = rng.standard_normal((rows, n)) * math.sqrt(1 - phi**2)
    shocks[:, 0] = rng.standard_normal(rows)  # the stationary start
    return lfilter([1.0], [1.0, -phi], shocks, axis=1)


def covered(series: np.ndarray, truth: float, q=50) -> float:
    """Share of the rows whose 95% interval of the q-th percentile holds the truth."""
    hits = 0
    for row in series:
        interval = quantile_interval(q, row, 0.95)
        if interval.ranks is None:
            continue
        low, high = np.sort(row)[[interval.ranks[0] - 1, interval.ranks[1] - 1]]
        hits += low <= truth <= high
    return hits / len(series)


def old_covered(series: np.ndarray, truth: float) -> float:
    """The same for the independent order-statistic interval (psbench before)."""
    low, high = interval_ranks(50, series.shape[1])
    ordered = np.sort(series, axis=1)
    return float(np.mean((ordered[:, low - 1] <= truth) & (truth <= ordered[:, high - 1])))


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_the_median_interval_covers_95_percent_of_ar1_series(phi):
    series = ar1(np.random.default_rng(int(phi * 10) + 1), phi, N, SERIES)
    coverage = covered(series, 0.0)
    assert BAND[0] <= coverage <= BAND[1], coverage
    if phi == 0.9:
        # The injected fault: the interval that takes the samples as independent holds
        # the true median in well under half of these series.
        assert old_covered(series, 0.0) < 0.6


def test_the_tail_interval_covers_on_dependent_series():
    # p99 of AR(1) phi 0.5: the true value is the normal's 99th percentile.
    series = ar1(np.random.default_rng(21), 0.5, 5000, 300)
    coverage = covered(series, float(norm.ppf(0.99)), q=99)
    assert 0.91 <= coverage <= 0.985, coverage


def regime_switch(rng: np.random.Generator, n: int, rows: int) -> np.ndarray:
    """A two-state Markov chain, 70% of the time at level 0 and 30% at level 6 (stays
    for 33 and 14 samples on average), unit Gaussian noise on each: a machine that falls
    into a slow phase now and then."""
    leave = np.array([0.03, 0.07])  # from state 0, from state 1
    states = np.empty((rows, n), dtype=np.int64)
    states[:, 0] = rng.random(rows) < 0.3
    draws = rng.random((rows, n))
    for t in range(1, n):
        prev = states[:, t - 1]
        states[:, t] = np.where(draws[:, t] < leave[prev], 1 - prev, prev)
    return 6.0 * states + rng.standard_normal((rows, n))


def test_the_median_interval_covers_a_regime_switch():
    # The stationary mixture is 0.7 N(0, 1) + 0.3 N(6, 1): its median solves F(m) = 1/2.
    truth = brentq(lambda m: 0.7 * norm.cdf(m) + 0.3 * norm.cdf(m - 6) - 0.5, -3, 6)
    series = regime_switch(np.random.default_rng(31), N, SERIES)
    assert BAND[0] <= covered(series, truth) <= BAND[1]


def test_the_ratio_of_medians_covers_the_true_ratio():
    # Two independent runs of AR(1) phi 0.9 around 100 and 150 (true ratio 1.5), each
    # side from its own run: the interval of B/A must hold 1.5 about 95% of the time.
    rng = np.random.default_rng(41)
    a = 100 + 10 * ar1(rng, 0.9, N, 300)
    b = 150 + 15 * ar1(rng, 0.9, N, 300)
    hits = [ci.low <= 1.5 <= ci.high for ci in (ratio_ci(x, y) for x, y in zip(a, b))]
    assert 0.91 <= np.mean(hits) <= 0.985, np.mean(hits)


def test_with_repetitions_the_run_is_the_unit():
    # Five runs per configuration, each shifted by its own N(0, 1) offset (the machine
    # differs from run to run) on AR(1) phi 0.5 noise: the true median of the pooled
    # distribution, N(100, 2), is 100. The between-run interval holds it about 95% of
    # the time; the interval of one run's sampling alone would almost never.
    rng = np.random.default_rng(51)
    hits, within = [], []
    for _ in range(SERIES):
        runs = [100 + rng.standard_normal() + row for row in ar1(rng, 0.5, 500, 5)]
        low, high = interval_of(estimate(runs, "p50"), 0.95)
        hits.append(low <= 100 <= high)
        one = percentile_intervals(np.concatenate(runs))["p50"]
        within.append(one[0] <= 100 <= one[1])
    assert BAND[0] <= np.mean(hits) <= BAND[1], np.mean(hits)
    assert np.mean(within) < 0.6


def test_the_ratio_between_runs_covers_and_says_what_it_covers():
    # A and B with five runs each, every run off by its own N(0, 1) (on a level of 100,
    # B 1.5 times A's): the interval of B/A, runs as the unit on both sides and
    # Welch-Satterthwaite degrees of freedom, holds 1.5 about 95% of the time.
    rng = np.random.default_rng(57)

    def runs(scale):
        return [scale * (100 + rng.standard_normal() + row) for row in ar1(rng, 0.5, 300, 5)]

    found = [ratio_ci(runs(1.0), runs(1.5)) for _ in range(SERIES)]
    coverage = np.mean([ci.low <= 1.5 <= ci.high for ci in found])
    assert BAND[0] <= coverage <= BAND[1], coverage
    assert found[0].covers == "between runs (5 and 5)"
    mixed = ratio_ci(runs(1.0)[0], runs(1.5))
    assert mixed.covers == "A within one run, B 5 runs"


def test_independent_series_keep_the_exact_ranks():
    # Where no dependence is found the interval is the exact binomial one, as before.
    values = np.random.default_rng(61).permutation(np.arange(1000.0))
    assert long_run(values).tau < 1.2
    interval = quantile_interval(50, values, 0.95)
    if interval.tau == 1.0:
        assert interval.ranks == interval_ranks(50, 1000)
    assert quantile_interval(50, np.arange(1000.0), 0.95).ranks[1] - 500 > 30  # a trend


def test_long_run_variance_of_ar1_by_rows():
    # The mean of AR(1) phi has long-run variance ratio (1 + phi) / (1 - phi).
    series = ar1(np.random.default_rng(71), 0.5, 20_000, 50)
    assert np.median(long_run(series).tau) == pytest.approx(3.0, rel=0.1)


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_the_stationarity_check_false_alarms_at_most_its_stated_rate(phi):
    # Level 0.1%; on stationary series it must alarm in at most 1% (measured: 0 to 0.4%).
    series = 100 + ar1(np.random.default_rng(81 + int(10 * phi)), phi, N, 600)
    alarms = sum(stationarity(row)["p"] < DRIFT_ALPHA for row in series)
    assert alarms <= 6, alarms


def test_a_run_that_changes_level_is_flagged():
    # The demo's zeromq 64 B: seven tenths at 36-39 µs, then 64, 83 and 85 µs.
    rng = np.random.default_rng(91)
    levels = [37e3] * 7 + [64e3, 83e3, 85e3]
    noise = np.exp(0.05 * ar1(rng, 0.9, 10_000, 1)[0])
    run = np.repeat(levels, 1000) * noise
    found = stationarity(run)
    assert found["drifts"] and found["p"] < 1e-10
    medians = np.array(found["part_medians_ns"])
    assert np.all(np.abs(medians / np.array(levels) - 1) < 0.05), medians
    # A 10% step after 70% of a dependent run is flagged; the same run without it not.
    steady = 50e3 * np.exp(0.05 * ar1(rng, 0.9, N, 1)[0])
    stepped = steady * np.where(np.arange(N) >= 0.7 * N, 1.1, 1.0)
    assert stationarity(stepped)["drifts"] and not stationarity(steady)["drifts"]
    assert stationarity(np.arange(50.0)) is None  # too short to tell


if __name__ == "__main__":
    # The figures docs/methodology.md quotes, from the same seeds as the tests:
    # .venv/bin/python tests/test_dependence.py
    for phi in (0.0, 0.5, 0.9):
        s = ar1(np.random.default_rng(int(phi * 10) + 1), phi, N, SERIES)
        print(
            f"AR(1) phi {phi}: median covered {covered(s, 0.0):.2%}, old {old_covered(s, 0.0):.2%}"
        )
    s = ar1(np.random.default_rng(21), 0.5, 5000, 300)
    print(f"AR(1) phi 0.5, n 5000: p99 covered {covered(s, float(norm.ppf(0.99)), q=99):.2%}")
    truth = brentq(lambda m: 0.7 * norm.cdf(m) + 0.3 * norm.cdf(m - 6) - 0.5, -3, 6)
    s = regime_switch(np.random.default_rng(31), N, SERIES)
    print(f"regime switch: median covered {covered(s, truth):.2%}, old {old_covered(s, truth):.2%}")
    rng = np.random.default_rng(41)
    a, b = 100 + 10 * ar1(rng, 0.9, N, 300), 150 + 15 * ar1(rng, 0.9, N, 300)
    ratio = np.mean([ci.low <= 1.5 <= ci.high for ci in map(ratio_ci, a, b)])
    print(f"ratio of medians, AR(1) phi 0.9: covered {ratio:.2%}")
    rng, hits = np.random.default_rng(51), 0
    for _ in range(SERIES):
        runs = [100 + rng.standard_normal() + row for row in ar1(rng, 0.5, 500, 5)]
        low, high = interval_of(estimate(runs, "p50"), 0.95)
        hits += low <= 100 <= high
    print(f"5 runs with run effects: median covered {hits / SERIES:.2%} between runs")
    rng = np.random.default_rng(57)

    def runs(scale):
        return [scale * (100 + rng.standard_normal() + row) for row in ar1(rng, 0.5, 300, 5)]

    pairs = [ratio_ci(runs(1.0), runs(1.5)) for _ in range(SERIES)]
    print(f"ratio, 5 runs a side: covered {np.mean([c.low <= 1.5 <= c.high for c in pairs]):.2%}")
    for phi in (0.0, 0.5, 0.9):
        rows = 100 + ar1(np.random.default_rng(81 + int(10 * phi)), phi, N, 600)
        alarms = sum(stationarity(row)["p"] < DRIFT_ALPHA for row in rows)
        print(f"stationary AR(1) phi {phi}: {alarms} false alarms of 600")
