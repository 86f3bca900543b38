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

from psbench.results.stats import nearest_rank

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 1
DEFAULT_CONFIDENCE = 0.95
# Larger samples (all repetitions together) are bootstrapped from this many of their
# values, taken evenly from the sorted samples (deterministic, same distribution); the
# interval gets slightly wider.
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
    statistic: str  # "p50" or "p99"
    ratio: float  # statistic(B) / statistic(A) on all samples
    low: float
    high: float
    confidence: float


def welch(a: np.ndarray, b: np.ndarray) -> Welch:
    """Welch's unequal-variance t-test of mean(a) - mean(b), two-sided."""
    from scipy import stats as sps  # here: importing scipy costs the CLI's start

    result = sps.ttest_ind(a, b, equal_var=False)
    return Welch(float(result.statistic), float(result.df), float(result.pvalue))


def mann_whitney(a: np.ndarray, b: np.ndarray) -> MannWhitney:
    """U of a against b, two-sided, normal approximation with tie correction."""
    from scipy import stats as sps

    result = sps.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic")
    return MannWhitney(float(result.statistic), float(result.pvalue))


_QUANTILES = {"p50": 50.0, "p99": 99.0}


def _stat(values: np.ndarray, statistic: str, axis=None):
    return nearest_rank(values, _QUANTILES[statistic], axis=axis)


Samples = np.ndarray | list[np.ndarray]  # one run, or one array per repetition


def _repetitions(samples: Samples) -> list[np.ndarray]:
    if isinstance(samples, np.ndarray):
        return [samples.astype(np.float64, copy=False)]
    return [np.asarray(r, dtype=np.float64) for r in samples if len(r)]


def pooled(samples: Samples) -> np.ndarray:
    """Every repetition's samples together."""
    return np.concatenate(_repetitions(samples))


def _thin(values: np.ndarray, limit: int) -> np.ndarray:
    if values.size <= limit:
        return values
    index = np.linspace(0, values.size - 1, limit).round().astype(np.int64)
    return np.sort(values)[index]


def _resampled_run(
    values: np.ndarray, statistic: str, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    values = _thin(values, BOOTSTRAP_MAX_N)
    out = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        picks = rng.integers(0, values.size, size=(rows, values.size))
        out[start : start + rows] = _stat(values[picks], statistic, axis=1)
    return out


def _resampled_repetitions(
    reps: list[np.ndarray], statistic: str, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Two levels: repetitions drawn with replacement, then samples within each drawn
    repetition; the spread then includes how much runs differ from each other."""
    # Thinned only past BOOTSTRAP_MAX_N samples in all, each repetition to its share of
    # that bound, so that every repetition keeps its weight (an even split would give a
    # short repetition as much say as a long one).
    total = sum(r.size for r in reps)
    if total > BOOTSTRAP_MAX_N:
        reps = [_thin(r, max(round(r.size * BOOTSTRAP_MAX_N / total), 1)) for r in reps]
    out = np.empty(resamples)
    for i in range(resamples):
        chosen = rng.integers(0, len(reps), size=len(reps))
        drawn = [reps[c][rng.integers(0, reps[c].size, size=reps[c].size)] for c in chosen]
        out[i] = _stat(np.concatenate(drawn), statistic)
    return out


def _resampled(
    reps: list[np.ndarray], statistic: str, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    if len(reps) == 1:
        return _resampled_run(reps[0], statistic, resamples, rng)
    return _resampled_repetitions(reps, statistic, resamples, rng)


def seed_for(name: str, seed: int = DEFAULT_SEED) -> np.random.Generator:
    """A generator that depends only on the seed and what is compared, so that a report
    gives the same intervals whatever else it contains."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


@dataclass(frozen=True)
class Bootstrap:
    statistic: str
    value: float  # the statistic of all samples
    draws: np.ndarray  # the statistic of each resample


def bootstrap(
    samples: Samples,
    statistic: str = "p50",
    resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | None = None,
) -> Bootstrap:
    """The bootstrap distribution of a statistic of one side. A side given as one array
    per repetition (two or more) is resampled on two levels, repetitions then samples, so
    that it carries the run-to-run variation and not only the sampling noise of a run."""
    rng = rng or np.random.default_rng(DEFAULT_SEED)
    reps = _repetitions(samples)
    return Bootstrap(
        statistic,
        float(_stat(pooled(reps), statistic)),
        _resampled(reps, statistic, resamples, rng),
    )


def ratio_interval(a: Bootstrap, b: Bootstrap, confidence: float = DEFAULT_CONFIDENCE) -> RatioCI:
    """Percentile interval of statistic(B) / statistic(A), the sides resampled
    independently (so one side's bootstrap serves all its comparisons)."""
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(b.draws / a.draws, [tail, 100 - tail])
    return RatioCI(a.statistic, b.value / a.value, float(low), float(high), confidence)


def ratio_ci(
    a: Samples,
    b: Samples,
    statistic: str = "p50",
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    rng: np.random.Generator | None = None,
) -> RatioCI:
    """Bootstrap interval of statistic(b) / statistic(a), both sides from one generator."""
    rng = rng or np.random.default_rng(DEFAULT_SEED)
    return ratio_interval(
        bootstrap(a, statistic, resamples, rng), bootstrap(b, statistic, resamples, rng), confidence
    )


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
    p50_a: float  # the median of all samples of A's repetitions together
    p50_b: float  # (the same definition as the ratio, its interval and the tests)
    welch: Welch
    mann_whitney: MannWhitney
    median: RatioCI
    verdict: str  # "significant" or "within noise"
    direction: str  # "B slower", "B faster" or ""


def compare_samples(
    a: Samples,
    b: Samples,
    median_a: Bootstrap,
    median_b: Bootstrap,
    alpha: float = 0.05,
    threshold: float = 0.05,
) -> Comparison:
    """a, b: one array, or one array per repetition; the tests take the repetitions'
    samples together, the interval comes from each side's bootstrap of its median."""
    # The interval at the same level as the test: a verdict at alpha reads a 1 - alpha
    # interval.
    median = ratio_interval(median_a, median_b, confidence=1 - alpha)
    all_a, all_b = pooled(a), pooled(b)
    mw = mann_whitney(all_a, all_b)
    side = outside_noise(median, threshold)
    significant = mw.p < alpha and side != 0
    return Comparison(
        len(all_a),
        len(all_b),
        median_a.value,
        median_b.value,
        welch(all_a, all_b),
        mw,
        median,
        "significant" if significant else "within noise",
        ("B slower" if side > 0 else "B faster") if significant else "",
    )
