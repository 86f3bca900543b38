"""Runs that do not end well leave no process and no shared memory behind, and keep
their result directory with the status recorded."""

import json
import signal
import time
from pathlib import Path

import pytest

from conftest import (
    assert_nothing_left,
    cli_in_background,
    only_run,
    processes_of_run,
    run_cli,
    wait_for_running,
)
from psbench.results import rundir
from psbench.run import runner
from psbench.run.spec import MeasureSpec, NodePlan, node_argv


def test_node_timeout_is_reported_and_kept(driver_libs, results):
    # 2,000,000 samples take several seconds; the node allocates their store up front,
    # so a far larger count would spend the 2 s in allocation instead of measuring.
    proc = run_cli(["ping", "--driver", "shm", "--count", "2000000", "--timeout", "2"], results)
    assert proc.returncode == 3, proc.stderr
    record = only_run(results)
    assert record["status"] == "timeout"
    ping = json.loads((record["_dir"] / "ping.json").read_text())
    assert ping["ended_by"] == "timeout"
    assert (record["_dir"] / "ping.samples").exists()


def _lonely_ping(node, lib, run_dir, run_id, match_timeout):
    spec = MeasureSpec(
        kind="ping",
        driver="udp",
        driver_path=lib,
        size=64,
        count=100,
        match_timeout=match_timeout,
        timeout=600,
    )
    return [
        (
            "ping",
            ["ping"],
            node_argv(node, spec, NodePlan("ping", ["ping"]), run_id, run_dir, "stdio"),
        )
    ]


def test_peer_that_never_comes_fails_cleanly(node, driver_libs, results):
    run_id = rundir.new_run_id()
    run_dir = rundir.create(results, run_id)
    commands = _lonely_ping(node, driver_libs["udp"], run_dir, run_id, match_timeout=1)
    result = runner.launch(
        run_id, run_dir, commands, barrier=True, start_timeout=30, run_timeout=60
    )
    assert result.status == "failed"
    assert "pong" in result.message  # the node says which peer it missed
    assert_nothing_left(run_id)


def test_a_failed_process_takes_its_waiting_peer_down(node, driver_libs, results):
    # pong listens under another run id, so ping never hears back and fails after 1 s;
    # pong would wait 60 s for a first message.
    run_id = rundir.new_run_id()
    run_dir = rundir.create(results, run_id)

    def argv(role, rid, match_timeout):
        spec = MeasureSpec(
            kind="ping",
            driver="udp",
            driver_path=driver_libs["udp"],
            size=64,
            count=100,
            match_timeout=match_timeout,
            timeout=600,
        )
        return node_argv(node, spec, NodePlan(role, [role]), rid, run_dir, "stdio")

    commands = [
        ("pong", ["pong"], argv("pong", run_id + "x", 60)),
        ("ping", ["ping"], argv("ping", run_id, 1)),
    ]
    result = runner.launch(
        run_id, run_dir, commands, barrier=True, start_timeout=30, run_timeout=120
    )
    assert result.status == "failed"
    assert "pong" in result.message
    assert result.exit_codes["ping"] == 1
    pong, ping = result.processes
    assert pong.killed and not ping.killed
    assert set(result.failed_stderr()) == {"ping"}
    assert_nothing_left(run_id)
    assert_nothing_left(run_id + "x")


def test_launcher_stops_a_run_past_its_timeout(node, driver_libs, results):
    run_id = rundir.new_run_id()
    run_dir = rundir.create(results, run_id)
    # The node would wait 30 s for its peer; the launcher gives it 1 s.
    commands = _lonely_ping(node, driver_libs["udp"], run_dir, run_id, match_timeout=30)
    result = runner.launch(run_id, run_dir, commands, barrier=True, start_timeout=30, run_timeout=1)
    assert result.status == "timeout"
    assert result.processes[0].killed
    assert_nothing_left(run_id)


@pytest.mark.parametrize(
    "driver,sig", [("udp", signal.SIGINT), ("shm", signal.SIGINT), ("shm", signal.SIGTERM)]
)
def test_interrupt_stops_everything_and_keeps_the_run(driver_libs, results, driver, sig):
    with cli_in_background(
        ["ping", "--driver", driver, "--count", "2000000", "--timeout", "120"], results
    ) as proc:
        record = wait_for_running(results, proc)
        assert processes_of_run(record["run_id"]), "node processes not found while running"
        time.sleep(1.0)  # let it get past the barrier into measuring
        proc.send_signal(sig)  # to the CLI only, as a terminal's Ctrl-C would reach it
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    record = only_run(results)
    assert record["status"] == "interrupted"
    assert all(p["exit_code"] is not None for p in record["processes"])
    assert_nothing_left(record["run_id"])


def test_kill_9_of_psbench_takes_its_nodes_down(driver_libs, results):
    # psbench gets no chance to clean up; its nodes learn of its death from the kernel
    # (parent-death signal), end, and write what they measured.
    with cli_in_background(
        ["ping", "--driver", "udp", "--count", "2000000", "--timeout", "120"], results
    ) as proc:
        record = wait_for_running(results, proc)
        assert processes_of_run(record["run_id"]), "node processes not found while running"
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    assert_nothing_left(record["run_id"])  # waits a bounded moment for them to end
    # Each node wrote its summary on the way out: killed while measuring it says it was
    # interrupted (pong may first get the end marker the interrupted ping still sends);
    # killed before psbench said GO, that the start never came.
    for role, ends in (("ping", {"interrupted"}), ("pong", {"interrupted", "end_marker"})):
        summary = json.loads((record["_dir"] / f"{role}.json").read_text())
        error = summary["error"] or ""
        assert (
            summary["ended_by"] in ends or "before the start" in error or "no GO line" in error
        ), (role, summary["ended_by"], error)


def test_leftovers_named_after_the_run_are_removed_and_nothing_else(tmp_path):
    import tempfile

    from psbench.run.leftovers import remove_leftovers

    run_id, other = "LeftOver01", "LeftOver02"
    tmp = Path(tempfile.gettempdir())
    made = [
        Path("/dev/shm") / f"psbench_{run_id}_data",
        tmp / f"psbench_{run_id}_77.lock",
        tmp / f"psbench-zeromq-{run_id}",
    ]
    made[0].write_bytes(b"x")
    made[1].write_bytes(b"")
    made[2].mkdir()
    (made[2] / "data.ipc").write_bytes(b"")
    keep = tmp / f"psbench_{other}_77.lock"
    keep.write_bytes(b"")
    try:
        assert sorted(remove_leftovers(run_id)) == sorted(str(p) for p in made)
        assert not any(p.exists() for p in made) and keep.exists()
    finally:
        keep.unlink()
