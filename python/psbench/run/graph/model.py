"""A graph as psbench runs it: modules, topics, paths of interest and mappings, each
remembering the line it was written on (docs/graphs.md)."""

from dataclasses import dataclass, field

TRIGGERS = ("timer", "any", "all")
GRAPH_HEADER = 48  # the message header (32) and the graph header (16)
ORIGIN_ENTRY = 32  # per source, in every message


@dataclass(frozen=True)
class Module:
    name: str
    line: int
    period_ns: int | None  # None: activated by its inputs
    on: str  # timer, any or all
    work_ns: tuple[int, int]  # drawn uniformly in [low, high] per activation
    subscribes: tuple[str, ...] = ()
    publishes: tuple[str, ...] = ()
    priority: int | None = None  # SCHED_FIFO priority, None: the run's

    @property
    def is_source(self) -> bool:
        return not self.subscribes


@dataclass(frozen=True)
class Topic:
    name: str
    line: int
    size: int  # bytes, the whole message
    reliability: str | None = None  # None: the run's


@dataclass(frozen=True)
class PathOfInterest:
    name: str
    line: int
    source: str  # a source module
    sink: str
    deadline_ns: int | None = None


@dataclass(frozen=True)
class Mapping:
    name: str
    line: int
    hosts: dict[str, tuple[str, ...]]  # host -> its modules
    cpus: dict[str, int] = field(default_factory=dict)  # module -> CPU

    def host_of(self, module: str) -> str:
        return next(h for h, modules in self.hosts.items() if module in modules)


@dataclass
class Graph:
    file: str
    name: str
    description: str | None
    modules: dict[str, Module]
    topics: dict[str, Topic]
    paths: dict[str, PathOfInterest]
    mappings: dict[str, Mapping]

    @property
    def sources(self) -> list[str]:
        """The source modules in file order: a source's index is its place here."""
        return [m.name for m in self.modules.values() if m.is_source]

    def writers(self, topic: str) -> list[str]:
        return [m.name for m in self.modules.values() if topic in m.publishes]

    def readers(self, topic: str) -> list[str]:
        return [m.name for m in self.modules.values() if topic in m.subscribes]

    @property
    def smallest_message(self) -> int:
        """What a message must hold: its headers and an origin entry per source."""
        return GRAPH_HEADER + ORIGIN_ENTRY * len(self.sources)

    def feedback_inputs(self) -> set[tuple[str, str]]:
        """(module, topic) inputs that close a cycle: found by a depth-first walk from
        the sources in file order, an input from a module still on the walk's path. A
        module does not wait for their end markers (their writers end after it), so
        that a graph with a cycle still ends (docs/graphs.md, "Ends")."""
        found, done, on_path = set(), set(), []

        def walk(name: str) -> None:
            on_path.append(name)
            for topic in self.modules[name].publishes:
                for reader in self.readers(topic):
                    if reader in on_path:
                        found.add((reader, topic))
                    elif reader not in done:
                        walk(reader)
            on_path.pop()
            done.add(name)

        for name in self.sources + list(self.modules):
            if name not in done:
                walk(name)
        return found
