"""The rabbitmq driver with durability persistent: `./psbench pubsub --restart-broker`
kills psbench's broker for the run (configured by the manifest's durable_config) with
SIGKILL in the middle of the stream and starts it again on its port and data. Known
answers: the run ends ok; every message whose write succeeded arrives (what the broker
had confirmed from its disk, the rest published again by the writer; duplicates
allowed); the reader never errors and connects again once, and so does the writer; the
writes while the broker is down fail (counted, the run goes on); afterwards nothing of
the broker remains, its data/ neither. Also: best effort with persistent is refused,
and the launcher keeps data/ only for durable runs (the manifest's marker line and
broker_launch.py agree)."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, live_processes, only_run, run_cli
from driver_checks import load
from psbench.base import manifests

DRIVER = "rabbitmq"
BROKER_LAUNCH = REPO / "drivers" / "rabbitmq" / "broker_launch.py"
RATE = 200
# The broker serves again 7 to 8 s after the kill here (up to 20 s on a busy machine):
# the window goes on after that, and the reader waits for it without ending on idle.
DURATION_S = 30
IDLE_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def lib(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


def counter(summary: dict, name: str) -> int:
    """A driver counter of the node's one writer (pub) or reader (sub)."""
    end = "writer" if summary["role"] == "pub" else "reader"
    return summary["middleware_counters"][end][name]


def test_broker_killed_and_started_again_mid_run(lib, results):
    args = ["pubsub", "--driver", DRIVER, "--durability", "persistent"]
    args += ["--reliability", "reliable", "--rate", str(RATE), "--duration", str(DURATION_S)]
    args += ["--restart-broker", "2:1", "--idle-timeout", str(IDLE_TIMEOUT_S), "--check-pattern"]
    proc = run_cli(args, results, timeout=DURATION_S + 180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    [service] = record["services"]
    assert service["durable"] and service["restarts"] == 1
    restart = record["restart"]
    assert restart["done"] and restart["error"] is None
    pub, sub = load(record["_dir"], "pub"), load(record["_dir"], "sub")
    assert sub["error"] is None and pub["error"] is None
    sent, counts = pub["counts"]["sent"], sub["counts"]
    assert pub["counts"]["write_errors"] == restart["write_errors"] > 0
    assert counter(pub, "reconnections") == 1 and counter(sub, "reconnections") == 1
    assert counts["sent"] == sent > RATE * 5
    assert counts["samples"] == sent and counts["lost"] == 0, counts
    assert counts["corrupted"] == counts["late"] == 0
    side = restart["receivers"]["sub"]
    assert side["lost"] == 0 and side["received_after_ready"] > 0
    # Confirmed: every message, each published again once at most after the reconnection.
    assert sent <= counter(pub, "confirmed") - pub["counts"]["warmup"] <= sent + RATE
    assert counter(pub, "republished") <= counter(pub, "confirmed")
    # Stopped at the end: nothing of the broker remains, its data neither.
    folder = Path(service["argv"][1]).parent
    assert live_processes("beam.smp", str(folder)) == []
    assert not (folder / "data").exists()


def test_volatile_keeps_no_data_across_a_start():
    """The launcher removes data/ when it starts unless the manifest's durable_config
    (the marker) is appended, and that is exactly broker_launch.py's marker."""
    script = subprocess.run(
        [sys.executable, str(BROKER_LAUNCH), "1000", "5672", "127.0.0.1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    [spec] = manifests.load(DRIVER).services
    marker = spec.durable_config.strip()
    assert f"grep -qxF '{marker}' \"$0\" || rm -rf data" in script
    assert marker not in script.splitlines()


def test_best_effort_with_persistent_is_refused(lib, results):
    proc = run_cli(
        ["pubsub", "--driver", DRIVER, "--durability", "persistent", "--count", "10"], results
    )
    assert proc.returncode == 2, proc.stderr
    assert "rabbitmq: durability persistent needs reliability reliable" in proc.stderr
    assert live_processes("beam.smp", str(results)) == []
