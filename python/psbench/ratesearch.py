"""Maximum sustainable rate search: the highest offered rate at which a pubsub run is ok,
the publisher keeps up, loss stays at or under a threshold and p99 one-way latency
under a bound.

The algorithm (search) is pure: it asks a measure(rate) callable for an Observation per
step and judges it against the Criteria. From the start rate it doubles until a step
fails (or the maximum rate passes); if the start rate already fails it halves until one
passes; then it bisects (geometric mean of the bracket, as the precision is a ratio)
until hi/lo <= 1 + precision or the step limit. Every new rate lies strictly inside the
bracket, so lo (the highest passing rate) never decreases and hi (the lowest failing
rate) never increases. A step that passes is confirmed: its rate is measured again until
it has passed `confirm` times in all; one failure makes the step fail (a noisy machine
lets a rate pass once that it does not sustain). With several publishers the rate is
each publisher's.

run_search ties it to real runs: one pubsub run directory per step inside the search
folder, and search.json rewritten after every step.
"""

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from psbench import measure, rundir
from psbench.measure import MeasureOutcome
from psbench.spec import MeasureSpec

SEARCH_FORMAT = "psbench-search/1"
SEARCH_FILE = "search.json"
# Below this share of the offered rate, the publisher did not keep up.
KEEP_UP = 0.95
MIN_RATE_HZ = 1.0
# A step's length when neither count nor duration is given.
DEFAULT_STEP_S = 5.0


@dataclass
class Criteria:
    max_loss_percent: float = 0.0
    max_p99_ns: float = 1e6
    start_rate_hz: float = 1000.0
    max_rate_hz: float | None = None
    precision: float = 0.05
    max_steps: int = 12
    confirm: int = 1        # a passing step must pass this many times in all


@dataclass
class Observation:
    """What one step measured; None where it could not be had."""
    status: str
    achieved_rate_hz: float | None = None
    loss_percent: float | None = None
    p99_ns: float | None = None
    run_dir: str | None = None


@dataclass
class Step:
    rate_hz: float
    run_dir: str | None
    status: str
    achieved_rate_hz: float | None
    loss_percent: float | None
    p99_ns: float | None
    passed: bool
    why: str | None
    # The confirming reruns of a step that passed first: each one's figures and verdict.
    confirmations: list[dict] = field(default_factory=list)


@dataclass
class SearchResult:
    criteria: Criteria
    steps: list[Step] = field(default_factory=list)
    lo: float | None = None        # highest passing rate so far
    hi: float | None = None        # lowest failing rate so far
    ended_by: str | None = None    # precision | max_rate | max_steps | min_rate | interrupted

    @property
    def max_sustainable_rate_hz(self) -> float | None:
        return self.lo

    def to_json(self) -> dict:
        return {"format": SEARCH_FORMAT, "criteria": asdict(self.criteria),
                "steps": [asdict(s) for s in self.steps],
                "max_sustainable_rate_hz": self.lo, "bracket": [self.lo, self.hi],
                "ended_by": self.ended_by}


def judge(criteria: Criteria, rate: float, seen: Observation) -> tuple[bool, str | None]:
    """Passed, or why not (every reason, in the order checked)."""
    why = []
    if seen.status != "ok":
        why.append(f"status {seen.status}")
    if seen.achieved_rate_hz is not None and seen.achieved_rate_hz < KEEP_UP * rate:
        why.append(f"publisher could not keep up ({seen.achieved_rate_hz:.0f} of "
                   f"{rate:g} Hz)")
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


def _confirm(criteria: Criteria, rate: float, step: Step,
             measure_rate: Callable[[float], Observation]) -> bool:
    """Measures a passing step's rate again until it passed criteria.confirm times in
    all; the first failure fails the step. False when a rerun was interrupted."""
    for attempt in range(2, criteria.confirm + 1):
        seen = measure_rate(rate)
        if seen.status == "interrupted":
            step.passed, step.why = False, f"confirmation {attempt} interrupted"
            return False
        ok, why = judge(criteria, rate, seen)
        step.confirmations.append({**asdict(seen), "passed": ok, "why": why})
        if not ok:
            step.passed = False
            step.why = f"passed once, failed confirmation {attempt} of {criteria.confirm}: {why}"
            return True
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


def search(criteria: Criteria, measure_rate: Callable[[float], Observation],
           on_step: Callable[[SearchResult], None] | None = None,
           on_end: Callable[[SearchResult], None] | None = None,
           result: SearchResult | None = None) -> SearchResult:
    """Runs the search: on_step(result) after every step, on_end(result) once however
    it ends. A KeyboardInterrupt from measure_rate ends it with ended_by 'interrupted'
    (completed steps kept) and is raised again; an observation with status
    'interrupted' (the run was stopped and recorded) ends it the same way without
    raising."""
    result = result or SearchResult(criteria)
    try:
        while True:
            rate, ended = next_rate(result)
            if rate is None:
                result.ended_by = ended
                break
            try:
                seen = measure_rate(rate)
            except KeyboardInterrupt:
                result.ended_by = "interrupted"
                raise
            if seen.status == "interrupted":
                result.ended_by = "interrupted"
                break
            passed, why = judge(criteria, rate, seen)
            step = Step(rate, seen.run_dir, seen.status, seen.achieved_rate_hz,
                        seen.loss_percent, seen.p99_ns, passed, why)
            result.steps.append(step)
            if passed and not _confirm(criteria, rate, step, measure_rate):
                result.ended_by = "interrupted"
                break
            passed = step.passed
            if passed:
                result.lo = rate if result.lo is None else max(result.lo, rate)
            else:
                result.hi = rate if result.hi is None else min(result.hi, rate)
            if on_step:
                on_step(result)
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


def run_search(spec: MeasureSpec, criteria: Criteria, folder: Path, env: dict,
               cli_argv: list[str], services=None, on_start=None, on_step=None,
               extra: dict | None = None) -> SearchResult:
    """The search over real pubsub runs of spec (its rate replaced per step), one run
    directory per step in folder; folder/search.json after every step. on_start(rate)
    before each step; on_step(result) after each. extra: more keys for search.json."""
    if spec.count is None and spec.duration is None:
        spec = replace(spec, duration=DEFAULT_STEP_S)
    record_extra = {"spec": spec.to_json(), "created_utc": rundir.utc_now(),
                    **(extra or {})}

    publishers = spec.publishers or 1

    def write(result: SearchResult) -> None:
        # The rate is each publisher's; the subscribers together get publishers x rate.
        rundir.write_json(folder / SEARCH_FILE,
                          {**result.to_json(), **record_extra,
                           "rate_is": "per publisher", "publishers": publishers,
                           "aggregate_max_sustainable_rate_hz":
                               None if result.lo is None else result.lo * publishers,
                           "updated_utc": rundir.utc_now()})

    def measure_rate(rate: float) -> Observation:
        if on_start:
            on_start(rate)
        outcome = measure.run(replace(spec, rate=rate), folder, env, cli_argv,
                              services=services)
        return observe(outcome, folder)

    def stepped(result: SearchResult) -> None:
        write(result)
        if on_step:
            on_step(result)

    result = SearchResult(criteria)
    write(result)
    return search(criteria, measure_rate, stepped, write, result)


def index_numbers(result: SearchResult) -> dict:
    """What the index of a sweep keeps of a search."""
    return {"max_sustainable_rate_hz": result.lo, "bracket": [result.lo, result.hi],
            "ended_by": result.ended_by, "steps": len(result.steps),
            "passed": sum(s.passed for s in result.steps)}
