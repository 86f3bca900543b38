"""The parameters of one run and the values each takes.

A run's parameters are the options of `psbench ping` and `psbench pubsub`. Each value is
checked by the type function and choices of the command line's own parser (built by
options.add_measure_arguments), so a value is valid in a file exactly when it is valid as
an argument, and the message is the same.
"""

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, fields

from psbench.base import options as cli_options
from psbench.base.errors import UserError
from psbench.hosts import links
from psbench.run.spec import ROLES, MeasureSpec

KINDS = tuple(ROLES)  # ping, pubsub
# Parser destinations that are not parameters here, or that take another shape:
# `option` is the mapping `options`, `cpu` the mapping `cpus`.
SKIPPED_DESTS = {
    "help",
    "results",
    "option",
    "cpu",
    "inject",
    "security_fault",
    "host_declarations",
    "role_hosts",
    "ssh_config",
    "inventory",
}
# MeasureSpec fields that are not parameters: derived from others, or chosen by
# psbench at run time (auto), or a test hook of the command line only (inject).
DERIVED_FIELDS = {
    "driver_path",
    "role_drivers",
    "auto",
    "inject",
    "security_fault",
}  # role_drivers: from driver


class BadValue(ValueError):
    """A value a parameter does not take; the message says what would be right."""


@dataclass(frozen=True)
class Param:
    name: str
    kinds: tuple[str, ...]  # the kinds of run that take it
    defaults: dict  # kind -> psbench's default; None: the node's own
    parse: Callable[[object], object]
    help: str


def _shown(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def _scalar_parser(action: argparse.Action) -> Callable[[object], object]:
    """The action's type and choices, applied to a YAML scalar."""
    if action.nargs == 0:  # a flag (store_true)

        def parse_flag(value):
            if not isinstance(value, bool):
                raise BadValue(f"{_shown(value)} is not true or false; write true or false")
            return value

        return parse_flag

    def parse(value):
        if isinstance(value, bool) and action.nargs == "?" and action.const is True:
            return value  # a flag with an optional value (loan: true | false | auto)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            expected = action.metavar or "|".join(action.choices or ()) or "one value"
            hint = "; lists belong in the matrix" if isinstance(value, list) else ""
            raise BadValue(f"expected {expected}, got {_shown(value)}{hint}")
        text = str(value)
        result = text
        if action.type is not None:
            try:
                result = action.type(text)
            except argparse.ArgumentTypeError as exc:
                raise BadValue(str(exc)) from None
        if action.choices is not None and result not in action.choices:
            raise BadValue(f"{text!r} is not one of {', '.join(action.choices)}")
        return result

    return parse


def _kind(value):
    if value not in KINDS:
        raise BadValue(f"{_shown(value)} is not one of {', '.join(KINDS)}")
    return value


def parse_cpus(value):
    """'none' (no pinning) or a mapping role -> CPU this process may use."""
    if value == "none":
        return "none"
    if not isinstance(value, dict) or not value:
        raise BadValue(
            f"expected none or a mapping ROLE: CPU, e.g. {{ping: 0, pong: 1}}, got {_shown(value)}"
        )
    allowed = os.sched_getaffinity(0)
    cpus = {}
    for role, cpu in value.items():
        if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0:
            raise BadValue(f"{role}: {_shown(cpu)} is not a CPU number; e.g. {role}: 0")
        if cpu not in allowed:
            raise BadValue(
                f"{role}: CPU {cpu} is not available here; use one of "
                f"{', '.join(map(str, sorted(allowed)))}"
            )
        cpus[str(role)] = cpu
    return cpus


def parse_hosts(value):
    """A mapping host name -> its link: the run's emulated hosts (docs/network.md)."""
    try:
        return links.parse_hosts(value)
    except UserError as exc:
        raise BadValue(str(exc)) from None


def parse_place(value):
    """A mapping role (or process name) -> host, or a list of hosts its processes are
    spread over (sub: [b, c])."""
    if not isinstance(value, dict) or not value:
        raise BadValue(
            f"expected a mapping ROLE: HOST, e.g. {{ping: a, pong: b}}, got {_shown(value)}"
        )
    place = {}
    for role, where in value.items():
        hosts = where if isinstance(where, list) else [where]
        if not hosts or not all(isinstance(h, str) and links.HOST_NAME.fullmatch(h) for h in hosts):
            raise BadValue(f"{role}: {_shown(where)} is not a host name or a list of them")
        place[str(role)] = list(hosts) if isinstance(where, list) else where
    return place


def _build() -> dict[str, Param]:
    actions = {}
    for kind in KINDS:
        parser = argparse.ArgumentParser(add_help=False)
        cli_options.add_measure_arguments(parser, kind)
        actions[kind] = {a.dest: a for a in parser._actions if a.dest not in SKIPPED_DESTS}
    found = {
        "kind": Param(
            "kind",
            KINDS,
            dict.fromkeys(KINDS),
            _kind,
            "ping (round trip), pubsub (one way) or graph (an application graph)",
        )
    }
    for kind in KINDS:
        for dest, action in actions[kind].items():
            if dest in found:
                continue
            kinds = tuple(k for k in KINDS if dest in actions[k])
            found[dest] = Param(
                dest,
                kinds,
                {k: actions[k][dest].default for k in kinds},
                _scalar_parser(action),
                action.help or "",
            )
    spec_fields = [f.name for f in fields(MeasureSpec)]
    found["options"] = Param(
        "options",
        KINDS,
        dict.fromkeys(KINDS),
        None,
        "driver options KEY: VALUE, passed through untouched",
    )
    found["cpus"] = Param(
        "cpus", KINDS, dict.fromkeys(KINDS), parse_cpus, "ROLE: CPU pinning, or none"
    )
    found["hosts"] = Param(
        "hosts",
        KINDS,
        dict.fromkeys(KINDS),
        parse_hosts,
        "hosts HOST: {rate, delay, jitter, loss, mtu} (emulated), or HOST: {ssh: TARGET, "
        "address: ADDRESS} (a real machine; docs/network.md)",
    )
    placed = tuple(k for k in KINDS if k != "graph")  # a graph's mapping places its modules
    found["place"] = Param(
        "place", placed, dict.fromkeys(placed), parse_place, "ROLE: HOST, or ROLE: [HOST, ...]"
    )
    # In MeasureSpec's order, so that files, tables and docs list them the same way.
    order = {name: i for i, name in enumerate(spec_fields)}
    return dict(sorted(found.items(), key=lambda item: order.get(item[0], len(order))))


PARAMS: dict[str, Param] = _build()


def is_param_key(key: str) -> bool:
    """A flat key: a parameter, or options.KEY for one driver option."""
    return key in PARAMS or (key.startswith("options.") and len(key) > len("options."))


@dataclass(frozen=True)
class SearchParam:
    """One criterion of an experiment's `search` (the options of `psbench ratesearch`)."""

    name: str
    default: object
    parse: Callable[[object], object]
    help: str
    help_example: str


SEARCH_EXAMPLES = {
    "max_loss": "0.1",
    "max_p99": "1ms",
    "start_rate": "1000",
    "max_rate": "100000",
    "precision": "0.05",
    "max_steps": "12",
    "confirm": "3",
}


def _build_search() -> dict[str, SearchParam]:
    parser = argparse.ArgumentParser(add_help=False)
    cli_options.add_search_arguments(parser)
    return {
        a.dest: SearchParam(
            a.dest, a.default, _scalar_parser(a), a.help or "", SEARCH_EXAMPLES[a.dest]
        )
        for a in parser._actions
    }


SEARCH_PARAMS: dict[str, SearchParam] = _build_search()
