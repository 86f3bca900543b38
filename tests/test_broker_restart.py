"""A broker killed mid-stream and started again (`--restart-broker AT:DOWN`), with real
brokers: the restart happens when asked (killed, started, serving again, in that order,
on the same port with a new pid), what the receiver got is placed against it, and
nothing is left behind when the run ends, is interrupted in the middle of the restart, or
psbench itself is killed after it. With durability persistent, what a durable broker
kept across the crash is counted (docs/cli.md, "A broker restart")."""

import signal
import time

import pytest

from conftest import cli_in_background, live_processes, only_run, run_cli, wait_for_running
from psbench.run.services import NOT_STARTED_AGAIN
from test_services_outlive import LIMIT_S, what_remains

# 200 Hz for 8 s; the broker killed 2 s into the measurement and back 1 s later.
RESTART = ["--rate", "200", "--duration", "8", "--restart-broker", "2:1"]
NO_RECONNECT = "nats"  # its driver does not reconnect: the reader ends with the broker
RECONNECTS = "mqtt"  # with durability persistent its clients come back by themselves


def restart_of(record: dict) -> dict:
    return record["restart"]


def test_a_restart_is_made_as_asked_and_its_broker_is_gone_after(driver_libs, results):
    if NO_RECONNECT not in driver_libs:
        pytest.skip(f"{NO_RECONNECT} is not built")
    proc = run_cli(["pubsub", "--driver", NO_RECONNECT, *RESTART], results, timeout=180)
    record = only_run(results)
    restart = restart_of(record)
    assert restart["done"] and restart["error"] is None, restart
    assert restart["signal"] == "SIGKILL" and restart["service"] == "nats-server"
    began, killed = restart["window_began_ns"], restart["killed_ns"]
    assert began < killed < restart["started_ns"] < restart["ready_ns"]
    # Killed no sooner than asked, and kept down at least as long as asked.
    assert killed - began >= 2e9 and restart["started_ns"] - killed >= 1e9
    service = record["services"][0]
    assert service["restarts"] == 1
    log = (record["_dir"] / "service-nats-server.log").read_text()
    assert log.count("Listening for client connections on " + service["address"]) == 2
    assert "psbench: killed (SIGKILL), down for 1 s" in log
    assert "psbench: started again after 1 s" in log
    # Its reader did not survive the broker: nothing came after, and the run says so.
    sub = restart["receivers"]["sub"]
    assert sub["received_after_ready"] == 0 and sub["recovery_s"] is None
    assert sub["received_before_kill"] == sub["received"] > 0
    assert record["status"] == "failed" and proc.returncode == 1
    assert "broker restart: nats-server killed (SIGKILL) 2 s into the measurement" in proc.stdout
    assert "nothing arrived after it served" in proc.stdout
    assert live_processes("nats-server", str(results)) == []


def test_ctrl_c_while_the_broker_is_down_leaves_nothing(driver_libs, results):
    if NO_RECONNECT not in driver_libs:
        pytest.skip(f"{NO_RECONNECT} is not built")
    with cli_in_background(["pubsub", "--driver", NO_RECONNECT, "--rate", "200", "--duration",
                            "20", "--restart-broker", "2:5"], results) as proc:  # fmt: skip
        record = wait_for_running(results, proc)
        _wait_until_killed(record)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
    assert proc.returncode == 130
    record = only_run(results)
    assert record["status"] == "interrupted"
    assert live_processes("nats-server", str(results)) == []
    # Interrupted while it was down, it was not started again behind psbench's back.
    log = (record["_dir"] / "service-nats-server.log").read_text()
    assert NOT_STARTED_AGAIN in log and "started again after" not in log
    assert log.count("Listening for client connections") == 1


def test_sigkill_of_psbench_after_the_restart_leaves_no_broker(driver_libs, results):
    if RECONNECTS not in driver_libs:
        pytest.skip(f"{RECONNECTS} is not built")
    with cli_in_background(["pubsub", "--driver", RECONNECTS, "--reliability", "reliable",
                            "--durability", "persistent", "--rate", "200", "--duration", "20",
                            "--restart-broker", "1:0.5"], results) as proc:  # fmt: skip
        record = wait_for_running(results, proc)
        _wait_until_killed(record, "mosquitto")
        time.sleep(3)  # the broker is serving again, under a pid psbench started later
        assert proc.poll() is None, proc.communicate()
        assert len(live_processes("mosquitto", str(results))) == 1
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    services = [{"name": "mosquitto", "pid": pid, "address": None}
                for pid in live_processes("mosquitto", str(results))]  # fmt: skip
    end = time.monotonic() + LIMIT_S
    while what_remains(record, services) and time.monotonic() < end:
        time.sleep(0.1)
    assert what_remains(record, services) == []
    assert live_processes("mosquitto", str(results)) == []


def _wait_until_killed(record: dict, service: str = "nats-server", limit_s: float = 60.0) -> None:
    """Until the broker's log says psbench killed it."""
    log = record["_dir"] / f"service-{service}.log"
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if "psbench: killed (SIGKILL)" in log.read_text(errors="replace"):
            return
        time.sleep(0.05)
    pytest.fail("the broker was never killed")


def test_a_restart_needs_a_broker_psbench_starts_and_a_long_enough_run(driver_libs, results):
    proc = run_cli(["pubsub", "--driver", "udp", "--duration", "5", "--restart-broker", "2:1"],
                   results)  # fmt: skip
    assert proc.returncode == 2
    assert "restart_broker: psbench restarts the one broker it starts for the run" in proc.stderr
    proc = run_cli(["pubsub", "--driver", "udp", "--duration", "3", "--restart-broker", "2:1"],
                   results)  # fmt: skip
    assert proc.returncode == 2
    assert "--restart-broker 2:1 needs a --duration longer than AT + DOWN" in proc.stderr
    proc = run_cli(["pubsub", "--driver", "udp", "--restart-broker", "soon"], results)
    assert proc.returncode == 2 and "give AT:DOWN in seconds, e.g. 2:1" in proc.stderr
    assert not list(results.rglob("run.json"))
    # The experiment file's form: the same check, with the file and line.
    bad = results.parent / "restart.yaml"
    bad.write_text("name: r\ndefaults: {kind: pubsub, driver: udp, duration: 3}\n"
                   "runs:\n  - {restart_broker: '2:1'}\n")  # fmt: skip
    proc = run_cli(["run", str(bad), "--dry-run"], results)
    assert proc.returncode == 2
    assert "restart.yaml:4: runs[0].restart_broker: restart_broker 2:1 needs a duration" in (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr
