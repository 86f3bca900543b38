"""What a receiver got across a broker restart (run/broker_restart.py): its samples
placed by arrival before the kill, while the broker was down or starting, and after it
served again; which sequence numbers never came; and how long after the kill deliveries
came back. Times are the run's stamps and the samples' own (one machine's
CLOCK_MONOTONIC)."""

import numpy as np

from psbench.results.samples import Samples

GAPS_SHOWN = 5  # the first missing ranges, written out


def missing_ranges(seqs: np.ndarray, published: int | None) -> list[tuple[int, int]]:
    """The sequence numbers 0..published-1 that never arrived, as (first, last) ranges."""
    if published is None:
        return []
    present = np.zeros(published, dtype=bool)
    inside = seqs[seqs < published].astype(np.int64)
    present[inside] = True
    ranges, start = [], None
    for seq, here in enumerate(present):
        if not here and start is None:
            start = seq
        elif here and start is not None:
            ranges.append((start, seq - 1))
            start = None
    if start is not None:
        ranges.append((start, published - 1))
    return ranges


def figures(samples: Samples, latency_from: str, restart: dict, published: int | None) -> dict:
    """The receiver's side of a restart: counts by phase, missing ranges, recovery."""
    killed, ready = restart["killed_ns"], restart["ready_ns"]
    arrival = samples.arrival_ns(latency_from)
    seqs = samples.records["seq"]
    found: dict[str, object] = {
        "received_before_kill": int(np.count_nonzero(arrival < killed)),
        "received_while_down": int(np.count_nonzero((arrival >= killed) & (arrival < ready))),
        "received_after_ready": int(np.count_nonzero(arrival >= ready)),
        # Written before the kill, arrived after it: held by the broker or a client queue.
        "written_before_kill_arrived_after": int(
            np.count_nonzero((samples.records["send_ns"] < killed) & (arrival >= killed))
        ),
        "recovery_s": None,
        "reconnect_s": None,
    }
    after = arrival[arrival >= ready]
    if after.size:
        first = int(after.min())
        found["recovery_s"] = round((first - killed) / 1e9, 6)  # kill -> deliveries again
        found["reconnect_s"] = round((first - ready) / 1e9, 6)  # serving -> deliveries
    gaps = missing_ranges(seqs, published)
    found["missing"] = sum(b - a + 1 for a, b in gaps)
    found["missing_ranges"] = [list(g) for g in gaps[:GAPS_SHOWN]]
    found["missing_ranges_total"] = len(gaps)
    return found
