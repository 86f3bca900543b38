"""A graph file's YAML into a Graph: every key and value checked where it is written,
each problem with its file, line, key and fix (docs/graphs.md, "Graph files"). What
needs the whole graph (unknown names, cycles, paths) is graph/check.py's."""

import argparse
import difflib

from psbench.base import options
from psbench.base.problems import ProblemList
from psbench.base.yaml_file import Node
from psbench.run.graph.model import TRIGGERS, Graph, Mapping, Module, PathOfInterest, Topic

TOP_KEYS = ("name", "description", "modules", "topics", "paths", "mappings")
MODULE_KEYS = ("period", "on", "work", "subscribes", "publishes", "priority")
TOPIC_KEYS = ("size", "reliability")
PATH_KEYS = ("from", "to", "deadline")
MAPPING_KEYS = ("hosts", "cpus")
RELIABILITIES = ("best_effort", "reliable")
EXAMPLE = "graphs/cwalker.yaml"


class _Reader:
    """Reads values out of Nodes, adding a problem (and returning None) for a bad one."""

    def __init__(self, file: str, problems: ProblemList):
        self.file, self.problems = file, problems

    def bad(self, line: int, where: str, message: str) -> None:
        self.problems.add(self.file, line, where, message)

    def mapping(self, node: Node, where: str, example: str) -> dict[str, Node] | None:
        if not node.is_mapping:
            self.bad(node.line, where, f"expected a mapping, e.g. {example}")
            return None
        return node.value

    def fields(self, node: Node, where: str, example: str, allowed: tuple[str, ...]):
        """A mapping of known keys: its values by key, or None (the problem added)."""
        found = self.mapping(node, where, example)
        if found is not None:
            self.keys(node, where, allowed)
        return found

    def keys(self, node: Node, where: str, allowed: tuple[str, ...]) -> None:
        for key in node.value:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean {close[0]}?" if close else f"use {', '.join(allowed)}"
                self.bad(node.key_line(key), f"{where}.{key}", f"unknown key; {hint}")

    def name(self, node: Node, where: str) -> str | None:
        if not isinstance(node.value, str) or not node.value.strip():
            self.bad(node.line, where, "expected a name, e.g. localization")
            return None
        return node.value

    def names(self, node: Node, where: str) -> tuple[str, ...]:
        items = node.value if node.is_list else [node]
        found = []
        for i, item in enumerate(items):
            name = self.name(item, f"{where}[{i}]" if node.is_list else where)
            if name is not None:
                if name in found:
                    self.bad(item.line, where, f"{name} is listed twice; list it once")
                else:
                    found.append(name)
        return tuple(found)

    def duration(self, node: Node, where: str, example: str = "10ms") -> int | None:
        if isinstance(node.value, bool) or not isinstance(node.value, (str, int, float)):
            self.bad(node.line, where, f"expected a duration with its unit, e.g. {example}")
            return None
        try:
            return int(options.duration_ns(str(node.value)))
        except argparse.ArgumentTypeError as exc:
            self.bad(node.line, where, str(exc))
            return None

    def size(self, node: Node, where: str) -> int | None:
        if isinstance(node.value, bool) or not isinstance(node.value, (str, int)):
            self.bad(node.line, where, "expected a size in bytes, e.g. 256 or 4KiB")
            return None
        try:
            return options.message_size(str(node.value))
        except argparse.ArgumentTypeError as exc:
            self.bad(node.line, where, str(exc))
            return None

    def integer(self, node: Node, where: str, low: int, high: int, example: str) -> int | None:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.bad(node.line, where, f"expected a whole number {low} to {high}, e.g. {example}")
            return None
        return value


def _module(r: _Reader, name: str, node: Node) -> Module | None:
    where = f"modules.{name}"
    fields = r.fields(node, where, "{period: 10ms, work: 1ms, publishes: [pose]}", MODULE_KEYS)
    if fields is None:
        return None
    period = r.duration(fields["period"], f"{where}.period") if "period" in fields else None
    subscribes = (
        r.names(fields["subscribes"], f"{where}.subscribes") if "subscribes" in fields else ()
    )
    publishes = r.names(fields["publishes"], f"{where}.publishes") if "publishes" in fields else ()
    on = _trigger(r, fields, where, node.line, period, subscribes)
    work = _work(r, fields.get("work"), f"{where}.work")
    priority = (
        r.integer(fields["priority"], f"{where}.priority", 1, 99, "80")
        if "priority" in fields
        else None
    )
    if on is None or work is None or (period is None and "period" in fields):
        return None
    return Module(name, node.line, period, on, work, subscribes, publishes, priority)


def _trigger(r: _Reader, fields: dict, where: str, line: int, period, subscribes) -> str | None:
    """timer with a period, else any; given, it must fit: a timer needs its period, any
    and all need inputs and no period."""
    if "on" not in fields:
        if period is None and not subscribes:
            r.bad(line, where, "a module without inputs needs a period, e.g. period: 10ms")
            return None
        return "timer" if period is not None else "any"
    node = fields["on"]
    if node.value not in TRIGGERS:
        r.bad(node.line, f"{where}.on", f"{node.value!r} is not one of {', '.join(TRIGGERS)}")
        return None
    if node.value == "timer" and period is None:
        r.bad(node.line, f"{where}.on", "on: timer needs a period, e.g. period: 10ms")
        return None
    if node.value != "timer" and "period" in fields:
        r.bad(node.line, f"{where}.on",
              f"on: {node.value} is activated by its inputs, not a period; drop the period, "
              f"or use on: timer")  # fmt: skip
        return None
    if node.value != "timer" and not subscribes:
        r.bad(node.line, f"{where}.on", f"on: {node.value} needs inputs: add subscribes")
        return None
    return node.value


def _work(r: _Reader, node: Node | None, where: str) -> tuple[int, int] | None:
    """1ms, or [0.5ms, 2ms]: uniform between; none given: no work."""
    if node is None:
        return (0, 0)
    if node.is_list:
        if len(node.value) != 2:
            r.bad(node.line, where, "a range is two durations, e.g. [0.5ms, 2ms]")
            return None
        low, high = (r.duration(n, where, "0.5ms") for n in node.value)
        if low is None or high is None:
            return None
        if low > high:
            r.bad(node.line, where, "the range's first duration is the shorter, e.g. [0.5ms, 2ms]")
            return None
        return (low, high)
    one = r.duration(node, where, "1ms")
    return None if one is None else (one, one)


def _topic(r: _Reader, name: str, node: Node) -> Topic | None:
    where = f"topics.{name}"
    fields = r.fields(node, where, "{size: 256}", TOPIC_KEYS)
    if fields is None:
        return None
    if "size" not in fields:
        r.bad(node.line, where, "give its message size, e.g. size: 256")
        return None
    size = r.size(fields["size"], f"{where}.size")
    reliability = fields.get("reliability")
    if reliability is not None and reliability.value not in RELIABILITIES:
        r.bad(reliability.line, f"{where}.reliability",
              f"{reliability.value!r} is not one of {', '.join(RELIABILITIES)}")  # fmt: skip
        return None
    if size is None:
        return None
    return Topic(name, node.line, size, reliability.value if reliability else None)


def _path(r: _Reader, name: str, node: Node) -> PathOfInterest | None:
    where = f"paths.{name}"
    fields = r.fields(node, where, "{from: localization, to: brakes, deadline: 10ms}", PATH_KEYS)
    if fields is None:
        return None
    missing = [k for k in ("from", "to") if k not in fields]
    if missing:
        r.bad(node.line, where, f"give {' and '.join(missing)}: the source module and the sink")
        return None
    source, sink = (r.name(fields[k], f"{where}.{k}") for k in ("from", "to"))
    deadline = r.duration(fields["deadline"], f"{where}.deadline") if "deadline" in fields else None
    if source is None or sink is None or ("deadline" in fields and deadline is None):
        return None
    return PathOfInterest(name, node.line, source, sink, deadline)


def _mapping(r: _Reader, name: str, node: Node) -> Mapping | None:
    where = f"mappings.{name}"
    fields = r.fields(node, where, "{hosts: {a: [localization, brakes]}}", MAPPING_KEYS)
    if fields is None:
        return None
    if "hosts" not in fields:
        r.bad(
            node.line, where, "give hosts: each host with its modules, e.g. hosts: {a: [pt, loc]}"
        )
        return None
    hosts_node = fields["hosts"]
    hosts = {}
    for host, modules in (r.mapping(hosts_node, f"{where}.hosts", "{a: [pt, loc]}") or {}).items():
        hosts[host] = r.names(modules, f"{where}.hosts.{host}")
    cpus = {}
    if "cpus" in fields:
        for module, cpu in (r.mapping(fields["cpus"], f"{where}.cpus", "{loc: 1}") or {}).items():
            value = r.integer(cpu, f"{where}.cpus.{module}", 0, 4095, "1")
            if value is not None:
                cpus[module] = value
    return Mapping(name, node.line, hosts, cpus) if hosts else None


def parse(tree: Node, file: str, problems: ProblemList) -> Graph:
    """The graph as written; problems collects what is wrong (the graph then holds only
    the parts that could be read)."""
    r = _Reader(file, problems)
    r.keys(tree, "", TOP_KEYS)
    top = tree.value
    for key in ("name", "modules", "topics"):
        if key not in top:
            r.bad(tree.line, key, f"missing; every graph has name, modules and topics ({EXAMPLE})")
    name = r.name(top["name"], "name") if "name" in top else None
    description = top.get("description")

    def section(key, read, example):
        found = {}
        node = top.get(key)
        if node is None:
            return found
        for item, value in (r.mapping(node, key, example) or {}).items():
            parsed = read(r, item, value)
            if parsed is not None:
                found[item] = parsed
        return found

    return Graph(
        file=file,
        name=name or "",
        description=description.value if description is not None else None,
        modules=section("modules", _module, "{loc: {period: 10ms, publishes: [pose]}}"),
        topics=section("topics", _topic, "{pose: {size: 256}}"),
        paths=section("paths", _path, "{loc_to_brakes: {from: loc, to: brakes}}"),
        mappings=section("mappings", _mapping, "{one-host: {hosts: {a: [loc, brakes]}}}"),
    )
