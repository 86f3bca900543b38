"""`psbench graph check FILE...`: whether graph files are valid (every problem with its
file, line and fix; exit 2), and what each describes: its modules, sources, paths and
mappings. `psbench graph run --graph FILE --driver D`: one run of a graph, one node
process per module, placed by one of its mappings (docs/graphs.md)."""

import sys
from pathlib import Path
from types import SimpleNamespace

from psbench.base.errors import UserError
from psbench.base.problems import ExperimentError
from psbench.base.units import micros
from psbench.cli import run_options
from psbench.cli.commands import subcommands
from psbench.run.graph.load import load_graph
from psbench.run.graph.model import Graph

CHECK_HELP = "validate graph files and say what each describes; exit 2 on a problem"
RUN_HELP = (
    "run a graph: one process per module, placed by a mapping; per path reaction latency, "
    "data age, deadline misses and drops, per module activations and lateness"
)


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("graph")
    check, run = subcommands(parser, {"check": CHECK_HELP, "run": RUN_HELP})
    check.add_argument("graphs", nargs="+", metavar="GRAPH.yaml", help="graph files")
    check.set_defaults(handler=check_command)
    run_options.add_run_arguments(run, "graph")
    run.add_argument("--quiet", action="store_true", help="no interval lines while it measures")
    run.add_argument("--json", action="store_true", help="the summary as JSON on stdout")
    run.set_defaults(handler=run_command, kind="graph")


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


def graph_spec(args):
    """The run the arguments describe; the graph read and checked, its mapping chosen."""
    from psbench.cli import cmd_measure
    from psbench.run import drivers, run_rules
    from psbench.run.graph.plans import placed, reliability_of
    from psbench.run.parameters import cli_term
    from psbench.run.spec import MeasureSpec

    try:
        graph = load_graph(Path(args.graph), args.graph)
    except ExperimentError as exc:
        raise UserError("argument --graph: " + "; ".join(map(str, exc.problems))) from None
    mapping_name = args.mapping or next(iter(graph.mappings))
    if mapping_name not in graph.mappings:
        raise UserError(
            f"argument --mapping: {mapping_name!r} is not one of the graph's mappings; use "
            f"{', '.join(graph.mappings)}"
        )
    mapping = graph.mappings[mapping_name]
    hosts = cmd_measure._hosts(args.host_declarations)
    if len(mapping.hosts) > 1 and sorted(hosts) != sorted(mapping.hosts):
        raise UserError(
            f"argument --host: mapping {mapping_name} places modules on hosts "
            f"{', '.join(mapping.hosts)}: declare each, e.g. "
            + " ".join(f"--host {h}:rate=100mbit" for h in mapping.hosts)
        )
    place, cpus = placed(graph, mapping, hosts)
    reliability, conflict = reliability_of(graph, args.reliability)
    if conflict:
        raise UserError(f"argument --reliability: {conflict}")
    for module, cpu in args.cpu:
        if module not in graph.modules:
            raise UserError(f"argument --cpu: {module!r} is not a module of the graph")
        cpus[module] = cpu
    values = run_options.spec_values(args, "graph")
    values["duration"] = None if args.count else args.duration  # its default: --count unset
    late = run_rules.timeout_problem(SimpleNamespace(**values), cli_term)
    if late is not None:
        raise UserError(late.message)
    values.update(
        kind="graph",
        driver_path=drivers.find_driver(args.driver),
        reliability=reliability,
        cpus=cpus,
        hosts=hosts,
        place=place,
        mapping=mapping_name,
    )
    return MeasureSpec(**values)


def run_command(args) -> int:
    from psbench.base import paths
    from psbench.cli import cmd_measure
    from psbench.hosts import inventory, ssh

    ssh.use_config(getattr(args, "ssh_config", None))
    inventory.use(getattr(args, "inventory", None))
    paths.require_node()
    return cmd_measure.run_command(args, graph_spec(args))
