"""How `history trend` learns the noise and calls a change, on known numbers: points made
of run statistics (no samples), so that every verdict follows from the values."""

import math

import numpy as np
import pytest

from psbench.history.trend import (
    METRICS,
    Judge,
    Point,
    Series,
    Settings,
    regressions,
    relative_range,
)


def point(x: str, *p50_us: float, version: str = "1.0", set_id: int = 1) -> Point:
    runs = [
        {"p50": v * 1000, "p99": None, "samples_per_s": 1e6 / v, "cpu_ns_per_message": None}
        for v in p50_us
    ]
    return Point(x, [{"set_id": set_id, "driver_version": version}], runs)


def nights(*sets: tuple[float, ...]) -> list[Point]:
    """A point a night from 2026-01-01, each a set of its own (set_id: the night)."""
    return [point(f"2026-01-{n:02d}", *p50_us, set_id=n) for n, p50_us in enumerate(sets, 1)]


def judged(*points: Point, **settings) -> Series:
    series = Series("s", {"driver": "udp"}, "vm", list(points), label="udp 64 B")
    judge = Judge(series, Settings(**settings))
    series.changes = {name: judge.changes(metric) for name, metric in METRICS.items()}
    return series


def verdicts(series: Series, metric: str = "p50") -> list[str]:
    return [c.verdict for c in series.changes[metric]]


def test_relative_range_is_max_minus_min_over_the_median():
    assert relative_range([10.0, 11.0, 12.0]) == pytest.approx(2 / 11)
    assert relative_range([10.0]) is None
    assert relative_range([]) is None


def test_repetitions_within_their_own_spread_are_no_change():
    series = judged(*nights((10, 11, 12), (11.5, 10.5, 12), (12, 10, 11)))
    assert verdicts(series) == ["no change", "no change"]
    first, second = series.changes["p50"]
    assert first.threshold == pytest.approx(2 / 11)  # the widest spread seen: 10..12
    assert first.learnt_from == 6  # 3 runs before, 3 of the new point
    assert second.learnt_from == 9  # the reference grew: nothing changed
    # Each point against every point before it since the last change, pooled.
    assert first.reference == ["2026-01-01"]
    assert second.reference == ["2026-01-01", "2026-01-02"]
    # The nearest-rank medians: 11 of (12, 10, 11) against 11 of the six runs before.
    assert second.ratio == 1.0
    assert regressions([series], "p50") == []


def test_a_step_beyond_the_learnt_noise_is_a_regression_and_starts_a_new_regime():
    series = judged(*nights((10, 11, 12), (30, 33, 36), (31, 34, 35)))
    assert verdicts(series) == ["regression", "no change"]
    step = series.changes["p50"][0]
    assert step.ratio == pytest.approx(3.0)
    assert step.low > 1 + step.threshold
    # After the step the noise is learnt from the new level only (3 + 3 runs).
    assert series.changes["p50"][1].learnt_from == 6
    assert series.changes["p50"][1].reference == ["2026-01-02"]
    # Throughput fell by the same factor: lower is worse there.
    assert verdicts(series, "throughput") == ["regression", "no change"]


def test_the_same_step_inside_the_noise_is_not_called():
    """Repetitions that spread over 10..30 µs cannot resolve a 1.5x change."""
    series = judged(point("2026-01-01", 10, 20, 30), point("2026-01-02", 15, 30, 45))
    assert verdicts(series) == ["no change"]
    assert series.changes["p50"][0].threshold == pytest.approx(1.0)


def test_an_improvement_is_not_a_regression():
    series = judged(point("2026-01-01", 30, 31, 32), point("2026-01-02", 10, 10.5, 11))
    assert verdicts(series) == ["improvement"]
    assert regressions([series], "any") == []


def test_without_enough_runs_the_noise_is_unknown_and_nothing_is_called():
    """Single runs: the first comparisons have nothing to learn the noise from; the runs
    add up (2, then 3) until a verdict can be made."""
    series = judged(*nights((10,), (10.2,), (9.9,), (40,)))
    assert verdicts(series) == ["noise unknown", "noise unknown", "regression"]
    assert "1 run of the unchanged configuration before" in series.changes["p50"][0].note
    assert "fewer than 3" in series.changes["p50"][0].note
    assert series.changes["p50"][2].learnt_from == 3


def test_the_runs_before_a_change_must_be_enough_whatever_the_new_point_has():
    """Two repetitions before, three after: the spread within the new set is learnt, but
    how much two sets differ is not known yet."""
    series = judged(point("2026-01-01", 10, 10.1, set_id=1), point("2026-01-02", 30, 31, 32))
    assert verdicts(series) == ["noise unknown"]
    assert series.changes["p50"][0].learnt_from == 5


def test_min_runs_and_threshold_are_settings():
    assert verdicts(judged(*nights((10,), (10.8,)))) == ["noise unknown"]
    series = judged(*nights((10, 10.1), (11.2, 11.3)), min_runs=2)
    # x1.119 with runs 1% apart: its interval (two runs a side, t with 2 degrees of
    # freedom) [1.088, 1.152] lies beyond 5% but not beyond 10%.
    assert verdicts(series) == ["regression"]
    # Its ratio lies beyond 10% but its interval reaches back into the band: undecided.
    series = judged(*nights((10, 10.1), (11.2, 11.3)), min_runs=2, threshold=0.1)
    assert verdicts(series) == ["undecided"]
    [change] = series.changes["p50"]
    assert "×1.12, its interval 1.09..1.15 reaches into the noise band ±10%" in change.note
    series = judged(*nights((10, 10.1), (11.2, 11.3)), min_runs=2, threshold=0.2)
    assert verdicts(series) == ["no change"]


def test_the_band_is_a_factor_either_way():
    """One slow run in three (a loaded machine): runs 10, 11 and 25 µs learn a band of
    (25 - 10) / 11 = 136%, a factor of 2.36. A drop to a tenth lies beyond it (an interval
    of the runs' pooled t, [0.042, 0.215], below 1 / 2.36 = 0.42); read as 1 - 1.36 below
    1, no drop could ever have been."""
    series = judged(point("2026-01-01", 10, 11, 25), point("2026-01-02", 1, 1.05, 1.1))
    assert verdicts(series) == ["improvement"]
    [drop] = series.changes["p50"]
    assert drop.threshold == pytest.approx(15 / 11)
    assert drop.high < 1 / (1 + drop.threshold)
    # The same factor upwards is a regression; 2 times either way is within the band.
    assert verdicts(
        judged(point("2026-01-01", 10, 11, 25), point("2026-01-02", 100, 105, 110))
    ) == ["regression"]
    for p50_us in (5.5, 22):
        up_or_down = judged(
            point("2026-01-01", 10, 11, 25), point("2026-01-02", p50_us, p50_us, p50_us)
        )
        assert verdicts(up_or_down) == ["no change"]


def test_a_metric_not_measured_is_not_compared():
    series = judged(point("2026-01-01", 10, 11, 12), point("2026-01-02", 30, 31, 32))
    assert verdicts(series, "cpu") == ["not compared"]
    assert verdicts(series, "p99") == ["not compared"]


def test_the_gate_reads_the_last_change_of_each_series_only():
    """A regression that was followed by a recovery no longer fails the gate."""
    series = judged(*nights((10, 11, 12), (30, 33, 36), (10, 11, 12)))
    assert verdicts(series) == ["regression", "improvement"]
    assert regressions([series], "p50") == []
    assert [c.metric for _, c in regressions([series], "any")] == []


def test_the_reference_is_the_last_window_points_since_the_last_change():
    """Five quiet nights, one of them far off (held up by something else), then six more:
    once it has left the window, the band is the quiet nights' again."""
    nights = [point(f"2026-01-{n:02d}", 10, 10.2, 10.4, set_id=n) for n in range(1, 13)]
    nights[1] = point("2026-01-02", 10, 14, 10.4, set_id=2)
    series = judged(*nights, window=3)
    bands = [round(c.threshold, 3) for c in series.changes["p50"]]
    # Night 2's spread, (14 - 10) / the median of the runs it is among.
    assert bands[:4] == [0.385, 0.388, 0.392, 0.392]
    assert bands[-1] == 0.05  # 10..10.4 is 4%: the least band
    assert series.changes["p50"][-1].reference == ["2026-01-09", "2026-01-10", "2026-01-11"]
    assert verdicts(series) == ["no change"] * 11


def test_the_interval_of_run_values_is_scipys_pooled_t_interval():
    """Throughput and CPU are compared run by run: the interval of the ratio is the
    pooled two-sample t interval of the runs' log values (scipy's, an independent
    reference), placed around the ratio of the medians."""
    from scipy import stats

    from psbench.history.trend import runs_interval

    cases = [([10, 10.1, 9.8], [11.2]), ([5.0, 5.5], [5.2, 5.1, 5.9, 6.0]), ([1, 2, 3], [4, 5])]
    for a, b in cases:
        logs_a, logs_b = np.log(a), np.log(b)
        shift = float(np.median(b) / np.median(a)) / math.exp(logs_b.mean() - logs_a.mean())
        expected = stats.ttest_ind(logs_b, logs_a).confidence_interval(0.95)
        found = runs_interval(a, b, 0.95)
        assert found.low == pytest.approx(shift * math.exp(expected.low), rel=1e-9)
        assert found.high == pytest.approx(shift * math.exp(expected.high), rel=1e-9)
    one_each = runs_interval([10.0], [11.0], 0.95)  # no run's spread can be learnt
    assert one_each.low is None and one_each.ratio == pytest.approx(1.1)
