"""Checks every run against its driver before anything runs: the driver is built, and
the driver's declared capabilities (`psbench-node --describe`) take the run's settings.

The messages are the node's own refusals (core/src/driver_loader.cpp), pointing at the
line of the value that produces them. What only a driver's check() can judge is still
refused by the node at run time: that run ends as `refused` and the sweep goes on.
"""

from pathlib import Path
from types import SimpleNamespace

from psbench import drivers, paths
from psbench import spec as spec_module
from psbench.experiment.expand import Run
from psbench.experiment.problems import ProblemList
from psbench.experiment.schema import Assign
from psbench.options import NODE_SIZE_RANGE

# What the node uses when a setting is not given (docs/node.md).
NODE_DEFAULTS = {"reliability": "best_effort", "durability": "volatile", "notify": "wait"}


def _joined(values) -> str:
    return "|".join(values) if values else "(none)"


class DriverCatalog:
    """Built drivers and their descriptions, each described once."""

    def __init__(self):
        self.libraries = paths.driver_libraries()
        self._described: dict[Path, dict | str] = {}

    def library(self, name: str) -> Path | None:
        if "/" in name or name.endswith(".so"):
            path = Path(name).expanduser().resolve()
            return path if path.is_file() else None
        return self.libraries.get(name)

    def describe(self, library: Path) -> dict | str:
        """The --describe object, or why it could not be had."""
        if library not in self._described:
            try:
                self._described[library] = drivers.describe(paths.require_node(), library)
            except RuntimeError as exc:
                self._described[library] = str(exc)
        return self._described[library]


class _Checker:
    def __init__(self, file: str, problems: ProblemList, catalog: DriverCatalog):
        self.file = file
        self.problems = problems
        self.catalog = catalog

    def refuse(self, run: Run, assign: Assign, message: str) -> None:
        driver = run.settings["driver"]
        # A combination the matrix produces is best left out with an exclude rule.
        from_matrix = assign.where.startswith("matrix") or driver.where.startswith("matrix")
        if run.source == "matrix" and from_matrix and assign.key != "driver":
            value = assign.value if not isinstance(assign.value, bool) else \
                str(assign.value).lower()
            message += (f"; to leave these runs out: exclude: [{{driver: {driver.value}, "
                        f"{assign.key}: {value}}}]")
        self.problems.add(self.file, assign.line, assign.where, message)

    def check(self, run: Run) -> None:
        driver = run.settings["driver"]
        library = self.catalog.library(driver.value)
        if library is None:
            if "/" in driver.value or driver.value.endswith(".so"):
                message = f"no such driver library {driver.value!r}; give a built " \
                          f"libpsbench-<name>.so or a driver name"
            else:
                message = (f"unknown driver {driver.value!r}; built drivers: "
                           f"{', '.join(sorted(self.catalog.libraries)) or 'none'}")
            self.problems.add(self.file, driver.line, driver.where, message)
            return
        described = self.catalog.describe(library)
        if isinstance(described, str):
            self.problems.add(self.file, driver.line, driver.where,
                              f"driver {driver.value!r} cannot be described: {described}")
            return
        self._capabilities(run, described.get("name", driver.value),
                           described.get("capabilities") or {})
        self._fan_out(run)

    def _setting(self, run: Run, key: str):
        """The run's value of key (or the node's default) and the line to blame."""
        assign = run.settings.get(key)
        if assign is not None and assign.value is not None:
            return assign.value, assign
        return NODE_DEFAULTS.get(key), run.settings["driver"]

    def _fan_out(self, run: Run) -> None:
        """Several subscribers, publishers or topics are several processes: not one
        intra-process node. A relay (relays: 1) forwards one topic from one publisher
        to one subscriber, in three processes; a late joiner joins while publishing goes
        on."""
        # Each setting that adds processes has its own rules (spec.py): the first broken
        # one is blamed on the setting it names, else on the setting itself.
        for key, problem_of in (("late_join", spec_module.late_join_problem),
                                ("relays", spec_module.relay_problem)):
            setting = run.settings.get(key)
            if setting is None or not setting.value:
                continue
            values = {k: assign.value for k, assign in run.settings.items()}
            problem = problem_of(SimpleNamespace(**values))
            if problem is not None:
                blamed, message = problem
                blame = run.settings.get(blamed) or setting
                self.problems.add(self.file, blame.line, blame.where, message)
                return
        placement = run.settings.get("placement")
        if placement is None or placement.value != "intra":
            return
        for key, what in (("subscribers", "subscribers are"),
                          ("publishers", "publishers are"), ("topics", "topics are run by")):
            assign = run.settings.get(key)
            if assign is not None and (assign.value or 1) > 1:
                self.problems.add(self.file, assign.line, assign.where,
                                  f"{key} > 1: several {what} separate processes; use "
                                  f"placement: inter, or leave these runs out: exclude: "
                                  f"[{{placement: intra, {key}: {assign.value}}}]")

    def _capabilities(self, run: Run, name: str, caps: dict) -> None:
        for key, cap in (("reliability", "reliability"), ("durability", "durability"),
                         ("notify", "notify")):
            value, assign = self._setting(run, key)
            supported = caps.get(cap) or []
            if value not in supported:
                self.refuse(run, assign, f"{name}: {key} '{value}' is not supported; "
                            f"this driver supports {_joined(supported)}")
        history = run.settings.get("history")
        if history is not None and history.value is not None:
            kind = history.value.split(":")[0]
            if kind not in (caps.get("history") or []):
                self.refuse(run, history, f"{name}: history '{kind}' is not supported; "
                            f"this driver supports {_joined(caps.get('history'))}")
        transports = caps.get("transports") or []
        transport = run.settings.get("transport")
        chosen = transports[0] if transports else None
        if transport is not None and transport.value not in (None, "default"):
            chosen = transport.value
            if chosen not in transports:
                self.refuse(run, transport, f"{name}: transport '{chosen}' is not "
                            f"supported; this driver supports {_joined(transports)}")
        size = run.settings["size"]
        low, high = NODE_SIZE_RANGE
        if not low <= size.value <= high:
            self.refuse(run, size, f"size {size.value} is out of range; use {low} (header "
                        f"only) to {high} bytes")
        elif caps.get("max_payload") is not None and size.value > caps["max_payload"]:
            self.refuse(run, size, f"{name}: size {size.value} bytes is over this "
                        f"driver's largest message of {caps['max_payload']} bytes")
        subscribers = run.settings.get("subscribers")
        limit = caps.get("readers_per_topic")
        if subscribers is not None and limit and (subscribers.value or 1) > limit:
            self.refuse(run, subscribers, f"{name}: subscribers {subscribers.value} is "
                        f"not supported; this driver has at most {limit} reader(s) per topic")
        publishers = run.settings.get("publishers")
        limit = caps.get("writers_per_topic")
        if publishers is not None and limit and (publishers.value or 1) > limit:
            self.refuse(run, publishers, f"{name}: publishers {publishers.value} is "
                        f"not supported; this driver has at most {limit} writer(s) per topic")
        loan = run.settings.get("loan")
        if loan is not None and loan.value is True and not caps.get("loan"):
            self.refuse(run, loan, f"{name}: --loan is not supported (no zero-copy write)")
        keys = caps.get("option_keys") or []
        for key, assign in run.settings.items():
            if key.startswith("options.") and assign.value is not None and \
                    key[len("options."):] not in keys:
                self.refuse(run, assign, f"{name}: option '{key[len('options.'):]}' is "
                            f"not known; this driver takes {_joined(keys)}")
        for entry in caps.get("services") or []:
            status = drivers.service_status(entry, set())
            if status.transport in (None, chosen) and not status.installed:
                blame = transport if status.transport and transport else run.settings["driver"]
                self.refuse(run, blame, f"{name}: {status.name} is needed "
                            f"{'for transport ' + repr(chosen) + ' ' if status.transport else ''}"
                            f"and is not installed (not on PATH); install it")


def check_runs(runs: list[Run], file: str, problems: ProblemList,
               catalog: DriverCatalog | None = None) -> DriverCatalog:
    catalog = catalog or DriverCatalog()
    checker = _Checker(file, problems, catalog)
    for run in runs:
        checker.check(run)
    return catalog
