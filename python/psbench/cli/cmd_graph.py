"""`psbench graph check FILE...`: whether graph files are valid (every problem with its
file, line and fix; exit 2), and what each describes: its modules, sources, paths and
mappings (docs/graphs.md)."""

import sys
from pathlib import Path

from psbench.base.units import micros
from psbench.cli.commands import help_of
from psbench.run.experiment.problems import ExperimentError
from psbench.run.graph.load import load_graph
from psbench.run.graph.model import Graph

HELP = help_of("graph")
CHECK_HELP = "validate graph files and say what each describes; exit 2 on a problem"


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("graph", help=HELP, description=HELP)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    check = commands.add_parser("check", help=CHECK_HELP, description=CHECK_HELP)
    check.add_argument("graphs", nargs="+", metavar="GRAPH.yaml", help="graph files")
    check.set_defaults(handler=check_command)
    parser.set_defaults(handler=lambda args: _usage(parser))


def _usage(parser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _period(module) -> str:
    if module.period_ns is None:
        return f"on {module.on} input"
    return (
        f"every {micros(module.period_ns / 1000)} µs"
        if module.period_ns < 1e6
        else (f"every {module.period_ns / 1e6:g} ms")
    )


def describe(graph: Graph) -> list[str]:
    lines = [f"{graph.file}: graph {graph.name}: {len(graph.modules)} modules, "
             f"{len(graph.topics)} topics, {len(graph.paths)} paths, "
             f"{len(graph.mappings)} mappings"]  # fmt: skip
    for m in graph.modules.values():
        reads = f" reads {', '.join(m.subscribes)};" if m.subscribes else " source;"
        writes = f" writes {', '.join(m.publishes)}" if m.publishes else " writes nothing"
        lines.append(f"  module {m.name}: {_period(m)};{reads}{writes}")
    for p in graph.paths.values():
        deadline = f", deadline {p.deadline_ns / 1e6:g} ms" if p.deadline_ns else ""
        lines.append(f"  path {p.name}: {p.source} -> {p.sink}{deadline}")
    for mapping in graph.mappings.values():
        hosts = "; ".join(f"{h}: {', '.join(ms)}" for h, ms in mapping.hosts.items())
        lines.append(f"  mapping {mapping.name}: {hosts}")
    return lines


def check_command(args) -> int:
    failed = 0
    for file in args.graphs:
        try:
            graph = load_graph(Path(file), file)
        except ExperimentError as exc:
            failed += 1
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            count = len(exc.problems)
            print(f"psbench graph check: {count} problem{'s' if count != 1 else ''} in {file} "
                  f"(docs/graphs.md lists every key)", file=sys.stderr)  # fmt: skip
            continue
        print("\n".join(describe(graph)))
    return 2 if failed else 0
