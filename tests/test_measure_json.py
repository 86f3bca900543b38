"""ping/pubsub --json: stdout is one JSON object whose figures are the run's own, the
human lines go to stderr."""

import json
import math

import pytest

from conftest import only_run, run_cli
from test_measure import check_samples_file, load


@pytest.mark.parametrize(
    "kind,output,series", [("ping", "ping", "rtt"), ("pubsub", "sub", "one_way")]
)
def test_json_summary_on_stdout(driver_libs, results, kind, output, series):
    proc = run_cli([kind, "--driver", "udp", "--count", "300", "--json"], results)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)  # nothing else on stdout
    assert f"{kind} udp 64 B" in proc.stderr
    record = only_run(results)
    assert summary["status"] == "ok" and summary["run_dir"] == str(record["_dir"])
    samples = sorted(
        check_samples_file(record["_dir"], load(record["_dir"], output), series).latency_ns.tolist()
    )
    stats = summary["stats"][output][series]
    assert stats["n"] == len(samples)
    assert stats["min"] == samples[0] and stats["max"] == samples[-1]
    assert stats["p50"] == samples[math.ceil(len(samples) / 2) - 1]  # nearest rank
