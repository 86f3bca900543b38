"""Checks every run against its driver before anything runs: the driver is built, the
services it needs are installed, the run's processes fit together, and the node takes
the configuration: every refusal the node would make at run time (its capability checks
and the driver's check()) comes from the node itself (node_check), pointing at the line
of the value that produces it. There is no second copy of those rules here.
"""

from pathlib import Path
from types import SimpleNamespace

from psbench.base import manifests, paths
from psbench.base.problems import ExperimentError, ProblemList
from psbench.run import drivers, node_check, placement, role_drivers, run_rules
from psbench.run.experiment.expand import Run
from psbench.run.experiment.run_spec import to_spec
from psbench.run.experiment.schema import Assign
from psbench.run.graph.load import load_graph
from psbench.run.graph.plans import reliability_of
from psbench.run.parameters import file_term
from psbench.run.security import session as security
from psbench.run.service_definitions import definition
from psbench.run.services import needed


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

    def resolve(self, value: str, kind: str) -> tuple[Path, dict[str, str]] | None:
        """The run's library (the measuring role's with a driver per role) and its
        libraries per role ({} with one driver); None when one is not built."""
        try:
            mapping = role_drivers.parse(value)
        except ValueError:
            return None
        if mapping is None:
            library = self.library(value)
            return (library, {}) if library is not None else None
        libraries = {role: self.library(name) for role, name in mapping.items()}
        measuring = role_drivers.MEASURING_ROLE.get(kind)
        if None in libraries.values() or measuring not in libraries:
            return None
        return libraries[measuring], {role: str(lib) for role, lib in libraries.items()}

    def describe(self, library: Path) -> dict | str:
        """The --describe object, or why it could not be had."""
        if library not in self._described:
            try:
                self._described[library] = drivers.describe(paths.require_node(), library)
            except RuntimeError as exc:
                self._described[library] = str(exc)
        return self._described[library]


def _flow(value) -> str:
    """A value as an experiment file writes it (YAML flow style): true, {a: {}, b: {rate: 1mbit}}."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return str(value)


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
            value = _flow(assign.value)
            message += (
                f"; to leave these runs out: exclude: [{{driver: {driver.value}, "
                f"{assign.key}: {value}}}]"
            )
        self.problems.add(self.file, assign.line, assign.where, message)

    def check(self, run: Run) -> None:
        driver = run.settings["driver"]
        try:
            mapping = role_drivers.parse(driver.value)
        except ValueError as exc:
            self.problems.add(self.file, driver.line, driver.where, str(exc))
            return
        if mapping is not None:
            values = {k: assign.value for k, assign in run.settings.items()}
            why = role_drivers.problem(run.get("kind"), mapping, values)
            if why is not None:
                self.problems.add(self.file, driver.line, driver.where, why)
                return
        for name in dict.fromkeys(mapping.values() if mapping else [driver.value]):
            if not self._driver(run, name):
                return
        self._processes(run)
        if run.get("kind") == "graph":
            self._graph(run)

    def _driver(self, run: Run, name: str) -> bool:
        """One driver of the run is built and describes itself, and the services it
        needs are installed; False (with the problem added) when it cannot be used."""
        driver = run.settings["driver"]
        library = self.catalog.library(name)
        if library is None:
            if "/" in name or name.endswith(".so"):
                message = (
                    f"no such driver library {name!r}; give a built "
                    f"libpsbench-<name>.so or a driver name"
                )
            else:
                message = drivers.not_built(name, self.catalog.libraries)
            self.problems.add(self.file, driver.line, driver.where, message)
            return False
        described = self.catalog.describe(library)
        if isinstance(described, str):
            self.problems.add(
                self.file, driver.line, driver.where,
                f"driver {name!r} cannot be described: {described}",
            )  # fmt: skip
            return False
        self._services(run, described.get("name", name), described.get("capabilities") or {})
        return True

    def _graph(self, run: Run) -> None:
        """The graph file is valid (its own problems, at its own lines), the mapping is
        one of its, a mapping on several hosts has them declared, and cpus name modules."""
        where = run.settings.get("graph")
        if where is None or where.value is None:
            self.refuse(run, run.settings["kind"], "kind: graph needs graph: FILE, e.g. "
                        "graph: graphs/cwalker.yaml")  # fmt: skip
            return
        try:
            graph = load_graph(Path(where.value), where.value)
        except ExperimentError as exc:
            for problem in exc.problems:
                self.problems.add(problem.file, problem.line, problem.where, problem.message)
            return
        chosen = run.settings.get("mapping")
        name = chosen.value if chosen is not None and chosen.value else next(iter(graph.mappings))
        if name not in graph.mappings:
            self.refuse(run, chosen, f"{name!r} is not one of {where.value}'s mappings; use "
                        f"{', '.join(graph.mappings)}")  # fmt: skip
            return
        mapping = graph.mappings[name]
        hosts = run.settings.get("hosts")
        declared = (hosts.value or {}) if hosts is not None else {}
        if len(mapping.hosts) > 1 and sorted(declared) != sorted(mapping.hosts):
            blame = chosen if chosen is not None else where
            example = ", ".join(f"{h}: {{rate: 100mbit}}" for h in mapping.hosts)
            self.refuse(run, blame, f"mapping {name} places modules on hosts "
                        f"{', '.join(mapping.hosts)}: declare them, e.g. hosts: {{{example}}}")  # fmt: skip
        asked = run.settings.get("reliability")
        _, conflict = reliability_of(graph, asked.value if asked is not None else None)
        if conflict:
            self.refuse(run, asked if asked is not None and asked.value else where, conflict)
        cpus = run.settings.get("cpus")
        for module in cpus.value if cpus is not None and isinstance(cpus.value, dict) else {}:
            if module not in graph.modules:
                self.refuse(run, cpus, f"{module!r} is not a module of {where.value}")

    def _processes(self, run: Run) -> None:
        """The run's processes fit together (run_rules.PROCESS_RULES: several
        subscribers, publishers or topics, a relay, a late joiner, a broker restart):
        the first broken rule, blamed on the setting it names."""
        values = {k: assign.value for k, assign in run.settings.items()}
        for rule in run_rules.PROCESS_RULES:
            problem = rule(SimpleNamespace(**values), file_term)
            if problem is None:
                continue
            blame = run.settings.get(problem.blamed) or run.settings["driver"]
            message = problem.message
            if problem.exclude:
                pairs = ", ".join(f"{key}: {_flow(values[key])}" for key in problem.exclude)
                message += f", or leave these runs out: exclude: [{{{pairs}}}]"
            self.problems.add(self.file, blame.line, blame.where, message)
            return

    def _services(self, run: Run, name: str, caps: dict) -> None:
        """The daemons and brokers the run needs are installed (psbench starts them)."""
        transports = caps.get("transports") or []
        transport = run.settings.get("transport")
        chosen = transports[0] if transports else None
        if transport is not None and transport.value not in (None, "default"):
            chosen = transport.value
        for entry in manifests.service_entries(name):
            status = drivers.service_status(entry, set())
            if status.transport in (None, chosen) and not status.installed:
                blame = transport if status.transport and transport else run.settings["driver"]
                self.refuse(
                    run,
                    blame,
                    f"{name}: {status.name} is needed "
                    f"{'for transport ' + repr(chosen) + ' ' if status.transport else ''}"
                    f"and is not installed (not on PATH); install it",
                )

    def node_check(self, runs: list[Run]) -> None:
        """What the node itself refuses of each run, blamed on the setting's line."""
        requests: dict[int, list[tuple[str, ...]]] = {}
        for run in runs:
            resolved = self.catalog.resolve(run.settings["driver"].value, run.get("kind"))
            if resolved is None or isinstance(self.catalog.describe(resolved[0]), str):
                continue  # already reported
            library = resolved[0]
            try:
                spec = to_spec(run, *resolved)
            except (TypeError, ValueError, KeyError, ExperimentError):
                continue  # a run the file's other problems already explain
            placed = placement.problem(spec)
            if placed is not None:
                blamed, message = placed
                assign = run.settings.get(blamed) or run.settings.get("hosts")
                if assign is None or assign.value is None:
                    assign = run.settings["driver"]
                self.refuse(run, assign, message)
                continue
            described = [self.catalog.describe(lib) for lib in spec.libraries()]
            secured = security.problem(spec, [d.get("name", "") for d in described if d])
            if secured is not None:
                blamed, message = secured
                assign = run.settings.get(blamed)
                self.refuse(run, assign if assign and assign.value else run.settings["driver"],
                            message)  # fmt: skip
                continue
            daemons = placement.real(spec) and [
                name
                for name in needed(self.catalog.describe(library), spec.transport, spec.options)
                if definition(name) and definition(name).per_host
            ]
            if daemons:
                self.refuse(
                    run,
                    run.settings.get("hosts") or run.settings["driver"],
                    f"{spec.driver} needs {', '.join(daemons)}, a per-host daemon, which "
                    f"psbench does not start on real machines: run it on one machine "
                    f"(no hosts)",
                )
                continue
            requests[run.number] = node_check.requests_of(
                node_check.as_run(spec, self.catalog.describe(library))
            )
        answers = node_check.refusals([args for each in requests.values() for args in each])
        for run in runs:
            seen = set()
            for args in requests.get(run.number, []):
                for refusal in answers[args]:
                    if refusal["message"] in seen:
                        continue  # ping and pong refused alike: once
                    seen.add(refusal["message"])
                    assign = run.settings.get(node_check.setting_key(refusal))
                    if assign is None or assign.value is None:
                        assign = run.settings["driver"]  # a default of the node's
                    self.refuse(run, assign, refusal["message"])


def check_runs(
    runs: list[Run], file: str, problems: ProblemList, catalog: DriverCatalog | None = None
) -> DriverCatalog:
    catalog = catalog or DriverCatalog()
    checker = _Checker(file, problems, catalog)
    for run in runs:
        checker.check(run)
    checker.node_check(runs)
    return catalog
