"""Real sweeps in which nodes misbehave (the udp driver's fault injection): a run that
crashes, hangs or exits non-zero is classified, cleaned up, indexed, and the sweep goes
on; Ctrl-C stops a sweep, keeps what completed, and leaves nothing behind."""

import json
import os
import signal
import time
from pathlib import Path

from conftest import cli_in_background, node_processes_with
from experiment_files import index_lines, run_experiment, write

FAULTS = """
    name: faults
    defaults: {kind: ping, driver: udp, count: 200, warmup: 10, timeout: 10}
    runs:
      - {options: {fault: crash, fault_after: 50}}
      - {size: 128}
      - {options: {fault: hang, fault_after: 50}, timeout: 1}
      - {size: 256}
      - {options: {fault: exit, fault_after: 50}}
      - {size: 512}
"""


def node_processes_of(store: Path) -> list[int]:
    """Live psbench-node processes started for this sweep (their --out is inside it),
    whatever their run id."""
    return node_processes_with(str(store))


def shm_files_of(entries: list[dict]) -> list[str]:
    return [
        p.name for e in entries if e["run_id"] for p in Path("/dev/shm").glob(f"*{e['run_id']}*")
    ]


def the_store(results: Path, name: str) -> Path:
    found = list(results.glob(f"*-{name}"))
    assert len(found) == 1, found
    return found[0]


def test_crash_hang_and_exit_are_classified_and_the_sweep_goes_on(driver_libs, results, tmp_path):
    path = write(tmp_path, FAULTS)
    proc = run_experiment(path, results)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    store = the_store(results, "faults")
    entries = index_lines(store)
    assert [(e["run"], e["status"]) for e in entries] == [
        (1, "crashed"),
        (2, "ok"),
        (3, "timeout"),
        (4, "ok"),
        (5, "failed"),
        (6, "ok"),
    ]
    crashed, _, hung, _, exited, _ = entries
    assert "SIGABRT" in crashed["message"]
    assert "exit code 7" in exited["message"]
    for entry in entries:
        record = json.loads((store / entry["run_dir"] / "run.json").read_text())
        assert record["status"] == entry["status"]
    assert json.loads((store / hung["run_dir"] / "run.json").read_text())["processes"][1][
        "killed_by_launcher"
    ]  # the hung ping had to be stopped
    summary = proc.stdout
    assert "3 ok" in summary and "1 crashed" in summary and "1 timeout" in summary
    for entry in (crashed, hung, exited):
        assert f"{entry['run']} {entry['label']}: {entry['status']}" in summary
    assert node_processes_of(store) == []
    assert shm_files_of(entries) == []


def wait_for(condition, what: str, limit: float = 60.0):
    end = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < end, f"gave up waiting for {what}"
        time.sleep(0.05)


def running_record(store: Path, number: int) -> bool:
    for run_json in (store / "runs").glob(f"{number:04d}-*/*/run.json"):
        try:
            return json.loads(run_json.read_text())["status"] == "running"
        except (OSError, ValueError):
            return False
    return False


def test_ctrl_c_stops_the_sweep_keeps_completed_runs_and_cleans_up(driver_libs, results, tmp_path):
    path = write(
        tmp_path,
        """
        name: interrupted
        defaults: {kind: ping, driver: udp, warmup: 10}
        runs:
          - {count: 200}
          - {duration: 20, timeout: 60}
          - {duration: 20, timeout: 60, size: 128}
    """,
    )
    store = results / "sweep"
    # Runs 1 and 2 selected: the hint must continue that selection, not all 3 runs.
    with cli_in_background(
        ["run", str(path), "-o", str(store), "--filter", "run=1", "--filter", "run=2"], results
    ) as proc:
        wait_for(
            lambda: (store / "index.jsonl").exists() and len(index_lines(store)) == 1,
            "the first run to complete",
        )
        wait_for(lambda: running_record(store, 2), "the second run to start")
        os.kill(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    entries = index_lines(store)
    assert [(e["run"], e["status"]) for e in entries] == [(1, "ok"), (2, "interrupted")]
    record = json.loads((store / entries[1]["run_dir"] / "run.json").read_text())
    assert record["status"] == "interrupted"
    hint = err.split("(continue with: ")[1].split(")")[0]
    assert hint == f"./psbench run {path} -o {store.resolve()} --resume", err
    dry = run_experiment(path, results, *hint.split()[3:], "--dry-run")  # as printed
    rows = [line.split() for line in dry.stdout.splitlines()]
    assert [r[0] for r in rows if r and r[0].isdigit()] == ["1", "2"], dry.stdout
    assert node_processes_of(store) == []
    assert shm_files_of(entries) == []
