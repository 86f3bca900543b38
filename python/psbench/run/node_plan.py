"""One node process of a run: its name, its roles, and what sets it apart from the
others of its kind."""

from dataclasses import dataclass


@dataclass
class NodePlan:
    """One node process: its name (the stem of its output files) and the roles it runs;
    pubsub also its topic (None: the node's default), its writer id (a publisher of
    several) and whether it takes part in the echo (latency under load)."""

    name: str
    roles: list[str]
    topic: str | None = None
    writer_id: int | None = None
    echo: bool = False
    start_after: float | None = None  # a late joiner: started this long after GO
    # A module of a graph (run/graph/plans.py): its own node arguments, and the topics
    # it reads and writes (where its peers are).
    extra: tuple[str, ...] = ()
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
