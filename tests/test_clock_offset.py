"""Clock offsets between machines (psbench.hosts.clock) and one-way latency corrected
for them (psbench.results.clock_correction).

The reading is checked against clocks whose offset is known independently: the node's
own CLOCK_MONOTONIC (offset 0), and the same node in a Linux time namespace whose
CLOCK_MONOTONIC the kernel moves by a chosen amount (unshare --time --monotonic). The
correction is checked on records made here with known latencies, offsets and drift."""

import os
import shutil
import subprocess

import numpy as np
import pytest

from psbench.base import paths
from psbench.hosts.clock import Offset, Reading, read_clock
from psbench.results.clock_correction import correct
from psbench.results.samples import RECORD_DTYPE, Samples

SKEW_S = 7  # a time namespace's CLOCK_MONOTONIC ahead of this one's


def node_argv() -> list[str]:
    return [str(paths.require_node()), "--clock-echo"]


def test_the_same_clock_reads_zero_within_its_uncertainty():
    reading = read_clock(node_argv(), "this machine")
    assert reading.rounds == 64
    assert reading.uncertainty_ns > 0
    # The far end stamps between our two stamps: |offset| <= half the round trip.
    assert abs(reading.offset_ns) <= reading.uncertainty_ns


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="a time namespace needs root and util-linux's unshare (CI has both)",
)
def test_a_clock_moved_by_the_kernel_reads_that_far_ahead():
    moved = ["unshare", "--time", "--fork", "--monotonic", str(SKEW_S), *node_argv()]
    reading = read_clock(moved, "a time namespace")
    assert abs(reading.offset_ns - SKEW_S * 1_000_000_000) <= reading.uncertainty_ns


def test_a_far_end_that_is_not_the_clock_echo_is_an_error():
    from psbench.base.errors import UserError

    with pytest.raises(UserError, match="is not psbench-node --clock-echo"):
        read_clock(["echo", "hello"], "somewhere")
    with pytest.raises(UserError, match="ended"):
        read_clock(["true"], "somewhere")


def records(latency_ns, send_ns, writer=None) -> Samples:
    r = np.zeros(len(latency_ns), dtype=RECORD_DTYPE)
    r["seq"] = np.arange(len(latency_ns))
    r["latency_ns"] = latency_ns
    r["send_ns"] = send_ns
    r["intended_ns"] = send_ns
    r["writer"] = writer if writer is not None else 0
    return Samples(path=None, kind="one_way", start_ns=0, records=r)


def offset(before, after=None, at=(0, 10_000_000_000), u=(1_000, 1_000)) -> dict:
    return Offset(
        Reading(before, u[0], at[0], 64),
        Reading(after, u[1], at[1], 64) if after is not None else None,
    ).to_json()


def clock_block(hosts: dict, receivers: dict) -> dict:
    return {"hosts": hosts, "receivers": receivers}


def test_a_constant_offset_is_taken_out_of_every_record():
    true = np.array([40_000, 55_000, 61_000, 47_000])
    # b runs 5 s ahead of this machine, a 2 s behind: b - a = 7 s in every record.
    raw = records(true + 7_000_000_000, np.array([1, 2, 3, 4]) * 1_000_000)
    clock = clock_block(
        {"a": offset(-2_000_000_000), "b": offset(5_000_000_000)},
        {"sub": {"host": "b", "writers": {"0": "a"}}},
    )
    fixed, applied = correct(raw, clock, "sub")
    assert fixed.latency_ns.tolist() == true.tolist()
    assert raw.latency_ns[0] == true[0] + 7_000_000_000  # the file's records stay as they were
    assert applied["offset_removed_ns"] == 7_000_000_000
    assert applied["uncertainty_ns"] == 2_000  # a's and b's, added
    assert applied["flagged"] is False and applied["drifted"] is False


def test_drift_is_followed_between_the_two_estimates():
    # b - this machine: 1 s at local 0, 1 s + 100 µs at local 10 s (10 ppm); a is this
    # machine. A record sent at local 5 s holds 1 s + 50 µs of offset.
    send = np.array([0, 5_000_000_000, 10_000_000_000])
    held = np.array([1_000_000_000, 1_000_050_000, 1_000_100_000])
    true = np.array([30_000, 30_000, 30_000])
    clock = clock_block(
        {"a": offset(0, 0), "b": offset(1_000_000_000, 1_000_100_000, u=(2_000, 2_000))},
        {"sub": {"host": "b", "writers": {"0": "a"}}},
    )
    fixed, applied = correct(records(true + held, send), clock, "sub")
    assert fixed.latency_ns.tolist() == true.tolist()
    # 100 µs moved against 8 µs of the estimates' uncertainties: drifted, so flagged.
    assert applied["moved_ns"] == 100_000 and applied["drifted"] is True
    assert applied["flagged"] is True and "moved by 100.0 µs" in applied["why"]


def test_each_writer_is_corrected_by_its_own_hosts_clock():
    # sub on b reads writer 0 on a (b - a = 3 s) and writer 1 on b itself (nothing).
    clock = clock_block(
        {"a": offset(0), "b": offset(3_000_000_000)},
        {"sub": {"host": "b", "writers": {"0": "a", "1": "b"}}},
    )
    raw = records(
        np.array([3_000_020_000, 25_000, 3_000_030_000]), np.array([1, 2, 3]), np.array([0, 1, 0])
    )
    fixed, _ = correct(raw, clock, "sub")
    assert fixed.latency_ns.tolist() == [20_000, 25_000, 30_000]


def test_an_uncertainty_above_a_tenth_of_the_median_flags_the_figures():
    clock = clock_block(
        {"a": offset(0, u=(3_000, 3_000)), "b": offset(0, u=(3_000, 3_000))},
        {"sub": {"host": "b", "writers": {"0": "a"}}},
    )
    # ±6 µs against a 100 µs median: 6%, kept; against 50 µs: 12%, flagged.
    _, kept = correct(records(np.full(5, 100_000), np.arange(5)), clock, "sub")
    assert kept["flagged"] is False and kept["share_of_median"] == pytest.approx(0.06)
    _, flagged = correct(records(np.full(5, 50_000), np.arange(5)), clock, "sub")
    assert flagged["flagged"] is True
    assert "known to ±6.0 µs, 12% of the median (more than 10%)" in flagged["why"]


def test_nothing_is_corrected_on_one_machine_or_in_a_round_trip():
    clock = clock_block({"a": offset(5)}, {"sub": {"host": "a", "writers": {"0": "a"}}})
    raw = records(np.array([10, 20]), np.array([1, 2]))
    same, applied = correct(raw, clock, "sub")
    assert applied is None and same.latency_ns.tolist() == [10, 20]
    assert correct(raw, None, "sub") == (raw, None)
    rtt = Samples(None, "rtt", 0, raw.records)
    assert correct(rtt, clock, "sub") == (rtt, None)


def test_the_clock_echo_ends_with_its_input():
    done = subprocess.run(node_argv(), input=b"t\nt\n", capture_output=True, timeout=30)
    lines = done.stdout.decode().split()
    assert done.returncode == 0 and lines[0] == "CLOCK" and len(lines) == 3
    assert all(line.isdigit() for line in lines[1:])
