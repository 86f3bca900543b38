"""Interval lines inside a run (`--progress S` on the node, one a second from `psbench
ping`/`pubsub` unless --quiet). Each line's figures are recomputed from the samples file:
its `kept` count says which records the interval covered (records are kept in arrival
order), so p50 (nearest rank) and max of those records are known answers."""

import json
import math
import subprocess

import numpy as np
import pytest

from conftest import only_run, run_cli
from psbench.results.samples import read_samples
from psbench.run import progress_lines


def udp_node_lines(node, driver_libs, roles: str, tmp_path, *args) -> list[dict]:
    """The node with roles over udp, run to its end (which must be clean) with its files
    in tmp_path: the progress lines it printed."""
    proc = subprocess.run(
        [str(node), "--driver", str(driver_libs["udp"]), "--role", roles,
         "--out", str(tmp_path), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return progress_of(proc.stdout)


def progress_of(stdout: str) -> list[dict]:
    return [f for f in map(progress_lines.parse, stdout.splitlines()) if f is not None]


def nearest_rank_p50(values: np.ndarray) -> int:
    ordered = sorted(int(v) for v in values)
    return ordered[math.ceil(len(ordered) / 2) - 1]


@pytest.mark.parametrize(
    "roles,rate", [("ping,pong", "2000"), ("pub,sub", "2000"), ("ping,pong", "0")]
)
def test_each_line_describes_exactly_the_records_of_its_interval(
    node, driver_libs, tmp_path, roles, rate
):
    lines = udp_node_lines(
        node, driver_libs, roles, tmp_path,
        "--run-id", f"prog{abs(hash((roles, rate))) % 10**6}", "--duration", "2.5",
        "--rate", rate, "--progress", "0.5", "--max-samples", "5000000",
    )  # fmt: skip
    assert lines
    role = roles.split(",")[0] if roles.startswith("ping") else "sub"
    summary = json.loads((tmp_path / f"{role}.json").read_text())
    samples = read_samples(tmp_path / summary["samples_file"])
    assert [f["t_s"] for f in lines] == sorted(f["t_s"] for f in lines)
    before = 0
    for f in lines:
        assert f["kept"] >= before and f["kept"] <= len(samples)
        assert f["received"] >= f["kept"]
        interval = samples.latency_ns[before : f["kept"]]
        if len(interval) == 0:
            assert "p50_ns" not in f
        elif len(interval) <= progress_lines_max_values():
            assert f["p50_ns"] == nearest_rank_p50(interval)
            assert f["max_ns"] == int(interval.max())
        before = f["kept"]
    assert lines[-1]["received"] <= summary["counts"]["received"]


def progress_lines_max_values() -> int:
    return 1 << 16  # ProgressReporter::kMaxValues: larger intervals are sampled


def test_a_node_without_progress_prints_none(node, driver_libs, tmp_path):
    lines = udp_node_lines(
        node, driver_libs, "ping,pong", tmp_path, "--duration", "1.2", "--rate", "1000"
    )
    assert lines == []


def test_the_cli_shows_a_line_a_second_and_keeps_them_out_of_the_results(driver_libs, results):
    proc = run_cli(["ping", "--driver", "udp", "--rate", "1000", "--duration", "2.5"], results)
    assert proc.returncode == 0, proc.stderr
    shown = [ln for ln in proc.stderr.splitlines() if ln.startswith("  ping ")]
    assert shown and all("received" in ln and "/s" in ln for ln in shown), proc.stderr
    record = only_run(results)
    for extra in record["_dir"].glob("*.stdout"):
        assert "PROGRESS" not in extra.read_text()
    # The spec does not know about it: a run with and one without compare as the same.
    assert not [key for key in record["spec"] if "progress" in key]


def test_quiet_shows_none(driver_libs, results):
    proc = run_cli(
        ["ping", "--driver", "udp", "--rate", "1000", "--duration", "1.5", "--quiet"], results
    )
    assert proc.returncode == 0, proc.stderr
    assert not [ln for ln in proc.stderr.splitlines() if ln.startswith("  ping ")]


@pytest.mark.parametrize(
    "line",
    [
        "PROGRESS",
        "PROGRESS t_s=1 received=x",
        "PROGRESS t_s=1 junk",
        "READY",
        "PROGRESS received=3",
        "progress t_s=1 received=3",
    ],
)
def test_malformed_lines_are_not_progress(line):
    assert progress_lines.parse(line) is None


def test_render_says_when_nothing_arrived_and_when_the_store_is_full():
    idle = progress_lines.render("sub", {"t_s": 2.0, "received": 10, "rate_hz": 0.0, "kept": 10})
    assert "nothing arrived" in idle
    full = progress_lines.render(
        "sub",
        {"t_s": 3.0, "received": 50, "rate_hz": 5.0, "p50_ns": 1500, "max_ns": 9000, "kept": 20},
    )
    assert "1.5 µs" in full and "9.0 µs" in full and "20 kept" in full
