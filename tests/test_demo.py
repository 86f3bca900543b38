"""`psbench demo`: experiments/quickstart.yaml through the sweep executor, the baseline
latency table of its report and the report's HTML page, and its behaviour with a driver
missing."""

import json

import pytest

from conftest import run_cli

DRIVERS = ["udp", "shm", "cyclonedds", "fastdds", "iceoryx", "zeromq", "mqtt", "nats", "redis"]


def demo_store(results):
    found = list(results.glob("*-demo"))
    assert len(found) == 1, found
    store = found[0]
    index = [json.loads(line) for line in (store / "index.jsonl").read_text().splitlines()]
    return store, index


@pytest.mark.host_wide  # every driver of experiments/quickstart.yaml
@pytest.mark.long  # about 22 s, every driver: make test-long (CI runs it too)
def test_demo_runs_every_driver_of_the_quickstart_experiment(driver_libs, results):
    proc = run_cli(["demo", "--count", "300"], results, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = 2 * len(DRIVERS)
    for i in range(1, runs + 1):
        assert f"[{i}/{runs}]" in proc.stderr
    store, index = demo_store(results)
    assert (store / "experiment.yaml").read_text().startswith("# The quick start")
    # Runs that need no service first, then each service's runs together (iceoryx's RouDi
    # before the brokers), one middleware's sizes together: docs/experiments.md.
    served = ["iceoryx", "mqtt", "nats", "redis"]
    grouped = [d for d in DRIVERS if d not in served] + served
    assert [(e["params"]["driver"], e["params"]["size"]) for e in index] == [
        (driver, size) for driver in grouped for size in (64, 16384)
    ]
    for entry in index:
        assert entry["status"] == "ok", entry["message"]
        assert entry["counts"]["samples"] + entry["counts"]["lost"] == 300
        assert entry["latency"]["n"] == entry["counts"]["samples"]
        run = json.loads((store / entry["run_dir"] / "run.json").read_text())
        assert run["status"] == "ok" and run["spec"]["count"] == 300
        assert run["spec"]["notify"] == "wait" and run["spec"]["placement"] == "inter"
    assert "Latency per configuration" in proc.stdout and "p50 µs" in proc.stdout
    page = store / "report" / "report.html"
    assert proc.stdout.rstrip().endswith(f"report: {page}") and page.stat().st_size > 0
    assert f"results: {store}" in proc.stdout


def test_demo_skips_a_missing_driver(node, driver_libs, results, tmp_path):
    # A build directory holding the real node and only the udp driver.
    build = tmp_path / "build"
    (build / "core").mkdir(parents=True)
    (build / "core" / "psbench-node").symlink_to(node)
    (build / "drivers" / "udp").mkdir(parents=True)
    (build / "drivers" / "udp" / "libpsbench-udp.so").symlink_to(driver_libs["udp"])
    proc = run_cli(["demo", "--count", "100"], results, PSBENCH_BUILD=str(build))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    skipped = [line for line in proc.stdout.splitlines() if " skipped: " in line]
    assert [line.split(" skipped: ")[0] for line in skipped] == [
        f"{driver} {size}" for driver in DRIVERS[1:] for size in ("64 B", "16 KiB")
    ]
    assert all(f"driver '{line.split()[0]}' is not built" in line for line in skipped)
    latency_table = proc.stdout.split("Latency per configuration")[1].split("Ratio to")[0]
    measured = [
        line.split()[:3] for line in latency_table.splitlines() if line.startswith("  udp ")
    ]
    assert measured == [["udp", "64", "B"], ["udp", "16", "KiB"]]
    _, index = demo_store(results)
    assert [(e["params"]["driver"], e["status"]) for e in index] == [("udp", "ok"), ("udp", "ok")]
