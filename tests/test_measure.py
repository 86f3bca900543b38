"""Real runs through the built node: counts agree with each other and with the files."""

import json

import numpy as np
import pytest

from conftest import only_run, run_cli
from psbench.samples import read_samples

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


@pytest.mark.parametrize("driver,placement", [("udp", "inter"), ("shm", "inter"),
                                              ("udp", "intra"), ("shm", "intra")])
def test_ping(driver_libs, results, driver, placement):
    proc = run_cli(["ping", "--driver", driver, "--size", "64", "--count", str(COUNT),
                    "--warmup", "200", "--placement", placement, "--check-pattern"],
                   results)
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
    samples = check_samples_file(run_dir, ping, "rtt")
    # What the CLI printed is what the file holds.
    stats = record["stats"]["ping"]
    assert stats["rtt"]["count"] == len(samples)
    assert stats["rtt"]["max"] == float(samples.latency_ns.max())
    assert stats["rtt_half"]["max"] == stats["rtt"]["max"] / 2
    assert "RTT/2" in proc.stdout and str(run_dir) in proc.stdout


@pytest.mark.parametrize("driver,placement", [("udp", "inter"), ("shm", "inter"),
                                              ("shm", "intra")])
def test_pubsub(driver_libs, results, driver, placement):
    count = 1000
    proc = run_cli(["pubsub", "--driver", driver, "--size", "128", "--count", str(count),
                    "--rate", "2000", "--placement", placement], results)
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
    assert record["stats"]["sub"]["one_way"]["count"] == len(samples)
    assert "one-way" in proc.stdout
