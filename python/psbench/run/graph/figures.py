"""run.json's `graph` block: a graph run's figures from its modules' record files
(psbench.results.graph_paths), named as the graph names them: per path, per module
(with its summary's counts), per edge. On real machines every time one module compares
with another's is corrected for their clocks' offset (run.json `clock`, read at the
middle of the run), which the path records with its uncertainty (docs/graphs.md)."""

from pathlib import Path

import numpy as np

from psbench.hosts.clock import FLAG_SHARE, Between, Offset
from psbench.results.graph_paths import edge_figures, module_figures, path_figures
from psbench.results.graph_records import RecordFileError, read_module
from psbench.run.graph.model import Graph


def _between(clock: dict | None, host: str | None, other: str | None) -> Between:
    """A module's clock against another's: nothing on one machine or on emulated hosts."""
    if not clock or host == other or host is None or other is None:
        return Between(None, None)
    hosts = clock["hosts"]
    return Between(Offset.from_json(hosts[host]), Offset.from_json(hosts[other]))


def _middle(clock: dict | None) -> float:
    readings = [h[w]["at_ns"] for h in (clock or {}).get("hosts", {}).values()
                for w in ("before", "after") if h.get(w)]  # fmt: skip
    return (min(readings) + max(readings)) / 2 if readings else 0.0


def graph_figures(
    graph: Graph,
    mapping: str,
    run_dir: Path,
    summaries: dict,
    clock: dict | None = None,
    place: dict | None = None,
) -> tuple[dict, list[str]]:
    """The figures, and the problems that kept some from being computed (a module whose
    records are missing or broken: it failed, or was stopped before writing them).
    clock, place: run.json's clock block and each module's host (real machines)."""
    place, middle = place or {}, _middle(clock)

    def offset(reader: str, writer: str) -> Between:
        return _between(clock, place.get(reader), place.get(writer))

    records, problems = {}, []
    for name in graph.modules:
        try:
            records[name] = read_module(run_dir, name)
        except RecordFileError as exc:
            problems.append(str(exc))
    ids = {i: name for i, name in enumerate(graph.modules)}
    paths = {}
    for p in graph.paths.values():
        if p.source in records and p.sink in records:
            index = graph.sources.index(p.source)
            between = offset(p.sink, p.source)
            figures = path_figures(records[p.source], records[p.sink], index, p.deadline_ns,
                                   between.at(middle))  # fmt: skip
            paths[p.name] = {"from": p.source, "to": p.sink, "deadline_ns": p.deadline_ns,
                             **figures.to_json()}  # fmt: skip
            if between.receiver is not None:
                paths[p.name]["clock"] = _clock_note(between, middle, figures.reaction_ns)
    modules, edges = {}, []
    for name, module in graph.modules.items():
        if name not in records:
            continue
        summary = summaries.get(name) or {}
        usage = (summary.get("usage") or {}).get("process") or {}
        modules[name] = {
            "period_ns": module.period_ns,
            "on": module.on,
            "counts": summary.get("counts"),
            "cpu_s": (usage["user_s"] + usage["sys_s"]) if "user_s" in usage else None,
            **module_figures(records[name], module.period_ns),
        }
        offsets = {i: offset(name, writer).at(middle) for i, writer in ids.items()}
        edges += edge_figures(records[name], list(module.subscribes), ids, offsets)
    return {
        "graph": graph.name,
        "file": graph.file,
        "mapping": mapping,
        "sources": graph.sources,
        "paths": paths,
        "modules": modules,
        "edges": edges,
    }, problems


def _clock_note(between: Between, middle: float, reaction_ns) -> dict:
    """What was taken out of a path between two real machines, and whether its figures
    can be trusted (as one-way latency's: psbench.results.clock_correction)."""
    median = float(np.median(reaction_ns)) if len(reaction_ns) else None
    share = between.uncertainty_ns / abs(median) if median else None
    flagged = share is None or share > FLAG_SHARE or between.drifted
    return {
        "offset_removed_ns": between.at(middle),
        "uncertainty_ns": between.uncertainty_ns,
        "share_of_median": share,
        "drifted": between.drifted,
        "flagged": flagged,
    }
