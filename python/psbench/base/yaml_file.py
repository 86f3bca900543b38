"""Reads a YAML file of psbench's (an experiment, a graph) into plain values that
remember the line they came from.

yaml.compose keeps every node's position, so each error can name the line of the value
that caused it. Mapping keys are taken as written (YAML 1.1 would turn `on:` or `no:`
into booleans), duplicate keys are an error instead of the last one silently winning.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from psbench.base.problems import Problem, ProblemList

SCALAR_TYPES = (str, int, float, bool, type(None))
# Bounds on what a file may expand to: YAML aliases can make a few lines stand for
# billions of values (an "alias bomb"), and deep nesting exhausts the stack.
MAX_VALUES = 100_000
MAX_DEPTH = 64


@dataclass(frozen=True)
class FileKind:
    """What messages call the file, and the example they point at."""

    noun: str  # "experiment"
    example: str  # "experiments/quickstart.yaml"
    keys: str  # its top-level keys, for "must be a mapping of keys (...)"
    a: str  # "an experiment"


EXPERIMENT = FileKind(
    "experiment", "experiments/quickstart.yaml", "name, defaults, matrix, ...", "an experiment"
)


class _TooLarge(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line


@dataclass
class Node:
    """A YAML value: dict[str, Node], list[Node] or a scalar; line is 1-based."""

    value: Any
    line: int
    text: str | None = None  # a scalar exactly as written
    key_lines: dict[str, int] = field(default_factory=dict)  # mappings: line of each key

    @property
    def is_mapping(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, list)

    @property
    def is_scalar(self) -> bool:
        return not (self.is_mapping or self.is_list)

    def key_line(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class LoadError(Exception):
    """The file cannot be read as YAML; problems hold the reasons."""

    def __init__(self, problems: list[Problem]):
        super().__init__("; ".join(map(str, problems)))
        self.problems = problems


def _line(mark) -> int:
    return mark.line + 1 if mark is not None else 1


def _convert(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    problems: ProblemList,
    file: str,
    budget: list[int] | None = None,
    depth: int = 0,
    kind: FileKind = EXPERIMENT,
) -> Node:
    budget = budget if budget is not None else [MAX_VALUES]
    line = _line(node.start_mark)
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge(
            line,
            f"the file stands for more than {MAX_VALUES:,} values (YAML "
            f"aliases repeating aliases?); write the values out, or use "
            f"the matrix",
        )
    if depth > MAX_DEPTH:
        raise _TooLarge(
            line,
            f"values nested more than {MAX_DEPTH} deep; {kind.a} "
            f"needs a few levels (see {kind.example})",
        )
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_object(node)
        if not isinstance(value, SCALAR_TYPES):  # dates and the like: keep the text
            value = node.value
        return Node(value, line, text=node.value)
    if isinstance(node, yaml.SequenceNode):
        return Node(
            [
                _convert(loader, item, problems, file, budget, depth + 1, kind)
                for item in node.value
            ],
            line,
        )
    result = Node({}, line)
    for key_node, value_node in node.value:
        key_line = _line(key_node.start_mark)
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            problems.add(
                file,
                key_line,
                "(key)",
                "only plain names are keys here (no merge keys `<<`, lists or "
                "mappings as keys)"
                + ("; put shared settings under defaults" if kind is EXPERIMENT else ""),
            )
            continue
        key = key_node.value
        if key in result.value:
            problems.add(
                file,
                key_line,
                key,
                f"given twice (first at line {result.key_lines[key]}); keep one",
            )
            continue
        result.key_lines[key] = key_line
        result.value[key] = _convert(loader, value_node, problems, file, budget, depth + 1, kind)
    return result


def _flow_nesting_past(text: str, limit: int) -> int | None:
    """The line where [ and { brackets first nest deeper than limit, else None (a cheap
    scan; brackets inside quoted strings count too, which no real file comes near)."""
    depth, line = 0, 1
    for char in text:
        if char in "[{":
            depth += 1
            if depth > limit:
                return line
        elif char in "]}":
            depth = max(depth - 1, 0)
        elif char == "\n":
            line += 1
    return None


def load(path: Path, display: str, kind: FileKind = EXPERIMENT) -> tuple[bytes, Node]:
    """The file's bytes and its content; raises LoadError. display names the file in
    messages (as the user gave it)."""
    data, text = _read_text(path, display, kind)
    tree = _parse(text, display, kind)
    if not tree.is_mapping:
        _refuse(
            display,
            tree.line,
            f"the file must be a mapping of keys ({kind.keys}); see {kind.example}",
        )
    return data, tree


def _refuse(display: str, line: int, message: str) -> NoReturn:
    raise LoadError([Problem(display, line, "", message)])


def _read_text(path: Path, display: str, kind: FileKind) -> tuple[bytes, str]:
    """The file's bytes and its text: readable, UTF-8, no NUL, not nested past
    MAX_DEPTH."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        _refuse(
            display,
            0,
            f"cannot read the {kind.noun} file: {exc.strerror}; give the path of a YAML "
            f"file, e.g. {kind.example}",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _refuse(
            display, 1 + data[: exc.start].count(b"\n"), "not UTF-8 text; save the file as UTF-8"
        )
    if "\0" in text:
        _refuse(
            display,
            1 + text[: text.index("\0")].count("\n"),
            f"contains a NUL byte: not a text file; give a YAML {kind.noun} file",
        )
    deep = _flow_nesting_past(text, MAX_DEPTH)
    if deep is not None:  # PyYAML's reader recurses per level: refuse before it does
        _refuse(
            display,
            deep,
            f"values nested more than {MAX_DEPTH} deep; {kind.a} needs a few levels (see "
            f"{kind.example})",
        )
    return data, text


def _parse(text: str, display: str, kind: FileKind) -> Node:
    """The YAML text as Nodes; every problem with its line."""
    problems = ProblemList()
    loader = None
    try:
        loader = yaml.SafeLoader(text)  # reads the text: may refuse a character
        root = loader.get_single_node()
        if root is None:
            _refuse(display, 1, f"the file is empty; start from {kind.example}")
        tree = _convert(loader, root, problems, display, kind=kind)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(p for p in (exc.context, exc.problem) if p)
        raise LoadError([Problem(display, _line(mark), "", f"not valid YAML: {reason}")]) from None
    except yaml.YAMLError as exc:
        raise LoadError([Problem(display, 1, "", f"not valid YAML: {exc}")]) from None
    except _TooLarge as exc:
        raise LoadError([Problem(display, exc.line, "", str(exc))]) from None
    except RecursionError:
        raise LoadError(
            [
                Problem(
                    display,
                    1,
                    "",
                    f"values nested too deep to read; {kind.a} needs a few levels (see "
                    f"{kind.example})",
                )
            ]
        ) from None
    finally:
        if loader is not None:
            loader.dispose()
    if problems:
        raise LoadError(problems.items)
    return tree
