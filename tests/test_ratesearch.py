"""The rate search: the pure algorithm against simulated systems (no runs), then one short
real search on udp through the CLI. Behaviour is asserted, timings never."""

import json
import random
import signal
import time

import pytest

from conftest import assert_nothing_left, cli_in_background, run_cli, run_records
from psbench.run.ratesearch import (
    Criteria,
    Observation,
    SearchResult,
    judge,
    runs_left_at_most,
    search,
)


def system(capacity: float, p99_ns: float = 1000.0, status: str = "ok"):
    """A simulated system that loses samples above capacity Hz."""

    def measure(rate: float) -> Observation:
        loss = 0.0 if rate <= capacity else 100.0 * (rate - capacity) / rate
        return Observation(
            status, achieved_rate_hz=rate, loss_percent=loss, p99_ns=p99_ns, run_dir=f"run-{rate:g}"
        )

    return measure


def luckier_first(first_capacity: float, rerun_capacity: float):
    """A simulated system whose first run of a rate holds up to first_capacity Hz, and
    every rerun of it only up to rerun_capacity."""
    runs: dict[float, int] = {}

    def measure(rate: float) -> Observation:
        runs[rate] = runs.get(rate, 0) + 1
        return system(first_capacity if runs[rate] == 1 else rerun_capacity)(rate)

    return measure


def assert_monotone(result: SearchResult) -> None:
    """Every passing rate lies below every failing one, lo and hi are the highest pass
    and the lowest fail, no rate is tried twice as a step, and a search that ended on its
    own reports a confirmed lo."""
    passing = [s.rate_hz for s in result.steps if s.passed]
    failing = [s.rate_hz for s in result.steps if not s.passed]
    assert not passing or not failing or max(passing) < min(failing)
    assert result.lo == max(passing, default=None)
    assert result.hi == min(failing, default=None)
    rates = [s.rate_hz for s in result.steps]
    assert len(set(rates)) == len(rates)
    if result.ended_by not in ("interrupted", "error"):
        assert result.max_sustainable_rate_hz == result.lo
    for step in result.steps:
        if step.confirmed:
            assert step.passed and step.runs == result.criteria.confirm
            assert step.runs_passed == step.runs


@pytest.mark.parametrize("capacity", [700.0, 1000.0, 3333.0, 12345.0, 250000.0])
def test_the_search_brackets_the_capacity_within_the_precision(capacity):
    criteria = Criteria(start_rate_hz=1000, precision=0.05, max_steps=40)
    result = search(criteria, system(capacity))
    assert result.ended_by == "precision"
    assert_monotone(result)
    assert result.lo <= capacity < result.hi
    assert result.hi / result.lo <= 1.05
    assert result.max_sustainable_rate_hz == result.lo
    assert result.lo in [s.rate_hz for s in result.steps if s.passed]


def test_the_search_ends_within_max_steps_and_its_result_is_a_passed_rate():
    for max_steps in range(1, 8):
        result = search(
            Criteria(start_rate_hz=1000, precision=0.001, max_steps=max_steps), system(5000)
        )
        assert len(result.steps) <= max_steps
        assert result.ended_by == "max_steps"
        assert_monotone(result)
        if result.lo is not None:
            assert any(s.passed and s.rate_hz == result.lo for s in result.steps)


def test_a_noisy_system_still_gives_a_monotone_bracket():
    rng = random.Random(7)

    def flaky(rate):  # passes or fails at random near its capacity
        return system(4000 * rng.uniform(0.8, 1.2))(rate)

    for _ in range(50):
        result = search(Criteria(start_rate_hz=500, max_steps=15), flaky)
        assert_monotone(result)
        assert len(result.steps) <= 15


def test_the_maximum_rate_ends_the_search_when_it_passes():
    result = search(Criteria(start_rate_hz=1000, max_rate_hz=5000), system(1e9))
    assert [s.rate_hz for s in result.steps] == [1000, 2000, 4000, 5000]
    assert result.ended_by == "max_rate" and result.lo == 5000 and result.hi is None


def test_a_failing_start_rate_halves_until_one_passes():
    result = search(Criteria(start_rate_hz=8000, precision=0.05), system(900))
    rates = [s.rate_hz for s in result.steps]
    assert rates[:5] == [8000, 4000, 2000, 1000, 500]
    assert result.lo <= 900 < result.hi and result.ended_by == "precision"
    assert_monotone(result)


def test_nothing_passes():
    result = search(Criteria(start_rate_hz=4, max_steps=20), system(0.5))
    assert result.lo is None and result.ended_by == "min_rate"
    assert [s.rate_hz for s in result.steps] == [4, 2, 1]
    assert result.to_json()["max_sustainable_rate_hz"] is None


def test_a_step_fails_on_status_keep_up_loss_and_p99():
    c = Criteria(max_loss_percent=1.0, max_p99_ns=1e6)
    assert judge(c, 1000, Observation("ok", 990, 0.5, 9e5)) == (True, None)
    assert judge(c, 1000, Observation("failed", 990, 0.5, 9e5)) == (False, "status failed")
    passed, why = judge(c, 1000, Observation("ok", 900, 0.5, 9e5))
    assert not passed and why.startswith("publisher could not keep up")
    assert judge(c, 1000, Observation("ok", 1000, 2.0, 9e5))[1] == "loss 2% > 1%"
    assert judge(c, 1000, Observation("ok", 1000, 0, 2e6))[1] == "p99 2000.0 µs > 1000 µs"
    assert "too few samples" in judge(c, 1000, Observation("ok", 1000, 0, None))[1]
    # An older node reports no achieved rate: that check is skipped, not failed.
    assert judge(c, 1000, Observation("ok", None, 0, 1e5)) == (True, None)


def test_an_interrupt_keeps_the_completed_steps():
    seen = []

    def measure(rate):
        if rate > 3000:
            raise KeyboardInterrupt
        return system(1e9)(rate)

    with pytest.raises(KeyboardInterrupt):
        search(Criteria(start_rate_hz=1000), measure, on_end=seen.append)
    result = seen[0]
    assert result.ended_by == "interrupted" and [s.rate_hz for s in result.steps] == [1000, 2000]
    stopped = search(
        Criteria(start_rate_hz=1000),
        lambda rate: Observation("interrupted") if rate > 1000 else system(1e9)(rate),
    )
    assert stopped.ended_by == "interrupted" and len(stopped.steps) == 1


def test_on_run_sees_every_run_and_on_end_the_result():
    runs, ends = [], []
    result = search(
        Criteria(start_rate_hz=1000, max_steps=6),
        system(3000),
        on_run=lambda r, step: runs.append((step.rate_hz, step.runs)),
        on_end=ends.append,
    )
    assert len(runs) == result.runs and ends == [result]
    # Each rate's runs are reported in order: 1, 2, 3.
    for rate in {rate for rate, _ in runs}:
        assert [n for r, n in runs if r == rate] == list(
            range(1, len([r for r, _ in runs if r == rate]) + 1)
        )


# One real search on udp: short steps, loose bounds (this machine is shared; the point
# is the mechanics, not the figure).
def test_a_real_search_on_udp_writes_its_runs_and_a_monotone_bracket(driver_libs, tmp_path):
    folder = tmp_path / "search"
    proc = run_cli(
        [
            "ratesearch",
            "--driver",
            "udp",
            "--duration",
            "0.5",
            "--start-rate",
            "2000",
            "--max-steps",
            "3",
            "--confirm",
            "2",
            "--max-p99",
            "200ms",
            "--max-loss",
            "100",
            "--match-timeout",
            "10",
            "--publishers",
            "2",
            "-o",
            str(folder),
        ],
        tmp_path / "results",
        timeout=180,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    record = json.loads((folder / "search.json").read_text())
    assert record["format"] == "psbench-search/1"
    assert record["criteria"]["max_steps"] == 3 and record["criteria"]["confirm"] == 2
    assert record["criteria"]["max_p99_ns"] == 2e8
    assert record["rate_is"] == "per publisher" and record["publishers"] == 2
    steps = record["steps"]
    assert record["aggregate_rates_hz"] == [2 * s["rate_hz"] for s in steps]
    assert 1 <= len(steps) <= 3 and record["ended_by"] in ("max_steps", "precision")
    passing = [s["rate_hz"] for s in steps if s["passed"]]
    failing = [s["rate_hz"] for s in steps if not s["passed"]]
    assert not passing or not failing or max(passing) < min(failing)
    assert record["bracket"] == [max(passing, default=None), min(failing, default=None)]
    runs = 0
    for step in steps:
        assert step["runs"] == 1 + len(step["confirmations"]) <= 2
        for run_dir, status in [(step["run_dir"], step["status"])] + [
            (c["run_dir"], c["status"]) for c in step["confirmations"]
        ]:
            run = json.loads((folder / run_dir / "run.json").read_text())
            assert run["kind"] == "pubsub" and run["spec"]["rate"] == step["rate_hz"]
            assert run["spec"]["publishers"] == 2
            assert run["spec"]["duration"] == 0.5 and run["status"] == status
            runs += 1
    assert record["runs"] == runs <= 3 * 2
    best = record["max_sustainable_rate_hz"]
    assert best == (max(passing) if passing else None)
    if best is not None:  # the reported rate passed both its runs
        [step] = [s for s in steps if s["rate_hz"] == best]
        assert step["confirmed"] and step["runs_passed"] == step["runs"] == 2
        assert record["aggregate_max_sustainable_rate_hz"] == 2 * best
        assert "per publisher" in proc.stdout and "rate Hz per pub" in proc.stdout
    assert ("max sustainable rate" in proc.stdout) == (best is not None)
    assert "results: " in proc.stdout and f"[{runs}/at most " in proc.stderr
    assert "ETA at most" in proc.stderr and "each of the 2 publishers" in proc.stderr


def test_ctrl_c_keeps_the_completed_steps(driver_libs, tmp_path):
    folder = tmp_path / "search"
    with cli_in_background(
        [
            "ratesearch",
            "--driver",
            "udp",
            "--duration",
            "0.3",
            "--start-rate",
            "1000",
            "--max-rate",
            "1000000",
            "--max-p99",
            "10s",
            "--max-loss",
            "100",
            "--max-steps",
            "30",
            "-o",
            str(folder),
        ],
        tmp_path / "results",
    ) as proc:
        end = time.monotonic() + 60
        while time.monotonic() < end and proc.poll() is None:
            path = folder / "search.json"
            if path.exists() and len(json.loads(path.read_text())["steps"]) >= 2:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # to the CLI only, as a terminal's Ctrl-C would
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err and "completed steps" in err
    record = json.loads((folder / "search.json").read_text())
    assert record["ended_by"] == "interrupted" and len(record["steps"]) >= 2
    assert all(step["status"] == "ok" for step in record["steps"])
    for run in run_records(folder):
        assert_nothing_left(run["run_id"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--max-p99", "5"], "argument --max-p99: '5' is not a duration"),
        (["--precision", "1.5"], "argument --precision: is a fraction below 1"),
        (["--start-rate", "0"], "argument --start-rate: must be a finite number, greater than 0"),
        (
            ["--max-rate", "100"],
            "--max-rate 100 Hz is below --start-rate 1000 Hz; give a higher --max-rate",
        ),
        (["--rate", "100"], "unrecognized arguments: --rate"),
        (["--confirm", "0"], "argument --confirm: must be a finite whole number, greater than 0"),
    ],
)
def test_bad_search_arguments_are_named(driver_libs, tmp_path, args, message):
    proc = run_cli(["ratesearch", "--driver", "udp", *args], tmp_path / "results")
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "results").exists()


def test_a_rate_that_passes_once_but_not_again_is_not_called_sustainable():
    # 8 kHz passes its first run and fails the next (a noisy machine); everything up
    # to 6 kHz always passes, everything above 8 kHz always fails.
    runs = {}

    def lucky_once(rate):
        runs[rate] = runs.get(rate, 0) + 1
        capacity = 8000 if runs[rate] == 1 else 6000
        return system(capacity)(rate)

    result = search(
        Criteria(start_rate_hz=1000, precision=0.05, confirm=3, max_steps=30), lucky_once
    )
    assert_monotone(result)
    assert result.lo <= 6000 < result.hi
    [eight] = [s for s in result.steps if s.rate_hz == 8000]
    assert not eight.passed and "passed 1 run, failed run 2 of 3" in eight.why
    assert eight.runs == 2 and eight.runs_passed == 1
    assert eight.confirmations[0]["run_dir"] == "run-8000" and not eight.confirmations[0]["passed"]
    best = next(s for s in result.steps if s.rate_hz == result.lo)
    assert best.confirmed and best.runs == 3 and result.max_sustainable_rate_hz == result.lo
    assert all(c["passed"] for c in best.confirmations)
    assert any(s["confirmations"] for s in result.to_json()["steps"])


def test_confirmation_runs_do_not_count_as_steps_and_only_the_boundary_is_rerun():
    # Doubling far below any failure is one run a rate; the result is rerun.
    result = search(Criteria(start_rate_hz=1000, max_rate_hz=4000, confirm=3), system(1e9))
    assert [s.rate_hz for s in result.steps] == [1000, 2000, 4000]
    assert [s.runs for s in result.steps] == [1, 1, 3] and result.runs == 5
    assert [s.confirmed for s in result.steps] == [False, False, True]
    assert result.ended_by == "max_rate" and result.max_sustainable_rate_hz == 4000


def test_every_passing_step_of_the_bisection_is_confirmed():
    # Doubling passes 1, 2, 4 kHz and fails 8: 4 kHz (lo of the first bracket) is
    # confirmed, then every bisection step that passes; 1 and 2 kHz stay single runs.
    result = search(Criteria(start_rate_hz=1000, confirm=3, max_steps=20), system(5000))
    assert_monotone(result)
    assert [(s.rate_hz, s.runs, s.passed) for s in result.steps] == [
        (1000, 1, True),
        (2000, 1, True),
        (4000, 3, True),
        (8000, 1, False),
        (5657, 1, False),
        (4757, 3, True),
        (5188, 1, False),
        (4968, 3, True),
    ]
    assert result.max_sustainable_rate_hz == 4968 and result.ended_by == "precision"


def test_a_doubling_step_that_fails_its_rerun_sends_the_search_below_it():
    # Up to 5 kHz passes a rate's first run, only up to 3 kHz the later ones: 4 kHz is
    # the doubling step below the first failure (8 kHz) and fails its rerun.
    result = search(
        Criteria(start_rate_hz=1000, confirm=3, max_steps=30), luckier_first(5000, 3000)
    )
    assert_monotone(result)
    assert [s.rate_hz for s in result.steps][:4] == [1000, 2000, 4000, 8000]
    four = result.steps[2]
    assert not four.passed and four.runs == 2 and "failed run 2 of 3" in four.why
    assert result.lo <= 3000 < result.hi and result.ended_by == "precision"
    assert result.steps[1].confirmed  # 2 kHz was confirmed before bisecting above it


def test_a_rate_that_passes_only_its_first_run_is_never_reported():
    # Every rate passes its first run and fails every rerun: nothing is sustainable.
    result = search(Criteria(start_rate_hz=1000, confirm=2, max_steps=10), luckier_first(1e9, 0))
    assert result.max_sustainable_rate_hz is None and result.lo is None
    assert all(not s.passed and s.runs == 2 for s in result.steps)
    assert result.to_json()["max_sustainable_rate_hz"] is None


@pytest.mark.parametrize("seed", range(30))
def test_a_noisy_search_ends_within_its_run_bound(seed):
    rng = random.Random(seed)
    calls = []

    def noisy(rate):
        calls.append(rate)
        return system(4000 * rng.uniform(0.7, 1.3))(rate)

    criteria = Criteria(start_rate_hz=500, max_steps=10, confirm=3, precision=0.01)
    result = search(criteria, noisy)
    assert_monotone(result)
    assert len(result.steps) <= 10 and len(calls) == result.runs <= 10 * 3
    best = result.max_sustainable_rate_hz
    if best is not None:
        [step] = [s for s in result.steps if s.rate_hz == best]
        assert step.runs == 3 and step.runs_passed == 3


def test_the_bound_of_runs_left_never_undercounts():
    criteria = Criteria(start_rate_hz=1000, max_steps=8, confirm=3, precision=0.01)
    bounds = []

    def note(result, step):
        bounds.append((result.runs, runs_left_at_most(result)))

    assert runs_left_at_most(SearchResult(criteria)) == 8 * 3
    result = search(criteria, system(5000), on_run=note)
    for done, left in bounds:
        assert done + left <= 8 * 3 and result.runs - done <= left
    assert runs_left_at_most(result) >= 0


def test_the_output_says_the_rate_is_per_publisher_with_the_total():
    from psbench.cli.cmd_ratesearch import curve_table, result_text
    from psbench.run.ratesearch import per_publisher_json

    result = search(Criteria(start_rate_hz=1000, max_rate_hz=2000, confirm=2), system(1e9))
    assert per_publisher_json(result, 3) == {
        "rate_is": "per publisher",
        "publishers": 3,
        "aggregate_max_sustainable_rate_hz": 6000,
        "aggregate_rates_hz": [3000, 6000],
    }
    text = result_text(result, 3)
    assert (
        text.startswith(
            "max sustainable rate: 2,000 Hz per publisher (6,000 Hz offered by all 3 together)"
        )
        and "passed 2 of 2 runs" in text
    )
    assert "per publisher" not in result_text(result, 1)
    table = curve_table(result, 3)
    assert "rate Hz per pub" in table and "all 3 Hz" in table and "6,000" in table
    assert "2/2" in table and "pass, confirmed" in table


def test_progress_with_an_upper_bound_says_at_most():
    import io

    from psbench.run.progress import Progress

    out = io.StringIO()
    progress = Progress(6, stream=out, tty=False, at_most=True)
    progress.start("1,000 Hz")
    progress.total = 4
    progress.finish("1,000 Hz", "pass", 2.0, failed=False)
    assert out.getvalue().startswith(
        "[1/at most 4] 1,000 Hz: pass (2.0 s); 0 failed; ETA at most 0:06"
    )
    plain = io.StringIO()
    Progress(2, stream=plain, tty=False).finish("x", "ok", 1.0)
    assert plain.getvalue().startswith("[1/2] x: ok") and "at most" not in plain.getvalue()
