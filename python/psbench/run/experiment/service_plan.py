"""Which services (brokers, daemons) each run of a sweep needs, so that one stops as soon
as no later run needs it, and an order of the runs within a round that keeps the runs of
one service together (experiment key `order`: grouped, the default, or as-written)."""

from pathlib import Path

from psbench.base import paths
from psbench.run import drivers, services
from psbench.run.spec import MeasureSpec


def needs(specs: list[MeasureSpec]) -> list[frozenset[str]]:
    """Per spec, the keys of the sweep's service instances it uses (ServicePool keys).
    A run on hosts starts its own services with its network: none of the sweep's."""
    node = paths.require_node()
    described: dict[str, dict] = {}

    def describe(library: str) -> dict:
        if library not in described:
            try:
                described[library] = drivers.describe(node, Path(library))
            except RuntimeError:  # the run itself will say what is wrong
                described[library] = {}
        return described[library]

    return [
        frozenset()
        if spec.hosts
        else frozenset().union(
            *(
                services.instance_keys(
                    describe(library),
                    spec.transport,
                    spec.options,
                    spec.security,
                    spec.durability == "persistent",
                )
                for library in spec.libraries()
            )
        )
        for spec in specs
    ]


def grouped(runs: list, run_needs: list[frozenset[str]]) -> list[int]:
    """The order (indexes into runs) that keeps, within each round of repetitions, the
    runs needing the same services together, in the order their group first appears;
    rounds stay one after the other."""
    order: list[int] = []
    start = 0
    while start < len(runs):
        end = start
        while end < len(runs) and runs[end].rep == runs[start].rep:
            end += 1
        first: dict[frozenset[str], int] = {}
        for i in range(start, end):
            first.setdefault(run_needs[i], i)
        order += sorted(range(start, end), key=lambda i: first[run_needs[i]])
        start = end
    return order


def still_needed(run_needs: list[frozenset[str]], done: int) -> set[str]:
    """What the runs after the first `done` need."""
    return set().union(*run_needs[done:])
