"""psbench's special functions (results/special.py: what every run's intervals and drift
check need, without importing scipy) against scipy.special as the reference."""

import random

import pytest
import scipy.special as reference

from psbench.results import special


def test_the_incomplete_beta_function_over_wide_parameters():
    rng = random.Random(3)
    for _ in range(2000):
        a, b, x = 10 ** rng.uniform(-1, 6.5), 10 ** rng.uniform(-1, 6.5), rng.random()
        expected = reference.betainc(a, b, x)
        if 1e-280 < expected < 1 - 1e-12:
            assert special.betainc(a, b, x) == pytest.approx(expected, rel=1e-8), (a, b, x)
    assert special.betainc(2, 3, 0.0) == 0.0 and special.betainc(2, 3, 1.0) == 1.0


@pytest.mark.parametrize("df", [1.5, 3, 10, 57.3, 300, 5000, 1e5])
def test_t_quantiles_and_tails(df):
    for p in (0.025, 0.0125, 0.001, 0.3, 0.7):
        x = special.t_isf(p, df)
        assert x == pytest.approx(reference.stdtrit(df, 1 - p), rel=1e-9)
        assert special.t_sf(x, df) == pytest.approx(p, rel=1e-9)


def test_normal_and_f_tails():
    for x in (-3.0, -0.5, 0.0, 1.96, 6.0):
        assert special.normal_sf(x) == pytest.approx(reference.ndtr(-x), rel=1e-12)
    for d2 in (5.5, 30, 300, 5000):
        for x in (0.0, 0.2, 1, 3, 10):
            assert special.f_sf(x, 9, d2) == pytest.approx(reference.fdtrc(9, d2, x), rel=1e-10)
