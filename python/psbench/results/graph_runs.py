"""A graph run in a result set: one configuration per path of interest, whose latency
series is the path's reaction latency (docs/graphs.md, "What is measured"), so that
every table, plot, significance test and `compare` treats a graph's paths as it treats
other runs. run.json's `graph` block names the paths and the graph's sources; the
samples come from the modules' record files."""

import numpy as np

from psbench.results.graph_paths import path_figures
from psbench.results.graph_records import RecordFileError, read_module
from psbench.results.samples import RECORD_DTYPE, Samples, SamplesFileError


def paths_of(record: dict) -> list[str]:
    """The paths of a graph run's run.json (none for any other run)."""
    return list((record.get("graph") or {}).get("paths") or {})


def path_samples(run_dir, record: dict, path: str) -> Samples:
    """The reaction latency of each source sample that reached the path's sink, as a
    one-way samples series (sequence = the sample's place, sent at its birth)."""
    graph = record["graph"]
    p = graph["paths"][path]
    try:
        source, sink = read_module(run_dir, p["from"]), read_module(run_dir, p["to"])
    except RecordFileError as exc:
        raise SamplesFileError(str(exc)) from None
    offset = (p.get("clock") or {}).get("offset_removed_ns", 0.0)  # real machines
    figures = path_figures(
        source, sink, graph["sources"].index(p["from"]), p.get("deadline_ns"), offset
    )
    records = np.zeros(len(figures.reaction_ns), dtype=RECORD_DTYPE)
    records["seq"] = np.arange(len(records))
    records["latency_ns"] = figures.reaction_ns
    return Samples(path=run_dir, kind="one_way", start_ns=0, records=records)


def path_counts(record: dict, path: str) -> dict:
    """Sent: source samples that could have reached the sink; samples: those that did;
    lost: the drops (overwritten, undersampled or lost on the way)."""
    p = record["graph"]["paths"][path]
    return {"sent": p["published"], "samples": p["reached"], "lost": p["dropped"]}
