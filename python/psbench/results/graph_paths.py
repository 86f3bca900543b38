"""What a graph run measured (docs/graphs.md, "What is measured"): per path from a
source to a sink, the reaction latency (a source sample to the first output of the sink
that holds it), the data age (each output of the sink against the freshest sample of
the source behind it), deadline misses and drops; per module its activations, overruns
and how late its timer activations began; per edge the transport latency.

Everything comes from the modules' record files (graph_records); the origin timestamps
travel in the messages, so on one host (one clock) nothing needs correcting."""

from dataclasses import dataclass

import numpy as np

from psbench.results.graph_records import FLAG_OVERRUN, TIMER, ModuleRecords
from psbench.results.stats import summarize_ns


@dataclass
class PathFigures:
    reaction_ns: np.ndarray  # per source sample that reached the sink
    data_age_ns: np.ndarray  # per sink output holding data of the source
    published: int  # source samples up to the last one that reached the sink
    reached: int
    deadline_misses: int | None  # reactions over the deadline (None: no deadline)
    after_last: int  # source samples after the last that reached: in flight at the end

    @property
    def dropped(self) -> int:
        return self.published - self.reached

    def to_json(self) -> dict:
        return {
            "reaction": summarize_ns(self.reaction_ns),
            "data_age": summarize_ns(self.data_age_ns),
            "published": self.published,
            "reached": self.reached,
            "dropped": self.dropped,
            "deadline_misses": self.deadline_misses,
            "in_flight_at_end": self.after_last,
        }


def path_figures(
    source: ModuleRecords,
    sink: ModuleRecords,
    source_index: int,
    deadline_ns: int | None,
    offset_ns: float = 0.0,
) -> PathFigures:
    """offset_ns: the sink's clock minus the source's (real machines: taken out of every
    sink time; one machine, or emulated hosts: 0)."""
    origins = sink.origins[sink.origins["source"] == source_index]
    shift = int(round(offset_ns))
    ends = dict(zip(sink.activations["activation"].tolist(),
                    (sink.activations["end_ns"] - shift).tolist()))  # fmt: skip
    known = np.array([a in ends for a in origins["activation"].tolist()], dtype=bool)
    origins = origins[known]
    end_ns = np.array([ends[a] for a in origins["activation"].tolist()], dtype=np.int64)
    # Age while the source still produced: once it has stopped, a timer sink that keeps
    # running until the end markers reach it only ages its last sample.
    starts = np.sort(source.activations["start_ns"])
    live = end_ns <= _producing_until(starts)
    data_age = (end_ns - origins["newest_ns"])[live]
    # Reaction: each source sample's first output, by the sample's sequence number.
    first_end: dict[int, int] = {}
    born: dict[int, int] = {}
    for seq, end, newest in zip(origins["newest_seq"].tolist(), end_ns.tolist(),
                                origins["newest_ns"].tolist()):  # fmt: skip
        if seq not in first_end or end < first_end[seq]:
            first_end[seq], born[seq] = end, newest
    reaction = np.array([first_end[s] - born[s] for s in sorted(first_end)], dtype=np.int64)
    produced = np.sort(source.activations["activation"])
    last = max(first_end) if first_end else None
    published = int((produced <= last).sum()) if last is not None else 0
    misses = int((reaction > deadline_ns).sum()) if deadline_ns is not None else None
    return PathFigures(
        reaction_ns=reaction,
        data_age_ns=data_age,
        published=published,
        reached=len(first_end),
        deadline_misses=misses,
        after_last=int(len(produced) - published),
    )


def _producing_until(starts: np.ndarray) -> float:
    """When the source's next sample would have been due after its last one."""
    if len(starts) == 0:
        return -np.inf
    period = float(np.median(np.diff(starts))) if len(starts) > 1 else 0.0
    return float(starts[-1]) + period


def module_figures(records: ModuleRecords, period_ns: int | None) -> dict:
    """Activations, overruns, and for timer activations how late each began against its
    tick (lateness) and how far the time between two starts strayed from the period."""
    act = records.activations
    timed = act[act["trigger"] == TIMER]
    lateness = timed["start_ns"] - timed["scheduled_ns"]
    gaps = np.diff(np.sort(timed["start_ns"])) if len(timed) > 1 else np.empty(0, np.int64)
    stray = np.abs(gaps - period_ns) if period_ns else np.empty(0, np.int64)
    busy = act["end_ns"] - act["start_ns"]
    return {
        "activations": len(act),
        "overruns": int(((act["flags"] & FLAG_OVERRUN) != 0).sum()),
        "lateness": summarize_ns(lateness),
        "period_stray_max_ns": float(stray.max()) if len(stray) else None,
        "busy": summarize_ns(busy),
    }


def edge_figures(
    records: ModuleRecords,
    inputs: list[str],
    writers: dict[int, str],
    offsets: dict[int, float] | None = None,
) -> list[dict]:
    """Per input topic and writer module: transport latency (arrival - send) of every
    message the module took. inputs: its --input topics in order; writers: module id ->
    name; offsets: module id -> this module's clock minus that writer's (real machines)."""
    found = []
    arr = records.arrivals
    for index, topic in enumerate(inputs):
        mine = arr[arr["input"] == index]
        for writer in sorted(set(mine["writer"].tolist())):
            taken = mine[mine["writer"] == writer]
            shift = int(round((offsets or {}).get(writer, 0.0)))
            found.append(
                {
                    "topic": topic,
                    "writer": writers.get(writer, str(writer)),
                    "reader": records.name,
                    "latency": summarize_ns(taken["arrival_ns"] - taken["send_ns"] - shift),
                }
            )
    return found
