"""The keys of an experiment file's runs and the values each takes.

They are the run parameters of run/parameters.py, the table the command line's options
are built from too: a value is read by the same type function and choices as the
option's, so a value is valid in a file exactly when it is valid as an argument, and the
message is the same. Where a file writes a mapping (options, cpus, hosts, place) it is
read here.
"""

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, fields

from psbench.base.errors import UserError
from psbench.hosts import links
from psbench.run import parameters
from psbench.run.spec import MeasureSpec

KINDS = parameters.KINDS
# MeasureSpec fields that are not keys of a file: derived from others (driver_path,
# role_drivers from driver), chosen by psbench at run time (auto), or a test hook of the
# command line only (inject, security_fault).
DERIVED_FIELDS = {
    "driver_path",
    "role_drivers",
    "auto",
    "inject",
    "security_fault",
}


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


def _scalar_parser(
    parse: Callable[[str], object] | None,
    choices: tuple[str, ...] | None = None,
    expected: str | None = None,
    shape: str = "value",
) -> Callable[[object], object]:
    """An option's type function and choices, applied to a YAML scalar; expected: what
    a value looks like (the option's metavar), shape: Param.shape."""
    if shape == "flag":

        def parse_flag(value):
            if not isinstance(value, bool):
                raise BadValue(f"{_shown(value)} is not true or false; write true or false")
            return value

        return parse_flag

    def parse_scalar(value):
        if isinstance(value, bool) and shape == "optional":
            return value  # a flag with an optional value (loan: true | false | auto)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            wanted = expected or "|".join(choices or ()) or "one value"
            hint = "; lists belong in the matrix" if isinstance(value, list) else ""
            raise BadValue(f"expected {wanted}, got {_shown(value)}{hint}")
        text = str(value)
        result = text
        if parse is not None:
            try:
                result = parse(text)
            except argparse.ArgumentTypeError as exc:
                raise BadValue(str(exc)) from None
        if choices is not None and result not in choices:
            raise BadValue(f"{text!r} is not one of {', '.join(choices)}")
        return result

    return parse_scalar


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


# The keys a file writes as a mapping, and how each is read (options: passed through
# untouched, key by key, by schema.py).
MAPPINGS = {"options": None, "cpus": parse_cpus, "hosts": parse_hosts, "place": parse_place}


def _build() -> dict[str, Param]:
    found = {
        row.name: Param(
            row.name,
            row.kinds,
            {kind: row.default_for(kind) for kind in row.kinds},
            MAPPINGS[row.name]
            if row.name in MAPPINGS
            else _scalar_parser(row.parse, row.choices, row.metavar_for(row.kinds[0]), row.shape),
            row.file_help or row.help_for(row.kinds[0]),
        )
        for row in parameters.TABLE
        if row.file
    }
    # In MeasureSpec's order, so that files, tables and docs list them the same way.
    order = {f.name: i for i, f in enumerate(fields(MeasureSpec))}
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


SEARCH_PARAMS: dict[str, SearchParam] = {
    c.name: SearchParam(
        c.name, c.default, _scalar_parser(c.parse, expected=c.metavar), c.help, c.example
    )
    for c in parameters.SEARCH
}
