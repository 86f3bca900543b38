"""psbench's binomial CDF and quantiles (results/binomial.py, used for the order-statistic
intervals of every run) against two independent references: exact sums of fractions for
small n, and scipy.stats.binom for large n, at the tails the 95% intervals use."""

from fractions import Fraction
from math import comb

import pytest
from scipy.stats import binom

from psbench.results import binomial

P = (0.5, 0.9, 0.99, 0.999, 0.9999, 0.01)


def exact_cdf(k: int, n: int, p: Fraction) -> Fraction:
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


@pytest.mark.parametrize("p", [Fraction(1, 2), Fraction(9, 10), Fraction(99, 100)])
def test_small_n_equals_exact_fractions(p):
    # To 12 digits, or within the 1e-30 of mass left outside the window.
    for n in (1, 2, 3, 7, 20, 61, 100):
        for k in range(n + 1):
            assert binomial.cdf(k, n, float(p)) == pytest.approx(float(exact_cdf(k, n, p)),
                                                                 rel=1e-12, abs=1e-30)  # fmt: skip


@pytest.mark.parametrize("n", [1, 2, 5, 99, 100, 101, 1000, 3687, 3688, 10_000, 10**6, 10**7])
def test_quantiles_at_the_interval_tails_equal_scipy(n):
    for p in P:
        for q in (0.025, 0.975):  # (at q = 0.5, n odd, p = 0.5 the CDF ties exactly)
            assert binomial.ppf(q, n, p) == int(binom.ppf(q, n, p)), (n, p, q)


def test_the_cdf_at_a_far_tail_and_out_of_range():
    assert binomial.cdf(-1, 10, 0.5) == 0.0 and binomial.cdf(10, 10, 0.5) == 1.0
    assert binomial.cdf(0, 10**7, 0.5) == 0.0  # below 1e-30 of the mass: outside the window
    with pytest.raises(ValueError):
        binomial.cdf(1, 10, 1.0)
