"""How many samples written before the publisher's pause reached the run's own
subscriber only after the late joiner joined (results/late_join_settled.py), on samples
made by hand: the count is known from how they were made."""

import numpy as np

from psbench.results.late_join_settled import still_on_their_way
from psbench.results.samples import HEADER, HEADER_SIZE, MAGIC, RECORD_DTYPE, VERSION

MS = 1_000_000


def write_samples(path, rows):
    """rows: (seq, send_ms, arrival_ms); latency from the send."""
    records = np.zeros(len(rows), dtype=RECORD_DTYPE)
    for i, (seq, send, arrival) in enumerate(rows):
        records[i] = (seq, send * MS, (arrival - send) * MS, send * MS, 0, 0)
    header = HEADER.pack(MAGIC, VERSION, RECORD_DTYPE.itemsize, len(rows), 2, 0, 0)
    path.write_bytes(header.ljust(HEADER_SIZE, b"\0") + records.tobytes())


def test_samples_written_before_the_pause_that_arrived_after_the_join_are_counted(tmp_path):
    # The pause begins at 1,000 ms, the late joiner joins at 1,500 ms. seq 0-6 were
    # written before the pause; 5 and 6 were held on the way and arrived at 1,600 ms.
    rows = [(s, 100 * s, 100 * s + 2) for s in range(5)]
    rows += [(5, 900, 1_600), (6, 950, 1_600), (7, 4_000, 4_001)]
    write_samples(tmp_path / "sub.samples", rows)
    config = {"sub": {"config": {"latency_from": "send"}}}
    assert still_on_their_way(tmp_path, config, 1_500 * MS, 1_000 * MS) == 2
    # Joined after they had all arrived: none.
    assert still_on_their_way(tmp_path, config, 1_700 * MS, 1_000 * MS) == 0
    # No samples file to read: unknown, not zero.
    assert still_on_their_way(tmp_path, {"sub-2": {}}, 1_500 * MS, 1_000 * MS) is None
