"""The opensplice5 driver (OpenSplice Community Edition 5.5.1, built from source by `make
driver-opensplice5`): OpenSplice's federated deployment, every process of a run joining
the shared memory of the per-host daemon spliced that psbench starts for the run. A ping
and a 1->3 pubsub, a late joiner's known answers, and spliced never outliving psbench:
stopped, killed with psbench (SIGKILL), or killed itself, no process, key file
(/tmp/spddskey_*) or System V segment of its domain remains. Every test skips when the
driver is not built."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from conftest import cli_in_background, wait_for_running
from driver_checks import check_counts, fan_out_case, load, skip_unless_built
from driver_suite import Expect, measuring, ok_run

DRIVER = "opensplice5"
# make test's late joiners (tests/test_late_join.py, from what --describe offers)
SUITE = Expect(late_join=("tl-keep5", "tl-keep-all", "volatile"))

built = skip_unless_built(DRIVER)
run_ok = ok_run(DRIVER, "5.5.1OSS")


def spliced_of(record: dict) -> dict:
    (service,) = [s for s in record["services"] if s["name"] == "spliced"]
    return service


def key_files(port: int) -> list[Path]:
    name = f"psbench_spliced_{port}".encode()
    found = []
    for path in Path("/tmp").glob("spddskey_*"):
        try:
            if path.read_bytes().split(b"\n", 1)[0].rstrip(b"\0") == name:
                found.append(path)
        except OSError:
            continue
    return found


def segments_of(pid: int) -> list[int]:
    """System V shared memory segments created by pid."""
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return [int(f[1]) for f in map(str.split, lines) if int(f[4]) == pid]


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def what_remains(service: dict, spliced_pid: int) -> list[str]:
    port = int(service["address"].rsplit(":", 1)[1])
    left = [f"service {service['pid']}"] if alive(service["pid"]) else []
    left += [f"spliced {spliced_pid}"] if alive(spliced_pid) else []
    left += [str(p) for p in key_files(port)]
    left += [f"segment {s}" for s in segments_of(spliced_pid)]
    return left


def spliced_pid(record: dict) -> int:
    """spliced's pid, from the service's log (spliced-service names it first)."""
    log = (record["_dir"] / "service-spliced.log").read_text()
    return int(log.split("spliced-service: spliced ", 1)[1].split(",", 1)[0])


def wait_gone(service: dict, pid: int, limit: float = 8.0) -> list[str]:
    end = time.monotonic() + limit
    while (left := what_remains(service, pid)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


def test_ping_over_spliceds_shared_memory(results):
    record = run_ok(results, "ping", "--count", "500", "--reliability", "reliable")
    ping = load(record["_dir"], "ping")
    assert ping["config"]["transport"] == "shm"
    check_counts(ping, 500)
    service = spliced_of(record)
    assert service["started_by_psbench"]
    assert wait_gone(service, spliced_pid(record)) == []  # stopped with the run


def test_pubsub_one_to_three_reliable_loses_nothing(results):
    fan_out_case(run_ok, results, size=4096)


def test_sigkill_of_psbench_leaves_no_spliced_key_file_or_segment(results):
    with cli_in_background(
        ["ping", "--driver", DRIVER, "--count", "2000000", "--timeout", "120", "--quiet"], results
    ) as proc:
        record = wait_for_running(results, proc)
        service = spliced_of(record)
        pid = spliced_pid(record)
        port = int(service["address"].rsplit(":", 1)[1])
        assert alive(pid) and key_files(port) and segments_of(pid)  # the daemon's, running
        time.sleep(0.5)  # into the measurement
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    assert wait_gone(service, pid) == []


def test_spliced_killed_itself_leaves_no_key_file_or_segment(results):
    # spliced SIGKILLed (a crash): it cannot clean up; spliced-service's reaper does.
    with cli_in_background(
        ["ping", "--driver", DRIVER, "--count", "2000000", "--timeout", "60"], results
    ) as proc:
        measuring(proc)  # the nodes joined spliced's domain and measure
        record = wait_for_running(results, proc)
        service = spliced_of(record)
        pid = spliced_pid(record)
        os.killpg(service["pid"], signal.SIGKILL)  # the service's whole group, spliced in it
        # The nodes would wait out the run's timeout: the run is stopped as a user stops it.
        end = time.monotonic() + 10
        while alive(pid) and time.monotonic() < end:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert wait_gone(service, pid) == []


def test_shm_needs_spliceds_address(node, driver_libs, tmp_path):
    argv = [str(node), "--driver", str(driver_libs[DRIVER]), "--role", "ping", "--run-id", "x1",
            "--out", str(tmp_path), "--check", "--json"]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    refusals = {r["setting"]: r["message"] for r in json.loads(proc.stdout)["refusals"]}
    assert "spliced daemon psbench starts" in refusals["option:broker"], refusals
