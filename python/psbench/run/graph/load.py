"""A graph file read, parsed and checked: the Graph, or every problem at once (exit 2)."""

from pathlib import Path

from psbench.base.problems import ExperimentError, ProblemList
from psbench.base.yaml_file import FileKind, LoadError, load
from psbench.run.graph.check import check
from psbench.run.graph.locate import resolve
from psbench.run.graph.model import Graph, Mapping
from psbench.run.graph.parse import EXAMPLE, parse

GRAPH = FileKind("graph", EXAMPLE, "name, modules, topics, paths, mappings", "a graph")
ONE_HOST = "one-host"  # the mapping of a graph that gives none: every module on host a


def load_graph(path: Path, display: str | None = None) -> Graph:
    display = display or str(path)
    path = resolve(path)
    try:
        _, tree = load(path, display, GRAPH)
    except LoadError as exc:
        raise ExperimentError(exc.problems) from None
    problems = ProblemList()
    graph = parse(tree, display, problems)
    if not problems:
        check(graph, problems)
    if problems:
        raise ExperimentError(problems.items)
    if not graph.mappings:
        graph.mappings[ONE_HOST] = Mapping(ONE_HOST, 0, {"a": tuple(graph.modules)})
    return graph
