"""Is B different from A? A confidence interval for the ratio B/A of a statistic (the
median, or p99) that counts what the samples are worth, and the tests of the seed
papers beside it.

The unit of the interval depends on what was measured:
- a side measured in one run: the statistic's interval from the run's own order
  statistics, widened by the serial dependence of its samples
  (psbench.results.dependence.quantile_interval); its half-width over Student's t is the
  standard error of the statistic (Woodruff), on the log scale;
- a side with two or more repetitions: the run is the unit. The standard error of log
  statistic is the standard deviation of the repetitions' own log statistics over
  sqrt(k), with k - 1 degrees of freedom: it holds the sampling within each run and how
  runs differ, which a resampling of samples cannot see.
The interval of log(B/A) is +- t times the two standard errors together, with the
Welch-Satterthwaite degrees of freedom; the ratio is that of the statistics of all
samples together. A verdict is "significant" when the whole interval lies outside the
noise band 1 +- threshold.

Welch's t-test (t, df, p, as in the seed papers) and the Mann-Whitney U test are given
for comparison with the papers. Both take the samples as independent, which consecutive
latencies of a run are not (docs/methodology.md, section 11), so at 10,000 samples their
p-values are far too small; the verdict does not use them.
"""

import math
from dataclasses import dataclass

import numpy as np

from psbench.results.stats import PERCENTILES, nearest_rank

# Kept for the command lines that give --resamples and --seed: the intervals are
# computed, not resampled, and use neither.
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 1
DEFAULT_CONFIDENCE = 0.95


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
    statistic: str  # "p50", "p99" (a label of psbench.results.stats.PERCENTILES)
    ratio: float  # statistic(B) / statistic(A) on all samples
    low: float | None  # None: no interval (too few samples, or a statistic <= 0)
    high: float | None
    confidence: float
    covers: str = ""  # what the interval's spread comes from (Estimate.covers)


def welch(a: np.ndarray, b: np.ndarray) -> Welch:
    """Welch's unequal-variance t-test of mean(a) - mean(b), two-sided, the samples
    taken as independent (the seed papers' test)."""
    from scipy import stats as sps  # here: importing scipy costs the CLI's start

    result = sps.ttest_ind(a, b, equal_var=False)
    return Welch(float(result.statistic), float(result.df), float(result.pvalue))


def mann_whitney(a: np.ndarray, b: np.ndarray) -> MannWhitney:
    """U of a against b, two-sided, normal approximation with tie correction, the
    samples taken as independent."""
    from scipy import stats as sps

    result = sps.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic")
    return MannWhitney(float(result.statistic), float(result.pvalue))


_QUANTILES = {label: q for label, q, _ in PERCENTILES}
_NEEDED = {label: needed for label, _, needed in PERCENTILES}


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


@dataclass(frozen=True)
class Estimate:
    """A statistic of one side and the uncertainty of its logarithm."""

    statistic: str
    value: float  # the statistic of all samples together
    se_log: float | None  # standard error of log(value); None: none could be had
    df: float  # its degrees of freedom (inf: exact binomial ranks)
    runs: int  # 1: the sampling within one run; k >= 2: between k runs

    @property
    def covers(self) -> str:
        return "within one run" if self.runs == 1 else f"{self.runs} runs"


def estimate(
    samples: Samples, statistic: str = "p50", confidence: float = DEFAULT_CONFIDENCE
) -> Estimate:
    """The statistic of a side (one array, in the order the samples were taken, or one
    array per repetition) and its standard error on the log scale: between the
    repetitions when there are two or more, else from the run's dependence-aware order
    statistics at `confidence` (psbench.results.dependence)."""
    from scipy.stats import norm
    from scipy.stats import t as student

    from psbench.results.dependence import quantile_interval

    reps = _repetitions(samples)
    value = float(_stat(np.concatenate(reps), statistic))
    if len(reps) >= 2:
        per_run = np.array([float(_stat(r, statistic)) for r in reps])
        if min(r.size for r in reps) < _NEEDED[statistic] or per_run.min() <= 0:
            return Estimate(statistic, value, None, len(reps) - 1, len(reps))
        se = float(np.std(np.log(per_run), ddof=1) / math.sqrt(len(reps)))
        return Estimate(statistic, value, se, len(reps) - 1, len(reps))
    run = reps[0]
    found = quantile_interval(_QUANTILES[statistic], run, confidence)
    if found.ranks is None or value <= 0:
        return Estimate(statistic, value, None, found.df, 1)
    low, high = np.partition(run, [found.ranks[0] - 1, found.ranks[1] - 1])[
        [found.ranks[0] - 1, found.ranks[1] - 1]
    ]
    if low <= 0:
        return Estimate(statistic, value, None, found.df, 1)
    tail = (1 - confidence) / 2
    spread = float(student.isf(tail, found.df)) if math.isfinite(found.df) else norm.isf(tail)
    return Estimate(statistic, value, math.log(high / low) / (2 * spread), found.df, 1)


def interval_of(found: Estimate, confidence: float) -> tuple[float, float] | None:
    """value * exp(-+ t se): the interval of one side's statistic on the log scale."""
    from scipy.stats import t as student

    if found.se_log is None:
        return None
    half = float(student.isf((1 - confidence) / 2, found.df)) * found.se_log
    return found.value * math.exp(-half), found.value * math.exp(half)


def covers_text(a: Estimate, b: Estimate) -> str:
    """What the interval of B/A covers, in the table's words."""
    if a.runs == b.runs == 1:
        return "within one run (no repetitions)"
    if a.runs > 1 and b.runs > 1:
        return f"between runs ({a.runs} and {b.runs})"
    return f"A {a.covers}, B {b.covers}"


def ratio_interval(a: Estimate, b: Estimate, confidence: float = DEFAULT_CONFIDENCE) -> RatioCI:
    """Interval of statistic(B) / statistic(A): log ratio +- t sqrt(se_a^2 + se_b^2),
    Welch-Satterthwaite degrees of freedom."""
    from scipy.stats import t as student

    ratio = b.value / a.value if a.value else math.nan
    covers = covers_text(a, b)
    if a.se_log is None or b.se_log is None or not ratio > 0:
        return RatioCI(a.statistic, ratio, None, None, confidence, covers)
    variance = a.se_log**2 + b.se_log**2
    if variance == 0:
        return RatioCI(a.statistic, ratio, ratio, ratio, confidence, covers)
    # Welch-Satterthwaite; a side with exact ranks (df inf) adds nothing to the sum.
    spread = sum(se**4 / df for se, df in ((a.se_log, a.df), (b.se_log, b.df)) if se)
    df = variance**2 / spread if spread > 0 else math.inf
    half = float(student.isf((1 - confidence) / 2, df)) * math.sqrt(variance)
    return RatioCI(
        a.statistic, ratio, ratio * math.exp(-half), ratio * math.exp(half), confidence, covers
    )


def ratio_ci(
    a: Samples,
    b: Samples,
    statistic: str = "p50",
    confidence: float = DEFAULT_CONFIDENCE,
) -> RatioCI:
    """Interval of statistic(b) / statistic(a)."""
    return ratio_interval(
        estimate(a, statistic, confidence), estimate(b, statistic, confidence), confidence
    )


def outside_noise(ci: RatioCI, threshold: float) -> int:
    """+1 if the whole interval is above 1 + threshold, -1 if below 1 - threshold, else 0
    (no interval: 0)."""
    if ci.low is None or ci.high is None:
        return 0
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
    p50_b: float  # (the same definition as the ratio)
    welch: Welch
    mann_whitney: MannWhitney
    median: RatioCI
    verdict: str  # "significant", "within noise" or "no interval"
    direction: str  # "B slower", "B faster" or ""


def compare_samples(
    a: Samples,
    b: Samples,
    median_a: Estimate,
    median_b: Estimate,
    alpha: float = 0.05,
    threshold: float = 0.05,
) -> Comparison:
    """a, b: one array, or one array per repetition; the seed papers' tests take the
    samples together, the interval comes from each side's estimate of its median (made
    at the level 1 - alpha: a verdict at alpha reads a 1 - alpha interval)."""
    median = ratio_interval(median_a, median_b, confidence=1 - alpha)
    all_a, all_b = pooled(a), pooled(b)
    side = outside_noise(median, threshold)
    if median.low is None:
        verdict = "no interval"
    else:
        verdict = "significant" if side else "within noise"
    return Comparison(
        len(all_a),
        len(all_b),
        median_a.value,
        median_b.value,
        welch(all_a, all_b),
        mann_whitney(all_a, all_b),
        median,
        verdict,
        ("B slower" if side > 0 else "B faster") if side else "",
    )
