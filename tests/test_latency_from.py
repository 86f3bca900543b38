"""`--latency-from send|intended` (experiment key `latency_from`): which of the
publisher's two times a subscriber's one-way latency counts from. Real udp runs; the
samples file's time base tells them apart without reading a single latency value."""

import json

import numpy as np
import pytest

from conftest import run_cli, run_records
from psbench.results.samples import read_samples

RATE = 1000
PERIOD_NS = 1_000_000_000 // RATE


def _run(results, *extra):
    proc = run_cli(
        ["pubsub", "--driver", "udp", "--count", "300", "--rate", str(RATE), *extra], results
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [record] = run_records(results)
    run_dir = record["_dir"]
    return proc, record, run_dir, read_samples(run_dir / "sub.samples")


def _argv(record, name):
    [process] = [p for p in record["processes"] if p["name"] == name]
    return process["argv"]


def test_intended_counts_from_the_schedule_and_send_from_the_write(driver_libs, results):
    if "udp" not in driver_libs:
        pytest.skip("the udp baseline is not built")
    proc, record, run_dir, samples = _run(results / "intended")
    sub = json.loads((run_dir / "sub.json").read_text())
    assert sub["config"]["latency_from"] == "intended"
    # Default: every record's base is the schedule, start + seq * period to the ns.
    base = samples.records["intended_ns"]
    seq = samples.records["seq"].astype(np.int64)
    assert len(base) == 300
    assert np.all(base - base[0] == (seq - seq[0]) * PERIOD_NS)
    assert "receive time - intended send time" in proc.stdout

    proc, record, run_dir, samples = _run(results / "send", "--latency-from", "send")
    assert record["spec"]["latency_from"] == "send"
    sub = json.loads((run_dir / "sub.json").read_text())
    pub = json.loads((run_dir / "pub.json").read_text())
    assert sub["config"]["latency_from"] == "send"
    # Only the sub is told; the publisher sends as always.
    assert pub["config"]["latency_from"] == "intended"
    sub_argv = _argv(record, "sub")
    assert sub_argv[sub_argv.index("--latency-from") + 1] == "send"
    assert "--latency-from" not in _argv(record, "pub")
    # Both times are recorded: the schedule stays on the ns grid, and with send the
    # latency's base is when each write began, never all on the grid.
    seq = samples.records["seq"].astype(np.int64)
    intended = samples.records["intended_ns"]
    assert np.all(intended - intended[0] == (seq - seq[0]) * PERIOD_NS)
    base = samples.records["send_ns"]
    assert len(base) == 300
    assert not np.all(base - base[0] == (seq - seq[0]) * PERIOD_NS)
    assert np.all(base >= intended)  # a write begins at its due time or after
    # The base plus the latency is still the arrival, inside the sub's measured span.
    arrival = base + samples.latency_ns
    block = sub["throughput"]
    assert arrival.min() == block["first_arrival_ns"]
    assert arrival.max() == block["last_arrival_ns"]
    assert "start of the publisher's write" in proc.stdout


def test_latency_from_is_refused_where_it_means_nothing(results):
    proc = run_cli(["ping", "--driver", "udp", "--latency-from", "send"], results)
    assert proc.returncode == 2 and "--latency-from" in proc.stderr
    proc = run_cli(["pubsub", "--driver", "udp", "--latency-from", "write"], results)
    assert proc.returncode == 2 and "invalid choice: 'write'" in proc.stderr
