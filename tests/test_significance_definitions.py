"""One definition per figure in the significance table and compare: the p50 columns, the
ratio and the tests describe the samples of every repetition together, the interval
takes the run as its unit when there are repetitions; the interval's level follows
alpha; the table says what its verdicts cover; a sweep's configuration and the same
single run are one configuration, with the same output whatever order they were loaded
in."""

import numpy as np
import pytest

from conftest import run_cli
from psbench.report.report_tables import one_setting_pairs, significance_table
from psbench.results.configs import Config
from psbench.results.significance import compare_samples, estimate


def nearest_rank_50(values) -> float:
    ordered = sorted(np.concatenate(values).tolist())
    return ordered[(len(ordered) + 1) // 2 - 1]


def test_with_repetitions_the_estimate_is_pooled_and_its_spread_between_runs():
    # 70% of all samples say 100, in one long repetition; three short ones say 200.
    # Pooled p50 = 100 (each sample keeps its weight); the standard error is that of the
    # four runs' log medians (the run is the unit), with 3 degrees of freedom.
    reps = [np.full(14_000, 100.0)] + [np.full(2_000, 200.0) for _ in range(3)]
    assert nearest_rank_50(reps) == 100.0
    result = estimate(reps, "p50")
    assert result.value == 100.0 and result.runs == 4 and result.df == 3
    logs = np.log([100.0, 200.0, 200.0, 200.0])
    assert result.se_log == pytest.approx(np.std(logs, ddof=1) / 2)


def test_the_interval_follows_alpha():
    rng = np.random.default_rng(5)
    a, b = [rng.normal(100, 10, 2000)], [rng.normal(101, 10, 2000)]

    def interval(alpha):
        med_a, med_b = estimate(a, "p50", 1 - alpha), estimate(b, "p50", 1 - alpha)
        return compare_samples(a, b, med_a, med_b, alpha=alpha).median

    wide, narrow = interval(0.01), interval(0.2)
    assert wide.confidence == 0.99 and narrow.confidence == 0.8
    assert wide.low < narrow.low and wide.high > narrow.high


class _Measured(Config):
    """A configuration whose repetitions' samples are given directly."""

    reps: list = None

    @property
    def ok_runs(self):
        return [object()] * len(self.reps)

    @property
    def rep_samples(self):
        return self.reps


def _config(name: str, driver: str, reps: list[np.ndarray]) -> Config:
    config = _Measured(name, {"kind": "ping", "driver": driver, "size": 64}, [], label=name)
    config.reps = reps
    config.stats = {"p50": float(np.median([nearest_rank_50([r]) for r in reps]))}
    return config


def test_the_p50_columns_are_the_pooled_medians_the_ratio_is_taken_from():
    # Three unequal repetitions: the median of their p50s (110) is not the pooled
    # median (100); the table's p50 columns must be the pooled ones, as its ratio is.
    a_reps = [np.full(1000, 100.0), np.full(100, 110.0), np.full(100, 120.0)]
    b_reps = [np.full(1000, 200.0), np.full(100, 220.0), np.full(100, 240.0)]
    a, b = _config("a", "udp", a_reps), _config("b", "shm", b_reps)
    assert a.stats["p50"] == 110.0
    pairs = one_setting_pairs([a, b], alpha=0.05, threshold=0.05)
    row = significance_table(pairs, 0.05, 0.05).records()[0]
    assert row["covers"] == "between runs (3 and 3)"
    assert row["p50_a_ns"] == nearest_rank_50(a_reps) == 100.0
    assert row["p50_b_ns"] == nearest_rank_50(b_reps) == 200.0
    assert row["median_ratio"] == row["p50_b_ns"] / row["p50_a_ns"]


def test_a_sweep_and_the_same_single_run_are_compared(driver_libs, results, tmp_path):
    experiment = tmp_path / "t.yaml"
    experiment.write_text("name: t\ndefaults: {kind: ping, driver: udp, count: 300}\n")
    assert run_cli(["run", str(experiment), "-o", str(tmp_path / "sweep")], results).returncode == 0
    assert (
        run_cli(["ping", "--driver", "udp", "--count", "300", "--quiet"], results).returncode == 0
    )
    single = next(results.iterdir())
    forward = run_cli(["compare", str(tmp_path / "sweep"), str(single)], results)
    backward = run_cli(["compare", str(tmp_path / "sweep"), str(single)], results)
    assert forward.returncode == 0, forward.stdout + forward.stderr
    assert "udp 64 B" in forward.stdout and "nothing to compare" not in forward.stderr
    assert forward.stdout == backward.stdout  # same seed, same intervals


def test_with_one_run_the_table_says_the_verdict_covers_that_run_only():
    rng = np.random.default_rng(6)
    a = _config("a", "udp", [rng.normal(100, 5, 2000)])
    b = _config("b", "shm", [rng.normal(200, 5, 2000)])
    (row,) = significance_table(one_setting_pairs([a, b], 0.05, 0.05), 0.05, 0.05).records()
    assert row["covers"] == "within one run (no repetitions)"
    assert row["verdict"] == "significant, B slower (one run only)"
