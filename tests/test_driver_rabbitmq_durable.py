"""The rabbitmq driver with durability persistent: a broker of psbench's, configured for it
(the manifest's durable_config), killed with SIGKILL in the middle of a pubsub run and
started again on its port and data (psbench's ServicePool.restart). Known answers: the
run ends ok; every message whose write succeeded arrives (what the broker had confirmed
from its disk, the rest published again by the writer; duplicates allowed); the reader
never errors and connects again once; the writes while the broker is down fail (counted,
the run goes on); after the broker's end nothing of it remains, its data/ neither. Also:
best effort with persistent is refused, and the launcher keeps data/ only for durable
runs (the manifest's marker line and broker_launch.py agree)."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, cli_in_background, live_processes, only_run, run_cli
from driver_checks import load
from psbench.base import manifests, paths
from psbench.run import drivers
from psbench.run.services import ServicePool

DRIVER = "rabbitmq"
BROKER_LAUNCH = REPO / "drivers" / "rabbitmq" / "broker_launch.py"
RATE = 200
DURATION_S = 30  # the broker takes 6 to 15 s to start again here: writes go on after it
KILL_AFTER_S = 2.0  # into the measurement
DOWN_S = 1.0


@pytest.fixture(scope="module")
def lib(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


def counter(summary: dict, name: str) -> int:
    """A driver counter of the node's one writer (pub) or reader (sub)."""
    end = "writer" if summary["role"] == "pub" else "reader"
    return summary["middleware_counters"][end][name]


def wait_for_measuring(results: Path, proc, limit: float = 60):
    end = time.monotonic() + limit
    while not list(results.rglob("sub.stderr")):
        assert time.monotonic() < end and proc.poll() is None, "the run did not start"
        time.sleep(0.05)


def test_broker_killed_and_started_again_mid_run(lib, results, tmp_path):
    with ServicePool(largest_message=1 << 20) as pool:
        [service] = pool.ensure(
            drivers.describe(paths.node_path(), lib), None, tmp_path, durable=True
        )
        assert service.durable
        args = ["pubsub", "--driver", DRIVER, "--durability", "persistent"]
        args += ["--reliability", "reliable", "--rate", str(RATE), "--duration", str(DURATION_S)]
        # The reader waits out the broker's restart (6 to 20 s here), not ending on idle.
        args += ["--check-pattern", "--idle-timeout", "60", "--option", f"broker={service.address}"]
        with cli_in_background(args, results) as proc:
            wait_for_measuring(results, proc)
            time.sleep(KILL_AFTER_S)
            pool.restart(service, DOWN_S)
            out, err = proc.communicate(timeout=DURATION_S + 120)
        assert proc.returncode == 0, out + err
        assert service.restarts == 1
        # The same data came back: the broker's data/ is there while it runs.
        assert (service.folder / "data").is_dir()
        folder = service.folder
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    pub, sub = load(record["_dir"], "pub"), load(record["_dir"], "sub")
    assert sub["error"] is None and pub["error"] is None
    sent, counts = pub["counts"]["sent"], sub["counts"]
    assert pub["counts"]["write_errors"] > 0  # the broker was down for a while
    assert counter(pub, "reconnections") == 1 and counter(sub, "reconnections") == 1
    assert counts["sent"] == sent > RATE * 5
    assert counts["corrupted"] == counts["late"] == 0
    assert counts["samples"] == sent and counts["lost"] == 0, counts
    # Confirmed: every message, each published again once at most after the reconnection.
    assert sent <= counter(pub, "confirmed") - pub["counts"]["warmup"] <= sent + RATE
    assert counter(pub, "republished") <= counter(pub, "confirmed")
    # Stopped: nothing of the broker remains, its data neither.
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
