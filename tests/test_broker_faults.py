"""A broker killed in the middle of a sweep: the run it served is failed with the
broker's log, not hung; the next run gets a fresh broker; nothing is left running."""

import json
import os
import signal
import time

import pytest

from conftest import cli_in_background, live_processes
from experiment_files import index_lines, write

BROKER_OF = {"mqtt": "mosquitto", "nats": "nats-server", "redis": "redis-server"}

SWEEP = """
    name: broker-fault
    defaults: {{kind: ping, driver: {driver}, size: 64, timeout: 60}}
    runs:
      - {{duration: 8}}
      - {{count: 300}}
"""


def processes_mentioning(text: str, program: str) -> list[int]:
    """Live processes of program whose command line contains text."""
    return live_processes(program, text)


def wait_for(condition, seconds: float, what: str):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"{what} within {seconds} s")


@pytest.mark.parametrize("driver", sorted(BROKER_OF))
def test_a_killed_broker_fails_its_run_and_the_sweep_goes_on(
    driver, driver_libs, results, tmp_path
):
    assert driver in driver_libs, f"the {driver} driver is not built"
    broker = BROKER_OF[driver]
    store = tmp_path / "sweep"
    experiment = write(tmp_path, SWEEP.format(driver=driver))
    with cli_in_background(["run", str(experiment), "-o", str(store)], results) as cli:
        [pid] = wait_for(
            lambda: processes_mentioning(str(store), broker), 60, f"{broker} did not start"
        )
        # Once the first run measures, the broker goes away under it.
        wait_for(
            lambda: list(store.glob("runs/0001-*/*/pong.stderr")), 60, "the first run did not start"
        )
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)
        out, err = cli.communicate(timeout=120)
    assert cli.returncode == 1, out + err
    first, second = index_lines(store)
    assert first["status"] == "failed", first
    assert f"{broker} (pid {pid}) ended during the run" in first["message"]
    assert "its log:" in first["message"]
    assert second["status"] == "ok", second
    record = json.loads((store / second["run_dir"] / "run.json").read_text())
    [service] = record["services"]
    assert service["name"] == broker and service["pid"] != pid  # a fresh broker
    assert processes_mentioning(str(store), broker) == []
