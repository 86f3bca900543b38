"""The binomial distribution's CDF and quantiles in numpy alone: the order-statistic
intervals need them on every run, and importing scipy.stats for them cost the CLI a third
of a second per run.

Probabilities are taken relative to the mode, where the ratio of neighbours
pmf(k+1)/pmf(k) = (n-k)/(k+1) * p/(1-p) is multiplied outwards (a product of logs, so
rounding grows by about one unit per step, never by the size of n as lgamma
differences would), over a window of 12 standard deviations (plus a margin) each side,
outside which lies less than 1e-30 of the mass; normalised by their sum. Checked against
exact sums of fractions and scipy.stats.binom in tests/test_binomial.py."""

import math

import numpy as np

_WIDTH_SD = 12.0
_MARGIN = 30


def _window(n: int, p: float) -> tuple[int, np.ndarray]:
    """(first k, CDF at first k .. last k) of Binomial(n, p) over its window."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be inside (0, 1)")
    mode = min(n, int((n + 1) * p))
    sd = math.sqrt(n * p * (1.0 - p))
    lo = max(0, int(mode - _WIDTH_SD * sd) - _MARGIN)
    hi = min(n, int(mode + _WIDTH_SD * sd) + _MARGIN)
    odds = math.log(p) - math.log1p(-p)
    up = np.arange(mode, hi, dtype=np.float64)  # k -> k+1 above the mode
    down = np.arange(lo + 1, mode + 1, dtype=np.float64)  # k -> k-1 below it
    above = np.cumsum(np.log((n - up) / (up + 1.0)) + odds)
    below = np.cumsum((np.log(down / (n - down + 1.0)) - odds)[::-1])[::-1]
    log_pmf = np.concatenate((below, [0.0], above))
    pmf = np.exp(log_pmf)
    cumulative = np.cumsum(pmf)
    return lo, np.minimum(cumulative / cumulative[-1], 1.0)


def cdf(k: int, n: int, p: float) -> float:
    """P(B <= k) for B ~ Binomial(n, p)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    lo, cumulative = _window(n, p)
    if k < lo:
        return 0.0
    return float(cumulative[min(k - lo, cumulative.size - 1)])


def ppf(q: float, n: int, p: float) -> int:
    """The smallest k with P(B <= k) >= q (scipy.stats.binom.ppf's definition)."""
    lo, cumulative = _window(n, p)
    return min(lo + int(np.searchsorted(cumulative, q, side="left")), n)
