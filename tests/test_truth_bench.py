"""bench/truth runs end to end for a tiny configuration and refuses bad arguments.

No timing or ratio is asserted: only the table's structure and the exit codes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from psbench import paths

REPO = Path(__file__).resolve().parents[1]
TRUTH = REPO / "bench" / "truth"


def run(*args, timeout=120):
    return subprocess.run([str(TRUTH), *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ))


@pytest.mark.skipif(shutil.which("sockperf") is None, reason="sockperf is not installed")
@pytest.mark.skipif(not paths.node_path().exists(), reason="psbench is not built (make build or PSBENCH_BUILD)")
def test_udp_one_round_prints_one_row_per_size_and_metric():
    res = run("--drivers", "udp", "--rounds", "1", "--seconds", "1", "--sizes", "64,1024")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("driver "))
    assert lines[head].split()[:4] == ["driver", "instrument", "size", "B"]
    rows = [line.split() for line in lines[head + 2:] if line.strip()]
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("udp", "sockperf", "64", "1", "p50"), ("udp", "sockperf", "64", "1", "p99"),
        ("udp", "sockperf", "1024", "1", "p50"), ("udp", "sockperf", "1024", "1", "p99")]
    for r in rows:
        float(r[5]), float(r[6]), float(r[7])  # psbench, instrument, ratio are numbers
        assert r[8].startswith("[") and r[9].endswith("]")
        assert " ".join(r[10:]) in ("within 10%", "not within 10%", "undecided")


@pytest.mark.parametrize("args", [
    ["--rounds", "0"], ["--rounds", "x"], ["--seconds", "-1"], ["--seconds", "nan"],
    ["--sizes", "10"], ["--sizes", "abc"], ["--drivers", "nosuch"], ["--bogus"],
])
def test_bad_arguments_exit_2_without_traceback(args):
    res = run(*args, timeout=30)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.strip()
