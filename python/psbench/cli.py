"""The command line: subcommands, and errors printed as messages, not tracebacks."""

import argparse
import signal
import sys

import psbench
from psbench import (cmd_compare, cmd_demo, cmd_drivers, cmd_env, cmd_measure,
                     cmd_ratesearch, cmd_report, cmd_reproduce, cmd_run)
from psbench.arg_parser import Parser
from psbench.errors import UserError


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="psbench",
        description="Latency benchmark for publish/subscribe middleware. "
                    "See docs/cli.md.")
    parser.add_argument("--version", action="version",
                        version=f"psbench {psbench.__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module in (cmd_drivers, cmd_env, cmd_measure, cmd_ratesearch, cmd_run, cmd_report,
                   cmd_demo, cmd_compare, cmd_reproduce):
        module.add_parsers(subparsers)
    for name, sub in subparsers.choices.items():
        sub.set_defaults(subcommand_parser=sub)   # whose usage an unknown option shows
    return parser


def _terminate(signum, frame):
    # SIGTERM/SIGHUP take the same path as Ctrl-C: stop the node processes, record.
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        getattr(args, "subcommand_parser", parser).unknown_options(extras)
    if not hasattr(args, "handler"):
        parser.print_help(sys.stderr)
        return 2
    # Also when started with SIGINT ignored (a background job of a script): a run must
    # always be stoppable, and stopping must go through the cleanup.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    try:
        return args.handler(args)
    except UserError as exc:
        print(f"psbench: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("psbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1  # output closed early, e.g. piped into `head`
