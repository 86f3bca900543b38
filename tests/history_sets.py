"""Result sets for the history tests, cut from real sweeps: a sweep's repetitions split
into sets of their own (repetitions of an unchanged configuration, interleaved in time),
and copies made slower by a known factor as a slower build would be (every samples file
and the statistics run.json recorded of it rewritten, the runs dated later)."""

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

from conftest import run_cli
from psbench.results.samples import HEADER_SIZE, read_samples
from psbench.results.stats import latency_stats

SWEEP = """
name: history
repetitions: {reps}
defaults: {{kind: ping, count: {count}, warmup: 50, timeout: 60}}
matrix:
  driver: [udp, shm]
  size: [64]
"""


def run_sweep(folder: Path, name: str, reps: int = 6, count: int = 1000) -> Path:
    experiment = folder / f"{name}.yaml"
    experiment.write_text(SWEEP.format(reps=reps, count=count))
    store = folder / name
    proc = run_cli(["run", str(experiment), "-o", str(store)], folder / "results")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return store


def index_of(store: Path) -> list[dict]:
    return [json.loads(line) for line in (store / "index.jsonl").read_text().splitlines()]


def write_index(store: Path, entries: list[dict]) -> None:
    text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries)
    (store / "index.jsonl").write_text(text)


def repetitions(store: Path, copy: Path, reps: set[int]) -> Path:
    """A copy of a sweep that holds only these repetitions of every configuration."""
    shutil.copytree(store, copy)
    keep = [e for e in index_of(store) if e["rep"] in reps]
    kept = {Path(e["run_dir"]).parts[1] for e in keep}
    for folder in (copy / "runs").iterdir():
        if folder.name not in kept:
            shutil.rmtree(folder)
    write_index(copy, keep)
    return copy


def split(store: Path, into: Path, parts: int) -> list[Path]:
    """Sets of the sweep's repetitions: set k holds repetitions k, k + parts, ... of every
    configuration (with 6 repetitions and 3 parts: 1 and 4, 2 and 5, 3 and 6)."""
    reps = {e["rep"] for e in index_of(store)}
    sets = [{r for r in reps if (r - 1) % parts == k} for k in range(parts)]
    return [repetitions(store, into / f"{store.name}-part{k + 1}", s) for k, s in enumerate(sets)]


def run_records(store: Path) -> list[Path]:
    return sorted(store.glob("runs/*/*/run.json"))


def _later(text: str, delay: timedelta) -> str:
    return (datetime.fromisoformat(text) + delay).isoformat(timespec="milliseconds")


def slower(store: Path, copy: Path, factor: int, delay=timedelta(hours=1)) -> Path:
    """A copy of a set whose latencies are all `factor` times what was measured, as a
    build that slow would have measured them, run `delay` later."""
    shutil.copytree(store, copy)
    for record_path in run_records(copy):
        samples_file = record_path.parent / "ping.samples"
        samples = read_samples(samples_file)
        records = samples.records.copy()
        records["latency_ns"] *= factor
        header = samples_file.read_bytes()[:HEADER_SIZE]
        samples_file.write_bytes(header + records.tobytes())
        record = json.loads(record_path.read_text())
        record["stats"]["ping"] = latency_stats(read_samples(samples_file))
        for key in ("created_utc", "finished_utc"):
            record[key] = _later(record[key], delay)
        record_path.write_text(json.dumps(record, indent=2))
    return copy


def versioned(store: Path, copy: Path, version: str, where: str = "driver") -> Path:
    """A copy of a set whose runs say they measured the middleware at `version`: in the
    driver's --describe block (driver.version) or as run.json's driver_version."""
    shutil.copytree(store, copy)
    for record_path in run_records(copy):
        record = json.loads(record_path.read_text())
        if where == "driver":
            record["driver"]["version"] = version
        else:
            record["driver_version"] = version
        record_path.write_text(json.dumps(record, indent=2))
    return copy
