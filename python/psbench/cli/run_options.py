"""The options of one run (`psbench ping|pubsub|ratesearch|graph run`), built from the
table of run parameters (run/parameters.py), and the MeasureSpec fields they give."""

import argparse

from psbench.base.options import add_ssh_config_argument
from psbench.run import parameters
from psbench.run.parameters import Param


def _argument(param: Param, kind: str) -> dict:
    """add_argument's keywords for one parameter of a kind of run."""
    given: dict = {"help": param.help_for(kind), "dest": param.attribute}
    if param.shape == "flag":
        return given | {"action": "store_true"}
    given |= {"type": param.parse, "metavar": param.metavar_for(kind)}
    if param.shape == "optional":
        return given | {"nargs": "?", "const": True, "default": False}
    if param.shape == "repeat":
        return given | {"action": "append", "default": []}
    given |= {"choices": param.choices, "default": param.default_for(kind)}
    return given | ({"required": True} if param.required else {})


def add_run_arguments(parser: argparse.ArgumentParser, kind: str, leave_out=()) -> None:
    """The options of one run of `kind` ("ping", "pubsub" or "graph"); leave_out: names
    another option decides (`psbench ratesearch` chooses each step's rate)."""
    groups: dict = {}  # group name -> its argparse group
    for param in parameters.of_kind(kind):
        if not param.cli or param.name in leave_out:
            continue
        target = parser
        if param.group is not None:
            if param.group not in groups:
                groups[param.group] = parser.add_mutually_exclusive_group()
            target = groups[param.group]
        target.add_argument(param.option, **_argument(param, kind))
    add_ssh_config_argument(parser)
    parser.add_argument(
        "--results", metavar="DIR", help="results directory (default results/ or $PSBENCH_RESULTS)"
    )


def spec_values(args: argparse.Namespace, kind: str) -> dict:
    """MeasureSpec's fields as the command line gives them. options is already the
    spec's list of KEY=VALUE; cpus, hosts and place are as written (lists of pairs), for
    the caller to check and make mappings."""
    return {
        param.name: getattr(args, param.attribute, None)
        for param in parameters.of_kind(kind)
        if param.cli
    }


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """The criteria of `psbench ratesearch`."""
    for criterion in parameters.SEARCH:
        parser.add_argument(
            criterion.option,
            type=criterion.parse,
            default=criterion.default,
            metavar=criterion.metavar,
            help=criterion.help,
        )
