"""The command line: subcommands, and errors printed as messages, not tracebacks."""

import argparse
import importlib
import signal
import sys

import psbench
from psbench.base.errors import UserError
from psbench.cli.arg_parser import Parser
from psbench.cli.commands import COMMANDS


class _Prebuilt:
    """Stands in for argparse's subparsers when a command's module adds its parsers:
    the parser of each command exists already (created with its help, so that `psbench
    --help` and "did you mean" know every command without importing one)."""

    def __init__(self, parsers: dict):
        self.parsers = parsers

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        parser = self.parsers[name]
        parser.description = kwargs.get("description") or parser.description
        return parser


def _command_of(argv: list[str]) -> str | None:
    """The command named on the line: the first word that is not an option."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the options of the command argv names (all commands' options
    when argv is None: every module imported, e.g. for the tests)."""
    parser = Parser(
        prog="psbench",
        description="Latency benchmark for publish/subscribe middleware. See docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"psbench {psbench.__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    parsers = {
        name: subparsers.add_parser(name, help=text, description=text)
        for name, (_, text) in COMMANDS.items()
    }
    for sub in parsers.values():
        sub.set_defaults(subcommand_parser=sub)  # whose usage an unknown option shows
    wanted = [_command_of(argv)] if argv is not None else list(COMMANDS)
    modules = dict.fromkeys(COMMANDS[name][0] for name in wanted if name in COMMANDS)
    for module in modules:  # only the command being run: the others cost nothing
        importlib.import_module(module).add_parsers(_Prebuilt(parsers))
    return parser


def _terminate(signum, frame):
    # SIGTERM/SIGHUP take the same path as Ctrl-C: stop the node processes, record.
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
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
