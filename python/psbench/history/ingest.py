"""Result sets as the history reads them: where they are (a set, or a folder holding
sets), what identifies one (its content, never its path), whether it is whole (a damaged
or half-written set is refused with the reason), and the rows the database keeps of it.

A result set is what one psbench command wrote: a sweep of `psbench run` (also of
`reproduce` and `demo`: index.jsonl), one run of `psbench ping|pubsub|graph run`
(run.json), a rate search (search.json) or a criteria battery (criteria.json)."""

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from psbench.base import manifests
from psbench.base.errors import UserError
from psbench.history.database import (
    ConfigRow,
    CriterionRow,
    RunRow,
    SampleRow,
    SetRow,
    json_text,
)
from psbench.report.compare import status_text
from psbench.results.configs import Config, build_configs
from psbench.results.describe import describe
from psbench.results.load import SEARCH_FILE, ResultSet, RunData, load_results
from psbench.results.run_record import RUN_FORMAT, UNENDED, block
from psbench.results.samples import HEADER, HEADER_SIZE, MAGIC, SamplesFileError, read_samples
from psbench.results.stats import nearest_rank, percentile_intervals
from psbench.results.store import INDEX_FILE, INDEX_FORMAT

# What run/criteria/battery.py (RECORD, FORMAT) writes, named here so that `history add`
# does not import the machinery of a run (half a second); tests/test_history_refused.py
# holds them equal. run.json's format and statuses are its definition's (run_record).
CRITERIA_FILE = "criteria.json"
CRITERIA_FORMAT = "psbench-criteria/1"
SUMMARY_FORMAT = "psbench-node-summary/1"
EXPANDED_FILE = "experiment.expanded.json"
# Written into a set after it was measured (reports): not part of what identifies it.
LATER_FOLDERS = ("report",)


class Refused(Exception):
    """A set that cannot be added; the message names the file and what to do."""


def set_kind(folder: Path) -> str | None:
    """sweep, run, search or criteria: what wrote the folder; None if no result set."""
    for name, kind in (
        (INDEX_FILE, "sweep"),
        (CRITERIA_FILE, "criteria"),
        (SEARCH_FILE, "search"),
        ("run.json", "run"),
    ):
        if (folder / name).is_file():
            return kind
    return None


def find_sets(text: str) -> list[Path]:
    """The result sets a DIR argument names: itself, or the sets in its folders (e.g.
    results/), each found once, not descending into a set."""
    path = Path(text).expanduser()
    if not path.exists():
        raise UserError(
            f"{text}: no such folder; give the folder of a result set (the one `psbench "
            f"run` printed: results: ...) or a folder holding result sets (results/)"
        )
    if not path.is_dir():
        hint = f"; give its folder: psbench history add {path.parent}" if path.suffix else ""
        raise UserError(f"{text}: not a folder{hint}")
    path = path.resolve()
    for parent in list(path.parents)[:3]:
        if set_kind(parent) in ("sweep", "search", "criteria"):
            raise UserError(
                f"{text}: a run of the result set {parent}, not a set of its own; add the "
                f"set: psbench history add {parent}"
            )
    if set_kind(path):
        return [path]
    found = []
    for folder, children, _ in os.walk(path):
        here = Path(folder)
        if here != path and set_kind(here):
            found.append(here)
            children.clear()
            continue
        children[:] = sorted(
            c for c in children if not c.startswith(".") and c not in LATER_FOLDERS
        )
    if not found:
        raise UserError(
            f"{text}: holds no result set (no {INDEX_FILE} of a sweep, run.json of a run, "
            f"{SEARCH_FILE} or {CRITERIA_FILE}, in it or its folders); give the folder "
            f"`psbench run` printed (results: ...)"
        )
    return sorted(found)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _measured_files(root: Path, leave_out: set[Path]) -> list[Path]:
    """The files of a set that hold what was measured, sorted: not reports written
    later, temporary files, hidden ones, nor the history database itself."""
    files = []
    for folder, children, names in os.walk(root):
        here = Path(folder)
        children[:] = sorted(
            c
            for c in children
            if not c.startswith(".") and not (here == root and c in LATER_FOLDERS)
        )
        for name in names:
            path = here / name
            if name.startswith(".") or name.endswith((".tmp", "-journal")) or path in leave_out:
                continue
            files.append(path)
    return sorted(files)


def content_hash(root: Path, leave_out: set[Path] = frozenset()) -> str:
    """sha256 over every measured file's path in the set and its bytes' sha256: the same
    set copied or moved elsewhere has the same identity; one changed byte, another."""
    digest = hashlib.sha256()
    for path in _measured_files(root, set(leave_out)):
        digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_of(path)}\n".encode())
    return digest.hexdigest()


def _json_of(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise Refused(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise Refused(
            f"{path}: truncated or not JSON ({exc}): {what} was cut short (the command "
            f"was killed while writing it, or the copy is incomplete); copy the set again "
            f"from where it was made, or measure it again"
        ) from None
    if not isinstance(data, dict):
        raise Refused(f"{path}: not a JSON object: not {what} psbench wrote")
    return data


def _known(where: str, found, known: str) -> None:
    """Refuses a format other than the one this psbench reads (every psbench so far
    wrote it): a newer psbench's, or a file psbench did not write."""
    if found != known:
        what = f"format {found!r}" if found else "no format key (not a file psbench wrote)"
        raise Refused(
            f"{where}: {what}; this psbench reads {known!r}: add it with the psbench that wrote it"
        )


def _check_index(root: Path) -> list[dict]:
    """The index's entries; a line cut short or of an unknown format is refused."""
    path = root / INDEX_FILE
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        raise Refused(
            f"{path}: its last line is cut short (no newline at its end): the sweep is "
            f"still writing it, or was killed mid-line; add the set once the sweep has "
            f"ended (`psbench run FILE -o {root} --resume` ends one that was stopped)"
        )
    lines = data.decode(errors="replace").splitlines()
    # `psbench run --resume` ends a torn line and goes on (results/store.py): a line
    # that is not JSON is then history, not damage, if a resume followed it.
    resumed = any(root.glob("env-resumed-*.json"))
    entries = []
    for number, line in enumerate(lines, start=1):
        try:
            entry = json.loads(line)
        except ValueError:
            if resumed and number < len(lines):
                continue
            raise Refused(
                f"{path}: line {number} is not JSON (cut mid-line or overwritten); the "
                f"index of a sweep is appended one whole line per run: copy the set again, "
                f"or measure it again"
            ) from None
        if not isinstance(entry, dict):
            raise Refused(f"{path}: line {number} is not a JSON object")
        if entry.get("format") is not None:
            _known(f"{path}: line {number}", entry["format"], INDEX_FORMAT)
        entries.append(entry)
    return entries


def _check_run(run_dir: Path) -> dict:
    """A run folder's run.json, whole, of a known format, of a run that ended."""
    path = run_dir / "run.json"
    if not path.is_file():
        raise Refused(
            f"{path}: missing: the run's record is not there (the copy is incomplete, or "
            f"the file was removed); copy the set again, or measure it again"
        )
    record = _json_of(path, "the run's record")
    _known(str(path), record.get("format"), RUN_FORMAT)
    if record.get("status") in UNENDED:
        raise Refused(
            f"{path}: status {record['status']!r}: the run has not ended (it is still "
            f"going, or was killed before it could say how it ended); add the set once "
            f"the run has ended, or measure it again"
        )
    return record


def _summaries(run_dir: Path) -> dict[str, tuple[Path, dict]]:
    """name -> (file, summary) of every node summary in a run folder."""
    found = {}
    for path in sorted(run_dir.glob("*.json")):
        if path.name == "run.json":
            continue
        data = _json_of(path, "a node's summary")
        if not data.get("role"):
            continue
        if data.get("format") is not None:
            _known(str(path), data["format"], SUMMARY_FORMAT)
        found[data.get("name") or data["role"]] = (path, data)
    return found


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-6


def _check_samples(run_dir: Path, record: dict) -> None:
    """Every samples file an ok run's summaries name is there, whole, with as many
    records as the summary counted, and with the n and median run.json recorded."""
    for name, (summary_path, summary) in _summaries(run_dir).items():
        file = summary.get("samples_file")
        if not file:
            continue
        path = run_dir / file
        try:
            samples = read_samples(path)
        except SamplesFileError as exc:
            raise Refused(f"{exc}; the run's samples are damaged: copy the set again") from None
        expected = (summary.get("counts") or {}).get("samples")
        if expected is not None and expected != len(samples):
            raise Refused(
                f"{path}: {len(samples)} records, but {summary_path.name} says counts.samples "
                f"= {expected}: the samples and the summary disagree (a file cut short or "
                f"replaced); copy the set again, or measure it again"
            )
        stats = (record.get("stats") or {}).get(name) or {}
        series = stats.get("rtt") or stats.get("one_way_uncorrected") or stats.get("one_way")
        if not isinstance(series, dict) or not len(samples):
            continue
        latency = samples.latency_ns.astype(np.float64)
        if series.get("n") is not None and series["n"] != len(samples):
            raise Refused(
                f"{path}: {len(samples)} records, but run.json's stats.{name} says n = "
                f"{series['n']}: the samples and the summary disagree; copy the set again"
            )
        if series.get("p50") is not None and not _same(
            float(nearest_rank(latency, 50)), float(series["p50"])
        ):
            raise Refused(
                f"{path}: its median is {float(nearest_rank(latency, 50)):g} ns, but run.json's "
                f"stats.{name} says p50 = {series['p50']:g} ns: the samples are not the ones "
                f"the run recorded (replaced or rewritten); copy the set again"
            )


def _criteria(root: Path) -> tuple[list[CriterionRow], dict]:
    """A battery's verdicts and its record."""
    path = root / CRITERIA_FILE
    record = _json_of(path, "the battery's record")
    _known(str(path), record.get("format"), CRITERIA_FORMAT)
    rows = [
        CriterionRow(
            criterion=str(v.get("criterion")),
            driver=str(v.get("driver")),
            verdict=str(v.get("verdict")),
            evidence=v.get("evidence"),
            experiment=v.get("experiment"),
            run_dir=v.get("run_dir"),
        )
        for v in record.get("verdicts") or []
        if isinstance(v, dict)
    ]
    return rows, record


def _run_folders(root: Path, kind: str, entries: list[dict]) -> list[tuple[Path, str | None]]:
    """(run folder, status the index gives) of every run of the set."""
    if kind == "run":
        return [(root, None)]
    if kind == "sweep":
        latest: dict[int, dict] = {}
        for entry in entries:
            if isinstance(entry.get("run"), int):
                latest[entry["run"]] = entry
        found = []
        for number in sorted(latest):
            entry = latest[number]
            if not entry.get("run_dir"):
                continue
            folder = root / entry["run_dir"]
            if not folder.is_dir():
                raise Refused(
                    f"{root / INDEX_FILE}: run {number}'s folder {entry['run_dir']} is "
                    f"missing: the set is incomplete; copy it again, or measure it again"
                )
            if entry.get("search") is not None:
                _json_of(folder / SEARCH_FILE, "the rate search's record")
                found += [(p.parent, None) for p in sorted(folder.glob("*/run.json"))]
            else:
                found.append((folder, entry.get("status")))
        return found
    return [
        (p.parent, None)
        for p in sorted(root.rglob("run.json"))
        if LATER_FOLDERS[0] not in p.relative_to(root).parts
    ]


def _data_files(root: Path, run_dir: Path) -> list[SampleRow]:
    """The raw data files of a run folder (samples, a graph's module records)."""
    rows = []
    for path in sorted(run_dir.iterdir()):
        if not path.is_file() or path.suffix in (".json", ".stderr", ".tmp", ".log"):
            continue
        if path.name.startswith("."):
            continue
        records, version = None, None
        with path.open("rb") as f:
            head = f.read(HEADER_SIZE)
        if len(head) == HEADER_SIZE and head.startswith(MAGIC):
            _, version, _, records, _, _, _ = HEADER.unpack_from(head)
        rows.append(
            SampleRow(
                receiver=path.stem,
                file=path.relative_to(root).as_posix(),
                sha256=sha256_of(path),
                bytes=path.stat().st_size,
                records=records,
                format_version=version,
            )
        )
    return rows


@dataclass
class DriverIdentity:
    name: str | None
    version: str | None
    origin: str | None  # where it came from (a source tree, for drivers built from one)
    build: str | None  # JSON: its build flags


def service_version(record: dict, driver: str) -> str | None:
    """For a driver whose versions are versions of its service (a broker: the manifest's
    [[versions]] name it), the version the run's service printed ("broker: v2.9.10" ->
    "2.9.10"): the default and NAME@VERSION are then named alike, by the part that
    differs between them."""
    if driver not in manifests.driver_names():
        return None
    services = {v.service for v in manifests.load(driver).versions if v.service}
    for service in record.get("services") or []:
        if isinstance(service, dict) and service.get("name") in services and service.get("version"):
            printed = str(service["version"]).removeprefix(f"{service['name']}:").strip()
            return printed.removeprefix("v")
    return None


def driver_identity(record: dict, params: dict) -> DriverIdentity:
    """The middleware a run measured: run.json's driver block (the driver's --describe:
    name, version, and for drivers built from source its sdk block), a driver_version or
    label where the record has one, or the version a NAME@VERSION driver setting names."""
    described = block(record, "driver")
    setting = str(params.get("driver") or "")
    named = setting.split("@", 1)[1] if "@" in setting else None
    version = (
        record.get("driver_version")
        or described.get("driver_version")
        or described.get("label")
        or service_version(record, setting.split("@")[0])
        or named
        or described.get("version")
    )
    built = described.get("build") if isinstance(described.get("build"), dict) else {}
    sdk = described.get("sdk") or built.get("sdk")  # describe's build: drivers.build_record
    sdk = sdk if isinstance(sdk, dict) else None
    origin = build = None
    if built.get("module"):  # a service built with go (docs/versions.md)
        origin, build = built["module"], json_text(built.get("service_executables") or {})
    if sdk:
        trees = [t for t in sdk.get("trees") or [] if isinstance(t, dict)]
        origin = (
            ", ".join(
                f"{t.get('url') or t.get('origin') or t.get('name')}"
                f"@{t.get('tag') or str(t.get('commit') or '')[:12]}"
                for t in trees
            )
            or sdk.get("origin")
            or sdk.get("source")
        )
        build = json_text(sdk.get("flags")) if sdk.get("flags") else None
    return DriverIdentity(
        described.get("name") or setting.split("@")[0] or None, version, origin, build
    )


def series_key(params: dict) -> str:
    """A configuration's settings without the middleware's version: what stays the same
    when only the version changes (driver NAME@VERSION -> NAME)."""
    settings = dict(params)
    if isinstance(settings.get("driver"), str):
        settings["driver"] = settings["driver"].split("@", 1)[0]
    return json.dumps(settings, sort_keys=True, default=str)


def _resource(run: RunData, key: str) -> float | None:
    resources = block(run.run_record, "resources")
    if not resources.get("measured"):
        return None
    return (resources.get("all") or {}).get(key)


def _run_row(root: Path, run: RunData) -> RunRow:
    ok = run.status == "ok" and run.samples is not None
    stats = describe(run.latency_ns) if ok else {}
    identity = driver_identity(run.run_record, run.params)
    return RunRow(
        number=run.number,
        rep=run.rep,
        label=run.label,
        status=run.status if ok or run.status != "ok" else "ok without samples",
        message=run.message,
        run_dir=run.run_dir.relative_to(root).as_posix() if run.run_dir else None,
        created_utc=run.run_record.get("created_utc"),
        driver_name=identity.name,
        driver_version=identity.version,
        driver_origin=identity.origin,
        driver_build=identity.build,
        driver=json_text(run.run_record.get("driver")),
        n=stats.get("n"),
        p50=stats.get("p50"),
        p99=stats.get("p99"),
        samples_per_s=run.throughput.get("samples_per_s") if ok else None,
        cpu_ns_per_message=_resource(run, "cpu_ns_per_message") if ok else None,
        samples=_data_files(root, run.run_dir) if run.run_dir else [],
    )


def _config_row(root: Path, config: Config) -> ConfigRow:
    runs = [_run_row(root, r) for r in config.runs]
    first = next((r for r in config.ok_runs), config.runs[0])
    identity = driver_identity(first.run_record, config.params)
    intervals = percentile_intervals(config.pooled_ns) if config.pooled_ns.size else {}
    p50_ci, p99_ci = intervals.get("p50") or [None, None], intervals.get("p99") or [None, None]
    everything = (config.resources or {}).get("all") or {}
    return ConfigRow(
        series=series_key(config.params),
        settings=config.key,
        label=config.label,
        kind=config.kind or None,
        driver=config.driver.split("@", 1)[0] or None,
        size=config.size,
        metric=config.metric,
        driver_version=identity.version,
        driver_origin=identity.origin,
        driver_build=identity.build,
        runs=len(config.runs),
        ok_runs=len(config.ok_runs),
        status=status_text(config),
        n=config.stats.get("n") if config.ok_runs else None,
        p50=config.stats.get("p50"),
        p50_low=p50_ci[0],
        p50_high=p50_ci[1],
        p99=config.stats.get("p99"),
        p99_low=p99_ci[0],
        p99_high=p99_ci[1],
        p999=config.stats.get("p99.9"),
        max=config.stats.get("max"),
        mean=config.stats.get("mean"),
        spread_p50=config.spread.get("relative"),
        samples_per_s=config.rate.get("samples_per_s"),
        mbit_per_s=config.rate.get("mbit_per_s"),
        loss_percent=config.rate.get("loss_percent"),
        cpu_ns_per_message=everything.get("cpu_ns_per_message"),
        utilisation=everything.get("utilisation"),
        peak_rss_kb=everything.get("peak_rss_kb"),
        run_rows=runs,
    )


def load_set(root: Path, kind: str) -> ResultSet:
    """The set's runs, as `psbench report` reads them (a criteria battery: every run
    under it)."""
    try:
        if kind != "criteria":
            return load_results(root)
        runs = []
        for folder, _ in _run_folders(root, kind, []):
            for run in load_results(folder).runs:
                run.number = len(runs) + 1
                run.label = folder.relative_to(root).as_posix()
                runs.append(run)
        env = block(runs[0].run_record if runs else None, "env")
        return ResultSet(root, "criteria", root.name, runs, env, None)
    except UserError as exc:
        raise Refused(str(exc)) from None


def _formats(root: Path, kind: str, results: ResultSet, samples: list[SampleRow]) -> dict:
    found = {
        "run.json": sorted({str(r.run_record.get("format")) for r in results.runs}),
        "samples": sorted({s.format_version for s in samples if s.format_version is not None}),
    }
    if kind == "sweep":
        found["index"] = INDEX_FORMAT
    return found


def _file_bytes(path: Path) -> bytes:
    return path.read_bytes() if path.is_file() else b""


def read_set(root: Path, leave_out: set[Path] = frozenset(), identity: str | None = None) -> SetRow:
    """Everything the history keeps of the set in root (identity: its content_hash, when
    known already); Refused says why it cannot."""
    kind = set_kind(root)
    if kind is None:
        raise Refused(f"{root}: holds no result set any more")
    entries = _check_index(root) if kind == "sweep" else []
    if kind == "sweep":
        for name, what in ((EXPANDED_FILE, "the sweep's runs"), ("env.json", "its environment")):
            if (root / name).is_file():
                _json_of(root / name, what)
    criteria = _criteria(root) if kind == "criteria" else ([], {})
    if kind == "search":
        _json_of(root / SEARCH_FILE, "the rate search's record")
    for folder, status in _run_folders(root, kind, entries):
        record = _check_run(folder)
        if (status or record.get("status")) == "ok":
            _check_samples(folder, record)
    identity = identity or content_hash(root, leave_out)
    results = load_set(root, kind)
    try:
        configs = build_configs(results)
        config_rows = [_config_row(root, c) for c in configs]
    except UserError as exc:
        raise Refused(str(exc)) from None
    verdicts, battery = criteria
    if not config_rows and not verdicts:
        raise Refused(f"{root}: holds no run that ended and no verdict (nothing was measured)")
    records = [r.run_record for r in results.runs if r.run_record] + ([battery] if battery else [])
    started = min((r["created_utc"] for r in records if r.get("created_utc")), default=None)
    finished = max((r["finished_utc"] for r in records if r.get("finished_utc")), default=None)
    env = results.env or next((r["env"] for r in records if r.get("env")), None) or {}
    git = env.get("git") if isinstance(env.get("git"), dict) else {}
    virtual = env.get("virtualization")
    index = _file_bytes(root / INDEX_FILE)
    origin = (
        "sweep:"
        + hashlib.sha256(
            _file_bytes(root / EXPANDED_FILE) + _file_bytes(root / "env.json")
        ).hexdigest()
        if kind == "sweep"
        else f"content:{identity}"
    )
    samples = [s for c in config_rows for r in c.run_rows for s in r.samples]
    return SetRow(
        content_hash=identity,
        origin=origin,
        index_size=len(index) if kind == "sweep" else None,
        index_sha256=hashlib.sha256(index).hexdigest() if kind == "sweep" else None,
        kind=kind,
        name=results.name,
        path=str(root),
        added_utc=datetime.now(UTC).isoformat(timespec="seconds"),
        started_utc=started or env.get("collected_utc"),
        finished_utc=finished,
        machine=env.get("hostname"),
        cpu_model=env.get("cpu_model"),
        logical_cpus=env.get("logical_cpus"),
        kernel=env.get("kernel"),
        virtualization=json_text(virtual) if isinstance(virtual, (dict, list)) else virtual,
        psbench_version=env.get("psbench"),
        psbench_commit=git.get("commit"),
        psbench_dirty=None if git.get("dirty") is None else int(bool(git.get("dirty"))),
        formats=json.dumps(_formats(root, kind, results, samples), sort_keys=True),
        runs=sum(c.runs for c in config_rows),
        ok_runs=sum(c.ok_runs for c in config_rows),
        env=json_text(env) if env else None,
        experiment=results.experiment_text,
        config_rows=config_rows,
        criterion_rows=verdicts,
    )


def starts(index: bytes, size: int | None, sha256: str | None) -> bool:
    """Whether an index of `size` bytes with this sha256 is a shorter start of index: the
    same sweep before `psbench run --resume` added runs to it."""
    return (
        size is not None
        and size < len(index)
        and hashlib.sha256(index[:size]).hexdigest() == sha256
    )
