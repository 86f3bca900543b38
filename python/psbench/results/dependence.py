"""Serial dependence within a run: what n samples taken one after the other are worth.

Consecutive latencies of a run are not independent (a slow phase of the machine lasts
for many round trips), so an interval or a test that counts them as n independent
values claims too much. Everything here rests on one estimate, the long-run variance of
a series (the variance of its mean times n), from its autocovariances with the
flat-top lag window of Politis and Romano (1995) and the bandwidth chosen from the data
by the rule of Politis (2003) as used by Politis and White (2004): M = 2 m, m the first
lag after which K = max(5, sqrt(log10 n)) autocorrelations in a row are all within
c sqrt(log10 n / n) of zero (c = 1 here, Politis' 2 halved: _C below), at most
sqrt(n) + K; the shortfall that centring by an estimated mean leaves in every
autocovariance is undone. The ratio tau = long-run variance /
variance says how many samples count as one: a run of n is worth n / tau independent
ones (its effective size). A flat-top window has no bias of the order 1/M that
Bartlett's has, which is what keeps intervals honest at strong dependence, and the
uncertainty of the estimate itself is carried as degrees of freedom, n / ((4/3) M) (the
variance of a lag-window estimate is (2/n) M times the integral of the window's square,
4/3 for this one).

Used for a percentile (`quantile_interval`: the series is the indicator "at or below the
percentile", whose long-run variance is what the percentile's uncertainty depends on:
Sen 1972, the Bahadur representation for mixing sequences) and for the stationarity
check of a run (`stationarity`: is the level the same in every tenth of the run).
docs/methodology.md section 11 gives the reasons and the coverage measured.
"""

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from psbench.base.units import micros
from psbench.results import binomial, special
from psbench.results.ranks import nearest_rank, nearest_rank_index

# Autocovariances of longer series by FFT, shorter ones lag by lag.
_FFT_FROM = 20_000
# The window's square integrates to 4/3: the variance of the long-run variance estimate
# is about (2/n) (4/3) M times its square, i.e. chi-square with n / ((4/3) M) degrees.
_WINDOW_SQUARE = 4.0 / 3.0
# Autocorrelations within _C sqrt(log10 n / n) of zero count as none. Politis (2003)
# suggests 2; with 2 the window stopped too early on moderate dependence (AR(1) with
# phi 0.5: the median's intervals covered 93.8% at n 2000, the stationarity check
# false-alarmed in 2.7% at level 1%); with 1 they covered 94.9% (methodology.md, s. 11).
_C = 1.0


def _autocovariances(e: np.ndarray, max_lag: int) -> np.ndarray:
    """Autocovariances at lags 0..max_lag of each row of e (already centred), divided by n."""
    n = e.shape[1]
    if n >= _FFT_FROM:
        size = 1 << (2 * n - 1).bit_length()
        spectrum = np.fft.rfft(e, size, axis=1)
        return np.fft.irfft(spectrum * np.conj(spectrum), size, axis=1)[:, : max_lag + 1] / n
    out = np.empty((e.shape[0], max_lag + 1))
    for lag in range(max_lag + 1):
        out[:, lag] = np.einsum("ij,ij->i", e[:, lag:], e[:, : n - lag])
    return out / n


@dataclass(frozen=True)
class LongRun:
    """tau = long-run variance / variance (1 for independent samples), the lag window M
    it was estimated with and the degrees of freedom of that estimate."""

    tau: np.ndarray | float
    window: np.ndarray | int
    df: np.ndarray | float


def long_run(x, centred_over: int | None = None) -> LongRun:
    """Of one series (1-D: floats) or of each row of a 2-D array (arrays): vectorised,
    so that tests can check thousands of synthetic series at once. A series centred by
    the mean of each stretch of `centred_over` samples (default: the whole series, by
    its own mean) has every autocovariance short by about lrv / centred_over; the
    estimate is divided by 1 - W / centred_over to undo that, W the sum of the weights
    over lags -M..M (at most a factor of 2)."""
    x = np.asarray(x, dtype=np.float64)
    rows = np.atleast_2d(x)
    count, n = rows.shape
    if n < 3:
        one = LongRun(np.ones(count), np.ones(count, dtype=int), np.full(count, max(n - 1, 1.0)))
        return _squeeze(one, x.ndim)
    k_n = max(5, math.ceil(math.sqrt(math.log10(n))))
    max_lag = min(math.ceil(math.sqrt(n)) + k_n, n - 1)
    e = rows - rows.mean(axis=1, keepdims=True)
    acv = _autocovariances(e, max_lag)
    variance = acv[:, 0]
    varies = variance > 0
    rho = np.divide(acv, variance[:, None], out=np.zeros_like(acv), where=varies[:, None])
    small = np.abs(rho[:, 1:]) < _C * math.sqrt(math.log10(n) / n)
    if small.shape[1] >= k_n:
        runs = np.cumsum(np.pad(small, ((0, 0), (1, 0))), axis=1)
        quiet = (runs[:, k_n:] - runs[:, :-k_n]) == k_n  # lags m+1 .. m+K all small
        found, first = quiet.any(axis=1), np.argmax(quiet, axis=1)
    else:
        found, first = np.zeros(count, dtype=bool), np.zeros(count, dtype=int)
    window = np.where(found, np.minimum(2 * np.maximum(first, 1), max_lag), max_lag)
    lags = np.arange(1, max_lag + 1)
    where = lags[None, :] / window[:, None]
    weight = np.where(where <= 0.5, 1.0, np.clip(2.0 * (1.0 - where), 0.0, None))
    lrv = variance + 2.0 * np.sum(weight * acv[:, 1:], axis=1)
    spent = (1.0 + 2.0 * weight.sum(axis=1)) / (centred_over or n)
    lrv = lrv / np.maximum(1.0 - spent, 0.5)
    tau = np.where(varies, lrv / np.where(varies, variance, 1.0), 1.0)
    df = n / (_WINDOW_SQUARE * window)
    return _squeeze(LongRun(tau, window, df), x.ndim)


def _squeeze(found: LongRun, ndim: int) -> LongRun:
    if ndim > 1:
        return found
    tau, window, df = (np.asarray(v) for v in (found.tau, found.window, found.df))
    return LongRun(float(tau[0]), int(window[0]), float(df[0]))


def independent_ranks(p: float, n: int, tail: float) -> tuple[int, int] | None:
    """1-based ranks (l, u) with P(X(l) <= x_p <= X(u)) >= 1 - 2 tail for n independent
    samples: B ~ Binomial(n, p) counts the samples below x_p; l the largest rank with
    P(B <= l - 1) <= tail, u the smallest with P(B <= u - 1) >= 1 - tail."""
    if n < 1:
        return None
    k = binomial.ppf(tail, n, p)  # smallest k with F(k) >= tail
    lower = k + 1 if binomial.cdf(k, n, p) <= tail else k
    upper = binomial.ppf(1.0 - tail, n, p) + 1
    if lower < 1 or upper > n:
        return None
    return lower, upper


def _scaled_ranks(p: float, n: int, tau: float, tail: float) -> tuple[int, int] | None:
    """The ranks of independent_ranks for a sample worth n / tau independent values: the
    count below x_p taken as tau times a Binomial(n / tau, p) count (the same mean, tau
    times the variance), its CDF for a real n' by the regularised incomplete beta
    function (found by bisection over the counts), its ranks scaled back by tau."""
    n_eff = n / tau
    top = math.floor(n_eff)
    if top < 1:
        return None

    def cdf(count: int) -> float:  # P(count' <= count) for the real n_eff
        return (
            special.betainc(max(n_eff - count, 1e-12), count + 1, 1 - p) if count < n_eff else 1.0
        )

    def first(at_least) -> int | None:  # the smallest count whose CDF passes
        if not at_least(cdf(top)):
            return None
        low, high = -1, top  # at_least(cdf(high)) holds, not at low
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if at_least(cdf(middle)) else (middle, high)
        return high

    above = first(lambda value: value > tail)  # the first count past the lower tail
    k_high = first(lambda value: value >= 1 - tail)
    if above is None or above == 0 or k_high is None:
        return None
    k_low = above - 1  # the largest count with CDF <= tail
    lower = math.ceil(tau * (k_low + 1))
    upper = math.ceil(tau * k_high) + 1
    if lower < 1 or upper > n:
        return None
    return lower, upper


@dataclass(frozen=True)
class QuantileInterval:
    """ranks: 1-based (l, u), or None when n is too small; tau and df of the indicator
    "at or below the percentile" (tau 1 and df inf where the independent ranks serve)."""

    ranks: tuple[int, int] | None
    tau: float
    df: float


def quantile_interval(q, values, confidence: float) -> QuantileInterval:
    """The order statistics of `values` (in time order) that hold the q-th percentile
    with the given confidence, serial dependence counted: tau of the indicator "at or
    below the sample percentile" scales the binomial count's variance, and Student's t
    with the estimate's degrees of freedom replaces the normal quantile (the binomial's
    tail is taken at the normal tail of that t). With tau <= 1 (nothing to correct, or
    negative dependence, never used to narrow) the ranks are exactly the independent
    ones."""
    values = np.asarray(values)
    n = values.size
    p = float(Fraction(str(q)) / 100)
    tail = (1.0 - confidence) / 2.0
    if n < 3:
        return QuantileInterval(independent_ranks(p, n, tail), 1.0, math.inf)
    index = nearest_rank_index(q, n)
    at = np.partition(values, index)[index]
    found = long_run((values <= at).astype(np.float64))
    tau, df = float(found.tau), float(found.df)  # one series: floats
    if not tau > 1.0:
        return QuantileInterval(independent_ranks(p, n, tail), 1.0, math.inf)
    tail_t = special.normal_sf(special.t_isf(tail, df))
    return QuantileInterval(_scaled_ranks(p, n, tau, tail_t), tau, df)


# The stationarity check: the run in this many consecutive parts, at this level, and
# the smallest change of level worth a flag.
PARTS = 10
DRIFT_ALPHA = 0.001
DRIFT_MIN_CHANGE = 0.05
DRIFT_MIN_SAMPLES = 100


def stationarity(values, alpha: float = DRIFT_ALPHA) -> dict | None:
    """Does the run keep one level? The run (in arrival order) is cut into ten
    consecutive parts; each part's share of samples at or below the run's median is
    compared with the whole run's (a median test), with the long-run variance of that
    indicator estimated within the parts (so that a change of level does not inflate it
    and hide itself): S = sum of m_j (share_j - share)^2 / lrv, S / 9 read as F(9, df).
    `drifts` when p < alpha (the false-alarm rate on a stationary run) and the parts'
    medians differ by more than DRIFT_MIN_CHANGE of the run's median (a change too
    small to matter is not flagged). None below DRIFT_MIN_SAMPLES samples."""

    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n < DRIFT_MIN_SAMPLES:
        return None
    parts = np.array_split(values, PARTS)
    median = float(nearest_rank(values, 50))
    below = (values <= median).astype(np.float64)
    shares = np.array([float(s.mean()) for s in np.array_split(below, PARTS)])
    sizes = np.array([s.size for s in parts], dtype=np.float64)
    centred = below - np.repeat(shares, sizes.astype(int))
    found = long_run(centred, centred_over=n // PARTS)
    lrv = float(found.tau) * float(centred.var())  # one series: floats
    share = float(below.mean())
    statistic = float(np.sum(sizes * (shares - share) ** 2))
    if lrv > 0:
        p = special.f_sf(statistic / lrv / (PARTS - 1), PARTS - 1, float(found.df))
    else:  # every part entirely below or above its median: constant within parts
        p = 0.0 if statistic > 0 else 1.0
    medians = [float(nearest_rank(s, 50)) for s in parts]
    change = (max(medians) - min(medians)) / median if median > 0 else None
    return {
        "parts": PARTS,
        "part_medians_ns": medians,
        "change": change,
        "p": p,
        "alpha": alpha,
        "drifts": bool(p < alpha and change is not None and change > DRIFT_MIN_CHANGE),
    }


def run_drift(streams: list[np.ndarray]) -> dict | None:
    """The stationarity check of a run's series, each receiver's in its own order, at
    DRIFT_ALPHA / receivers each (so that a run of many subscribers is flagged no more
    often): the most significant one that drifts, or None."""
    flagged = [
        found
        for found in (stationarity(s, DRIFT_ALPHA / len(streams)) for s in streams)
        if found and found["drifts"]
    ]
    return min(flagged, key=lambda found: found["p"]) if flagged else None


def drift_text(found: dict) -> str:
    """e.g. "changed level during the run: the medians of its tenths were 36.91, ...,
    85.08 µs (p = 2.1e-49): one p50 describes more than one level"."""
    medians = ", ".join(micros(m) for m in found["part_medians_ns"])
    return (
        f"changed level during the run: the medians of its tenths were {medians} µs "
        f"(stationarity p = {found['p']:.2g}): one p50 describes more than one level"
    )
