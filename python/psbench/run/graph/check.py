"""What needs the whole graph: names that must exist, topics someone writes, cycles
that only inputs would drive, paths that data can take, message sizes, mappings that
place every module once (docs/graphs.md, "Validation")."""

import difflib

from psbench.base.problems import ProblemList
from psbench.run.graph.model import Graph, Mapping

MAX_SOURCES = 64  # the origin table of every message has one entry per source


def _unknown(name: str, known, what: str) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f"did you mean {close[0]}?" if close else f"declare it under {what}"
    return f"{name} is not one of the {what}; {hint}"


def check(graph: Graph, problems: ProblemList) -> None:
    add = lambda line, where, message: problems.add(graph.file, line, where, message)  # noqa: E731
    _names(graph, add)
    _cycles(graph, add)
    _paths(graph, add)
    _sizes(graph, add)
    _reliabilities(graph, add)
    for mapping in graph.mappings.values():
        _mapping(graph, mapping, add)


def _names(graph: Graph, add) -> None:
    used = set()
    for m in graph.modules.values():
        for key in ("subscribes", "publishes"):
            for topic in getattr(m, key):
                used.add(topic)
                if topic not in graph.topics:
                    add(m.line, f"modules.{m.name}.{key}", _unknown(topic, graph.topics, "topics"))
        for topic in m.subscribes:
            if topic in graph.topics and not graph.writers(topic):
                add(m.line, f"modules.{m.name}.subscribes",
                    f"no module publishes {topic}; add it to a module's publishes")  # fmt: skip
        if not m.subscribes and not m.publishes:
            add(
                m.line,
                f"modules.{m.name}",
                "reads and writes nothing; give it subscribes or publishes",
            )
    for topic in graph.topics.values():
        if topic.name not in used:
            add(topic.line, f"topics.{topic.name}", "no module uses it; remove it or use it")
    if graph.modules and not graph.sources:
        add(1, "modules", "no module is a source (one without subscribes, on a period): "
            "nothing would start the data")  # fmt: skip
    if len(graph.sources) > MAX_SOURCES:
        add(1, "modules", f"{len(graph.sources)} sources; at most {MAX_SOURCES}")


def downstream(graph: Graph, module: str) -> set[str]:
    """The modules that read what this one writes."""
    return {r for t in graph.modules[module].publishes for r in graph.readers(t)}


def _cycles(graph: Graph, add) -> None:
    """A cycle of modules activated only by their inputs would pass one message round
    forever (on: any) or wait for itself forever (on: all): one of them needs a timer."""
    driven = {n for n, m in graph.modules.items() if m.on != "timer"}
    seen, reported = set(), set()

    def visit(node, stack):
        if node in stack:
            cycle = stack[stack.index(node) :]
            key = frozenset(cycle)
            if key not in reported:
                reported.add(key)
                first = graph.modules[cycle[0]]
                add(first.line, f"modules.{first.name}",
                    f"{' -> '.join(cycle + [node])} is a cycle of modules activated only by "
                    f"their inputs; give one of them a period (on: timer)")  # fmt: skip
            return
        if node in seen:
            return
        seen.add(node)
        for nxt in sorted(downstream(graph, node) & driven):
            visit(nxt, stack + [node])

    for name in sorted(driven):
        visit(name, [])


def _paths(graph: Graph, add) -> None:
    for p in graph.paths.values():
        where = f"paths.{p.name}"
        for key, name in (("from", p.source), ("to", p.sink)):
            if name not in graph.modules:
                add(p.line, f"{where}.{key}", _unknown(name, graph.modules, "modules"))
        if p.source not in graph.modules or p.sink not in graph.modules:
            continue
        if not graph.modules[p.source].is_source:
            add(p.line, f"{where}.from",
                f"{p.source} subscribes to topics: a path starts at a source (a module "
                f"without subscribes: {', '.join(graph.sources) or 'none'})")  # fmt: skip
            continue
        reached, todo = set(), [p.source]
        while todo:
            for nxt in downstream(graph, todo.pop()) - reached:
                reached.add(nxt)
                todo.append(nxt)
        if p.sink not in reached:
            add(p.line, where, f"no data from {p.source} reaches {p.sink}: no chain of "
                "publishes and subscribes joins them")  # fmt: skip


def _reliabilities(graph: Graph, add) -> None:
    """A run gives every topic one reliability (the node's): topics that set one agree."""
    first = None
    for topic in graph.topics.values():
        if topic.reliability is None:
            continue
        if first is None:
            first = topic
        elif topic.reliability != first.reliability:
            add(topic.line, f"topics.{topic.name}.reliability",
                f"{topic.reliability}, but {first.name} is {first.reliability}: every topic of a "
                f"run has one reliability; make them equal (or set the run's: --reliability)")  # fmt: skip


def _sizes(graph: Graph, add) -> None:
    smallest = graph.smallest_message
    for topic in graph.topics.values():
        if topic.size < smallest:
            add(topic.line, f"topics.{topic.name}.size",
                f"{topic.size} bytes cannot hold a graph message's headers and one origin "
                f"entry per source ({len(graph.sources)}): at least {smallest}")  # fmt: skip


def _mapping(graph: Graph, mapping: Mapping, add) -> None:
    where = f"mappings.{mapping.name}"
    placed: dict[str, str] = {}
    for host, modules in mapping.hosts.items():
        for module in modules:
            if module not in graph.modules:
                add(
                    mapping.line,
                    f"{where}.hosts.{host}",
                    _unknown(module, graph.modules, "modules"),
                )
            elif module in placed:
                add(mapping.line, f"{where}.hosts.{host}",
                    f"{module} is on {placed[module]} already; place each module once")  # fmt: skip
            else:
                placed[module] = host
    missing = [m for m in graph.modules if m not in placed]
    if missing:
        add(mapping.line, f"{where}.hosts", f"{', '.join(missing)} on no host; place every module")
    for module in mapping.cpus:
        if module not in graph.modules:
            add(mapping.line, f"{where}.cpus", _unknown(module, graph.modules, "modules"))
