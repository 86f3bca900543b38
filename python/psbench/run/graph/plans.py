"""A graph run's node processes: one per module of the graph, placed by the run's
mapping, each told its part of the graph (docs/graphs.md, "The node's module role")."""

from functools import lru_cache
from pathlib import Path

from psbench.run.graph.locate import resolve
from psbench.run.graph.model import Graph, Mapping, Module
from psbench.run.node_plan import NodePlan


@lru_cache(maxsize=16)
def _cached(path: str, mtime_ns: int) -> Graph:
    del mtime_ns  # part of the key: an edited file is read again
    # Imported here: reading YAML is for graph runs only (`psbench ping --help` stays light).
    from psbench.run.graph.load import load_graph

    return load_graph(Path(path))


def graph_of(spec) -> Graph:
    path = resolve(spec.graph)
    return _cached(str(path.resolve()), path.stat().st_mtime_ns)


def mapping_of(spec, graph: Graph | None = None) -> Mapping:
    graph = graph or graph_of(spec)
    return graph.mappings[spec.mapping] if spec.mapping else next(iter(graph.mappings.values()))


def topic_size(spec, graph: Graph, topic: str) -> int:
    """Every topic's --size when the run gives one (size > 0), else the graph's."""
    return spec.size or graph.topics[topic].size


def largest_message(spec) -> int:
    """The largest message a run sends (what a broker's configuration is sized for)."""
    if spec.kind != "graph":
        return spec.size
    graph = graph_of(spec)
    return max(topic_size(spec, graph, t) for t in graph.topics)


def module_argv(spec, graph: Graph, module: Module) -> list[str]:
    sources = graph.sources
    argv = [
        "--module", module.name,
        "--module-id", str(list(graph.modules).index(module.name)),
        "--sources", str(len(sources)),
        "--period", str(module.period_ns or 0),
        "--on", module.on,
        "--work", str(module.work_ns[0]),
    ]  # fmt: skip
    if module.work_ns[1] != module.work_ns[0]:
        argv += ["--work-max", str(module.work_ns[1])]
    if module.priority is not None:  # its own SCHED_FIFO priority, before the run's
        argv += ["--fifo", str(module.priority)]
    if module.is_source:
        argv += ["--source-index", str(sources.index(module.name))]
    feedback = graph.feedback_inputs()
    for topic in module.subscribes:
        closing = ":feedback" if (module.name, topic) in feedback else ""
        argv += ["--input", f"{topic}:{len(graph.writers(topic))}{closing}"]
    for topic in module.publishes:
        size, readers = topic_size(spec, graph, topic), len(graph.readers(topic))
        argv += ["--output", f"{topic}:{size}:{readers}"]
    return argv


def graph_plans(spec) -> list[NodePlan]:
    graph = graph_of(spec)
    return [
        NodePlan(
            m.name,
            ["module"],
            extra=tuple(module_argv(spec, graph, m)),
            reads=frozenset(m.subscribes),
            writes=frozenset(m.publishes),
        )
        for m in graph.modules.values()
    ]


def placed(graph: Graph, mapping: Mapping, hosts: dict) -> tuple[dict, dict]:
    """The run's place (module -> host) and CPUs (module -> CPU) from its mapping: on
    declared hosts when the mapping names them, else (one host) on this machine."""
    place = {m: mapping.host_of(m) for m in graph.modules} if hosts else {}
    return place, dict(mapping.cpus)


def reliability_of(graph: Graph, run_reliability: str | None) -> tuple[str | None, str | None]:
    """The run's reliability and why it cannot be: every topic of a run has one
    reliability (the node's), so the topics that give one must agree, with each other
    and with the run's when it gives one."""
    given = {t.reliability for t in graph.topics.values() if t.reliability}
    if not given:
        return run_reliability, None
    if len(given) > 1:
        return None, (f"the graph's topics ask for {' and '.join(sorted(given))}: every topic "
                      f"of a run has one reliability; make them equal")  # fmt: skip
    (wanted,) = given
    if run_reliability and run_reliability != wanted:
        return None, (f"the graph's topics ask for {wanted}, the run for {run_reliability}: "
                      f"leave the run's out, or make them equal")  # fmt: skip
    return wanted, None
