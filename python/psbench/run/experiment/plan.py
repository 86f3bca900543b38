"""The whole way from an experiment file to checked runs, each with the MeasureSpec that
measure.run takes."""

from dataclasses import dataclass, field
from pathlib import Path

from psbench.base.errors import UserError
from psbench.base.problems import ExperimentError, ProblemList
from psbench.base.yaml_file import LoadError, load
from psbench.run import drivers
from psbench.run.experiment import expand as expand_module
from psbench.run.experiment.check import DriverCatalog, check_runs
from psbench.run.experiment.expand import Expansion, FilterError, Run
from psbench.run.experiment.params import SEARCH_PARAMS
from psbench.run.experiment.run_spec import to_spec
from psbench.run.experiment.schema import Assign, Experiment, parse
from psbench.run.ratesearch import Criteria
from psbench.run.spec import MeasureSpec


@dataclass
class Plan:
    path: Path
    file: str  # the path as the user gave it, for messages
    source: bytes  # the file's bytes, kept as run
    experiment: Experiment
    expansion: Expansion
    specs: dict[int, MeasureSpec] = field(default_factory=dict)  # run number -> spec
    skipped: list[tuple[Run, str]] = field(default_factory=list)  # run, why not run

    @property
    def criteria(self) -> Criteria | None:
        """`search`: every run is a rate search with these criteria."""
        found = self.experiment.search
        if found is None:
            return None
        values = {
            k: (found[k].value if k in found else p.default) for k, p in SEARCH_PARAMS.items()
        }
        return Criteria(
            max_loss_percent=values["max_loss"],
            max_p99_ns=values["max_p99"],
            start_rate_hz=values["start_rate"],
            max_rate_hz=values["max_rate"],
            precision=values["precision"],
            max_steps=values["max_steps"],
            confirm=values["confirm"],
        )

    @property
    def runs(self) -> list[Run]:
        return self.expansion.runs

    @property
    def selected(self) -> list[Run]:
        return self.expansion.selected


def _in_file_order(problems: ProblemList) -> list:
    return sorted(problems.items, key=lambda problem: problem.line)


def prepare(
    path: Path,
    display: str,
    filters: list[str] = (),
    overrides: dict[str, Assign] | None = None,
    skip_unbuilt: bool = False,
    max_runs: int = expand_module.DEFAULT_MAX_RUNS,
) -> Plan:
    """Loads, checks and expands the experiment. Raises ExperimentError with every
    problem found, or UserError for a bad --filter. skip_unbuilt: runs of drivers that
    are not built are set aside (Plan.skipped) instead of being an error."""
    try:
        source, tree = load(path, display)
    except LoadError as exc:
        raise ExperimentError(exc.problems) from None
    problems = ProblemList()
    experiment = parse(tree, display, path.stem, problems)
    expansion = expand_module.expand(experiment, problems, overrides, max_runs)
    plan = Plan(path=path, file=display, source=source, experiment=experiment, expansion=expansion)
    if problems:  # still hold what could be read against the drivers: all problems at once
        check_runs(expansion.runs, display, problems)
        raise ExperimentError(_in_file_order(problems))
    try:
        chosen = expand_module.select(expansion.runs, expand_module.parse_filters(filters))
    except FilterError as exc:
        raise UserError(f"argument --filter: {exc}") from None
    if not chosen:
        raise UserError(
            f"argument --filter: {' '.join(filters)} selects none of the "
            f"{len(expansion.runs)} runs; `--dry-run` lists them"
        )
    catalog = DriverCatalog()
    if skip_unbuilt:
        for run in list(chosen):
            if catalog.resolve(run.get("driver"), run.get("kind")) is None:
                # What builds it: `make driver-NAME` (a source build says what it takes).
                why = drivers.not_built(str(run.get("driver")), catalog.libraries)
                plan.skipped.append((run, why))
                chosen.remove(run)
    expansion.selected = chosen
    check_runs(chosen, display, problems, catalog)
    if problems:
        raise ExperimentError(_in_file_order(problems))
    plan.specs = {
        run.number: to_spec(run, *catalog.resolve(run.get("driver"), run.get("kind")))
        for run in chosen
    }
    return plan
