"""Real runs through the built node: counts agree with each other and with the files."""

import json

import numpy as np
import pytest

from conftest import only_run, run_cli
from psbench.results.samples import read_samples

COUNT = 2000


def load(run_dir, role):
    return json.loads((run_dir / f"{role}.json").read_text())


def check_samples_file(run_dir, summary, kind):
    samples = read_samples(run_dir / summary["samples_file"])
    assert summary["sample_kind"] == kind == samples.kind
    assert len(samples) == summary["counts"]["samples"]
    seq = samples.records["seq"]
    assert np.all(np.diff(seq.astype(np.int64)) > 0), "records not in sequence order"
    assert np.all(samples.latency_ns > 0)
    return samples


def check_run_record(record, status="ok"):
    assert record["status"] == status, record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    for process in record["processes"]:
        assert process["argv"][0].endswith("psbench-node")
        assert isinstance(process["pid"], int)
    assert record["env"]["format"] == "psbench-env/1"
    # The driver's own account of itself is kept beside its results.
    assert record["driver"]["name"] == record["spec"]["driver"]
    assert record["driver"]["abi_version"] == 8 and record["driver"]["version"]


@pytest.mark.parametrize(
    "driver,placement", [("udp", "inter"), ("shm", "inter"), ("udp", "intra"), ("shm", "intra")]
)
def test_ping(driver_libs, results, driver, placement):
    proc = run_cli(
        [
            "ping",
            "--driver",
            driver,
            "--size",
            "64",
            "--count",
            str(COUNT),
            "--warmup",
            "200",
            "--placement",
            placement,
            "--check-pattern",
        ],
        results,
    )
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    run_dir = record["_dir"]
    check_run_record(record)
    assert run_dir.name.endswith(f"-ping-{driver}-64B-{record['run_id']}")
    assert len(record["processes"]) == (2 if placement == "inter" else 1)
    ping, pong = load(run_dir, "ping"), load(run_dir, "pong")
    assert ping["placement"] == pong["placement"] == f"{placement}-process"
    counts = ping["counts"]
    assert counts["sent"] == COUNT
    # Every sent ping is accounted for exactly once.
    assert counts["samples"] + counts["lost"] + counts["late"] + counts["corrupted"] == COUNT
    assert counts["duplicated"] == counts["reordered"] == counts["corrupted"] == 0
    assert ping["ended_by"] == "count" and ping["error"] is None
    # The pong echoed the end message: the ping sent it once, not three times.
    assert pong["ended_by"] == "end_marker" and 1 <= ping["end_markers"]["sent"] <= 3
    samples = check_samples_file(run_dir, ping, "rtt")
    # What the CLI printed is what the file holds.
    stats = record["stats"]["ping"]
    assert stats["rtt"]["n"] == len(samples)
    assert stats["rtt"]["max"] == float(samples.latency_ns.max())
    assert stats["rtt_half"]["max"] == stats["rtt"]["max"] / 2
    assert "RTT/2" in proc.stdout and str(run_dir) in proc.stdout


@pytest.mark.parametrize("driver,placement", [("udp", "inter"), ("shm", "inter"), ("shm", "intra")])
def test_pubsub(driver_libs, results, driver, placement):
    count = 1000
    proc = run_cli(
        [
            "pubsub",
            "--driver",
            driver,
            "--size",
            "128",
            "--count",
            str(count),
            "--rate",
            "2000",
            "--placement",
            placement,
        ],
        results,
    )
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    check_run_record(record)
    run_dir = record["_dir"]
    pub, sub = load(run_dir, "pub"), load(run_dir, "sub")
    assert pub["counts"]["sent"] == count
    assert pub["config"]["mode"] == sub["config"]["mode"] == "open_loop"
    counts = sub["counts"]
    assert counts["samples"] + counts["lost"] + counts["corrupted"] == count
    assert counts["duplicated"] == counts["corrupted"] == 0
    samples = check_samples_file(run_dir, sub, "one_way")
    assert record["stats"]["sub"]["one_way"]["n"] == len(samples)
    assert "one-way" in proc.stdout


def ping_run(results, *args):
    """One inter-process ping through the CLI; returns (run record, ping summary, samples)."""
    proc = run_cli(["ping", *args], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    check_run_record(record)
    ping = load(record["_dir"], "ping")
    return record, ping, check_samples_file(record["_dir"], ping, "rtt")


def assert_all_accounted(counts, sent):
    assert counts["sent"] == sent
    assert counts["samples"] + counts["lost"] + counts["late"] + counts["corrupted"] == sent
    assert counts["corrupted"] == counts["duplicated"] == 0


def intact_ping(results, driver: str, size: int, count: int, warmup: int, *extra):
    """ping_run with every echo's pattern checked: each of count sent is accounted for,
    none corrupted."""
    record, ping, samples = ping_run(
        results, "--driver", driver, "--size", str(size), "--count", str(count),
        "--warmup", str(warmup), "--check-pattern", *extra,
    )  # fmt: skip
    assert ping["config"]["size"] == size
    assert_all_accounted(ping["counts"], count)
    return record, ping, samples


@pytest.mark.parametrize("driver", ["udp", "shm"])
@pytest.mark.parametrize("notify", ["listener", "poll"])
def test_ping_in_each_notify_mode(driver_libs, results, driver, notify):
    record, ping, _ = intact_ping(results, driver, 1024, 500, 50, "--notify", notify)
    assert ping["config"]["notify"] == notify
    # The pong ends on the end marker in every notify mode; the ping sends it again when
    # its echo is not back within 1 then 5 ms (a loaded machine), three times at most.
    assert load(record["_dir"], "pong")["ended_by"] == "end_marker"
    assert 1 <= ping["end_markers"]["sent"] <= 3


@pytest.mark.parametrize(
    "driver,size", [("udp", 32), ("udp", 1 << 20), ("udp", 4 << 20), ("shm", 32), ("shm", 4 << 20)]
)
def test_header_only_to_four_mib_arrive_intact(driver_libs, results, driver, size):
    _, _, samples = intact_ping(results, driver, size, 40, 5)
    assert len(samples) > 0


def test_open_loop_times_from_the_intended_schedule(driver_libs, results):
    _, ping, samples = ping_run(
        results, "--driver", "udp", "--rate", "2000", "--count", "1000", "--warmup", "100"
    )
    assert ping["config"]["mode"] == "open_loop"
    assert_all_accounted(ping["counts"], 1000)
    # Due times come from the schedule (start + i / rate), not from when sending
    # happened: consecutive received samples are whole periods of 500 us apart.
    intended = samples.records["intended_ns"].astype(np.int64)
    seq = samples.records["seq"].astype(np.int64)
    gaps = np.diff(intended) - np.diff(seq) * 500_000
    assert np.all(np.abs(gaps) <= 1), "intended send times do not follow the schedule"


def test_reliable_shm_pubsub_loses_nothing(driver_libs, results):
    proc = run_cli(
        [
            "pubsub",
            "--driver",
            "shm",
            "--reliability",
            "reliable",
            "--option",
            "slots=4",
            "--size",
            "4096",
            "--count",
            "3000",
            "--rate",
            "0",
        ],
        results,
    )
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    sub = load(record["_dir"], "sub")
    assert sub["config"]["reliability"] == "reliable"
    assert sub["counts"]["samples"] == 3000 and sub["counts"]["lost"] == 0


def test_duration_run_ends_by_duration(driver_libs, results):
    _, ping, samples = ping_run(results, "--driver", "shm", "--duration", "0.5", "--warmup", "10")
    assert ping["ended_by"] == "duration"
    assert ping["config"]["count"] is None and ping["config"]["duration_s"] == 0.5
    assert len(samples) > 0
    assert_all_accounted(ping["counts"], ping["counts"]["sent"])
