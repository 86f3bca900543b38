"""Maximum sustainable rate search: the highest offered rate at which a pubsub run is ok,
the publisher keeps up, loss stays at or under a threshold and p99 one-way latency
under a bound, confirmed by repetition.

The algorithm (search) is pure: it asks a measure(rate) callable for an Observation per
run and judges it against the Criteria. From the start rate it doubles until a step
fails (or the maximum rate passes); if the start rate already fails it halves until one
passes; then it bisects (geometric mean of the bracket, as the precision is a ratio)
until hi/lo <= 1 + precision or the step limit. Every new rate lies strictly inside the
bracket [lo = highest passing rate, hi = lowest failing rate].

Confirmation: a passing rate is only sustainable once it passed `confirm` runs in all;
one failed run fails it (a noisy machine lets a rate pass once that it does not
sustain). Far below the boundary (doubling, no failure seen yet) a step is one run.
Whenever the search has a bracket, and before it ends, lo must be confirmed: it is
rerun until confirmed or failed. So every passing step of the bisection, the doubling
step below the first failure, and the final result are confirmed. A rate that fails a
rerun becomes hi and the search continues below it (lo falls back to the next passing
rate, which is confirmed in turn): hi never increases; lo decreases only then.
Each step runs at most `confirm` times, so a search makes at most
max_steps x confirm runs. With several publishers the rate is each publisher's.

run_search ties it to real runs: one pubsub run directory per run inside the search
folder, and search.json rewritten after every run.
"""

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from psbench.results import rundir
from psbench.run import measure
from psbench.run.measure import MeasureOutcome
from psbench.run.spec import MeasureSpec

SEARCH_FORMAT = "psbench-search/1"
SEARCH_FILE = "search.json"
# Below this share of the offered rate, the publisher did not keep up.
KEEP_UP = 0.95
MIN_RATE_HZ = 1.0
# A step's length when neither count nor duration is given.
DEFAULT_STEP_S = 5.0
DEFAULT_CONFIRM = 3


@dataclass
class Criteria:
    max_loss_percent: float = 0.0
    max_p99_ns: float = 1e6
    start_rate_hz: float = 1000.0
    max_rate_hz: float | None = None
    precision: float = 0.05
    max_steps: int = 12
    confirm: int = DEFAULT_CONFIRM  # a sustainable rate passed this many runs of it


@dataclass
class Observation:
    """What one run measured; None where it could not be had."""

    status: str
    achieved_rate_hz: float | None = None
    loss_percent: float | None = None
    p99_ns: float | None = None
    run_dir: str | None = None


@dataclass
class Step:
    """One rate: its first run's figures, then its confirming reruns."""

    rate_hz: float
    run_dir: str | None
    status: str
    achieved_rate_hz: float | None
    loss_percent: float | None
    p99_ns: float | None
    passed: bool  # every run of it so far passed
    why: str | None
    confirmed: bool = False  # passed criteria.confirm runs: sustainable
    # The reruns after the first: each one's figures and verdict.
    confirmations: list[dict] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return 1 + len(self.confirmations)

    @property
    def runs_passed(self) -> int:
        # Reruns follow a first run that passed.
        first = bool(self.confirmations) or self.passed
        return int(first) + sum(bool(c["passed"]) for c in self.confirmations)


@dataclass
class SearchResult:
    criteria: Criteria
    steps: list[Step] = field(default_factory=list)
    lo: float | None = None  # highest passing rate (confirmed or not yet)
    hi: float | None = None  # lowest failing rate
    ended_by: str | None = None  # precision | max_rate | max_steps | min_rate | interrupted

    @property
    def max_sustainable_rate_hz(self) -> float | None:
        """The highest confirmed rate (lo itself once the search ended normally)."""
        return max((s.rate_hz for s in self.steps if s.confirmed), default=None)

    @property
    def runs(self) -> int:
        return sum(s.runs for s in self.steps)

    def to_json(self) -> dict:
        return {
            "format": SEARCH_FORMAT,
            "criteria": asdict(self.criteria),
            "steps": [
                {**asdict(s), "runs": s.runs, "runs_passed": s.runs_passed} for s in self.steps
            ],
            "max_sustainable_rate_hz": self.max_sustainable_rate_hz,
            "bracket": [self.lo, self.hi],
            "runs": self.runs,
            "ended_by": self.ended_by,
        }


def judge(criteria: Criteria, rate: float, seen: Observation) -> tuple[bool, str | None]:
    """Passed, or why not (every reason, in the order checked)."""
    why = []
    if seen.status != "ok":
        why.append(f"status {seen.status}")
    if seen.achieved_rate_hz is not None and seen.achieved_rate_hz < KEEP_UP * rate:
        why.append(f"publisher could not keep up ({seen.achieved_rate_hz:.0f} of {rate:g} Hz)")
    if seen.loss_percent is None:
        if seen.status == "ok":
            why.append("no loss figure")
    elif seen.loss_percent > criteria.max_loss_percent:
        why.append(f"loss {seen.loss_percent:.3g}% > {criteria.max_loss_percent:g}%")
    if seen.p99_ns is None:
        if seen.status == "ok":
            why.append("too few samples for p99 (needs 100)")
    elif seen.p99_ns > criteria.max_p99_ns:
        why.append(f"p99 {seen.p99_ns / 1e3:.1f} µs > {criteria.max_p99_ns / 1e3:g} µs")
    return (not why), ("; ".join(why) or None)


def _bracket(result: SearchResult) -> None:
    """lo and hi from the steps' verdicts."""
    result.lo = max((s.rate_hz for s in result.steps if s.passed), default=None)
    result.hi = min((s.rate_hz for s in result.steps if not s.passed), default=None)


def _to_confirm(result: SearchResult) -> Step | None:
    """lo's step when it still needs its reruns."""
    return next(
        (s for s in result.steps if s.passed and s.rate_hz == result.lo and not s.confirmed), None
    )


def runs_left_at_most(result: SearchResult) -> int:
    """An upper bound of the runs still to come: every step not yet taken at most
    `confirm` runs, every passing unconfirmed step the rest of its reruns."""
    c = result.criteria
    pending = sum(c.confirm - s.runs for s in result.steps if s.passed and not s.confirmed)
    return max(c.max_steps - len(result.steps), 0) * c.confirm + pending


def _rerun(
    criteria: Criteria,
    step: Step,
    result: SearchResult,
    measure_rate: Callable[[float], Observation],
    on_run,
) -> bool:
    """Reruns a passing step until it passed criteria.confirm runs in all (confirmed) or
    one fails (it becomes a failing step). False when a rerun was interrupted."""
    while step.runs < criteria.confirm:
        seen = measure_rate(step.rate_hz)
        if seen.status == "interrupted":
            return False
        ok, why = judge(criteria, step.rate_hz, seen)
        step.confirmations.append({**asdict(seen), "passed": ok, "why": why})
        if not ok:
            step.passed = False
            step.why = (
                f"passed {step.runs - 1} run{'s' if step.runs > 2 else ''}, "
                f"failed run {step.runs} of {criteria.confirm}: {why}"
            )
        _bracket(result)
        if on_run:
            on_run(result, step)
        if not ok:
            return True
    step.confirmed = True
    return True


def _nice(rate: float, lo: float | None, hi: float | None) -> float:
    """rate rounded to a whole number of Hz (4 significant digits below 10 Hz) when that
    keeps it strictly inside the bracket."""
    rounded = float(round(rate)) if rate >= 10 else float(f"{rate:.4g}")
    if (lo is None or rounded > lo) and (hi is None or rounded < hi):
        return rounded
    return rate


def next_rate(result: SearchResult) -> tuple[float | None, str | None]:
    """The next rate to try, or None and why the search ends."""
    c, lo, hi = result.criteria, result.lo, result.hi
    if lo is not None and hi is not None and hi / lo <= 1 + c.precision:
        return None, "precision"
    if len(result.steps) >= c.max_steps:
        return None, "max_steps"
    if not result.steps:
        return c.start_rate_hz, None
    if hi is None:  # every step passed: double, up to the maximum rate
        if c.max_rate_hz is not None and lo >= c.max_rate_hz:
            return None, "max_rate"
        rate = lo * 2
        return (min(rate, c.max_rate_hz) if c.max_rate_hz is not None else rate), None
    if lo is None:  # every step failed: halve
        if hi / 2 < MIN_RATE_HZ:
            return None, "min_rate"
        return _nice(hi / 2, None, hi), None
    return _nice(math.sqrt(lo * hi), lo, hi), None


def search(
    criteria: Criteria,
    measure_rate: Callable[[float], Observation],
    on_run: Callable[[SearchResult, Step], None] | None = None,
    on_end: Callable[[SearchResult], None] | None = None,
    result: SearchResult | None = None,
) -> SearchResult:
    """Runs the search: on_run(result, step) after every run (a step's first or a
    rerun), on_end(result) once however it ends. A KeyboardInterrupt from measure_rate
    ends it with ended_by 'interrupted' (completed runs kept) and is raised again; an
    observation with status 'interrupted' (the run was stopped and recorded) ends it the
    same way without raising. Each pass of the loop adds a step (at most max_steps),
    or confirms or fails lo's step (each step once), so it ends."""
    result = result or SearchResult(criteria)
    try:
        while True:
            rate, ended = next_rate(result)
            pending = _to_confirm(result)
            if pending is not None and (rate is None or result.hi is not None):
                if not _rerun(criteria, pending, result, measure_rate, on_run):
                    result.ended_by = "interrupted"
                    break
                continue
            if rate is None:
                result.ended_by = ended
                break
            seen = measure_rate(rate)
            if seen.status == "interrupted":
                result.ended_by = "interrupted"
                break
            passed, why = judge(criteria, rate, seen)
            step = Step(
                rate,
                seen.run_dir,
                seen.status,
                seen.achieved_rate_hz,
                seen.loss_percent,
                seen.p99_ns,
                passed,
                why,
                confirmed=passed and criteria.confirm == 1,
            )
            result.steps.append(step)
            _bracket(result)
            if on_run:
                on_run(result, step)
    except KeyboardInterrupt:
        result.ended_by = "interrupted"
        raise
    except BaseException:
        result.ended_by = result.ended_by or "error"
        raise
    finally:
        if on_end:
            on_end(result)
    return result


# Real runs.


def observe(outcome: MeasureOutcome, folder: Path) -> Observation:
    """A step's figures from its run: the subscribers' loss together (throughput block,
    else their counts), the slowest publisher's achieved rate (throughput block, else
    unknown), the p99 of the run's one-way latency (all subscribers together)."""
    tp = outcome.throughput or {}
    loss = tp.get("loss_percent")
    if loss is None:
        counts = [outcome.summaries[n].get("counts") or {} for n in outcome.subscriber_names]
        sent = sum(c.get("sent") or 0 for c in counts)
        loss = 100.0 * sum(c.get("lost") or 0 for c in counts) / sent if sent else None
    rates = [p["achieved_rate_hz"] for p in (tp.get("publishers") or {}).values()]
    achieved = min(rates) if rates and all(r is not None for r in rates) else None
    one_way = (outcome.stats.get(outcome.receiver_key) or {}).get("one_way") or {}
    try:
        run_dir = str(outcome.run_dir.relative_to(folder))
    except ValueError:
        run_dir = str(outcome.run_dir)
    return Observation(outcome.status, achieved, loss, one_way.get("p99"), run_dir)


def per_publisher_json(result: SearchResult, publishers: int) -> dict:
    """search.json's statement that rates are each publisher's, and the offered rate of
    all publishers together (publishers x rate) beside each."""
    best = result.max_sustainable_rate_hz
    return {
        "rate_is": "per publisher",
        "publishers": publishers,
        "aggregate_max_sustainable_rate_hz": None if best is None else best * publishers,
        "aggregate_rates_hz": [s.rate_hz * publishers for s in result.steps],
    }


def run_search(
    spec: MeasureSpec,
    criteria: Criteria,
    folder: Path,
    env: dict,
    cli_argv: list[str],
    services=None,
    on_start=None,
    on_run=None,
    extra: dict | None = None,
) -> SearchResult:
    """The search over real pubsub runs of spec (its rate replaced per run), one run
    directory per run (reruns included) in folder; folder/search.json after every run.
    on_start(rate) before each run; on_run(result, step) after each. extra: more keys
    for search.json."""
    if spec.count is None and spec.duration is None:
        spec = replace(spec, duration=DEFAULT_STEP_S)
    record_extra = {"spec": spec.to_json(), "created_utc": rundir.utc_now(), **(extra or {})}
    publishers = spec.publishers or 1

    def write(result: SearchResult) -> None:
        rundir.write_json(
            folder / SEARCH_FILE,
            {
                **result.to_json(),
                **record_extra,
                **per_publisher_json(result, publishers),
                "updated_utc": rundir.utc_now(),
            },
        )

    def measure_rate(rate: float) -> Observation:
        if on_start:
            on_start(rate)
        outcome = measure.run(replace(spec, rate=rate), folder, env, cli_argv, services=services)
        return observe(outcome, folder)

    def after_run(result: SearchResult, step: Step) -> None:
        write(result)
        if on_run:
            on_run(result, step)

    result = SearchResult(criteria)
    write(result)
    return search(criteria, measure_rate, after_run, write, result)


def index_numbers(result: SearchResult) -> dict:
    """What the index of a sweep keeps of a search."""
    return {
        "max_sustainable_rate_hz": result.max_sustainable_rate_hz,
        "bracket": [result.lo, result.hi],
        "ended_by": result.ended_by,
        "steps": len(result.steps),
        "runs": result.runs,
        "passed": sum(s.confirmed for s in result.steps),
    }
