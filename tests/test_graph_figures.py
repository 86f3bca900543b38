"""A graph run's figures from module records written here with known answers: reaction
latency and data age along a path, deadline misses, drops and what was in flight at
the end, lateness and overruns of a module, transport latency per edge; and record files
that are not what they claim are refused with the file named."""

import numpy as np
import pytest

from psbench.results.graph_paths import edge_figures, module_figures, path_figures
from psbench.results.graph_records import (
    ACTIVATION,
    ARRIVAL,
    ORIGIN,
    TIMER,
    ModuleRecords,
    RecordFileError,
    read_module,
    read_stream,
    write_stream,
)

MS = 1_000_000


def activations(rows) -> np.ndarray:
    """rows: (activation, scheduled, start, end, trigger, flags)."""
    return np.array(rows, dtype=ACTIVATION)


def origins(rows) -> np.ndarray:
    """rows: (activation, newest_seq, newest_ns, oldest_ns, source)."""
    return np.array([(*r, 0) for r in rows], dtype=ORIGIN)


def source_records() -> ModuleRecords:
    # A source on a 10 ms timer: activations 0..5, each starting 1 ms after its tick.
    rows = [(i, 10 * i * MS, 10 * i * MS + MS, 10 * i * MS + 2 * MS, TIMER, 0) for i in range(6)]
    act = activations(rows)
    own = origins([(i, i, 10 * i * MS + MS, 10 * i * MS + MS, 0) for i in range(6)])
    return ModuleRecords("src", act, own, np.empty(0, dtype=ARRIVAL))


def sink_records() -> ModuleRecords:
    # A sink on a 20 ms timer. Its outputs hold source samples:
    #   activation 0 ends at 15 ms holding sample 1 (born 11 ms): age 4 ms
    #   activation 1 ends at 35 ms holding sample 3 (born 31 ms): age 4 ms
    #   activation 2 ends at 55 ms holding sample 3 again:        age 24 ms
    #   activation 3 ends at 60 ms holding sample 4 (born 41 ms): age 19 ms
    #   activation 4 ends at 90 ms holding sample 4 again: the source stopped after
    #     sample 5 (its next was due at 61 ms), so this age is not the data's: left out
    # Samples 0 and 2 never reach it; sample 5 (born 51 ms) comes after the last that
    # did: in flight when the run ended.
    act = activations(
        [
            (0, 10 * MS, 11 * MS, 15 * MS, TIMER, 0),
            (1, 30 * MS, 31 * MS, 35 * MS, TIMER, 0),
            (2, 50 * MS, 50 * MS, 55 * MS, TIMER, 0),
            (3, 50 * MS, 58 * MS, 60 * MS, TIMER, 1),  # began 8 ms late: an overrun
            (4, 70 * MS, 70 * MS, 90 * MS, TIMER, 0),
        ]
    )
    held = origins(
        [
            (0, 1, 11 * MS, 11 * MS, 0),
            (1, 3, 31 * MS, 21 * MS, 0),
            (2, 3, 31 * MS, 31 * MS, 0),
            (3, 4, 41 * MS, 41 * MS, 0),
            (3, 7, 5 * MS, 5 * MS, 1),  # another source's: not this path's
            (4, 4, 41 * MS, 41 * MS, 0),
        ]
    )
    arrivals = np.array(
        [(1, 11 * MS, 11 * MS + 300_000, 0, 4), (3, 31 * MS, 31 * MS + 500_000, 0, 4),
         (0, 20 * MS, 20 * MS + 100_000, 1, 6)],
        dtype=ARRIVAL,
    )  # fmt: skip
    return ModuleRecords("sink", act, held, arrivals)


def test_reaction_age_misses_drops_along_a_path():
    figures = path_figures(source_records(), sink_records(), 0, deadline_ns=10 * MS)
    # Reaction: sample 1 at 15 - 11 = 4 ms, sample 3 at 35 - 31 = 4 ms (its first
    # output, not its reuse), sample 4 at 60 - 41 = 19 ms.
    assert figures.reaction_ns.tolist() == [4 * MS, 4 * MS, 19 * MS]
    assert sorted(figures.data_age_ns.tolist()) == [4 * MS, 4 * MS, 19 * MS, 24 * MS]
    assert figures.deadline_misses == 1  # 19 ms > 10 ms
    # Samples 0..4 could have reached it (4 is the last that did); 1, 3, 4 did.
    assert (figures.published, figures.reached, figures.dropped) == (5, 3, 2)
    assert figures.after_last == 1
    as_json = figures.to_json()
    assert as_json["reaction"]["max"] == 19 * MS and as_json["dropped"] == 2
    assert path_figures(source_records(), sink_records(), 0, None).deadline_misses is None


def test_a_sink_that_saw_nothing_has_no_figures_and_drops_nothing_it_cannot_know():
    empty = ModuleRecords("sink", activations([]), origins([]), np.empty(0, dtype=ARRIVAL))
    figures = path_figures(source_records(), empty, 0, 10 * MS)
    assert figures.reaction_ns.size == 0 and figures.reached == 0
    assert figures.published == 0 and figures.after_last == 6
    assert figures.to_json()["reaction"]["n"] == 0


def test_a_modules_lateness_overruns_and_period():
    figures = module_figures(sink_records(), period_ns=20 * MS)
    assert figures["activations"] == 5 and figures["overruns"] == 1
    assert figures["lateness"]["max"] == 8 * MS and figures["lateness"]["min"] == 0
    # Starts 11, 31, 50, 58, 70 ms: gaps 20, 19, 8, 12 against 20 ms: 12 ms at most.
    assert figures["period_stray_max_ns"] == 12 * MS
    assert figures["busy"]["max"] == 20 * MS


def test_each_edge_has_its_transport_latency():
    edges = edge_figures(sink_records(), ["pose", "map"], {4: "src", 6: "mapper"})
    assert [(e["topic"], e["writer"], e["reader"]) for e in edges] == [
        ("pose", "src", "sink"),
        ("map", "mapper", "sink"),
    ]
    assert edges[0]["latency"]["n"] == 2 and edges[0]["latency"]["max"] == 500_000
    assert edges[1]["latency"]["min"] == 100_000


def test_records_round_trip_and_bad_files_are_named(tmp_path):
    sink = sink_records()
    for stream in ("activations", "origins", "arrivals"):
        write_stream(tmp_path / f"sink.{stream}", stream, getattr(sink, stream))
    again = read_module(tmp_path, "sink")
    assert again.origins["newest_seq"].tolist() == [1, 3, 3, 4, 7, 4]
    assert again.activations["flags"].tolist() == [0, 0, 0, 1, 0]
    path = tmp_path / "sink.origins"
    data = path.read_bytes()
    path.write_bytes(data[:-8])
    with pytest.raises(RecordFileError, match=r"sink.origins: the header says 6 records"):
        read_stream(path, "origins")
    with pytest.raises(RecordFileError, match=r"magic is b'PSBACT01', expected b'PSBORG01'"):
        read_stream(tmp_path / "sink.activations", "origins")
    (tmp_path / "short.origins").write_bytes(b"PSB")
    with pytest.raises(RecordFileError, match="shorter than the 64-byte header"):
        read_stream(tmp_path / "short.origins", "origins")
