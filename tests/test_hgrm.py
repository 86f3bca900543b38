""".hgrm files are what HdrHistogram prints for the same samples, line for line: checked
against HdrHistogram's Python implementation (PyPI `hdrhistogram`, the reference here)
on several distributions, with known answers on known data, and in a report.

The Python implementation differs from HdrHistogram's Java original (whose output
HdrHistogram's plotters were written for, and which psbench matches) in two places, and
the reference is given Java's there: its percentile iterator steps by a tenth of the
remaining distance instead of Java's fixed five ticks per halving (Java truncates
log2(100 / (100 - level)) to an integer, PercentileIterator.incrementIterationLevel),
and it prints the standard deviation unscaled and the total count as a float. Java's
Formatter rounds halves up from a double's shortest decimal, where Python's % rounds the
double's binary value: the reference's footer is formatted Java's way."""

import io
import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from hdrh.iterators import PercentileIterator

from psbench.report.document import Settings, build_report, write_report
from psbench.report.hgrm import HIGHEST, distribution_text, recorded
from psbench.results.load import load_results


class JavaLevels(PercentileIterator):
    """The reference's iterator with Java's level steps."""

    def increment_iteration_level(self):
        self.percentile_to_iterate_from = self.percentile_to_iterate_to
        if self.percentile_to_iterate_to == 100.0:  # past the last line (Java: no next)
            return
        halvings = int(math.log(100.0 / (100.0 - self.percentile_to_iterate_to)) / math.log(2))
        ticks = self.percentile_ticks_per_half_distance * int(math.pow(2, halvings + 1))
        self.percentile_to_iterate_to += 100.0 / ticks


def java(value: float) -> str:
    """Java's %12.3f: half up from the shortest decimal of the double."""
    text = Decimal(repr(value)).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)
    return f"{text!s:>12}"


def reference(latency_ns: np.ndarray) -> str:
    """HdrHistogram (Python) on the same integers, with Java's levels and footer."""
    values, scaling = recorded(latency_ns)
    histogram = HdrHistogram(1, HIGHEST, 3)
    for value in values.tolist():
        assert histogram.record_value(value)
    histogram.get_percentile_iterator = lambda ticks: JavaLevels(histogram, ticks)
    out = io.BytesIO()
    histogram.output_percentile_distribution(out, scaling)
    lines = out.getvalue().decode().splitlines()
    assert lines[-3].startswith("#[Mean") and lines[-2].startswith("#[Max")
    return (
        "\n".join(
            lines[:-3]
            + [
                f"#[Mean    = {java(histogram.get_mean_value() / scaling)}, "
                f"StdDeviation   = {java(histogram.get_stddev() / scaling)}]",
                f"#[Max     = {java(histogram.get_max_value() / scaling)}, "
                f"Total count    = {histogram.get_total_count():12d}]",
                lines[-1],
            ]
        )
        + "\n"
    )


def distributions():
    rng = np.random.default_rng(9)
    return {
        "lognormal": rng.lognormal(11, 0.8, 20_000).round(),
        "two regimes": np.concatenate(
            [rng.normal(37_000, 800, 7000), rng.normal(80_000, 3000, 3000)]
        ).round(),
        "heavy tail": (20_000 * (1 + rng.pareto(1.5, 10_000))).round(),
        "below 2048 ns": rng.integers(1, 2000, 5000).astype(np.float64),
        "one value": np.full(100, 31_878.0),
        "seven": np.array([5.0, 1e3, 1e4, 3e4, 3e4, 1e6, 2e9]),
        "one": np.array([123_456.0]),
    }


@pytest.mark.parametrize("name", list(distributions()))
def test_every_line_is_hdrhistograms(name):
    latency = distributions()[name]
    assert distribution_text(latency) == reference(latency)


def assert_same(ours: str, theirs: str) -> None:
    """Line for line, but a Value may differ by the last digit where HdrHistogram's
    Python prints a half (x.xxx5 µs, RTT/2) rounded to even from the binary double and
    Java (and psbench) half up."""
    for mine, ref in zip(ours.splitlines(), theirs.splitlines(), strict=True):
        if not mine or not mine.lstrip()[0].isdigit():
            assert mine == ref
            continue
        (value, *rest), (ref_value, *ref_rest) = mine.split(), ref.split()
        assert rest == ref_rest and abs(float(value) - float(ref_value)) <= 0.0011


def test_rtt_halves_are_recorded_whole_and_printed_halved():
    # RTT/2 of odd round trips: HdrHistogram records the round trip (integer ns) and
    # prints it with scaling 2000. Values, levels and counts are the reference's; a
    # value that ends in a half of the third decimal prints rounded up.
    rtt = np.random.default_rng(3).lognormal(11, 0.5, 5000).round()
    assert recorded(rtt / 2.0)[1] == 2000
    assert_same(distribution_text(rtt / 2.0), reference(rtt / 2.0))
    assert distribution_text(np.array([15.9435e3]))[-200:].count("15.944") >= 1


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
    # 1..1000 ns: below 2048 every value has its own bucket, so each line's value is the
    # latency whose count reaches the level, and TotalCount counts the values at or
    # below it.
    rows, footer = parse(distribution_text(np.arange(1, 1001, dtype=np.float64)))
    for value, percentile, total in rows:
        assert total == round(value * 1000) and total >= percentile * 1000, (value, total)
    assert rows[0] == (0.001, 0.0, 1)
    assert rows[-1] == (1.0, 1.0, 1000)
    assert [p for _, p, _ in rows[:7]] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55]
    # mean 500.5 ns = 0.5005 µs, half up; population deviation sqrt((1000^2 - 1) / 12)
    assert footer[0] == "#[Mean    =        0.501, StdDeviation   =        0.289]"
    assert footer[1] == "#[Max     =        1.000, Total count    =         1000]"
    assert footer[2] == "#[Buckets =           32, SubBuckets     =         2048]"


def test_total_count_is_the_count_at_or_below_the_value():
    # The udp 64 B case: TotalCount is what HdrHistogram counts, not ceil(p n).
    latency = np.random.default_rng(5).lognormal(10.4, 0.3, 10_000).round()
    rows, _ = parse(distribution_text(latency))
    values, _ = recorded(latency)
    for value, _, total in rows:
        # every value recorded at or below the bucket's top (value * 1000 ns)
        assert total == int(np.sum(values <= round(value * 1000))), value


def test_a_report_writes_one_per_configuration_and_one_per_run(report_sweep, tmp_path):
    report = build_report(load_results(report_sweep), Settings(plots=False))
    write_report(report, tmp_path / "report")
    folder = tmp_path / "report" / "hgrm"
    for config in report.configs:
        if not config.ok_runs:
            continue
        stem = config.label.replace(" B", "B").replace(" ", "-")
        text = (folder / f"{stem}.hgrm").read_text()
        assert_same(text, reference(config.pooled_ns))
        for k, run in enumerate(config.ok_runs, start=1):
            run_rows, _ = parse((folder / f"{stem}.run-{k}.hgrm").read_text())
            assert run_rows[-1][2] == run.latency_ns.size
            # the largest sample's bucket holds it: within HdrHistogram's 0.1%
            assert run_rows[-1][0] * 1000 == pytest.approx(run.latency_ns.max(), rel=1e-3)
