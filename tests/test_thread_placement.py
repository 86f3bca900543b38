"""Thread placement (--pin): the role thread alone is pinned and made SCHED_FIFO under
`role`, once its endpoints are open, so the threads the middleware starts keep the
process's CPUs and SCHED_OTHER; under `process` every thread of the node is confined to
its roles' CPUs; under `none` nothing is pinned. Read from each node's record of its
threads (/proc/self/task when the measurement ended)."""

import json
import os

import pytest

from conftest import only_run, run_cli

pytestmark = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")


def cpu_list(cpus: set[int]) -> str:
    ordered = sorted(cpus)
    if ordered == list(range(ordered[0], ordered[-1] + 1)) and len(ordered) > 1:
        return f"{ordered[0]}-{ordered[-1]}"
    return ",".join(map(str, ordered))


def threads_of(results, name):
    record = only_run(results)
    summary = json.loads((record["_dir"] / f"{name}.json").read_text())
    role = [t for t in summary["threads"] if t["role_thread"]]
    others = [t for t in summary["threads"] if not t["role_thread"]]
    return summary, role, others


def ping_on_cpus_0_and_1(driver_libs, results, driver: str, *args: str) -> None:
    """A 300-round-trip ping with ping's role on CPU 0, pong's on CPU 1 (and args), which
    must succeed; skips an unbuilt driver."""
    if driver not in driver_libs:
        pytest.skip(f"{driver} is not built")
    argv = ["ping", "--driver", driver, "--count", "300", "--cpu", "ping=0", "--cpu", "pong=1"]
    proc = run_cli([*argv, *args, "--quiet"], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("driver", ["cyclonedds", "fastdds", "nats"])
def test_role_pins_the_role_thread_only(driver_libs, results, driver):
    ping_on_cpus_0_and_1(driver_libs, results, driver, "--fifo", "10")
    everywhere = cpu_list(os.sched_getaffinity(0))
    summary, role, others = threads_of(results, "ping")
    assert summary["realtime"]["pin"] == "role"
    assert [(t["cpus"], t["policy"], t["priority"]) for t in role] == [("0", "SCHED_FIFO", 10)]
    assert others, "the middleware started no thread?"
    # Every thread the middleware started runs anywhere, at normal priority.
    assert {(t["cpus"], t["policy"]) for t in others} == {(everywhere, "SCHED_OTHER")}


@pytest.mark.parametrize("driver", ["cyclonedds", "fastdds"])
def test_process_confines_every_thread_to_the_roles_cpus(driver_libs, results, driver):
    ping_on_cpus_0_and_1(driver_libs, results, driver, "--pin", "process")
    for name, cpu in (("ping", "0"), ("pong", "1")):
        summary, role, others = threads_of(results, name)
        assert summary["realtime"]["pin"] == "process"
        assert others and {t["cpus"] for t in role + others} == {cpu}, name


def test_none_pins_nothing(driver_libs, results):
    proc = run_cli(
        ["ping", "--driver", "cyclonedds", "--count", "300", "--pin", "none", "--quiet"], results
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    everywhere = cpu_list(os.sched_getaffinity(0))
    _, role, others = threads_of(results, "ping")
    assert {t["cpus"] for t in role + others} == {everywhere}


@pytest.mark.parametrize(
    "args,words",
    [
        (["--pin", "none", "--cpu", "ping=0"], "--pin none pins nothing"),
        (["--pin", "process"], "--pin process confines the node to its roles' CPUs"),
        (["--pin", "everything"], "invalid choice: 'everything'"),
    ],
)
def test_contradictions_are_refused_before_anything_runs(driver_libs, results, args, words):
    proc = run_cli(["ping", "--driver", "udp", "--count", "10", *args], results)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert not results.exists() or not list(results.rglob("run.json"))
