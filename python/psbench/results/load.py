"""Reads a results folder into runs: a sweep of `psbench run` (index.jsonl), one run of
`psbench ping|pubsub` (run.json), or a folder holding such runs (e.g. results/).

Each run keeps its parameters, status, summaries and the path of its raw samples; the
samples are read when first asked for.
"""

import json
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from psbench.base.errors import UserError
from psbench.results import graph_runs
from psbench.results.clock_correction import correct
from psbench.results.rates import run_throughput
from psbench.results.run_record import block
from psbench.results.samples import Samples, SamplesFileError, read_samples
from psbench.results.store import EXPERIMENT_FILE, INDEX_FILE, Store

# Settings that bound how long psbench waits, not what is measured: runs differing only
# in these are repetitions of one configuration.
_WAIT_SETTINGS = ("timeout", "match_timeout", "sample_timeout", "idle_timeout")
# What the main latency series of each kind is (docs/analysis.md).
METRICS = {"ping": "RTT/2", "pubsub": "one-way", "graph": "reaction"}


class RunSettings:
    """What the settings of a run or configuration say: its kind, driver, size."""

    params: dict

    @property
    def kind(self) -> str:
        return self.params.get("kind", "")

    @property
    def driver(self) -> str:
        return str(self.params.get("driver", ""))

    @property
    def size(self) -> int | None:
        return self.params.get("size")

    @property
    def metric(self) -> str:
        return METRICS.get(self.kind, "latency")


@dataclass
class RunData(RunSettings):
    number: int
    label: str
    rep: int
    params: dict  # the settings that shape the measurement (measured_settings)
    status: str
    message: str | None
    run_dir: Path | None
    run_record: dict = field(default_factory=dict)  # run.json, {} if missing
    graph_path: str | None = None  # a graph run: the path this one stands for (graph_runs)

    @property
    def config_key(self) -> str:
        """Runs with equal settings are repetitions of one configuration."""
        return json.dumps(self.params, sort_keys=True, default=str)

    @cached_property
    def summaries(self) -> dict[str, dict]:
        """name -> the node's summary (<name>.json): the role, or sub-1 ... sub-N when
        the run had several subscribers."""
        found: dict[str, dict] = {}
        if self.run_dir is None:
            return found
        for path in sorted(self.run_dir.glob("*.json")):
            if path.name == "run.json":
                continue
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and data.get("role"):
                # Summaries before fan-out have no name: their role is their name.
                found[data.get("name") or data["role"]] = data
        # What each subscriber lost, reconciled with what its writers sent (run.json
        # accounting): its own summary knows it only when every end marker arrived.
        for name, reconciled in block(self.run_record, "accounting").items():
            if name in found and reconciled.get("published") is not None:
                counts = dict(found[name].get("counts") or {})
                counts.update(sent=reconciled["published"], lost=reconciled["lost"])
                found[name] = {**found[name], "counts": counts}
        return found

    def _of_role(self, role: str) -> dict[str, dict]:
        found = {n: s for n, s in self.summaries.items() if s.get("role") == role}
        return dict(sorted(found.items(), key=lambda item: natural_key(item[0])))

    @property
    def receivers(self) -> dict[str, dict]:
        """name -> summary of each process that records samples: ping, or every sub
        (sub, sub-1..sub-N, t1-sub-2, ...: every topic's); a graph path's sink."""
        if self.graph_path is not None:
            sink = self.run_record["graph"]["paths"][self.graph_path]["to"]
            return {sink: self.summaries.get(sink) or {}}
        return {
            name: s
            for name, s in self._of_role("ping" if self.kind == "ping" else "sub").items()
            if not s.get("late_join")
        }  # a late joiner's samples include history

    @property
    def publishers(self) -> dict[str, dict]:
        """name -> summary of each publisher (pub, pub-1..pub-M, t2-pub, ...)."""
        return self._of_role("pub")

    @property
    def receiver(self) -> dict:
        """The summary of the (first) role that records samples (ping or sub)."""
        return next(iter(self.receivers.values()), {})

    def _samples_of(self, summaries: dict[str, dict]) -> dict[str, Samples]:
        """name -> the samples file each of these summaries names (those that name one)."""
        found = {}
        for name, summary in summaries.items():
            file = summary.get("samples_file")
            if not file or self.run_dir is None:
                continue
            try:
                # Between real machines: corrected for their clocks' offset (run.json).
                found[name], _ = correct(
                    read_samples(self.run_dir / file), self.run_record.get("clock"), name
                )
            except SamplesFileError as exc:
                raise UserError(f"run {self.number} ({self.label}): {exc}", exit_code=1) from None
        return found

    @cached_property
    def samples_by_receiver(self) -> dict[str, Samples]:
        """name -> that receiver's samples; one entry per subscriber of a fan-out run."""
        if self.graph_path is not None:
            if self.run_dir is None:
                return {}
            try:
                samples = graph_runs.path_samples(self.run_dir, self.run_record, self.graph_path)
            except SamplesFileError as exc:
                raise UserError(f"run {self.number} ({self.label}): {exc}", exit_code=1) from None
            # A path nothing reached has no series (no statistic, test or plot of it).
            return {next(iter(self.receivers)): samples} if len(samples) else {}
        return self._samples_of(self.receivers)

    @cached_property
    def samples(self) -> Samples | None:
        """The run's samples: with several subscribers, all of them together (in
        sequence order, each sequence number once per subscriber)."""
        each = list(self.samples_by_receiver.values())
        if len(each) <= 1:
            return each[0] if each else None
        records = np.concatenate([s.records for s in each])
        records = records[np.argsort(records["seq"], kind="stable")]
        return Samples(
            path=self.run_dir,
            kind=each[0].kind,
            start_ns=min(s.start_ns for s in each),
            records=records,
        )

    @cached_property
    def latency_ns(self) -> np.ndarray:
        """The main series in ns, in sequence order: RTT/2 for ping, one way for pubsub."""
        samples = self.samples
        if samples is None:
            return np.empty(0)
        values = samples.latency_ns.astype(np.float64)
        return values / 2.0 if samples.kind == "rtt" else values

    @property
    def latency_streams(self) -> list[np.ndarray]:
        """Each receiver's own series (same units as latency_ns), for what compares one
        sample with the one before it at the same receiver (jitter)."""
        return [
            s.latency_ns.astype(np.float64) / (2.0 if s.kind == "rtt" else 1.0)
            for s in self.samples_by_receiver.values()
        ]

    @cached_property
    def receive_ns(self) -> np.ndarray:
        """When each sample arrived, on the receiver's monotonic clock."""
        samples = self.samples
        if samples is None:
            return np.empty(0)
        return samples.arrival_ns(self.params.get("latency_from")).astype(np.float64)

    @cached_property
    def throughput(self) -> dict:
        """Receivers', publishers' and offered rates (analysis.rates.run_throughput): from
        the summaries' throughput blocks, or from the samples for older results."""
        fallback = {}
        for name, summary in self.receivers.items():
            if not isinstance(summary.get("throughput"), dict):
                samples = self.samples_by_receiver.get(name)
                if samples is not None:
                    fallback[name] = samples.arrival_ns(self.params.get("latency_from"))
        return run_throughput(
            self.receivers, self.publishers, fallback, self.size, self.params.get("rate")
        )

    @cached_property
    def echo_by_publisher(self) -> dict[str, Samples]:
        """name -> the round trips a publisher timed from echoed samples (latency under
        load, `--echo-every N`): its `pub.samples`, kind rtt."""
        return self._samples_of(self.publishers)

    @cached_property
    def echo_latency_ns(self) -> np.ndarray:
        """Latency under load: RTT/2 of every echoed sample, all publishers together,
        in ns. Kept apart from latency_ns (the one-way series of every sample)."""
        each = [
            s.latency_ns.astype(np.float64) / 2.0
            for s in self.echo_by_publisher.values()
            if s.kind == "rtt"
        ]
        return np.concatenate(each) if each else np.empty(0)

    @property
    def echo_every(self) -> int | None:
        """N of `--echo-every N`: every Nth sample was echoed."""
        for summary in self.publishers.values():
            every = (summary.get("echo") or {}).get("every") or (summary.get("config") or {}).get(
                "echo_every"
            )
            if every:
                return int(every)
        every = self.params.get("echo_every")
        return int(every) if every else None

    @property
    def echo_counts(self) -> dict:
        """The publishers' echo counts added up: expected, received, lost."""
        blocks = [s["echo"] for s in self.publishers.values() if isinstance(s.get("echo"), dict)]
        return (
            {k: sum(int(b.get(k) or 0) for b in blocks) for k in ("expected", "received", "lost")}
            if blocks
            else {}
        )

    @property
    def counts(self) -> dict:
        """The receivers' counts, added up over several subscribers; a graph path's
        source samples (sent), those that reached the sink, and the drops."""
        if self.graph_path is not None:
            return graph_runs.path_counts(self.run_record, self.graph_path)
        each = [s.get("counts") or {} for s in self.receivers.values()]
        if len(each) <= 1:
            return each[0] if each else {}
        return {k: sum(c.get(k) or 0 for c in each) for k in each[0] if isinstance(each[0][k], int)}


def natural_key(name: str) -> list:
    """sub-2 before sub-10, t2-sub-1 before t10-sub-1."""
    return [
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)
    ]


@dataclass
class ResultSet:
    root: Path
    kind: str  # "sweep", "run" or "folder"
    name: str
    runs: list[RunData]  # every run found, in run order
    env: dict
    experiment_text: str | None  # the experiment file as run (sweeps)
    searches: list["Search"] = field(default_factory=list)  # rate searches found

    @property
    def ok_runs(self) -> list[RunData]:
        return [r for r in self.runs if r.status == "ok" and r.samples is not None]


SEARCH_FILE = "search.json"
SEARCH_FORMAT = "psbench-search/1"


@dataclass
class Search:
    """A rate search (`psbench ratesearch`): its search.json and where it was found."""

    name: str  # its folder, relative to the result set's root (or the root's name)
    path: Path  # the search.json
    data: dict  # psbench-search/1: criteria, steps, max_sustainable_rate_hz, ...

    @property
    def steps(self) -> list[dict]:
        return [s for s in self.data.get("steps") or [] if isinstance(s, dict)]

    @property
    def criteria(self) -> dict:
        return self.data.get("criteria") or {}

    @property
    def publishers(self) -> int:
        """Publishers per step (the search's rates are each one's); 1 when not said."""
        found = self.data.get("publishers")
        if found is None:
            found = (self.data.get("spec") or {}).get("publishers")
        return found if isinstance(found, int) and found > 1 else 1


def _search_files(root: Path) -> list[Path]:
    """search.json in the root, its folders and theirs (a sweep's run folder)."""
    found = (
        [root / SEARCH_FILE]
        + sorted(root.glob(f"*/{SEARCH_FILE}"))
        + sorted(root.glob(f"*/*/{SEARCH_FILE}"))
    )
    return [p for p in found if p.is_file()]


def load_searches(root: Path) -> list[Search]:
    searches = []
    for path in _search_files(root):
        data = _read_json(path)
        if data.get("format") != SEARCH_FORMAT:
            raise UserError(
                f"{path}: format is {data.get('format')!r}, this reader knows "
                f"{SEARCH_FORMAT!r}; report it with the psbench that wrote it",
                exit_code=1,
            )
        name = root.name if path.parent == root else str(path.parent.relative_to(root))
        searches.append(Search(name, path, data))
    return searches


def _run_folders(root: Path) -> list[Path]:
    """The run folders of a folder: its subfolders with run.json, and the steps of the
    rate searches among them (a folder of search folders)."""
    found = {p.parent for p in root.glob("*/run.json")}
    found |= {
        p.parent for p in root.glob("*/*/run.json") if (p.parent.parent / SEARCH_FILE).is_file()
    }
    return sorted(found)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}", exit_code=1) from None
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON ({exc})", exit_code=1) from None
    return data if isinstance(data, dict) else {}


def _sweep(root: Path) -> ResultSet:
    latest: dict[int, dict] = {}
    for entry in Store(root).entries():
        if isinstance(entry.get("run"), int):
            latest[entry["run"]] = entry  # a resumed sweep: the last attempt counts
    runs: list[RunData] = []
    for number in sorted(latest):
        entry = latest[number]
        run_dir = root / entry["run_dir"] if entry.get("run_dir") else None
        if entry.get("search") is not None:
            # A rate-search sweep: its run folder is a search; its steps are the runs.
            runs += _search_steps(entry, run_dir, first=len(runs) + 1)
            continue
        record = {}
        if run_dir is not None and (run_dir / "run.json").is_file():
            record = _read_json(run_dir / "run.json")
        runs.append(
            RunData(
                number=len(runs) + 1,
                label=entry.get("label") or str(number),
                rep=int(entry.get("rep") or 1),
                params=measured_settings(resolved(entry.get("params") or {}, record)),
                status=entry.get("status") or "unknown",
                message=entry.get("message"),
                run_dir=run_dir,
                run_record=record,
            )
        )
    env = _read_json(root / "env.json") if (root / "env.json").is_file() else {}
    experiment = root / EXPERIMENT_FILE
    text = experiment.read_text(errors="replace") if experiment.is_file() else None
    name = root.name
    expanded = root / "experiment.expanded.json"
    if expanded.is_file():
        name = _read_json(expanded).get("name") or name
    return ResultSet(root, "sweep", name, runs, env, text, load_searches(root))


def _search_steps(entry: dict, search_dir: Path | None, first: int) -> list[RunData]:
    """The step runs of one rate search of a sweep, in the order it walked them: the
    sweep's settings with the step's rate, each a configuration of its own."""
    if search_dir is None or not (search_dir / SEARCH_FILE).is_file():
        return []
    steps = _read_json(search_dir / SEARCH_FILE).get("steps") or []
    runs: list[RunData] = []
    for step in steps:
        run_dir = search_dir / step["run_dir"] if step.get("run_dir") else None
        if run_dir is None or not (run_dir / "run.json").is_file():
            continue
        record = _read_json(run_dir / "run.json")
        params = resolved({**(entry.get("params") or {}), "rate": step.get("rate_hz")}, record)
        label = f"{entry.get('label') or entry.get('run')} at {step.get('rate_hz'):g} Hz"
        runs.append(
            RunData(
                number=first + len(runs),
                label=label,
                rep=int(entry.get("rep") or 1),
                params=measured_settings(params),
                status=record.get("status") or "unknown",
                message=record.get("message"),
                run_dir=run_dir,
                run_record=record,
            )
        )
    return runs


def resolved(params: dict, run_record: dict) -> dict:
    """A sweep entry's settings with what psbench chose at run time in their place, as a
    single run's run.json has them (`loan: auto` becomes the loan the run used; a history
    chosen for a reliable back-to-back run is the one it used), so that a sweep's
    configuration and the same `psbench ping` are one configuration."""
    spec = block(run_record, "spec")
    chosen = {key: spec.get(key) for key in block(run_record, "auto") if key in spec}
    if params.get("loan") == "auto" and "loan" in spec:
        chosen["loan"] = spec["loan"]
    return {**params, **chosen} if chosen else params


def measured_settings(params: dict) -> dict:
    """The settings a run set that shape what it measures, spelled as in experiment files:
    unset values, flags left off and waiting limits are dropped, so that a sweep's run and
    the same `psbench ping` agree."""
    found = {
        key: value
        for key, value in params.items()
        if key not in _WAIT_SETTINGS
        and value is not None
        and value is not False
        and value != []
        and value != {}
    }
    for key in ("subscribers", "publishers", "topics"):
        if found.get(key) == 1:
            # One of each is what every run had before fan-out, fan-in and topics: left
            # unsaid, so that names and configurations stay as they were and a single
            # run (whose run.json says 1) matches a sweep's (see implied_setting).
            del found[key]
    return found


def implied_setting(params: dict, key: str):
    """A setting's value, including one measured_settings leaves unsaid."""
    if key in ("subscribers", "publishers", "topics") and params.get("kind") == "pubsub":
        return params.get(key, 1)
    return params.get(key)


def _params_from_spec(spec: dict) -> dict:
    """A single run's settings from its run.json spec."""
    params = dict(spec)
    params.pop("driver_path", None)
    params.pop("cpus", None)  # a default chosen by psbench, recorded in run.json
    if isinstance(params.get("options"), list):
        params["options"] = dict(item.split("=", 1) for item in params["options"] if "=" in item)
    return measured_settings(params)


def _single(run_dir: Path, number: int) -> RunData:
    record = _read_json(run_dir / "run.json")
    return RunData(
        number=number,
        label=run_dir.name,
        rep=1,
        params=_params_from_spec(record.get("spec") or {}),
        status=record.get("status") or "unknown",
        message=record.get("message"),
        run_dir=run_dir,
        run_record=record,
    )


def sweeps_inside(path: Path | str) -> list[Path]:
    """Sweep folders directly inside a folder of run folders: a folder report covers
    run folders only, so these are named as skipped."""
    root = Path(path)
    if not root.is_dir() or (root / INDEX_FILE).is_file() or (root / "run.json").is_file():
        return []
    return sorted(d for d in root.iterdir() if d.is_dir() and (d / INDEX_FILE).is_file())


def with_graph_paths(runs: list[RunData]) -> list[RunData]:
    """A graph run stands for one run per path of interest (its `path` setting), each
    with that path's reaction latency as its series; the others as they are."""
    found: list[RunData] = []
    for run in runs:
        paths: list[str | None] = []
        if run.kind == "graph":
            paths.extend(graph_runs.paths_of(run.run_record))
        for path in paths or [None]:
            if path is None:
                found.append(replace(run, number=len(found) + 1))
            else:
                found.append(replace(run, number=len(found) + 1, label=f"{run.label} {path}",
                                     params={**run.params, "path": path}, graph_path=path))  # fmt: skip
    return found


def load_results(path: Path | str) -> ResultSet:
    """Everything measured in a results folder; a UserError names what is wrong."""
    found = _load_results(path)
    found.runs = with_graph_paths(found.runs)
    return found


def _load_results(path: Path | str) -> ResultSet:
    root = Path(path)
    if not root.is_dir():
        raise UserError(
            f"{root}: no such results folder; give the folder `psbench run` "
            f"printed (results: ...) or a run folder of `psbench ping`"
        )
    if (root / INDEX_FILE).is_file():
        return _sweep(root)
    if (root / "run.json").is_file():
        run = _single(root, 1)
        return ResultSet(root, "run", root.name, [run], block(run.run_record, "env"), None)
    run_dirs = _run_folders(root)
    sweeps = sweeps_inside(root)
    if not run_dirs and sweeps:
        raise UserError(
            f"{root}: holds sweep folders only ({', '.join(d.name for d in sweeps)}); "
            f"report each one: psbench report {sweeps[0]}"
        )
    if not run_dirs:
        raise UserError(
            f"{root}: holds no results (no {INDEX_FILE} of a sweep, no "
            f"run.json of a run, nor run folders); give the folder `psbench "
            f"run` printed (results: ...)"
        )
    runs = [_single(d, n) for n, d in enumerate(run_dirs, start=1)]
    return ResultSet(
        root,
        "folder",
        root.name,
        runs,
        block(runs[0].run_record, "env"),
        None,
        load_searches(root),
    )
