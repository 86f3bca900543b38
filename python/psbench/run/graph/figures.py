"""run.json's `graph` block: a graph run's figures from its modules' record files
(psbench.results.graph_paths), named as the graph names them: per path, per module
(with its summary's counts), per edge."""

from pathlib import Path

from psbench.results.graph_paths import edge_figures, module_figures, path_figures
from psbench.results.graph_records import RecordFileError, read_module
from psbench.run.graph.model import Graph


def graph_figures(
    graph: Graph, mapping: str, run_dir: Path, summaries: dict
) -> tuple[dict, list[str]]:
    """The figures, and the problems that kept some from being computed (a module whose
    records are missing or broken: it failed, or was stopped before writing them)."""
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
            figures = path_figures(records[p.source], records[p.sink], index, p.deadline_ns)
            paths[p.name] = {"from": p.source, "to": p.sink, "deadline_ns": p.deadline_ns,
                             **figures.to_json()}  # fmt: skip
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
        edges += edge_figures(records[name], list(module.subscribes), ids)
    return {
        "graph": graph.name,
        "file": graph.file,
        "mapping": mapping,
        "sources": graph.sources,
        "paths": paths,
        "modules": modules,
        "edges": edges,
    }, problems
