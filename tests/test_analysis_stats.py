"""The report's statistics on known samples: hand-computed values, and scipy's own
functions where the formula is long."""

import csv
import io
import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from psbench.report import formats
from psbench.report.tables import Column, Table
from psbench.results.describe import describe, throughput
from psbench.results.significance import (
    compare_samples,
    estimate,
    mann_whitney,
    outside_noise,
    ratio_ci,
    welch,
)


def test_describe_one_to_ten_by_hand():
    s = describe(np.arange(1, 11) * 1000.0)
    assert s["n"] == 10 and s["min"] == 1000 and s["max"] == 10000
    assert s["mean"] == 5500
    assert s["stdev"] == pytest.approx(
        math.sqrt(sum((x - 5.5) ** 2 for x in range(1, 11)) / 9) * 1000
    )
    # nearest rank: the smallest value with at least q% of the samples at or below it
    assert s["p50"] == 5000 and s["p90"] == 9000
    assert s["jitter"] == 1000  # every step is 1000
    assert s["p99"] is None and s["p99.9"] is None and s["p99.99"] is None


def test_describe_stdev_is_the_sample_standard_deviation():
    # The percentiles are checked against an integer reference in test_percentile_exact.
    values = np.random.default_rng(7).lognormal(10, 1, 20000)
    assert describe(values)["stdev"] == pytest.approx(np.std(values, ddof=1))


def test_jitter_is_mean_absolute_step():
    assert describe(np.array([10.0, 14, 11, 11, 20]))["jitter"] == (4 + 3 + 0 + 9) / 4


def test_describe_empty_and_single():
    assert describe(np.empty(0)) == {**{k: None for k in describe(np.empty(0))}, "n": 0}
    one = describe(np.array([5.0]))
    assert one["min"] == one["max"] == one["mean"] == 5.0
    # one sample resolves no percentile, no spread
    assert one["p50"] is None and one["stdev"] is None and one["jitter"] is None


def test_throughput_on_the_receivers_clock():
    receive = np.linspace(0, 1e9, 1001)  # 1001 samples over one second
    rate = throughput(receive, 1000)
    assert rate["samples_per_s"] == pytest.approx(1000)
    assert rate["mbit_per_s"] == pytest.approx(1000 * 1000 * 8 / 1e6)
    assert throughput(np.array([5.0]), 64) == {"samples_per_s": None, "mbit_per_s": None}


def test_welch_by_hand_and_against_scipy():
    a, b = np.array([1.0, 2, 3, 4, 5]), np.array([2.0, 4, 6, 8, 10])
    result = welch(a, b)
    # means 3 and 6, variances 2.5 and 10: se = sqrt(2.5/5 + 10/5)
    assert result.t == pytest.approx(-3 / math.sqrt(2.5))
    assert result.df == pytest.approx((0.5 + 2) ** 2 / (0.5**2 / 4 + 2**2 / 4))
    assert result.p == pytest.approx(2 * sps.t.sf(3 / math.sqrt(2.5), result.df))
    rng = np.random.default_rng(3)
    x, y = rng.gamma(2, 10, 3000), rng.gamma(2, 11, 2000)
    assert welch(x, y).p == pytest.approx(sps.ttest_ind(x, y, equal_var=False).pvalue)


def test_mann_whitney_by_hand_and_against_scipy():
    # every a below every b: U of a is 0; reversed, U = n_a * n_b
    assert mann_whitney(np.array([1.0, 2, 3]), np.array([4.0, 5, 6])).u == 0
    assert mann_whitney(np.array([4.0, 5, 6]), np.array([1.0, 2, 3])).u == 9
    rng = np.random.default_rng(4)
    x, y = rng.normal(0, 1, 500), rng.normal(0.2, 1, 400)
    expected = sps.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")
    assert mann_whitney(x, y).p == pytest.approx(expected.pvalue)


def test_ratio_of_medians():
    a = np.random.default_rng(5).lognormal(10, 0.3, 5000)
    doubled = ratio_ci(a, 2 * a)
    assert doubled.ratio == pytest.approx(2.0)
    assert doubled.low < 2.0 < doubled.high and doubled.high / doubled.low < 1.2
    same = ratio_ci(a, a)
    assert same.ratio == 1.0 and same.low < 1.0 < same.high
    assert same.covers == "within one run (no repetitions)"


def test_the_interval_is_computed_not_drawn():
    a = np.random.default_rng(6).lognormal(10, 0.3, 3000)
    b = a * 1.01
    assert ratio_ci(a, b, "p99") == ratio_ci(a, b, "p99")


def test_large_samples_are_taken_whole():
    a = np.random.default_rng(8).lognormal(10, 0.3, 100000)
    result = ratio_ci(a, a * 1.5)
    assert result.ratio == pytest.approx(1.5) and result.low < 1.5 < result.high


def test_outside_noise_band():
    from psbench.results.significance import RatioCI

    assert outside_noise(RatioCI("p50", 1.2, 1.1, 1.3, 0.95), 0.05) == 1
    assert outside_noise(RatioCI("p50", 0.8, 0.7, 0.9, 0.95), 0.05) == -1
    assert outside_noise(RatioCI("p50", 1.04, 1.01, 1.06, 0.95), 0.05) == 0


def test_verdicts():
    a = np.random.default_rng(9).lognormal(10, 0.3, 4000)

    def verdict(b):
        result = compare_samples(a, b, estimate(a), estimate(b))
        return result.verdict, result.direction

    assert verdict(a * 1.5) == ("significant", "B slower")
    # Welch and Mann-Whitney do not decide: a 2% shift has p far below alpha
    assert verdict(a / 1.5) == ("significant", "B faster")
    # 2% apart: resolvable with this many samples, but inside the 5% noise band
    assert verdict(a * 1.02) == ("within noise", "")


TABLE = Table(
    "t",
    "A_table 100%",
    [Column("name", "name"), Column("p50 µs", "p50_ns", "us"), Column("p", "p", "p")],
    [["a|b", 1500.0, 1e-320], ["c_d", None, 0.5]],
    ["a note"],
)


def test_formats_keep_raw_values_and_escape():
    rows = list(csv.reader(io.StringIO(formats.csv_text(TABLE))))
    assert rows == [["name", "p50_ns", "p"], ["a|b", "1500.0", "1e-320"], ["c_d", "", "0.5"]]
    doc = json.loads(formats.json_text(TABLE))
    assert doc["rows"][1] == {"name": "c_d", "p50_ns": None, "p": 0.5}
    md = formats.markdown(TABLE)
    assert "| a\\|b | 1.50 | <1e-300 |" in md and "| c_d | - | 0.5 |" in md
    tex = formats.latex(TABLE)
    assert r"A\_table 100\%" in tex and r"p50 $\mu$s" in tex and r"c\_d & - & 0.5 \\" in tex
    assert "a note" in formats.terminal(TABLE)


def test_repetitions_widen_the_interval_by_their_disagreement():
    rng = np.random.default_rng(10)
    one = rng.lognormal(10, 0.3, 3000)
    reps = [one, rng.lognormal(10, 0.3, 3000) * 1.3]  # a second run 30% slower
    pooled = ratio_ci(np.concatenate(reps), np.concatenate(reps))
    between = ratio_ci(reps, reps)
    assert pooled.ratio == between.ratio == 1.0
    # taken as one run, the two levels read as serial dependence and widen it some;
    # taken as two runs, their disagreement is the spread
    assert between.high - between.low > 3 * (pooled.high - pooled.low)
    assert between.high - between.low > 0.2
    assert between.covers == "between runs (2 and 2)"


def test_the_floor_has_the_same_notify_mode_when_one_was_measured():
    from psbench.results.configs import Config, _baselines

    def config(driver, notify, p50):
        c = Config(
            driver + notify,
            {"kind": "ping", "driver": driver, "size": 64, "notify": notify},
            [],
            label=f"{driver} {notify}",
        )
        c.stats = {"p50": p50, "p99": 2 * p50}
        return c

    shm_poll, shm_wait = config("shm", "poll", 100.0), config("shm", "wait", 20000.0)
    dds_wait, dds_listener = config("dds", "wait", 40000.0), config("dds", "listener", 5e4)
    _baselines([shm_poll, shm_wait, dds_wait, dds_listener])
    assert dds_wait.baseline["label"] == "shm wait" and dds_wait.baseline["p50_ratio"] == 2
    # no listener baseline: the lowest floor of any notify mode
    assert dds_listener.baseline["label"] == "shm poll"


def test_the_floor_is_measured_at_the_same_rate():
    from psbench.results.configs import Config, _baselines

    def config(driver, rate, p50):
        c = Config(
            f"{driver}{rate}",
            {"kind": "pubsub", "driver": driver, "size": 64, "rate": rate},
            [],
            label=f"{driver} {rate}",
        )
        c.stats = {"p50": p50, "p99": 2 * p50}
        return c

    # Back to back, latency runs from the actual send and is tiny; at 1 kHz it runs from
    # the intended send time: a 1 kHz run is read against the 1 kHz floor only.
    shm_max, shm_1k = config("shm", 0, 2.0), config("shm", 1000, 100.0)
    dds_1k, dds_10k = config("dds", 1000, 300.0), config("dds", 10000, 250.0)
    _baselines([shm_max, shm_1k, dds_1k, dds_10k])
    assert dds_1k.baseline["label"] == "shm 1000" and dds_1k.baseline["p50_ratio"] == 3
    assert dds_10k.baseline is None


def test_jitter_compares_samples_of_one_receiver_only():
    from psbench.results.describe import describe

    steady_low, steady_high = np.full(100, 10.0), np.full(100, 1000.0)
    pooled = np.ravel(np.column_stack([steady_low, steady_high]))  # interleaved by seq
    assert describe(pooled)["jitter"] == 990.0  # one series: every step jumps
    assert describe(pooled, [steady_low, steady_high])["jitter"] == 0.0


def test_a_floor_measured_once_or_unstable_is_flagged_beside_its_ratios():
    from psbench.report.report_tables import baseline_table
    from psbench.results.configs import Config, _baselines

    def config(driver, size, rep_p50s):
        c = Config(
            f"{driver}{size}",
            {"kind": "ping", "driver": driver, "size": size},
            [],
            label=f"{driver} {size}",
        )
        c.stats = {"p50": sorted(rep_p50s)[len(rep_p50s) // 2], "p99": 1e6}
        middle = c.stats["p50"]
        c.spread = {
            "reps": len(rep_p50s),
            "p50_min": min(rep_p50s),
            "p50_max": max(rep_p50s),
            "relative": (max(rep_p50s) - min(rep_p50s)) / middle,
        }
        return c

    # 64 B: three steady floor repetitions (1% apart); 1 KiB: three, 0.81 vs 30 µs (the
    # demo's case); 4 KiB: the floor ran once.
    steady, shaky, once = (
        config("shm", 64, [1000, 1005, 1010]),
        config("shm", 1024, [810, 29000, 32000]),
        config("shm", 4096, [5000]),
    )
    dds = [config("dds", size, [40000]) for size in (64, 1024, 4096)]
    _baselines([steady, shaky, once, *dds])
    assert dds[0].baseline["floor_reps"] == 3 and dds[0].baseline["floor_spread"] == 10 / 1005
    assert dds[1].baseline["floor_spread"] == (32000 - 810) / 29000
    assert dds[2].baseline["floor_reps"] == 1 and dds[2].baseline["floor_spread"] is None
    table = baseline_table([steady, shaky, once, *dds], noise=0.05)
    notes = " | ".join(table.notes)
    assert "floor measured once" in notes and "shm 4096" in notes
    assert "floor shm 1024 is unstable" in notes and "108%" in notes
    assert "shm 64 " not in notes.replace("shm 64,", "")  # the steady floor is not flagged
    assert [r[4] for r in table.rows] == [3, 3, 1]


def test_an_acknowledged_round_trip_is_read_against_a_floor_with_the_same_reply():
    from psbench.results.configs import Config, _baselines

    def config(driver, reply, p50):
        params = {"kind": "ping", "driver": driver, "size": 1024}
        if reply:
            params["reply_size"] = reply
        c = Config(f"{driver}{reply}", params, [], label=f"{driver} {reply}")
        c.stats = {"p50": p50, "p99": 2 * p50}
        return c

    full, acked = config("shm", None, 100.0), config("shm", 32, 60.0)
    dds_full, dds_acked = config("dds", None, 400.0), config("dds", 32, 300.0)
    lonely = config("dds", 64, 300.0)
    _baselines([full, acked, dds_full, dds_acked, lonely])
    assert dds_full.baseline["label"] == "shm None" and dds_full.baseline["p50_ratio"] == 4
    assert dds_acked.baseline["label"] == "shm 32" and dds_acked.baseline["p50_ratio"] == 5
    assert lonely.baseline is None  # no floor with a 64-byte reply: none, not a wrong one
