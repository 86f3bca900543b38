"""HdrHistogram percentile-distribution files (.hgrm): read back by a parser written
here (as HdrHistogram's plotters read them), with known answers on known data, and
checked against HdrHistogram's own Python implementation (PyPI `hdrhistogram`) on
random latencies."""

import numpy as np
import pytest

from psbench.report.document import Settings, build_report, write_report
from psbench.report.hgrm import distribution_text
from psbench.results.load import load_results


def parse(text: str) -> tuple[list[tuple[float, float, int]], list[str]]:
    """(value, percentile, total count) per line, and the '#[' footer lines."""
    rows, footer = [], []
    for line in text.splitlines():
        if line.startswith("#["):
            footer.append(line)
            continue
        fields = line.split()
        if len(fields) >= 3 and fields[0][0].isdigit():
            rows.append((float(fields[0]), float(fields[1]), int(fields[2])))
    return rows, footer


def test_known_values_give_known_lines():
    rows, footer = parse(distribution_text(np.arange(1, 1001) * 1000.0))  # 1..1000 µs
    for value, percentile, total in rows:
        rank = max(1, -(-round(percentile * 10**12) * 1000 // 10**12))  # ceil, integers
        assert total == rank and value == float(rank), (value, percentile, total)
    assert rows[0] == (1.0, 0.0, 1)
    assert rows[-1] == (1000.0, 1.0, 1000)
    assert [p for _, p, _ in rows[:7]] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55]
    assert "Mean    =      500.500" in footer[0] and "288.819" in footer[0]
    assert "Total count    =         1000" in footer[1]


def test_hdrhistogram_itself_agrees_within_its_precision():
    from hdrh.histogram import HdrHistogram

    latency = np.random.default_rng(9).lognormal(11, 0.8, 50_000).round()
    reference = HdrHistogram(1, 10**12, 3)
    for value in latency.astype(np.int64):
        reference.record_value(int(value))
    rows, _ = parse(distribution_text(latency))
    assert len(rows) > 50
    for value, percentile, total in rows[1:-1]:
        # HdrHistogram rounds p * n to a rank where nearest rank takes the ceiling: ask
        # it for the rank this line has (total / n rounds to exactly that rank).
        theirs = reference.get_value_at_percentile(100.0 * total / latency.size) / 1000.0
        assert value == pytest.approx(theirs, rel=2e-3), percentile


def test_a_report_writes_one_per_configuration_and_one_per_run(report_sweep, tmp_path):
    report = build_report(load_results(report_sweep), Settings(plots=False))
    write_report(report, tmp_path / "report")
    folder = tmp_path / "report" / "hgrm"
    for config in report.configs:
        if not config.ok_runs:
            continue
        stem = config.label.replace(" B", "B").replace(" ", "-")
        rows, _ = parse((folder / f"{stem}.hgrm").read_text())
        assert rows[-1][2] == config.pooled_ns.size
        for k, run in enumerate(config.ok_runs, start=1):
            run_rows, _ = parse((folder / f"{stem}.run-{k}.hgrm").read_text())
            assert run_rows[-1][2] == run.latency_ns.size
            assert run_rows[-1][0] == pytest.approx(
                run.latency_ns.max() / 1000, abs=6e-4
            )  # 3 decimals
