"""The subcommands: each one's module and one-line help, without importing any of them,
so that `psbench --help` and a light command start fast (cli.py imports the module of
the command being run, and only that one)."""

import sys

COMMANDS = {
    "drivers": ("psbench.cli.cmd_drivers", "list the built drivers and their capabilities"),
    "env": (
        "psbench.cli.cmd_env",
        "what shapes latency on this machine (CPUs, idle states, limits)",
    ),
    "ping": (
        "psbench.cli.cmd_measure",
        "round-trip latency: ping sends, pong echoes (closed loop by default)",
    ),
    "pubsub": (
        "psbench.cli.cmd_measure",
        "one-way latency: pub sends at --rate (0: back to "
        "back), sub records receive - intended send",
    ),
    "ratesearch": (
        "psbench.cli.cmd_ratesearch",
        "maximum sustainable rate: the highest pubsub "
        "rate with loss and p99 latency within bounds, "
        "found by doubling then bisecting",
    ),
    "run": (
        "psbench.cli.cmd_run",
        "run every run of an experiment file (matrix, exclude, repetitions; docs/experiments.md)",
    ),
    "report": (
        "psbench.cli.cmd_report",
        "statistics, significance tests, tables, plots and an HTML report of a results folder",
    ),
    "demo": (
        "psbench.cli.cmd_demo",
        "every built driver beside the baselines at 64 B and 16 KiB, "
        "then its report (experiments/quickstart.yaml)",
    ),
    "compare": (
        "psbench.cli.cmd_compare",
        "compare two result sets: is B slower than A? (exit code 1 if so; docs/compare.md)",
    ),
    "history": (
        "psbench.cli.cmd_history",
        "results over time: `history add` result sets to one database, `history list` "
        "them, `history trend` per configuration with the changes called real (exit 1 on a "
        "regression with --fail-on-regression; docs/history.md)",
    ),
    "interop": (
        "psbench.cli.cmd_interop",
        "the interoperability matrix of drivers of one wire protocol (DDS vendors over "
        "RTPS): matched, delivered, latency, and where a failed pair parts",
    ),
    "criteria": (
        "psbench.cli.cmd_criteria",
        "a verified criteria matrix: short capability experiments per built driver "
        "(architecture, licence, interoperability, persistence, monitoring), each verdict "
        "with its evidence (docs/criteria.md)",
    ),
    "hosts": (
        "psbench.cli.cmd_hosts",
        "real machines over SSH: `hosts check` says whether each can run psbench's node",
    ),
    "graph": (
        "psbench.cli.cmd_graph",
        "application graphs: `graph check` validates graph files, `graph run` runs one "
        "(docs/graphs.md)",
    ),
    "reproduce": (
        "psbench.cli.cmd_reproduce",
        "rerun one seed study and report it in the paper's own form (docs/reproductions.md)",
    ),
}


def subcommands(parser, helps: dict[str, str]) -> list:
    """A command's own commands (graph check, history add, ...): their parsers in helps'
    order, each listed and described by its help. The command alone prints its help and
    exits 2."""
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    parser.set_defaults(handler=lambda args: _usage(parser))
    return [commands.add_parser(name, help=text, description=text) for name, text in helps.items()]


def _usage(parser) -> int:
    parser.print_help(sys.stderr)
    return 2
