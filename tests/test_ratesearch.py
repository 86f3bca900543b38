"""The rate search: the pure algorithm against simulated systems (no runs), then one short
real search on udp through the CLI. Behaviour is asserted, timings never."""

import json
import random
import signal
import time

import pytest

from conftest import assert_nothing_left, cli_in_background, run_cli, run_records
from psbench.ratesearch import Criteria, Observation, SearchResult, judge, search


def system(capacity: float, p99_ns: float = 1000.0, status: str = "ok"):
    """A simulated system that loses samples above capacity Hz."""
    def measure(rate: float) -> Observation:
        loss = 0.0 if rate <= capacity else 100.0 * (rate - capacity) / rate
        return Observation(status, achieved_rate_hz=rate, loss_percent=loss,
                           p99_ns=p99_ns, run_dir=f"run-{rate:g}")
    return measure


def assert_monotone(result: SearchResult) -> None:
    """Replaying the steps: lo never decreases, hi never increases, every rate tried is
    strictly inside the bracket of the moment."""
    lo = hi = None
    for step in result.steps:
        assert lo is None or step.rate_hz > lo
        assert hi is None or step.rate_hz < hi
        if step.passed:
            lo = step.rate_hz
        else:
            hi = step.rate_hz
    assert (lo, hi) == (result.lo, result.hi)


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
        result = search(Criteria(start_rate_hz=1000, precision=0.001, max_steps=max_steps),
                        system(5000))
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
    stopped = search(Criteria(start_rate_hz=1000),
                     lambda rate: Observation("interrupted") if rate > 1000 else
                     system(1e9)(rate))
    assert stopped.ended_by == "interrupted" and len(stopped.steps) == 1


def test_on_step_sees_every_step_and_on_end_the_result():
    steps, ends = [], []
    result = search(Criteria(start_rate_hz=1000, max_steps=6), system(3000),
                    on_step=lambda r: steps.append(len(r.steps)), on_end=ends.append)
    assert steps == list(range(1, len(result.steps) + 1)) and ends == [result]


# One real search on udp: short steps, loose bounds (this machine is shared; the point
# is the mechanics, not the figure).
def test_a_real_search_on_udp_writes_its_steps_and_a_monotone_bracket(driver_libs,
                                                                       tmp_path):
    folder = tmp_path / "search"
    proc = run_cli(["ratesearch", "--driver", "udp", "--duration", "0.5",
                    "--start-rate", "2000", "--max-steps", "4", "--max-p99", "200ms",
                    "--max-loss", "100", "--match-timeout", "10", "-o", str(folder)],
                   tmp_path / "results", timeout=120)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    record = json.loads((folder / "search.json").read_text())
    assert record["format"] == "psbench-search/1"
    assert record["criteria"]["max_steps"] == 4 and record["criteria"]["max_p99_ns"] == 2e8
    steps = record["steps"]
    assert 1 <= len(steps) <= 4 and record["ended_by"] in ("max_steps", "precision")
    lo = hi = None
    for step in steps:
        assert lo is None or step["rate_hz"] > lo
        assert hi is None or step["rate_hz"] < hi
        lo, hi = (step["rate_hz"], hi) if step["passed"] else (lo, step["rate_hz"])
        run = json.loads((folder / step["run_dir"] / "run.json").read_text())
        assert run["kind"] == "pubsub" and run["spec"]["rate"] == step["rate_hz"]
        assert run["spec"]["duration"] == 0.5 and run["status"] == step["status"]
    assert record["bracket"] == [lo, hi] and record["max_sustainable_rate_hz"] == lo
    assert proc.stdout.count(" Hz") >= 1 and "results: " in proc.stdout
    assert ("max sustainable rate" in proc.stdout) == (lo is not None)
    assert f"[{len(steps)}/4]" in proc.stderr


def test_ctrl_c_keeps_the_completed_steps(driver_libs, tmp_path):
    folder = tmp_path / "search"
    with cli_in_background(["ratesearch", "--driver", "udp", "--duration", "0.3",
                            "--start-rate", "1000", "--max-rate", "1000000",
                            "--max-p99", "10s", "--max-loss", "100", "--max-steps", "30",
                            "-o", str(folder)], tmp_path / "results") as proc:
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


@pytest.mark.parametrize("args, message", [
    (["--max-p99", "5"], "argument --max-p99: '5' is not a duration"),
    (["--precision", "1.5"], "argument --precision: is a fraction below 1"),
    (["--start-rate", "0"], "argument --start-rate: must be a finite number, greater than 0"),
    (["--max-rate", "100"], "argument --max-rate: 100 Hz is below --start-rate 1000 Hz"),
    (["--rate", "100"], "unrecognized arguments: --rate"),
])
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

    result = search(Criteria(start_rate_hz=1000, precision=0.05, confirm=3, max_steps=30),
                    lucky_once)
    assert_monotone(result)
    assert result.lo <= 6000 < result.hi
    [eight] = [s for s in result.steps if s.rate_hz == 8000]
    assert not eight.passed and "failed confirmation 2 of 3" in eight.why
    for step in result.steps:  # every passing rate passed 3 runs, every rerun is kept
        if step.passed:
            assert len(step.confirmations) == 2
            assert all(c["passed"] for c in step.confirmations)
    assert result.to_json()["steps"][0]["confirmations"]


def test_confirmation_runs_do_not_count_as_steps():
    result = search(Criteria(start_rate_hz=1000, max_rate_hz=4000, confirm=3),
                    system(1e9))
    assert [s.rate_hz for s in result.steps] == [1000, 2000, 4000]
    assert all(len(s.confirmations) == 2 for s in result.steps)
