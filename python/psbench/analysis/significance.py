"""Is B different from A? Welch's t-test (t, df, p, as in the seed papers), the
Mann-Whitney U test, and a seeded bootstrap confidence interval for the ratio B/A of a
statistic (the median, or p99).

Latency distributions are skewed with long tails, so the t-test (about means) is given
for comparison with the papers, and the verdict rests on the two others: a difference is
called significant when Mann-Whitney's p is below alpha and the whole confidence interval
of the ratio of medians lies outside the noise band 1 +- threshold. A difference the
statistics resolve but smaller than the machine's noise is "within noise".
"""

import zlib
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 1
DEFAULT_CONFIDENCE = 0.95
# Larger samples are bootstrapped from this many of their values, taken evenly from the
# sorted samples (deterministic, same distribution); the interval gets slightly wider.
BOOTSTRAP_MAX_N = 20000
_CHUNK = 100


@dataclass(frozen=True)
class Welch:
    t: float
    df: float
    p: float


@dataclass(frozen=True)
class MannWhitney:
    u: float
    p: float


@dataclass(frozen=True)
class RatioCI:
    statistic: str     # "p50" or "p99"
    ratio: float       # statistic(B) / statistic(A) on all samples
    low: float
    high: float
    confidence: float


def welch(a: np.ndarray, b: np.ndarray) -> Welch:
    """Welch's unequal-variance t-test of mean(a) - mean(b), two-sided."""
    result = sps.ttest_ind(a, b, equal_var=False)
    return Welch(float(result.statistic), float(result.df), float(result.pvalue))


def mann_whitney(a: np.ndarray, b: np.ndarray) -> MannWhitney:
    """U of a against b, two-sided, normal approximation with tie correction."""
    result = sps.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic")
    return MannWhitney(float(result.statistic), float(result.pvalue))


_QUANTILES = {"p50": 50.0, "p99": 99.0}


def _stat(values: np.ndarray, statistic: str, axis=None):
    return np.percentile(values, _QUANTILES[statistic], axis=axis, method="inverted_cdf")


def _thin(values: np.ndarray) -> np.ndarray:
    if values.size <= BOOTSTRAP_MAX_N:
        return values
    index = np.linspace(0, values.size - 1, BOOTSTRAP_MAX_N).round().astype(np.int64)
    return np.sort(values)[index]


def _resampled(values: np.ndarray, statistic: str, resamples: int,
               rng: np.random.Generator) -> np.ndarray:
    out = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        picks = rng.integers(0, values.size, size=(rows, values.size))
        out[start:start + rows] = _stat(values[picks], statistic, axis=1)
    return out


def seed_for(name: str, seed: int = DEFAULT_SEED) -> np.random.Generator:
    """A generator that depends only on the seed and what is compared, so that a report
    gives the same intervals whatever else it contains."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def ratio_ci(a: np.ndarray, b: np.ndarray, statistic: str = "p50",
             resamples: int = DEFAULT_RESAMPLES, confidence: float = DEFAULT_CONFIDENCE,
             rng: np.random.Generator | None = None) -> RatioCI:
    """Percentile bootstrap interval of statistic(b) / statistic(a), each sample
    resampled independently."""
    rng = rng or np.random.default_rng(DEFAULT_SEED)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ratio = float(_stat(b, statistic) / _stat(a, statistic))
    ta, tb = _thin(a), _thin(b)
    ratios = _resampled(tb, statistic, resamples, rng) / _resampled(ta, statistic,
                                                                     resamples, rng)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return RatioCI(statistic, ratio, float(low), float(high), confidence)


def outside_noise(ci: RatioCI, threshold: float) -> int:
    """+1 if the whole interval is above 1 + threshold, -1 if below 1 - threshold, else 0."""
    if ci.low > 1 + threshold:
        return 1
    if ci.high < 1 - threshold:
        return -1
    return 0


@dataclass(frozen=True)
class Comparison:
    n_a: int
    n_b: int
    welch: Welch
    mann_whitney: MannWhitney
    median: RatioCI
    verdict: str       # "significant" or "within noise"
    direction: str     # "B slower", "B faster" or ""


def compare_samples(a: np.ndarray, b: np.ndarray, name: str, alpha: float = 0.05,
                    threshold: float = 0.05, resamples: int = DEFAULT_RESAMPLES,
                    seed: int = DEFAULT_SEED) -> Comparison:
    median = ratio_ci(a, b, "p50", resamples, rng=seed_for(name, seed))
    mw = mann_whitney(a, b)
    side = outside_noise(median, threshold)
    significant = mw.p < alpha and side != 0
    return Comparison(len(a), len(b), welch(a, b), mw, median,
                      "significant" if significant else "within noise",
                      ("B slower" if side > 0 else "B faster") if significant else "")
