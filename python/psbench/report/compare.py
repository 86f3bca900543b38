"""Is the candidate B slower than the reference A? Configuration by configuration (equal
settings = equal Config.key): the ratio B/A of the median and of p99 over all samples of
the ok repetitions, each with a confidence interval that counts what the samples are
worth (psbench.results.significance: a run's serial dependence, or with repetitions the
spread between runs), and a verdict that calls a change only when the whole interval
lies outside the noise band 1 +- threshold (docs/compare.md)."""

from collections import Counter
from dataclasses import dataclass, field

from psbench.report.tables import Column, Table, sides
from psbench.results.configs import Config, build_configs, labels
from psbench.results.describe import percentile
from psbench.results.load import ResultSet
from psbench.results.significance import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    RatioCI,
    mann_whitney,
    outside_noise,
    ratio_ci,
)
from psbench.results.stats import PERCENTILES

DEFAULT_THRESHOLD = 0.05
FAIL_ON = ("p50", "p99", "any")
VERDICTS = {1: "slower", -1: "faster", 0: "no change"}
# Below this many samples on a side, p99 is just the maximum (psbench.results.stats).
P99_MIN_SAMPLES = next(needed for label, _, needed in PERCENTILES if label == "p99")


@dataclass(frozen=True)
class Settings:
    threshold: float = DEFAULT_THRESHOLD
    confidence: float = DEFAULT_CONFIDENCE
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    fail_on: str = "p50"


@dataclass(frozen=True)
class Change:
    """One configuration with ok samples in both sets."""

    label: str
    metric: str
    n_a: int
    n_b: int
    p50_a: float
    p50_b: float
    p50: RatioCI
    p99: RatioCI | None  # None: fewer than P99_MIN_SAMPLES on a side
    covers: str  # what the intervals' spread comes from (significance.covers_text)
    mann_whitney_p: float
    p50_verdict: str
    p99_verdict: str | None
    warnings: tuple[str, ...]  # e.g. repetitions of a side that disagree
    # Config.resources of each side ({} if not measured).
    resources_a: dict = field(default_factory=dict)
    resources_b: dict = field(default_factory=dict)

    def verdict(self, fail_on: str) -> str | None:
        """The verdict that --fail-on looks at; None = p99 asked for but not resolved."""
        if fail_on == "p50":
            return self.p50_verdict
        if fail_on == "p99":
            return self.p99_verdict
        verdicts = (self.p50_verdict, self.p99_verdict)
        # Either statistic slower is a regression, even if the other got faster.
        for verdict in ("slower", "faster"):
            if verdict in verdicts:
                return verdict
        return "no change"


@dataclass(frozen=True)
class Unpaired:
    """A configuration that cannot be compared: in one set only, or without ok samples
    on a side. A status is "" for a set that does not have the configuration."""

    label: str
    metric: str
    status_a: str
    status_b: str


@dataclass(frozen=True)
class Comparison:
    settings: Settings
    changes: list[Change]
    only_a: list[Unpaired]
    only_b: list[Unpaired]
    not_comparable: list[Unpaired]

    def count(self, verdict: str | None) -> int:
        return sum(1 for c in self.changes if c.verdict(self.settings.fail_on) == verdict)

    @property
    def regression(self) -> bool:
        return self.count("slower") > 0


def _union_labels(configs: list[Config]) -> dict[str, str]:
    """Config.key -> a label from the settings that vary across both sets (each set's
    own labels name only what varies within it, so they can differ)."""
    return {config.key: label for config, label in zip(configs, labels(configs))}


def status_text(config: Config) -> str:
    """What the runs of a configuration ended with, e.g. "failed" or "2 ok, 1 timeout"."""
    statuses = Counter(
        "ok without samples" if r.status == "ok" and r.samples is None else r.status
        for r in config.runs
    )
    if len(config.runs) == 1:
        return next(iter(statuses))
    return ", ".join(f"{count} {status}" for status, count in statuses.items())


def _verdict(ci: RatioCI | None, threshold: float) -> str | None:
    """slower, faster or no change; None without an interval (too few samples)."""
    if ci is None or ci.low is None:
        return None
    return VERDICTS[outside_noise(ci, threshold)]


def compare_config(a: Config, b: Config, label: str, settings: Settings) -> Change:
    # With repetitions the run is the unit (significance.estimate).
    samples_a, samples_b = a.pooled_ns, b.pooled_ns
    p50 = ratio_ci(a.rep_samples, b.rep_samples, "p50", settings.confidence)
    p99 = None
    if min(samples_a.size, samples_b.size) >= P99_MIN_SAMPLES:
        p99 = ratio_ci(a.rep_samples, b.rep_samples, "p99", settings.confidence)
    return Change(
        label=label,
        metric=a.metric,
        n_a=int(samples_a.size),
        n_b=int(samples_b.size),
        p50_a=percentile(samples_a, 50),
        p50_b=percentile(samples_b, 50),
        p50=p50,
        p99=p99,
        covers=p50.covers,
        mann_whitney_p=mann_whitney(samples_a, samples_b).p,
        p50_verdict=_verdict(p50, settings.threshold) or "no change",
        p99_verdict=_verdict(p99, settings.threshold),
        warnings=tuple(
            [f"{label}, A: {w}" for w in a.warnings] + [f"{label}, B: {w}" for w in b.warnings]
        ),
        resources_a=a.resources,
        resources_b=b.resources,
    )


def compare(results_a: ResultSet, results_b: ResultSet, settings: Settings) -> Comparison:
    """Every configuration of A against the same one in B, in A's order; then those in
    one set only (A's order, then B's), and those without ok samples on a side."""
    # Repetitions that disagree by more than the threshold get a warning.
    configs_a = {c.key: c for c in build_configs(results_a, settings.threshold)}
    configs_b = {c.key: c for c in build_configs(results_b, settings.threshold)}
    labels = _union_labels(
        list(configs_a.values()) + [c for key, c in configs_b.items() if key not in configs_a]
    )
    changes, not_comparable = [], []
    for key, a in configs_a.items():
        b = configs_b.get(key)
        if b is None:
            continue
        if a.ok_runs and b.ok_runs:
            changes.append(compare_config(a, b, labels[key], settings))
        else:
            not_comparable.append(Unpaired(labels[key], a.metric, status_text(a), status_text(b)))
    only_a = [
        Unpaired(labels[k], c.metric, status_text(c), "")
        for k, c in configs_a.items()
        if k not in configs_b
    ]
    only_b = [
        Unpaired(labels[k], c.metric, "", status_text(c))
        for k, c in configs_b.items()
        if k not in configs_a
    ]
    return Comparison(settings, changes, only_a, only_b, not_comparable)


def percent_text(fraction: float) -> str:
    return f"{fraction * 100:g}%"


def summary_line(comparison: Comparison) -> str:
    """e.g. "1 slower, 0 faster, 3 no change; regression beyond 5% (p50): yes"."""
    settings = comparison.settings
    counts = [f"{comparison.count(v)} {v}" for v in VERDICTS.values()]
    unresolved = comparison.count(None)
    if unresolved:
        counts.append(f"{unresolved} without p99")
    return (
        f"{', '.join(counts)}; regression beyond {percent_text(settings.threshold)} "
        f"({settings.fail_on}): {'yes' if comparison.regression else 'no'}"
    )


def _ratio_cells(ci: RatioCI | None) -> list:
    return [ci.ratio, ci.low, ci.high] if ci else [None, None, None]


def _ratio_columns(stat: str) -> list[Column]:
    """_ratio_cells' columns, and the verdict's beside them."""
    return [
        Column(f"{stat} B/A", f"{stat}_ratio", "ratio"),
        Column("low", f"{stat}_low", "ratio"),
        Column("high", f"{stat}_high", "ratio"),
        Column(f"{stat} verdict", f"{stat}_verdict"),
    ]


def changes_table(comparison: Comparison, name_a: str, name_b: str) -> Table:
    settings = comparison.settings
    columns = [
        Column("configuration", "config"),
        Column("metric"),
        *sides("n {}", "n_{}", "count"),
        *sides("p50 {} µs", "p50_{}_ns", "us"),
        *_ratio_columns("p50"),
        *_ratio_columns("p99"),
        Column("covers"),
        Column("MW p (indep.)", "mann_whitney_p", "p"),
    ]
    rows = [
        [
            c.label,
            c.metric,
            c.n_a,
            c.n_b,
            c.p50_a,
            c.p50_b,
            *_ratio_cells(c.p50),
            c.p50_verdict,
            *_ratio_cells(c.p99),
            c.p99_verdict or "-",
            c.covers,
            c.mann_whitney_p,
        ]
        for c in comparison.changes
    ]
    low, high = 1 - settings.threshold, 1 + settings.threshold
    notes = [
        f"B/A over all samples of the ok repetitions; low-high: "
        f"{percent_text(settings.confidence)} confidence interval: a side measured once "
        f"from its order statistics, widened by the serial dependence of its samples; a "
        f"side with repetitions from how its runs' own statistics differ (the run is the "
        f"unit); covers says which",
        "within one run: the verdict covers the sampling within the runs measured, not "
        "how a second run would differ; repeat the runs (repetitions: 3) to have that",
        f"verdict: slower if the whole interval is above {high:g}, faster if below "
        f"{low:g}, otherwise no change; MW p: Mann-Whitney U, two-sided, which takes "
        f"the samples as independent (they are not: its p is too small), for "
        f"information only",
    ]
    if any(c.p99 is None or c.p99.low is None for c in comparison.changes):
        notes.append(
            f"p99 '-': fewer than {P99_MIN_SAMPLES} samples on a side, or too few for an "
            f"interval of p99 (one run: 368 independent samples at 95%)"
        )
    if any(c.p50.low is None for c in comparison.changes):
        notes.append("p50 without an interval: too few samples; counted as no change")
    notes.extend(w for c in comparison.changes for w in c.warnings)
    return Table("compare", f"B = {name_b} against A = {name_a} (reference)", columns, rows, notes)


def resources_table(comparison: Comparison) -> Table | None:
    """CPU per message and peak memory of each side, where both measured them (one
    figure per repetition: their medians, a ratio without an interval or a verdict)."""
    both = [c for c in comparison.changes if c.resources_a and c.resources_b]
    if not both:
        return None
    columns = [
        Column("configuration", "config"),
        Column("per"),
        *sides("CPU µs {}", "cpu_ns_per_message_{}", "us"),
        Column("CPU B/A", "cpu_ratio", "ratio"),
        *sides("services µs {}", "services_cpu_ns_per_message_{}", "us"),
        *sides("peak RSS MiB {}", "peak_rss_mib_{}", "rate"),
    ]
    rows = []
    for c in both:
        a, b = c.resources_a, c.resources_b
        cpu_a, cpu_b = a["all"]["cpu_ns_per_message"], b["all"]["cpu_ns_per_message"]
        rss = [
            max(filter(None, (r[s]["peak_rss_kb"] for s in ("nodes", "services"))), default=None)
            for r in (a, b)
        ]
        rows.append(
            [
                c.label,
                a["per"],
                cpu_a,
                cpu_b,
                cpu_b / cpu_a if cpu_a and cpu_b is not None else None,
                a["services"]["cpu_ns_per_message"],
                b["services"]["cpu_ns_per_message"],
                *[kb / 1024 if kb else None for kb in rss],
            ]
        )
    notes = [
        "CPU µs: every process of the run (nodes and services) per round trip or "
        "message published over the measurement window, median of the repetitions; "
        "peak RSS: the largest process. No interval or verdict: one figure per "
        "repetition (docs/analysis.md, resources)"
    ]
    return Table("compare_resources", "Resources per message, B against A", columns, rows, notes)


def unpaired_table(name: str, title: str, items: list[Unpaired]) -> Table:
    columns = [
        Column("configuration", "config"),
        Column("metric"),
        *sides("{} runs", "status_{}"),
    ]
    return Table(
        name,
        title,
        columns,
        [[u.label, u.metric, u.status_a or "-", u.status_b or "-"] for u in items],
    )


def tables(comparison: Comparison, name_a: str, name_b: str) -> list[Table]:
    """The comparison and each list of configurations left out, if not empty."""
    found = [changes_table(comparison, name_a, name_b)] if comparison.changes else []
    costs = resources_table(comparison)
    if costs is not None:
        found.append(costs)
    for name, title, items in (
        ("only_a", "only in A (not compared)", comparison.only_a),
        ("only_b", "only in B (not compared)", comparison.only_b),
        (
            "not_comparable",
            "in both, but without ok samples on a side (not compared)",
            comparison.not_comparable,
        ),
    ):
        if items:
            found.append(unpaired_table(name, title, items))
    return found
