"""The samples reader and the statistics, on files the node wrote and on damaged copies."""

import numpy as np
import pytest

from conftest import only_run, run_cli
from psbench.results.samples import HEADER_SIZE, SamplesFileError, read_samples
from psbench.results.stats import summarize_ns


@pytest.fixture
def node_samples(driver_libs, results):
    proc = run_cli(["ping", "--driver", "udp", "--count", "300", "--warmup", "10"], results)
    assert proc.returncode == 0, proc.stderr
    return only_run(results)["_dir"] / "ping.samples"


def test_reads_node_file(node_samples):
    samples = read_samples(node_samples)
    assert samples.kind == "rtt" and len(samples) <= 300
    assert samples.records.dtype.names == (
        "seq",
        "intended_ns",
        "latency_ns",
        "send_ns",
        "flags",
        "writer",
    )


def test_reads_version_1_files_of_older_results(tmp_path):
    # Version 1: 24-byte records (seq, intended, latency), written by nodes before 2.
    header = (
        b"PSBSMP01"
        + (1).to_bytes(4, "little")
        + (24).to_bytes(4, "little")
        + (2).to_bytes(8, "little")
        + (1).to_bytes(4, "little")
        + bytes(4)
        + (77).to_bytes(8, "little", signed=True)
        + bytes(24)
    )
    body = b"".join(
        seq.to_bytes(8, "little")
        + (seq * 10).to_bytes(8, "little")
        + (seq + 5).to_bytes(8, "little")
        for seq in (3, 4)
    )
    old = tmp_path / "old.samples"
    old.write_bytes(header + body)
    samples = read_samples(old)
    assert samples.kind == "rtt" and samples.start_ns == 77
    assert samples.records["seq"].tolist() == [3, 4]
    assert samples.latency_ns.tolist() == [8, 9]
    assert samples.records["send_ns"].tolist() == [30, 40]  # no send time then: intended
    assert not samples.late.any()


@pytest.mark.parametrize(
    "damage,words",
    [
        (lambda b: b"XXXXXXXX" + b[8:], "magic"),
        (lambda b: b[:-5], "bytes"),
        (lambda b: b[:10], "header"),
        (lambda b: b[:8] + (9).to_bytes(4, "little") + b[12:], "version"),
        (lambda b: b[:12] + (32).to_bytes(4, "little") + b[16:], "record_size"),
    ],
)
def test_damaged_file_names_the_problem(node_samples, tmp_path, damage, words):
    bad = tmp_path / "bad.samples"
    bad.write_bytes(damage(node_samples.read_bytes()))
    with pytest.raises(SamplesFileError) as err:
        read_samples(bad)
    assert str(bad) in str(err.value) and words in str(err.value)


def test_header_only_file_has_no_records(node_samples, tmp_path):
    data = node_samples.read_bytes()[:HEADER_SIZE]
    empty = tmp_path / "empty.samples"
    empty.write_bytes(data[:16] + (0).to_bytes(8, "little") + data[24:])
    assert len(read_samples(empty)) == 0


def test_percentiles_are_observed_values():
    values = np.arange(1, 101, dtype=np.int64)  # 1..100
    stats = summarize_ns(values)
    assert (stats["min"], stats["p50"], stats["p90"], stats["p99"], stats["max"]) == (
        1,
        50,
        90,
        99,
        100,
    )
    # 100 samples cannot tell p99.9 from the maximum.
    assert stats["p99.9"] is None and stats["p99.99"] is None
    assert stats["n"] == 100 and stats["mean"] == 50.5


def test_empty_series():
    stats = summarize_ns(np.array([], dtype=np.int64))
    assert stats["n"] == 0 and stats["p50"] is None and stats["max"] is None
