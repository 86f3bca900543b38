"""A run whose latency changes level during the run is flagged where its figures are
read: the run's terminal text, run.json's stats, and every table of the report that
lists its configuration. The data: a real udp ping whose samples are rewritten into
the demo's zeromq 64 B (seven tenths at about 37 µs, then 64, 83 and 85 µs)."""

import json

import numpy as np

from conftest import run_cli
from psbench.report.document import Settings, build_report
from psbench.report.run_text import drift_line
from psbench.results.load import load_results
from psbench.results.samples import HEADER_SIZE, Samples, read_samples
from psbench.results.stats import latency_stats

LEVELS_NS = [37e3] * 7 + [64e3, 83e3, 85e3]


def drifting(n: int, kind_factor: float = 1.0) -> np.ndarray:
    """n latencies in ns at LEVELS_NS, tenth by tenth, with 3% noise."""
    noise = np.exp(0.03 * np.random.default_rng(3).standard_normal(n))
    return (np.repeat(LEVELS_NS, -(-n // 10))[:n] * noise * kind_factor).round()


def samples_of(latency_ns: np.ndarray, kind: str) -> Samples:
    from psbench.results.samples import RECORD_DTYPE

    records = np.zeros(latency_ns.size, dtype=RECORD_DTYPE)
    records["seq"] = np.arange(latency_ns.size)
    records["latency_ns"] = latency_ns
    return Samples(path=None, kind=kind, start_ns=0, records=records)


def test_the_run_json_stats_and_the_terminal_line_flag_the_change():
    stats = latency_stats(samples_of(drifting(2000, 2.0), "rtt"))  # RTT: twice RTT/2
    found = stats["stationarity"]
    assert found["drifts"] and found["p"] < 1e-6
    assert [round(m / 1000) for m in found["part_medians_ns"]][::3] == [37, 37, 37, 85]
    line = drift_line(stats)
    assert line.startswith("the latency changed level during the run: the medians of its")
    assert "one p50 describes more than one level" in line
    steady = latency_stats(samples_of(np.full(2000, 37e3), "one_way"))
    assert not steady["stationarity"]["drifts"] and drift_line(steady) is None


def test_every_report_table_flags_a_configuration_that_changed_level(
    driver_libs, results, tmp_path
):
    proc = run_cli(["ping", "--driver", "udp", "--count", "2000", "--quiet"], results)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = [p for p in results.iterdir() if (p / "run.json").exists()]
    assert "stationarity" in json.loads((run_dir / "run.json").read_text())["stats"]["ping"]
    path = run_dir / "ping.samples"
    records = read_samples(path).records.copy()
    records["latency_ns"] = drifting(len(records), 2.0)
    path.write_bytes(path.read_bytes()[:HEADER_SIZE] + records.tobytes())
    report = build_report(load_results(run_dir), Settings(plots=False))
    (config,) = report.configs
    assert list(config.drift) == [1]
    flagged = 0
    for table in report.tables:
        names = {c.name for c in table.columns}
        if not table.rows or "configuration" not in names:
            continue
        assert any(note.startswith("LEVEL CHANGED: udp") for note in table.notes), table.name
        flagged += 1
        if "one level" in [c.name for c in table.columns]:
            assert all(row[-1] is False for row in table.rows), table.name
    assert flagged >= 3  # summary, intervals, delivery at least


def test_index_jsonl_and_the_sweep_summary_mark_a_run_that_changed_level():
    from psbench.report.sweep_text import _latency as shown
    from psbench.run.experiment.execute import _latency as index_entry

    drifted = index_entry(latency_stats(samples_of(drifting(2000), "one_way")), "one_way")
    steady = index_entry(latency_stats(samples_of(np.full(2000, 37e3), "one_way")), "one_way")
    assert drifted["level_changed"] is True and steady["level_changed"] is False
    assert shown({"latency": drifted}, "p50").endswith("*")
    assert shown({"latency": steady}, "p50") == "37.00"
