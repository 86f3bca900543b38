"""Every driver whose runs go through a broker (its manifest: a service with `broker =
true`, architecture broker or router; the suite: tests/driver_suite.py, broker_drivers)
in real runs through `./psbench`: a broker given by option
broker=ADDRESS:PORT is used and psbench starts none; nothing listening at the given
address fails the run, naming the address (and the driver's own words for it); the
broker psbench started, killed in the middle of a run in each notify mode the driver
offers, fails the run instead of hanging, with the driver's words, and leaves nothing
(no process, no port, none of the data its manifest names), and the next run gets a
fresh broker and measures."""

import time
from pathlib import Path

import pytest

from conftest import cli_in_background, only_run, run_cli, run_records
from driver_checks import check_counts, check_samples_file
from driver_suite import (
    RUN_TIMEOUT_S,
    broker_drivers,
    broker_gone,
    broker_transport,
    cases,
    check_broker_used,
    expect,
    kill_broker,
    measured,
    measuring,
    node_stderr,
    said_all,
    words_in,
)
from psbench.run.service_definitions import free_port

BROKERS = broker_drivers()
GONE_WITHIN_S = 10.0  # the keeper's SIGTERM, then its SIGKILL 3 s later, then removal


@pytest.mark.parametrize("driver,_", cases(BROKERS))
def test_a_broker_given_by_option_is_used_and_psbench_starts_none(
    driver, _, shared_brokers, results
):
    address = shared_brokers.address(driver)
    record, s = measured(
        driver, results, "pubsub", *broker_transport(driver), "--option", f"broker={address}",
        "--size", "256", "--count", "300", "--rate", "1000", "--warmup", "0", "--check-pattern",
    )  # fmt: skip
    check_broker_used(driver, record, address)
    assert s["sub"]["config"]["options"]["broker"] == address
    check_counts(s["sub"], 300)
    check_samples_file(record["_dir"], s["sub"], "one_way")
    assert shared_brokers.service(driver).proc.poll() is None  # left running: not psbench's


@pytest.mark.parametrize("driver,_", cases(BROKERS))
def test_no_broker_at_the_given_address_fails_the_run_naming_it(driver, _, results):
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    proc = run_cli(
        ["ping", "--driver", driver, *broker_transport(driver), "--count", "5",
         "--match-timeout", "5", "--option", f"broker={address}"],
        results,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    record = only_run(results)
    assert record["status"] == "failed" and record["services"] == []
    said = proc.stderr + (record["message"] or "")
    assert f"{driver}: " in said and address in said, said
    words = expect(driver).no_broker
    assert not words or words_in(said, words, address=address), (words, said)


def notify_modes(driver: str, caps: dict) -> list[str]:
    return [n for n in ("wait", "poll", "listener") if n in caps["notify"]]


def slow_kill(driver: str, notify: str) -> str | None:
    return expect(driver).slow_kill.get(notify)


def started(results: Path, proc) -> dict:
    """The run's record once psbench has started its broker and the nodes measure."""
    said = measuring(proc)
    [record] = run_records(results)
    assert record["status"] == "running" and record.get("services"), said
    return record


@pytest.mark.parametrize("driver,notify", cases(BROKERS, notify_modes, slow_kill))
def test_the_broker_killed_mid_run_fails_the_run_and_the_next_run_gets_a_fresh_one(
    driver, notify, results
):
    killed = results / "killed"
    with cli_in_background(
        ["ping", "--driver", driver, *broker_transport(driver), "--notify", notify,
         "--duration", "60", "--warmup", "10", "--rate", "500"],
        killed,
    ) as proc:  # fmt: skip
        record = started(killed, proc)
        [service] = record["services"]
        pid = kill_broker(driver, service, killed)
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)  # far less than the 60 s
    assert proc.returncode == 1, out + err
    [record] = run_records(killed)
    assert record["status"] == "failed", record["message"]
    assert record["exit_codes"]["ping"] != 0, record["exit_codes"]
    said, stderr = expect(driver), node_stderr(record)
    assert said_all(stderr, said.broker_gone), stderr
    assert said_all(record["message"], said.broker_gone_message), record["message"]
    end = time.monotonic() + GONE_WITHIN_S
    while broker_gone(service) and time.monotonic() < end:
        time.sleep(0.1)
    assert broker_gone(service) == []
    if notify != "wait":
        return  # the next run's fresh broker: once per driver
    record, s = measured(
        driver, results / "next", "ping", *broker_transport(driver), "--size", "64",
        "--count", "100", "--warmup", "10",
    )  # fmt: skip
    check_broker_used(driver, record)
    assert record["services"][0]["pid"] != pid
    check_counts(s["ping"], 100)
