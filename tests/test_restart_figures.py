"""A receiver's side of a broker restart (results/restart_figures.py), on samples whose
arrivals and gaps are made by hand: every count below is known from how they were made."""

from pathlib import Path

import numpy as np

from psbench.results.restart_figures import figures, missing_ranges
from psbench.results.samples import RECORD_DTYPE, Samples

MS = 1_000_000
KILL, READY = 1_000 * MS, 2_000 * MS  # the broker killed at 1 s, serving again at 2 s


def samples(rows) -> Samples:
    """rows: (seq, send_ms, arrival_ms); latency from the send (latency_from send)."""
    records = np.zeros(len(rows), dtype=RECORD_DTYPE)
    for i, (seq, send, arrival) in enumerate(rows):
        records[i] = (seq, send * MS, (arrival - send) * MS, send * MS, 0, 0)
    return Samples(Path("sub.samples"), "one_way", 0, records)


def test_samples_are_placed_before_during_and_after_the_restart():
    # seq 0-4 before the kill; 5 written before it, held by the broker, arrives at 2.1 s;
    # 6-7 never arrive; 8-9 written after, arrive after it served.
    rows = [(s, 100 * s, 100 * s + 1) for s in range(5)]
    rows += [(5, 900, 2_100), (8, 2_200, 2_201), (9, 2_300, 2_301)]
    restart = {"killed_ns": KILL, "ready_ns": READY}
    found = figures(samples(rows), "send", restart, published=10)
    assert (found["received_before_kill"], found["received_while_down"],
            found["received_after_ready"]) == (5, 0, 3)  # fmt: skip
    assert found["written_before_kill_arrived_after"] == 1
    assert found["missing"] == 2 and found["missing_ranges"] == [[6, 7]]
    assert found["recovery_s"] == 1.1 and found["reconnect_s"] == 0.1


def test_nothing_after_the_restart_leaves_no_recovery_time():
    rows = [(s, 100 * s, 100 * s + 1) for s in range(5)]
    found = figures(samples(rows), "send", {"killed_ns": KILL, "ready_ns": READY}, 10)
    assert found["recovery_s"] is None and found["reconnect_s"] is None
    assert found["missing_ranges"] == [[5, 9]] and found["missing"] == 5


def test_missing_ranges_from_sequence_numbers():
    seqs = np.array([0, 1, 4, 7, 7, 9], dtype=np.uint64)  # a duplicate counts once
    assert missing_ranges(seqs, 12) == [(2, 3), (5, 6), (8, 8), (10, 11)]
    assert missing_ranges(seqs, None) == []
    assert missing_ranges(np.array([], dtype=np.uint64), 3) == [(0, 2)]
