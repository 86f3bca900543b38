"""Runs the selected runs of a plan, one after the other, into a results store.

Each run is one measure.run; whatever its status the sweep goes on with the next, and
its index line is appended as soon as it ended. Ctrl-C (or SIGTERM) stops the run in
flight (measure and runner stop its processes and clean up), is recorded, and ends the
sweep; the services pool is stopped on every way out.
"""

import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from psbench.results import rundir
from psbench.results.store import Store
from psbench.run import measure, ratesearch, services
from psbench.run.experiment import service_plan
from psbench.run.experiment.expand import Run
from psbench.run.experiment.plan import Plan
from psbench.run.graph.plans import largest_message
from psbench.run.progress import Progress

# Of the statistics of the main series, what the index keeps.
STAT_KEYS = ("n", "min", "p50", "p90", "p99", "p99.9", "max", "mean")
COUNT_KEYS = (
    "sent",
    "samples",
    "lost",
    "unaccounted",
    "late",
    "duplicated",
    "reordered",
    "corrupted",
)


@dataclass
class SweepResult:
    entries: dict[int, dict] = field(default_factory=dict)  # run number -> index entry
    earlier: set[int] = field(default_factory=set)  # runs done before (--resume)
    interrupted: bool = False


def main_series(kind: str) -> tuple[str, str]:
    """(role, series) whose latency sums a run up: RTT/2 for ping, one-way for pubsub."""
    return ("ping", "rtt_half") if kind == "ping" else ("sub", "one_way")


def _latency(stats: dict | None, series: str) -> dict | None:
    """The run's key latency figures for index.jsonl, and whether its level changed
    during the run (its stationarity check; docs/analysis.md)."""
    level = ((stats or {}).get("stationarity") or {}).get("drifts")
    stats = (stats or {}).get(series)
    if not stats:
        return None
    return {"series": series, "unit": "ns", **{k: stats.get(k) for k in STAT_KEYS}} | (
        {"level_changed": level} if level is not None else {}
    )


def _counts(summaries: list[dict]) -> dict | None:
    """The receivers' counts, added up over several subscribers (each one's sent is
    what it should have received, so sent = samples + lost still holds)."""
    found = [s.get("counts") for s in summaries if s.get("counts")]
    if not found:
        return None
    return {
        k: (None if any(c[k] is None for c in found) else sum(c[k] for c in found))
        for k in COUNT_KEYS
        if all(k in c for c in found)
    }


def _reconciled(outcome: measure.MeasureOutcome, name: str) -> dict:
    """A subscriber's counts with sent and lost from its writers' own counts (the sub
    alone does not know them when an end marker never came): accounting.py."""
    summary = outcome.summaries.get(name) or {}
    a = outcome.accounting.get(name)
    if not a:
        return summary
    counts = dict(summary.get("counts") or {})
    counts.update(sent=a["published"], lost=a["lost"], unaccounted=a["unaccounted"])
    return {**summary, "counts": counts}


def _per_subscriber(outcome: measure.MeasureOutcome) -> dict:
    """Fan-out: each subscriber's p50/p99 and counts, for the index and the report."""
    each = {}
    for name in outcome.subscriber_names:
        one_way = (outcome.stats.get(name) or {}).get("one_way") or {}
        counts = _reconciled(outcome, name).get("counts") or {}
        each[name] = {
            "p50": one_way.get("p50"),
            "p99": one_way.get("p99"),
            **{k: counts[k] for k in COUNT_KEYS if k in counts},
        }
    return each


def load_numbers(outcome: measure.MeasureOutcome) -> dict:
    """Throughput and latency under load, for the index: the subscribers' samples/s,
    Mbit/s and loss together, each publisher's achieved rate, and the RTT/2 of echoed
    samples (echo runs)."""
    found = {}
    tp = outcome.throughput
    if tp:
        found["throughput"] = {
            "samples_per_s": tp["aggregate_samples_per_s"],
            "mbit_per_s": tp["aggregate_mbit_per_s"],
            "loss_percent": tp["loss_percent"],
            "offered_rate_hz": outcome.spec.rate,
            "achieved_rate_hz": {
                name: pub["achieved_rate_hz"] for name, pub in tp["publishers"].items()
            },
        }
    if outcome.spec.echo_every:
        for name in outcome.publisher_names:
            half = (outcome.stats.get(name) or {}).get("rtt_half")
            if half:
                found["under_load"] = {
                    "series": "rtt_half",
                    "unit": "ns",
                    "publisher": name,
                    "echo_every": outcome.spec.echo_every,
                    **{k: half.get(k) for k in STAT_KEYS},
                }
                break
    return found


def _key_numbers(outcome: measure.MeasureOutcome) -> tuple[dict | None, dict | None]:
    _, series = main_series(outcome.spec.kind)
    latency = _latency(outcome.stats.get(outcome.receiver_key), series)
    receivers = outcome.subscriber_names if outcome.spec.kind == "pubsub" else ["ping"]
    return latency, _counts([_reconciled(outcome, n) for n in receivers])


def _newest_dir(parent):
    dirs = [p for p in parent.iterdir() if p.is_dir()]
    return max(dirs, key=lambda p: p.stat().st_mtime) if dirs else None


@contextmanager
def _signals_held():
    """Ctrl-C/SIGTERM wait until the block is done: an index line is written whole."""
    pending = []
    handlers = {
        sig: signal.signal(sig, lambda *_: pending.append(1))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    if pending:
        raise KeyboardInterrupt


def _search_one(run: Run, plan: Plan, store: Store, env: dict, cli_argv: list[str], pool) -> dict:
    """A sweep run of an experiment with `search`: one rate search in the run's folder
    (search.json beside its steps' run directories). An earlier attempt's search.json
    (interrupted, then --resume) is kept as search-<UTC time>.json."""
    folder = store.run_parent(run.number, run.label)
    earlier = folder / ratesearch.SEARCH_FILE
    if earlier.exists():
        earlier.rename(folder / f"search-{rundir.utc_stamp()}.json")
    started_utc, started = rundir.utc_now(), time.monotonic()
    found, message = {}, None
    try:
        result = ratesearch.run_search(
            plan.specs[run.number],
            plan.criteria,
            folder,
            env,
            cli_argv,
            services=pool,
            extra={
                "kind": "ratesearch",
                "driver": run.get("driver"),
                "size": run.get("size"),
                "run": run.number,
                "label": run.label,
            },
        )
        found = ratesearch.index_numbers(result)
        if result.ended_by == "interrupted":
            status, message = "interrupted", "interrupted (Ctrl-C or SIGTERM); processes stopped"
        elif result.max_sustainable_rate_hz is None:
            status, message = (
                "failed",
                "no rate passed: "
                + "; ".join(f"{s.rate_hz:g} Hz: {s.why}" for s in result.steps[-3:]),
            )
        else:
            status = "ok"
    except KeyboardInterrupt:
        status, message = "interrupted", "interrupted (Ctrl-C or SIGTERM); processes stopped"
    except Exception as exc:  # psbench could not run it (a service that cannot start...)
        status, message = "error", f"{type(exc).__name__}: {exc}"
    return {
        **run.listing(),
        "status": status,
        "message": message,
        "run_dir": str(folder.relative_to(store.root)),
        "run_id": None,
        "started_utc": started_utc,
        "finished_utc": rundir.utc_now(),
        "seconds": round(time.monotonic() - started, 3),
        "latency": None,
        "counts": None,
        "search": found or None,
    }


def _run_one(run: Run, plan: Plan, store: Store, env: dict, cli_argv: list[str], pool) -> dict:
    parent = store.run_parent(run.number, run.label)
    started_utc, started = rundir.utc_now(), time.monotonic()
    outcome, latency, counts, fan_out, load = None, None, None, {}, {}
    try:
        outcome = measure.run(plan.specs[run.number], parent, env, cli_argv, services=pool)
        status, message, run_dir = outcome.status, outcome.message, outcome.run_dir
        latency, counts = _key_numbers(outcome)
        load = load_numbers(outcome)
        if len(outcome.subscriber_names) > 1:
            fan_out = {"subscribers": _per_subscriber(outcome)}
        if outcome.cpu_sharing.get("oversubscribed"):
            fan_out["oversubscribed"] = outcome.cpu_sharing["oversubscribed"]
    except KeyboardInterrupt:
        status, message = "interrupted", "interrupted (Ctrl-C or SIGTERM); processes stopped"
        run_dir = _newest_dir(parent)
    except Exception as exc:  # psbench could not run it (a service that cannot start...)
        status, message, run_dir = "error", f"{type(exc).__name__}: {exc}", _newest_dir(parent)
    return {
        **run.listing(),
        "status": status,
        "message": message,
        "run_dir": str(run_dir.relative_to(store.root)) if run_dir else None,
        "run_id": outcome.run_id if outcome else None,
        "started_utc": started_utc,
        "finished_utc": rundir.utc_now(),
        "seconds": round(time.monotonic() - started, 3),
        "latency": latency,
        "counts": counts,
        **load,
        **fan_out,
    }


def execute(
    plan: Plan,
    store: Store,
    env: dict,
    cli_argv: list[str],
    progress: Progress,
    resume: bool = False,
) -> SweepResult:
    result = SweepResult()
    finished = store.finished() if resume else {}
    todo = []
    for run in plan.selected:
        if run.identity in finished:
            result.entries[run.number] = finished[run.identity]
            result.earlier.add(run.number)
        else:
            todo.append(run)
    progress.total = len(todo)
    try:
        run_needs = service_plan.needs([plan.specs[r.number] for r in todo])
        if plan.experiment.order == "grouped":
            order = service_plan.grouped(todo, run_needs)
            todo, run_needs = [todo[i] for i in order], [run_needs[i] for i in order]
        # A service's configuration is sized once, for the largest message of the sweep.
        largest = max((largest_message(plan.specs[r.number]) for r in todo), default=64)
        with services.ServicePool(largest_message=largest) as pool:
            for done, run in enumerate(todo, start=1):
                progress.start(run.label)
                one = _search_one if plan.criteria is not None else _run_one
                entry = one(run, plan, store, env, cli_argv, pool)
                with _signals_held():
                    store.append(entry)
                result.entries[run.number] = entry
                progress.finish(run.label, entry["status"], entry["seconds"])
                if entry["status"] == "interrupted":
                    result.interrupted = True
                    break
                # An idle broker would sit beside the other middlewares' runs.
                pool.stop_unneeded(service_plan.still_needed(run_needs, done))
    except KeyboardInterrupt:  # between runs, or while services started or stopped
        result.interrupted = True
    finally:
        progress.close()
    return result
