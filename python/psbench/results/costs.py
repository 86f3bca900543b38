"""What a configuration costs besides its latency: resources over the measurement window
(run.json's resources block, psbench.run.resources) and what its node processes took to
start (their summaries' timing). Medians across the ok repetitions, like the latency."""

import numpy as np

from psbench.results.load import RunData
from psbench.results.run_record import block

RESOURCE_SCOPES = ("nodes", "services", "all")
RESOURCE_KEYS = ("cpu_ns_per_message", "utilisation", "switches_per_message", "peak_rss_kb")
STARTUP_KEYS = ("open_to_matched_ns", "start_to_matched_ns", "start_to_first_message_ns")


def median_present(values: list) -> float | None:
    """The median of the values that are not None; None when there are none."""
    present = [v for v in values if v is not None]
    return float(np.median(present)) if present else None


def resources(runs: list[RunData]) -> dict:
    """scope -> key -> median over the repetitions whose window was measured; "reps" how
    many were; "per" what one message is; "unmeasured" the processes left out and why;
    "threads_ended" threads that ended inside a window (their time there is missing)."""
    blocks = [block(r.run_record, "resources") for r in runs]
    measured = [b for b in blocks if b.get("measured")]
    if not measured:
        return {}
    found: dict[str, object] = {
        scope: {
            key: median_present([(b.get(scope) or {}).get(key) for b in measured])
            for key in RESOURCE_KEYS
        }
        for scope in RESOURCE_SCOPES
    }
    processes = [p for b in measured for p in b.get("processes") or []]
    found.update(
        reps=len(measured),
        per=measured[0].get("per"),
        service_names=sorted({p["name"] for p in processes if p["kind"] == "service"}),
        unmeasured=sorted(
            {f"{p['name']} ({p['why']})" for p in processes if not p.get("measured")}
        ),
        threads_ended=sum(p.get("threads_ended") or 0 for p in processes),
        lifetime_peaks=sorted(
            {
                p["name"]
                for p in processes
                if p.get("measured")
                and p["kind"] == "service"
                and p.get("peak_rss_scope") != "window"
            }
        ),
    )
    return found


def _latest(values: list) -> int | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def startup(run: RunData) -> dict:
    """One run's start-up, the slowest of its node processes for each step: the driver's
    open to every peer matched (no start barrier in it), the node's start (main) to
    matched (for ping: its handshake's echo, after the start barrier), and the node's
    start to the first message its receivers got (warm-up and handshakes count)."""
    open_to, start_to, first = [], [], []
    for summary in run.summaries.values():
        timing = summary.get("timing") or {}
        started = timing.get("started_ns")
        open_to.append(timing.get("discovery_ns"))
        if started and timing.get("matched_ns"):
            start_to.append(timing["matched_ns"] - started)
        if started and timing.get("first_receive_ns") and summary.get("role") in ("ping", "sub"):
            first.append(timing["first_receive_ns"] - started)
    return {
        "open_to_matched_ns": _latest(open_to),
        "start_to_matched_ns": _latest(start_to),
        "start_to_first_message_ns": _latest(first),
    }


def startups(runs: list[RunData]) -> dict:
    """Each STARTUP_KEYS median over the repetitions, and how many had them."""
    each = [startup(r) for r in runs]
    found = {key: median_present([s[key] for s in each]) for key in STARTUP_KEYS}
    found["reps"] = sum(1 for s in each if any(v is not None for v in s.values()))
    return found
