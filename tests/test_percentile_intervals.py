"""Distribution-free confidence intervals of percentiles (order statistics): the ranks
are checked against an exact reference written here (binomial sums in fractions), a
textbook case, and a coverage count on data whose true percentile is known."""

import json
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from conftest import run_cli
from psbench.results.samples import read_samples
from psbench.results.stats import interval_ranks, percentile_intervals


def exact_ranks(q_percent: Fraction, n: int, confidence: Fraction):
    """(l, u): l the largest rank with P(B <= l-1) <= alpha/2, u the smallest with
    P(B <= u-1) >= 1 - alpha/2, B ~ Binomial(n, q); None if they do not exist."""
    p = q_percent / 100
    tail = (1 - confidence) / 2
    cdf, total = [], Fraction(0)
    for k in range(n + 1):
        total += comb(n, k) * p**k * (1 - p) ** (n - k)
        cdf.append(total)
    lower = max((r for r in range(1, n + 1) if cdf[r - 1] <= tail), default=None)
    upper = min((u for u in range(1, n + 1) if cdf[u - 1] >= 1 - tail), default=None)
    return None if lower is None or upper is None else (lower, upper)


def test_the_median_of_100_is_bounded_by_the_40th_and_61st():
    assert exact_ranks(Fraction(50), 100, Fraction(95, 100)) == (40, 61)  # textbook
    assert interval_ranks(50, 100) == (40, 61)


@pytest.mark.parametrize("q", [Fraction(50), Fraction(90), Fraction(99)])
def test_the_ranks_match_an_exact_binomial_reference(q):
    for n in list(range(1, 60)) + [100, 150, 299, 300, 301]:
        assert interval_ranks(float(q), n) == exact_ranks(q, n, Fraction(95, 100)), (q, n)


def test_n_too_small_where_no_upper_order_statistic_exists():
    # p99.9 at 95%: 1 - 0.999^n >= 0.975 needs n >= ln 0.025 / ln 0.999 = 3,687.03.
    assert interval_ranks(99.9, 3687) is None
    assert interval_ranks(99.9, 3688) == (3680, 3688)
    assert percentile_intervals(np.arange(1000.0))["p99.9"] is None


def test_the_interval_covers_the_true_median_about_as_often_as_it_claims():
    # Uniform integers 0..999 999: the true median is 499 999.5; 400 runs of n = 200.
    rng = np.random.default_rng(4)
    covered = sum(
        lo <= 499_999.5 <= hi
        for lo, hi in (
            percentile_intervals(rng.integers(0, 1_000_000, 200))["p50"] for _ in range(400)
        )
    )
    assert covered >= 0.93 * 400  # at least 95% in expectation; 400 draws leave slack


def test_the_terminal_shows_the_intervals_and_what_is_too_small(driver_libs, results):
    proc = run_cli(["ping", "--driver", "udp", "--count", "500", "--quiet"], results)
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if "intervals of RTT" in ln)
    assert line.strip().startswith("95% intervals of RTT")
    assert "p99.9 n too small" in line and "p50 " in line and "p99 " in line


def test_the_report_gives_each_configurations_intervals_from_its_samples(
    driver_libs, results, tmp_path
):
    # One run of 1000, then a second: the report's intervals are, for the one run, its
    # order statistics at the dependence-aware ranks (the exact reference's when it
    # shows no dependence); for the two, the run-level interval of the pooled
    # percentile; both at the level --alpha asks for.
    from scipy.stats import t

    from psbench.results.dependence import quantile_interval

    def report(folder, alpha, name):
        out = tmp_path / name
        proc = run_cli(
            ["report", str(folder), "-o", str(out), "--alpha", alpha, "--no-plots"], results
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (row,) = json.loads((out / "intervals.json").read_text())["rows"]
        return row, (out / "intervals.md").read_text()

    for _ in range(2):
        proc = run_cli(["ping", "--driver", "udp", "--count", "1000", "--quiet"], results)
        assert proc.returncode == 0, proc.stderr
    folders = sorted(p for p in results.iterdir() if (p / "run.json").exists())
    first = read_samples(folders[0] / "ping.samples").latency_ns / 2.0
    both = [read_samples(f / "ping.samples").latency_ns / 2.0 for f in folders]
    pooled = np.sort(np.concatenate(both))
    for alpha, confidence in (("0.05", Fraction(95, 100)), ("0.01", Fraction(99, 100))):
        row, text = report(folders[0], alpha, f"one-{alpha}")
        assert row["n"] == 1000 and row["runs"] == 1 and row["covers"] == "within one run"
        for label, q in (("p50", Fraction(50)), ("p99", Fraction(99))):
            found = quantile_interval(float(q), first, float(confidence))
            if found.tau == 1.0:
                assert found.ranks == exact_ranks(q, 1000, confidence)
            ordered = np.sort(first)
            expected = (
                (None, None)
                if found.ranks is None
                else (ordered[found.ranks[0] - 1], ordered[found.ranks[1] - 1])
            )
            assert (row[f"{label}_low_ns"], row[f"{label}_high_ns"]) == expected, (alpha, label)
        assert row["p99.9_low_ns"] is None and "n too small" in text
        row, _ = report(results, alpha, f"two-{alpha}")
        assert row["n"] == 2000 and row["runs"] == 2 and row["covers"] == "between 2 runs"
        for label, q in (("p50", 50), ("p99", 99)):
            value = pooled[-(-q * 2000 // 100) - 1]
            logs = np.log([np.sort(r)[-(-q * r.size // 100) - 1] for r in both])
            half = t.isf((1 - float(confidence)) / 2, 1) * np.std(logs, ddof=1) / np.sqrt(2)
            assert row[f"{label}_ns"] == value
            assert row[f"{label}_low_ns"] == pytest.approx(value * np.exp(-half))
            assert row[f"{label}_high_ns"] == pytest.approx(value * np.exp(half))
