"""A service psbench started never outlives it, even when psbench is killed with SIGKILL
mid-run and the service dropped its privileges (mosquitto), which clears the kernel's
parent-death signal: within 5 s no node process, service process, listening port,
/dev/shm segment, temporary file of the run or data its manifest names as leftovers
(a broker's data directory) remains (issue 16). Every driver whose runs need a service
(a broker needed on one transport only: on that transport)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli_in_background, processes_of_run, shm_files_of_run, wait_for_running
from driver_checks import alive, listening
from psbench.base import manifests

# Every driver whose every run needs a service of its manifest (a broker, RouDi), and
# each with a broker for one transport, with that transport.
SERVICE_DRIVERS = tuple(
    n
    for n in manifests.driver_names()
    if any(s.transport is None or s.broker for s in manifests.load(n).services)
)


def transport_of(driver: str) -> list[str]:
    services = manifests.load(driver).services
    if any(s.transport is None for s in services):
        return []
    return ["--transport", next(s.transport for s in services if s.broker)]


LIMIT_S = 5.0


def what_remains(record: dict, services: list[dict]) -> list[str]:
    run_id = record["run_id"]
    left = [f"node {pid}" for pid in processes_of_run(run_id)]
    left += [f"{s['name']} {s['pid']}" for s in services if alive(s["pid"])]
    left += [
        f"{s['name']} listening on {s['address']}"
        for s in services
        if s["address"] and listening(s["address"])
    ]
    for s in services:
        if not s.get("log"):
            continue
        spec = manifests.service(s["name"])
        folder = Path(s["log"]).with_suffix("")  # service-NAME.log -> service-NAME/
        for pattern in spec.leftovers if spec else ():
            if pattern.startswith("{folder}/") and (folder / pattern[9:]).exists():
                left.append(str(folder / pattern[9:]))
    left += shm_files_of_run(run_id)
    left += [str(p) for p in Path("/tmp").glob(f"*psbench*{run_id}*")]
    return left


@pytest.mark.parametrize("driver", SERVICE_DRIVERS)
def test_sigkill_of_psbench_leaves_no_service_behind(driver_libs, results, driver):
    if driver not in driver_libs:
        pytest.skip(f"{driver} is not built")
    with cli_in_background(
        ["ping", "--driver", driver, *transport_of(driver), "--count", "2000000",
         "--timeout", "120", "--quiet"],
        results,
    ) as proc:  # fmt: skip
        record = wait_for_running(results, proc)
        services = [s for s in record.get("services") or [] if s["started_by_psbench"]]
        if driver != "iceoryx":  # a RouDi someone else runs is used and left alone
            assert services, record.get("services")
        assert all(alive(s["pid"]) for s in services)
        time.sleep(0.5)  # into the measurement
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    end = time.monotonic() + LIMIT_S
    while what_remains(record, services) and time.monotonic() < end:
        time.sleep(0.1)
    assert what_remains(record, services) == []


def test_the_keeper_stops_and_removes_what_psbench_had_not_released(tmp_path):
    from psbench.run.keeper import Keeper

    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    released = subprocess.Popen(["sleep", "60"], start_new_session=True)
    watched = subprocess.Popen(["sleep", "60"], start_new_session=True)
    deaf = subprocess.Popen([sys.executable, "-c", stubborn], start_new_session=True)
    run_id = f"KeepTest{os.getpid()}"
    node = subprocess.Popen(
        [sys.executable, "-c", stubborn, "--run-id", run_id], start_new_session=True
    )
    leftover = Path("/dev/shm") / f"psbench-keeper-test-{os.getpid()}"
    run_file = Path("/tmp") / f"psbench_{run_id}_data"
    for path in (leftover, run_file):
        path.write_bytes(b"x")
    keeper = Keeper()
    try:
        time.sleep(0.3)  # the stubborn ones have set their SIGTERM handling
        keeper.watch_service(released.pid)
        keeper.watch_service(watched.pid, [leftover.name])
        keeper.watch_service(deaf.pid)
        keeper.release_service(released.pid)
        keeper.run_started(run_id)
        keeper.run_started("NotThisOne")
        keeper.run_done("NotThisOne")
        keeper._proc.stdin.close()  # what the kernel does when psbench dies
        assert keeper._proc.wait(timeout=15) == 0
        # SIGTERM for the watched one, SIGKILL for the deaf one and the run's node.
        assert watched.wait(timeout=1) == -signal.SIGTERM
        assert deaf.wait(timeout=1) == -signal.SIGKILL
        assert node.wait(timeout=1) == -signal.SIGKILL
        assert released.poll() is None, "a released service was stopped"
        assert not leftover.exists() and not run_file.exists()
    finally:
        for proc in (released, watched, deaf, node):
            proc.kill()
            proc.wait()
        for path in (leftover, run_file):
            path.unlink(missing_ok=True)
