"""The structure of an experiment file: its top-level keys and the settings under them.

Every setting becomes an Assign: a flat key (a parameter, or options.KEY for one driver
option), its checked value, and where it was written, so that any later problem with a
run (a combination a driver refuses, say) can point at the line that caused it.
"""

import difflib
from dataclasses import dataclass, field

from psbench.base.problems import ProblemList
from psbench.base.yaml_file import Node
from psbench.run import role_drivers
from psbench.run.experiment.params import PARAMS, SEARCH_PARAMS, BadValue
from psbench.run.parameters import file_term
from psbench.run.run_rules import search_bounds_problem

TOP_KEYS = (
    "name",
    "description",
    "defaults",
    "matrix",
    "exclude",
    "repetitions",
    "order",
    "runs",
    "search",
)
# How runs are executed within a round (execute.py): grouped by the services they need,
# so that a broker stops once no later run needs it, or as the file lists them.
ORDERS = ("grouped", "as-written")


@dataclass(frozen=True)
class Assign:
    key: str  # "size", "options.type", ...
    value: object  # checked and normalized; None = unset (the default applies)
    where: str  # "matrix.size", "defaults.options.type", "runs[2].driver"
    line: int


@dataclass
class Rule:
    """One exclude rule: a run matching every key (any of the values listed) is dropped."""

    where: str
    line: int
    keys: dict[str, list[Assign]]


@dataclass
class Entry:
    """One explicit run of `runs`."""

    where: str
    line: int
    settings: dict[str, Assign]


@dataclass
class Experiment:
    file: str
    name: str
    description: str | None
    line: int  # of the file's first key
    defaults: dict[str, Assign] = field(default_factory=dict)
    axes: list[tuple[str, int, list[dict[str, Assign]]]] = field(default_factory=list)
    matrix_line: int | None = None
    excludes: list[Rule] = field(default_factory=list)
    repetitions: int = 1
    order: str = "grouped"
    runs: list[Entry] = field(default_factory=list)
    # `search`: every run is a rate search with these criteria (None: plain runs).
    search: dict[str, Assign] | None = None
    search_line: int | None = None


def _plain(node: Node):
    """A YAML value as plain dicts, lists and scalars."""
    if node.is_mapping:
        return {k: _plain(v) for k, v in node.value.items()}
    if node.is_list:
        return [_plain(v) for v in node.value]
    return node.value


def _suggest(key: str, known) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'? " if close else ""


class _Reader:
    def __init__(self, file: str, problems: ProblemList):
        self.file = file
        self.problems = problems

    def problem(self, line: int, where: str, message: str) -> None:
        self.problems.add(self.file, line, where, message)

    # One key with one value: a scalar, or a mapping for options and cpus.
    def setting(self, key: str, node: Node, where: str, key_line: int) -> dict[str, Assign]:
        if key == "options":
            return self._options(node, where)
        if key.startswith("options."):
            return self._option(key[len("options.") :], node, where)
        if key not in PARAMS:
            names = ", ".join(list(PARAMS) + ["options.KEY"])
            hint = " (top-level keys go at the start of a line)" if key in TOP_KEYS else ""
            self.problem(
                key_line,
                where,
                f"unknown key{hint}; {_suggest(key, PARAMS)}the keys of a run are {names}",
            )
            return {}
        if key == "cpus":
            value = (
                node.value
                if node.is_scalar
                else ({k: v.value for k, v in node.value.items()} if node.is_mapping else [])
            )
        elif key in ("hosts", "place"):
            value = _plain(node)
        elif key == "driver" and node.is_mapping:  # a driver per role: {ping: A, pong: B}
            roles = {str(k): v.value for k, v in node.value.items()}
            if not all(isinstance(v, str) and v for v in roles.values()):
                self.problem(node.line, where, "a driver per role maps each role to a "
                             "driver name, e.g. {ping: A, pong: B}")  # fmt: skip
                return {}
            value = role_drivers.label(roles)
        elif node.is_scalar:
            value = node.value
        else:
            value = [] if node.is_list else {}
        if value is None:
            return {key: Assign(key, None, where, node.line)}
        try:
            parsed = PARAMS[key].parse(value)
        except BadValue as exc:
            self.problem(node.line, where, str(exc))
            return {}
        return {key: Assign(key, parsed, where, node.line)}

    def _options(self, node: Node, where: str) -> dict[str, Assign]:
        if not node.is_mapping:
            self.problem(
                node.line,
                where,
                "expected a mapping KEY: VALUE of driver options, e.g. options: {type: complex}",
            )
            return {}
        found = {}
        for name, value in node.value.items():
            found.update(self._option(name, value, f"{where}.{name}"))
        return found

    def _option(self, name: str, node: Node, where: str) -> dict[str, Assign]:
        key = f"options.{name}"
        if not name.strip() or "=" in name:
            self.problem(
                node.line,
                where,
                f"{name!r} is not an option name; use the "
                "driver's option keys (`psbench drivers --json`)",
            )
            return {}
        if not node.is_scalar:
            self.problem(
                node.line,
                where,
                "a driver option takes one value (passed as "
                "text); lists belong in the matrix, e.g. options.type: [bytes, complex]",
            )
            return {}
        # Passed through untouched: the text as written, not YAML's reading of it.
        value = None if node.value is None else node.text
        return {key: Assign(key, value, where, node.line)}

    # A mapping of settings, each with one value: defaults and each entry of runs.
    def settings(self, node: Node, where: str) -> dict[str, Assign]:
        if not node.is_mapping:
            self.problem(
                node.line, where, "expected a mapping of run settings, e.g. {driver: udp, size: 64}"
            )
            return {}
        found: dict[str, Assign] = {}
        for key, value in node.value.items():
            if value.is_list:
                self.problem(
                    value.line,
                    f"{where}.{key}",
                    "one value expected; lists of values belong in the matrix",
                )
                continue
            for assign in self.setting(key, value, f"{where}.{key}", node.key_line(key)).values():
                self._put(found, assign)
        return found

    def _put(self, found: dict[str, Assign], assign: Assign) -> None:
        first = found.get(assign.key)
        if first is not None:
            self.problem(
                assign.line,
                assign.where,
                f"sets {assign.key} again (first at line {first.line}, {first.where}); keep one",
            )
        else:
            found[assign.key] = assign

    # A mapping whose values are lists of alternatives: the matrix, exclude rules.
    def alternatives(self, node: Node, where: str) -> list[tuple[str, int, list[dict]]]:
        if not node.is_mapping:
            self.problem(
                node.line,
                where,
                "expected a mapping of settings to lists of "
                "values, e.g. {driver: [udp, shm], size: [64, 16KiB]}",
            )
            return []
        result = []
        for key, value in self._option_axes(node):
            items = value.value if value.is_list else [value]
            path = f"{where}.{key}"
            if not items:
                self.problem(
                    value.line,
                    path,
                    "an empty list gives no runs; give at least one value or remove the key",
                )
                continue
            choices, seen = [], {}
            for item in items:
                if item.is_list:
                    self.problem(
                        item.line, path, "a list inside a list; give the values in one list"
                    )
                    continue
                choice = self.setting(key, item, path, node.key_line(key))
                if not choice:
                    continue
                marker = repr(sorted((k, repr(a.value)) for k, a in choice.items()))
                if marker in seen:
                    self.problem(
                        item.line,
                        path,
                        f"value listed twice (also at line "
                        f"{seen[marker]}); use repetitions to repeat runs",
                    )
                    continue
                seen[marker] = item.line
                choices.append(choice)
            if choices:
                result.append((key, value.line, choices))
        return result

    @staticmethod
    def _option_axes(node: Node):
        """(key, value) pairs; `options: {type: [bytes, complex]}` becomes the axis
        options.type, as if written so."""
        for key, value in node.value.items():
            if key == "options" and value.is_mapping:
                for name, option in value.value.items():
                    yield f"options.{name}", option
            else:
                yield key, value


def _text(reader: _Reader, node: Node, where: str) -> str | None:
    if node.value is None:
        return None
    if not node.is_scalar or isinstance(node.value, bool):
        reader.problem(node.line, where, "expected text")
        return None
    return str(node.value)


def _repetitions(reader: _Reader, node: Node) -> int:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        reader.problem(
            node.line,
            "repetitions",
            f"expected a whole number of at least 1, "
            f"got {node.text if node.is_scalar else 'a ' + type(value).__name__}",
        )
        return 1
    return value


def _search(reader: _Reader, node: Node) -> dict[str, Assign]:
    """The criteria of `search`: each key as `psbench ratesearch` takes it."""
    if not node.is_mapping:
        reader.problem(
            node.line,
            "search",
            "expected a mapping of search criteria, e.g. "
            "search: {max_loss: 0, max_p99: 1ms, start_rate: 1000}",
        )
        return {}
    found = {}
    for key, value in node.value.items():
        where = f"search.{key}"
        if key not in SEARCH_PARAMS:
            reader.problem(
                node.key_line(key),
                where,
                f"unknown key; "
                f"{_suggest(key, SEARCH_PARAMS)}the keys of search are "
                f"{', '.join(SEARCH_PARAMS)}",
            )
            continue
        if not value.is_scalar or value.value is None:
            reader.problem(
                value.line,
                where,
                f"one value expected, e.g. {key}: {SEARCH_PARAMS[key].help_example}",
            )
            continue
        try:
            found[key] = Assign(key, SEARCH_PARAMS[key].parse(value.value), where, value.line)
        except BadValue as exc:
            reader.problem(value.line, where, str(exc))
    start, top = found.get("start_rate"), found.get("max_rate")
    start_value = start.value if start else SEARCH_PARAMS["start_rate"].default
    problem = search_bounds_problem(start_value, top.value if top else None, file_term)
    if problem is not None:
        reader.problem(top.line, top.where, problem)
    return found


def parse(tree: Node, file: str, default_name: str, problems: ProblemList) -> Experiment:
    """The experiment as written; problems collects what is wrong with it."""
    reader = _Reader(file, problems)
    top = tree.value
    for key in top:
        if key not in TOP_KEYS:
            hint = (
                " (run settings go under defaults, matrix or runs)"
                if key in PARAMS or key.startswith("options.")
                else ""
            )
            reader.problem(
                tree.key_line(key),
                key,
                f"unknown key{hint}; "
                f"{_suggest(key, TOP_KEYS)}the keys of an experiment are "
                f"{', '.join(TOP_KEYS)}",
            )
    experiment = Experiment(file=file, name=default_name, description=None, line=tree.line)
    if "name" in top:
        experiment.name = _text(reader, top["name"], "name") or default_name
    if "description" in top:
        experiment.description = _text(reader, top["description"], "description")
    if "defaults" in top and top["defaults"].value is not None:
        experiment.defaults = reader.settings(top["defaults"], "defaults")
    if "matrix" in top and top["matrix"].value is not None:
        experiment.matrix_line = tree.key_line("matrix")
        experiment.axes = reader.alternatives(top["matrix"], "matrix")
    if "repetitions" in top:
        experiment.repetitions = _repetitions(reader, top["repetitions"])
    if "order" in top:
        order = top["order"]
        if order.is_scalar and order.value in ORDERS:
            experiment.order = order.value
        else:
            reader.problem(order.line, "order", f"expected one of {', '.join(ORDERS)}, got "
                           f"{order.text if order.is_scalar else 'a ' + type(order.value).__name__}")  # fmt: skip
    for index, node in _items(reader, top, "exclude"):
        where = f"exclude[{index}]"
        keys = {}
        for _key, _, choices in reader.alternatives(node, where):
            for choice in choices:
                for assign in choice.values():
                    keys.setdefault(assign.key, []).append(assign)
        if keys:
            experiment.excludes.append(Rule(where, node.line, keys))
    if "search" in top and top["search"].value is not None:
        experiment.search_line = tree.key_line("search")
        experiment.search = _search(reader, top["search"])
    for index, node in _items(reader, top, "runs"):
        where = f"runs[{index}]"
        experiment.runs.append(Entry(where, node.line, reader.settings(node, where)))
    return experiment


def _items(reader: _Reader, top: dict, key: str) -> list[tuple[int, Node]]:
    node = top.get(key)
    if node is None or node.value is None:
        return []
    if not node.is_list:
        reader.problem(
            node.line, key, f"expected a list of mappings, e.g. {key}: [{{driver: udp, size: 64}}]"
        )
        return []
    return list(enumerate(node.value))
