"""The trend of each configuration over the history: its points against date, version or
machine, and between each point and the next a verdict per metric (p50, p99,
throughput, CPU per message) from psbench's significance tests
(psbench.results.significance), against a noise band learnt from repetitions of the
unchanged configuration (docs/history.md, "How a change is called").

Walking the points in order, series by series and metric by metric: the points since
the last change called real (the last --window of them) are repetitions of an unchanged
configuration, the reference. Each point is tested against its reference (their runs pooled), and the
noise is learnt from the same runs: the widest relative spread among them, (max - min) /
median of the runs' statistic, is how far two measurements of the same thing have
differed here. A change is called real when the whole confidence interval of the ratio
lies beyond that spread, a factor of 1 + spread either way (never less than --threshold). The
later point's own repetitions count in the spread too; but the reference must hold at
least --min-runs runs, or the change is not judged ("noise unknown"): a spread seen
within one set says nothing of how much two sets differ."""

import hashlib
import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from psbench.history.database import Database
from psbench.history.ingest import Refused, load_set, sha256_of
from psbench.results.configs import Config, build_configs, labels
from psbench.results.load import natural_key
from psbench.results.significance import Estimate, RatioCI, estimate, ratio_interval
from psbench.results.stats import PERCENTILES, nearest_rank

AXES = ("date", "version", "machine")
DEFAULT_THRESHOLD = 0.05
DEFAULT_MIN_RUNS = 3
DEFAULT_WINDOW = 5  # points in a reference at the most
# Below this many samples on a side, p99 is just the maximum (psbench.results.stats).
P99_MIN_SAMPLES = next(needed for label, _, needed in PERCENTILES if label == "p99")


@dataclass(frozen=True)
class Metric:
    name: str  # p50, p99, throughput, cpu
    title: str
    unit: str
    run_key: str  # column of the runs table
    higher_is_worse: bool
    scale: float  # stored value / scale = shown value


METRICS = {
    "p50": Metric("p50", "p50 latency", "µs", "p50", True, 1000.0),
    "p99": Metric("p99", "p99 latency", "µs", "p99", True, 1000.0),
    "throughput": Metric("throughput", "throughput", "samples/s", "samples_per_s", False, 1.0),
    "cpu": Metric("cpu", "CPU per message", "µs", "cpu_ns_per_message", True, 1000.0),
}
FAIL_ON = (*METRICS, "any")
VERDICTS = ("regression", "improvement", "no change", "undecided", "noise unknown", "not compared")


@dataclass(frozen=True)
class Settings:
    axis: str = "date"
    threshold: float = DEFAULT_THRESHOLD  # the least noise band, learnt or not
    alpha: float = 0.05
    min_runs: int = DEFAULT_MIN_RUNS
    window: int = DEFAULT_WINDOW


@dataclass
class Point:
    """One place on the x axis of a series: a set (date), or every set of one version
    or machine; its configurations (one per set) and their ok runs."""

    x: str  # an ISO date and time (UTC), a version or a machine
    configs: list  # database rows (configs joined with their set)
    runs: list  # database rows of the ok runs
    samples: list[np.ndarray] | None = None  # one array per ok run; None: not available
    why_no_samples: str | None = None

    @property
    def shown(self) -> str:
        """x for people: a date to the second."""
        return self.x[:19] if _is_date(self.x) else self.x

    def values(self, metric: Metric) -> list[float]:
        return [float(r[metric.run_key]) for r in self.runs if r[metric.run_key] is not None]

    def value(self, metric: Metric) -> float | None:
        """The median over the point's runs (as a report aggregates repetitions)."""
        found = self.values(metric)
        return float(np.median(found)) if found else None

    @property
    def versions(self) -> list[str]:
        return sorted({c["driver_version"] or "unknown" for c in self.configs}, key=natural_key)

    @property
    def set_ids(self) -> list[int]:
        return [c["set_id"] for c in self.configs]


@dataclass
class Change:
    """The verdict on one metric at a point (after), against its reference: the points
    before it since the last change called real (reference; before is the last of
    them, the point just before)."""

    metric: str
    before: int  # point indexes
    after: int
    verdict: str  # VERDICTS
    ratio: float | None = None  # after / reference, of the medians
    low: float | None = None
    high: float | None = None
    threshold: float | None = None  # the noise band it was read against
    learnt_from: int = 0  # runs of the unchanged configuration the noise came from
    test: str = ""  # "samples" or "run statistics"
    reference: list[str] = field(default_factory=list)  # x of the points tested against
    note: str = ""

    def undecided(self, why: str) -> None:
        """Not called either way, and why (after what the note said already)."""
        self.verdict = "undecided"
        self.note = f"{self.note}; {why}" if self.note else why


@dataclass
class Series:
    key: str
    settings: dict
    machine: str | None
    points: list[Point]
    label: str = ""
    changes: dict[str, list[Change]] = field(default_factory=dict)

    def last(self, metric: str) -> Change | None:
        found = self.changes.get(metric) or []
        return found[-1] if found else None

    @property
    def slug(self) -> str:
        return hashlib.sha256(self.key.encode()).hexdigest()[:10]


def _is_date(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return len(text) > 19


def _statistic(values: np.ndarray, statistic: str) -> float:
    """p50 or p99 by nearest rank, as the significance tests take it."""
    return float(nearest_rank(values, 99 if statistic == "p99" else 50))


def relative_range(values: list[float]) -> float | None:
    """(max - min) / median of two or more values; None for fewer."""
    if len(values) < 2:
        return None
    middle = float(np.median(values))
    if middle <= 0:
        return None
    return (max(values) - min(values)) / middle


def _x_of(row, axis: str) -> str:
    if axis == "date":
        return row["started_utc"] or row["added_utc"]
    if axis == "version":
        return row["driver_version"] or "unknown"
    return row["machine"] or "unknown"


def _order(axis: str, xs: list[str]) -> list[str]:
    return sorted(xs) if axis == "date" else sorted(xs, key=natural_key)


def build_series(db: Database, rows: list, settings: Settings) -> list[Series]:
    """Series of the selected configuration rows: one per configuration (and machine,
    unless the axis is the machine), its points in the axis's order."""
    grouped: dict[tuple, list] = {}
    for row in rows:
        machine = None if settings.axis == "machine" else (row["machine"] or "unknown")
        grouped.setdefault((row["series"], machine), []).append(row)
    found = []
    for (key, machine), members in grouped.items():
        by_x: dict[str, list] = {}
        for row in members:
            # A point of the date axis is one set; two sets started the same second
            # stay two points.
            x = _x_of(row, settings.axis)
            if settings.axis == "date":
                x = f"{x} #{row['set_id']}"
            by_x.setdefault(x, []).append(row)
        points = []
        for x in _order(settings.axis, list(by_x)):
            configs = by_x[x]
            runs = [r for c in configs for r in db.runs_of(c["id"]) if r["status"] == "ok"]
            points.append(Point(x.split(" #")[0] if settings.axis == "date" else x, configs, runs))
        series_key = json.dumps([key, machine])
        found.append(Series(series_key, json.loads(key), machine, points))
    named = [Config(s.key, s.settings, []) for s in found]
    for series, label in zip(found, labels(named)):
        series.label = label + (f" on {series.machine}" if series.machine else "")
    return sorted(found, key=lambda s: natural_key(s.label))


class SampleSource:
    """The raw samples of the sets in the database, read where the database says they are
    and checked against the hashes it stored; a set whose samples moved or changed is
    named, and its latency verdicts come from the stored run statistics."""

    def __init__(self, db: Database):
        self.db = db
        self._sets: dict[int, dict[str, Config] | str] = {}

    def configs_of(self, set_row) -> dict[str, Config] | str:
        """Config.key -> Config of a set, or why its samples cannot be read."""
        set_id = set_row["set_id"]
        if set_id not in self._sets:
            self._sets[set_id] = self._load(set_id, Path(set_row["set_path"]), set_row["set_kind"])
        return self._sets[set_id]

    def _load(self, set_id: int, root: Path, kind: str) -> dict[str, Config] | str:
        for stored in self.db.samples_of_set(set_id):
            path = root / stored["file"]
            if not path.is_file():
                return f"{path} is missing (set moved? `psbench history add` its new folder)"
            if path.stat().st_size != stored["bytes"] or sha256_of(path) != stored["sha256"]:
                return f"{path} is not the file that was added (changed since)"
        try:
            results = load_set(root, kind)
            return {c.key: c for c in build_configs(results)}
        except Refused as exc:
            return str(exc)

    def attach(self, point: Point) -> None:
        arrays, reasons = [], []
        for row in point.configs:
            found = self.configs_of(row)
            if isinstance(found, str):
                reasons.append(found)
                continue
            config = found.get(row["settings"])
            if config is None:
                reasons.append(f"set {row['set_id']} no longer reads as it did when added")
                continue
            arrays += [a for a in config.rep_samples if len(a)]
        if reasons:
            point.why_no_samples = reasons[0]
        elif arrays:
            point.samples = arrays


def runs_interval(a: list[float], b: list[float], confidence: float) -> RatioCI:
    """Interval of the ratio of the medians of two groups of run values (b over a).

    The runs are the unit: the spread of one run's value is learnt from the groups'
    repetitions, on the log scale, pooled over both groups (a later point is often one
    run, whose own spread cannot be seen), and the interval of the difference of the
    groups' mean logs is +- t sqrt(s^2 (1/k_a + 1/k_b)) with k_a + k_b - 2 degrees of
    freedom; it is placed around the ratio of the medians, the ratio the trend shows.
    No interval when no group has two runs or a value is not above 0."""
    from psbench.results.special import t_isf

    ratio = float(np.median(b) / np.median(a))
    covers = f"between runs ({len(a)} and {len(b)})"
    df = len(a) + len(b) - 2
    if df < 1 or min(a + b) <= 0:
        return RatioCI("p50", ratio, None, None, confidence, covers)
    logs_a, logs_b = np.log(a), np.log(b)
    squares = float(((logs_a - logs_a.mean()) ** 2).sum() + ((logs_b - logs_b.mean()) ** 2).sum())
    spread = math.sqrt(squares / df * (1 / len(a) + 1 / len(b)))
    half = t_isf((1 - confidence) / 2, df) * spread
    return RatioCI(
        "p50", ratio, ratio * math.exp(-half), ratio * math.exp(half), confidence, covers
    )


class Judge:
    """The verdicts of one series, metric by metric. Each point is tested against its
    reference: every point since the last change called real (the runs of the unchanged
    configuration, pooled as repetitions), not only the point before it."""

    def __init__(self, series: Series, settings: Settings):
        self.series = series
        self.settings = settings
        self._estimates: dict[tuple, Estimate] = {}

    def _estimate(self, indexes: tuple[int, ...], statistic: str) -> Estimate:
        """The statistic of the points' samples, each ok run a repetition."""
        key = (indexes, statistic)
        if key not in self._estimates:
            runs = [a for i in indexes for a in self.series.points[i].samples]
            self._estimates[key] = estimate(runs, statistic, 1 - self.settings.alpha)
        return self._estimates[key]

    def changes(self, metric: Metric) -> list[Change]:
        found = []
        reference = [0]
        for i in range(1, len(self.series.points)):
            change, real = self._change(metric, i, reference)
            found.append(change)
            # At most the last --window points: an old night's spread does not widen
            # the band for ever, and a slow drift is judged against recent points.
            reference = [i] if real else (reference + [i])[-self.settings.window :]
        return found

    def _change(self, metric: Metric, i: int, reference: list[int]) -> tuple[Change, bool]:
        points = self.series.points
        before, after = [points[j] for j in reference], points[i]
        a = [v for p in before for v in p.values(metric)]
        b = after.values(metric)
        if not a or not b:
            side = "before it" if not a else "at the later point"
            note = f"{metric.title}: no value {side}"
            return Change(metric.name, i - 1, i, "not compared", note=note), False
        if min(a + b) <= 0:
            # A ratio needs values above 0 (e.g. a CPU time too short to be counted).
            note = f"{metric.title}: a run measured {min(a + b):g}, no ratio to test"
            return Change(metric.name, i - 1, i, "not compared", note=note), False
        spreads, learnt = [], 0
        for group in (a, b):
            spread = relative_range(group)
            if spread is not None:
                spreads.append(spread)
                learnt += len(group)
        threshold = max([self.settings.threshold, *spreads])
        sides = [*before, after]
        samples = metric.name in ("p50", "p99") and all(p.samples for p in sides)
        if samples and metric.name == "p99":
            samples = min(sum(map(len, p.samples)) for p in sides) >= P99_MIN_SAMPLES
        statistic = "p99" if metric.name == "p99" and samples else "p50"
        if samples:
            pooled_a = np.concatenate([x for p in before for x in p.samples])
            pooled_b = np.concatenate(after.samples)
        else:
            pooled_a, pooled_b = np.asarray(a), np.asarray(b)
        ratio = _statistic(pooled_b, statistic) / _statistic(pooled_a, statistic)
        change = Change(
            metric.name,
            i - 1,
            i,
            "no change",
            ratio,
            threshold=threshold,
            learnt_from=learnt,
            test="samples" if samples else "run statistics",
            reference=[points[j].x for j in reference],
        )
        if metric.name in ("p50", "p99") and not samples:
            why = next((p.why_no_samples for p in sides if p.why_no_samples), None)
            change.note = f"samples not read: {why}" if why else ""
        if len(a) < self.settings.min_runs:
            change.verdict = "noise unknown"
            change.note = (
                f"{len(a)} run{'' if len(a) == 1 else 's'} of the unchanged configuration "
                f"before the change to learn the noise from, fewer than "
                f"{self.settings.min_runs}: give the sets repetitions"
            )
            return change, False
        if within_band(ratio, threshold):
            # The ratio itself lies within the band: no interval around it can lie beyond
            # it, so the tests (the costly part of a trend) are not run.
            return change, False
        ci = self._test(metric, tuple(reference), i, samples)
        change.low, change.high = ci.low, ci.high
        if ci.low is None:
            # A ratio beyond the band with no interval around it is not "no change".
            change.undecided(
                f"{metric.title} at {after.shown}: no interval at this confidence: too few "
                "independent samples (serially dependent ones count as fewer); give the sets "
                "more repetitions or samples"
            )
            return change, False
        beyond = beyond_band(ci, threshold)
        if not beyond:
            # Nor is a ratio beyond the band whose interval reaches back into it: the
            # runs cannot tell the change from the noise.
            change.undecided(
                f"{metric.title} at {after.shown}: ×{ratio:.2f}, its interval "
                f"{ci.low:.3g}..{ci.high:.3g} reaches into the noise band ±{threshold:.0%}: the "
                "runs differ too much among themselves to tell; give the sets more repetitions"
            )
            return change, False
        worse = (beyond > 0) == metric.higher_is_worse
        change.verdict = "regression" if worse else "improvement"
        return change, True

    def _test(self, metric: Metric, reference: tuple, i: int, samples: bool) -> RatioCI:
        """The interval of the later point / its reference."""
        confidence = 1 - self.settings.alpha
        if not samples:
            before = [v for j in reference for v in self.series.points[j].values(metric)]
            return runs_interval(before, self.series.points[i].values(metric), confidence)
        statistic = "p99" if metric.name == "p99" else "p50"
        ref, later = self._estimate(reference, statistic), self._estimate((i,), statistic)
        return ratio_interval(ref, later, confidence)


def within_band(ratio: float, band: float) -> bool:
    """Whether a ratio lies within the noise band: a factor of 1 + band either way. Two
    measurements of the same thing that differed by (max - min) / median = band differ by
    about that factor; read as 1 - band below 1, a band of 1 or more (one slow run in three
    on a loaded machine) would hide every drop, even one to 1/10,000."""
    return 1 / (1 + band) <= ratio <= 1 + band


def beyond_band(ci: RatioCI, band: float) -> int:
    """+1 if the whole interval lies above the band, -1 if below it, else 0 (no interval: 0)."""
    if ci.low is None or ci.high is None:
        return 0
    if ci.low > 1 + band:
        return 1
    return -1 if ci.high < 1 / (1 + band) else 0


def judge(series: list[Series], settings: Settings, source: SampleSource | None) -> None:
    """Fills each series' changes, metric by metric."""
    for one in series:
        if source is not None:
            for point in one.points:
                source.attach(point)
        judge_one = Judge(one, settings)
        one.changes = {name: judge_one.changes(metric) for name, metric in METRICS.items()}


def regressions(series: list[Series], fail_on: str) -> list[tuple[Series, Change]]:
    """The last change of every series that is a regression of a gated metric."""
    gated = list(METRICS) if fail_on == "any" else [fail_on]
    found = []
    for one in series:
        for name in gated:
            change = one.last(name)
            if change is not None and change.verdict == "regression":
                found.append((one, change))
    return found
