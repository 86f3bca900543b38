"""From an experiment as written to the list of runs: defaults, the matrix's cartesian
product, exclude rules, explicit runs, repetitions, numbers, labels, and --filter.

Precedence, lowest first: psbench's own defaults (those of `psbench ping|pubsub`), then
`defaults`, then a matrix point or a `runs` entry, then overrides (used by `psbench
demo`). Run numbers are given before --filter, so a run keeps its number (and its result
directory name) whatever is selected.
"""

import difflib
import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from types import SimpleNamespace

import yaml

from psbench.base import manifests
from psbench.base.problems import ProblemList
from psbench.base.units import hosts_text
from psbench.run import run_rules
from psbench.run.experiment.params import PARAMS, BadValue, is_param_key
from psbench.run.experiment.schema import Assign, Experiment
from psbench.run.parameters import file_term

DEFAULT_WHERE = "(psbench default)"
LABEL_MAX = 80


@dataclass
class Run:
    number: int  # 1-based, over the whole experiment
    rep: int  # 1-based repetition
    label: str  # short, unique with the number; names the run's folder
    settings: dict[str, Assign]  # flat key -> value and where it was written
    source: str  # "matrix" or "runs[i]"

    @property
    def params(self) -> dict:
        return {k: a.value for k, a in self.settings.items() if a.value is not None}

    @property
    def identity(self) -> str:
        """The same parameters and repetition give the same identity (for --resume)."""
        return run_identity(self.params, self.rep)

    def listing(self) -> dict:
        """What names the run in the sweep's index and the expanded plan, in that order."""
        return {
            "run": self.number,
            "rep": self.rep,
            "label": self.label,
            "identity": self.identity,
            "source": self.source,
            "params": self.params,
        }

    def get(self, key: str, default=None):
        assign = self.settings.get(key)
        return default if assign is None or assign.value is None else assign.value


def run_identity(params: dict, rep: int) -> str:
    text = json.dumps({"params": params, "rep": rep}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Expansion:
    runs: list[Run]  # every run, numbered
    selected: list[Run]  # those --filter keeps
    points: int = 0  # matrix points before exclusion
    excluded: int = 0
    notes: list[str] = field(default_factory=list)  # worth saying, not wrong


def _merge(base: dict, level: dict) -> dict:
    """level over base; count and duration are one setting (how long a run is), so
    giving one drops the other given at a lower level."""
    merged = dict(base)
    for one, other in (("count", "duration"), ("duration", "count")):
        if one in level and level[one].value is not None:
            merged.pop(other, None)
    merged.update(level)
    return merged


class _Expander:
    def __init__(self, experiment: Experiment, problems: ProblemList):
        self.exp = experiment
        self.problems = problems

    def problem(self, line, where, message):
        self.problems.add(self.exp.file, line, where, message)

    def _one_level(self, settings: dict[str, Assign]) -> None:
        count, duration = settings.get("count"), settings.get("duration")
        if count and duration and count.value is not None and duration.value is not None:
            later = max(count, duration, key=lambda a: a.line)
            self.problem(
                later.line,
                later.where,
                f"a run has a count or a duration, not "
                f"both (the other is at line {min(count.line, duration.line)}); "
                f"keep one",
            )

    def points(self) -> list[tuple[dict, str]]:
        """The matrix's cartesian product (first key slowest), merged over defaults."""
        exp = self.exp
        if not exp.axes and exp.runs:
            return []
        result = []
        for combo in itertools.product(*(choices for _, _, choices in exp.axes)):
            point: dict[str, Assign] = {}
            for choice in combo:
                for key, assign in choice.items():
                    if key in point:
                        self.problem(
                            assign.line,
                            assign.where,
                            f"sets {key}, which "
                            f"{point[key].where} (line {point[key].line}) sets "
                            f"too; give it in one matrix key",
                        )
                    point[key] = assign
            self._one_level(point)
            result.append((_merge(exp.defaults, point), "matrix" if exp.axes else "defaults"))
        return result

    def complete(self, settings: dict, source: str, line: int) -> dict | None:
        """Adds psbench's defaults for the run's kind; checks what only a whole run
        shows. None if the run cannot be built."""
        where = source
        ok = True
        baselines = manifests.baseline_drivers() or ("NAME",)
        for key, example in (("kind", "ping"), ("driver", baselines[0])):
            if key not in settings or settings[key].value is None:
                self.problem(
                    line,
                    where,
                    f"no {key} for this run; set {key} (e.g. "
                    f"{key}: {example}) in defaults, the matrix or each run",
                )
                ok = False
        if not ok:
            return None
        kind = settings["kind"].value
        result = {}
        for key, assign in settings.items():
            param = PARAMS.get(key)
            if param is not None and kind not in param.kinds:
                if assign.where.startswith("defaults"):
                    continue  # defaults apply where they mean something
                self.problem(
                    assign.line,
                    assign.where,
                    f"applies to {' and '.join(param.kinds)} "
                    f"runs only; set it for those runs, not for a {kind} run",
                )
                continue
            result[key] = assign
        for key, param in PARAMS.items():
            default = param.defaults.get(kind)
            if default is not None and (key not in result or result[key].value is None):
                result[key] = Assign(key, default, DEFAULT_WHERE, 0)
        self._check_run(kind, result)
        return dict(sorted(result.items(), key=lambda item: _key_order(item[0])))

    def _check_run(self, kind: str, settings: dict) -> None:
        if self.exp.search is not None:
            self._check_search_run(kind, settings)
        cpus = settings.get("cpus")
        if cpus is not None and isinstance(cpus.value, dict) and kind != "graph":
            for role in cpus.value:  # a graph's are its modules: checked with the graph
                unknown = run_rules.unknown_cpu_role(kind, role)
                if unknown is not None:
                    self.problem(cpus.line, cpus.where, unknown)
        values = {k: a.value for k, a in settings.items()}
        late = run_rules.timeout_problem(SimpleNamespace(**values), file_term)
        if late is not None:
            timeout = settings["timeout"]
            at = timeout if timeout.line else settings["duration"]
            self.problem(at.line, at.where, late.message)

    def _check_search_run(self, kind: str, settings: dict) -> None:
        """With `search`, every run is a rate search: pubsub, its rate left to the
        search."""
        if kind != "pubsub":
            at = settings["kind"]
            self.problem(
                at.line or self.exp.search_line,
                at.where,
                f"search: a rate search runs pubsub; a {kind} run cannot be "
                f"searched; set kind: pubsub",
            )
        rate = settings.get("rate")
        if rate is not None and rate.where != DEFAULT_WHERE and rate.value is not None:
            self.problem(
                rate.line,
                rate.where,
                "search: the search chooses each step's rate (from search.start_rate); remove rate",
            )


def _key_order(key: str) -> tuple[int, str]:
    """Parameters in MeasureSpec's order, driver options where options would be."""
    order = list(PARAMS)
    name = "options" if key.startswith("options.") else key
    return (order.index(name) if name in order else len(order), key)


def _excluded_by(params: dict, experiment: Experiment) -> int | None:
    for index, rule in enumerate(experiment.excludes):
        if all(params.get(key) in [a.value for a in choices] for key, choices in rule.keys.items()):
            return index
    return None


def _label_part(key: str, value) -> str:
    if key in ("kind", "driver") or key in (
        "placement",
        "notify",
        "reliability",
        "durability",
        "history",
        "transport",
    ):
        return str(value)
    if key == "size":
        for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
            if value >= factor and value % factor == 0:
                return f"{value // factor}{unit}"
        return f"{value}B"
    if key == "rate":
        return f"{value:g}Hz"
    if isinstance(value, bool):
        return key if value else f"no_{key}"
    if key == "hosts" and isinstance(value, dict):
        return "hosts=" + re.sub(r"[^A-Za-z0-9.+-]", "_", hosts_text(value)).strip("_")
    if isinstance(value, dict):
        return key + "=" + "_".join(f"{r}{c}" for r, c in value.items())
    if isinstance(value, float):
        value = f"{value:g}"
    return f"{key.removeprefix('options.')}={value}"


def _varying(settings_list: list[dict]) -> list[str]:
    """The parameters that differ between these runs, plus always driver and size."""
    keys = []
    for settings in settings_list:
        for key in settings:
            if key not in keys:
                keys.append(key)
    keys.sort(key=_key_order)
    return [
        k
        for k in keys
        if k in ("driver", "size")
        or len({json.dumps(s[k].value if k in s else None, sort_keys=True) for s in settings_list})
        > 1
    ]


def _labels(settings_list: list[dict]) -> list[str]:
    """The parameters that differ between runs of one kind, plus always driver and size;
    runs of several kinds (pubsub beside graph) are named by their kind first, each by
    what differs among its own kind (a graph run has no rate to tell it from a pubsub)."""
    kinds = [s["kind"].value if "kind" in s else None for s in settings_list]
    varying = {
        kind: (["kind"] if len(set(kinds)) > 1 else [])
        + [
            k
            for k in _varying([s for s, o in zip(settings_list, kinds) if o == kind])
            if k != "kind"
        ]
        for kind in set(kinds)
    }
    labels = []
    for settings, kind in zip(settings_list, kinds):
        parts = [
            _label_part(k, settings[k].value)
            for k in varying[kind]
            if k in settings and settings[k].value is not None
        ]
        label = re.sub(r"[^A-Za-z0-9._=+-]+", "_", "-".join(parts))[:LABEL_MAX]
        labels.append(label or "run")
    return labels


DEFAULT_MAX_RUNS = 100_000


def runs_at_most(experiment: Experiment) -> tuple[int, str]:
    """How many runs the file can expand to (before exclude rules and duplicates), and
    how: computed from the sizes of the matrix axes, without enumerating anything."""
    product = math.prod(len(choices) for _, _, choices in experiment.axes) if experiment.axes else 0
    factors = [f"{len(choices)} {key}" for key, _, choices in experiment.axes]
    how = " x ".join(factors) or "no matrix"
    if experiment.runs:
        how += f" + {len(experiment.runs)} runs"
    if experiment.repetitions > 1:
        how = f"({how}) x {experiment.repetitions} repetitions"
    return (product + len(experiment.runs)) * experiment.repetitions, how


def expand(
    experiment: Experiment,
    problems: ProblemList,
    overrides: dict[str, Assign] | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
) -> Expansion:
    most, how = runs_at_most(experiment)
    if most > max_runs:
        problems.add(
            experiment.file,
            experiment.matrix_line or experiment.line,
            "matrix",
            f"expands to up to {most:,} runs ({how}), more than the limit of "
            f"{max_runs:,}; narrow the matrix, or raise the limit with --max-runs",
        )
        return Expansion(runs=[], selected=[])
    expander = _Expander(experiment, problems)
    base: list[tuple[dict, str, int]] = []
    points = expander.points()
    for settings, source in points:
        base.append((settings, source, experiment.matrix_line or experiment.line))
    for entry in experiment.runs:
        expander._one_level(entry.settings)
        base.append((_merge(experiment.defaults, entry.settings), entry.where, entry.line))
    if experiment.defaults:
        expander._one_level(experiment.defaults)
    complete, excluded, used_rules, seen = [], 0, set(), {}
    for settings, source, line in base:
        settings = _merge(settings, overrides or {})
        run = expander.complete(settings, source, line)
        if run is None:
            continue
        params = {k: a.value for k, a in run.items() if a.value is not None}
        if source == "matrix":
            rule = _excluded_by(params, experiment)
            if rule is not None:
                excluded += 1
                used_rules.add(rule)
                continue
        identity = run_identity(params, 0)
        if identity in seen:
            expander.problem(
                line,
                source,
                f"the same run as {seen[identity]}; remove one, or use repetitions to repeat a run",
            )
            continue
        seen[identity] = source if source != "matrix" else "a matrix run"
        complete.append((run, source))
    labels = _labels([settings for settings, _ in complete])
    runs, number = [], 0
    for rep in range(1, experiment.repetitions + 1):
        for (settings, source), label in zip(complete, labels):
            number += 1
            suffix = f"-rep{rep}" if experiment.repetitions > 1 else ""
            runs.append(Run(number, rep, label + suffix, settings, source))
    notes = [
        f"{experiment.file}:{rule.line}: {rule.where} matches no run of the matrix"
        for i, rule in enumerate(experiment.excludes)
        if i not in used_rules
    ]
    if not runs and not problems:
        expander.problem(
            experiment.line,
            "",
            "no runs: every matrix run is excluded; loosen the exclude rules"
            if excluded
            else "no runs; add a matrix or runs (see experiments/quickstart.yaml)",
        )
    return Expansion(
        runs=runs, selected=list(runs), points=len(points), excluded=excluded, notes=notes
    )


class FilterError(ValueError):
    """A --filter that cannot select anything as written."""


def parse_filters(texts: list[str]) -> dict[str, list]:
    """KEY=VALUE, repeatable: the same key again adds a value (either matches), different
    keys must all match. Values are read like the file's."""
    filters: dict[str, list] = {}
    for text in texts:
        key, sep, raw = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise FilterError(f"{text!r}: use KEY=VALUE, e.g. --filter driver=udp")
        if key in ("rep", "run"):
            if not raw.strip().isdigit():
                raise FilterError(f"{text!r}: {key} takes a whole number")
            value = int(raw)
        elif key.startswith("options.") and is_param_key(key):
            value = raw
        elif key in PARAMS and key != "options":
            try:
                loaded = yaml.safe_load(raw) if raw.strip() else None
                value = PARAMS[key].parse(loaded if loaded is not None else raw)
            except (BadValue, yaml.YAMLError) as exc:
                raise FilterError(f"{text!r}: {exc}") from None
        else:
            close = difflib.get_close_matches(key, list(PARAMS) + ["rep", "run"], n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise FilterError(
                f"{text!r}: unknown key {key!r}; {hint}filter on a run "
                f"parameter ({', '.join(k for k in PARAMS if k != 'options')}, "
                f"options.KEY), rep or run"
            )
        filters.setdefault(key, []).append(value)
    return filters


def select(runs: list[Run], filters: dict[str, list]) -> list[Run]:
    def keeps(run: Run) -> bool:
        for key, values in filters.items():
            have = run.rep if key == "rep" else run.number if key == "run" else run.get(key)
            if have not in values:
                return False
        return True

    return [run for run in runs if keeps(run)]
