"""The opendds driver (OpenDDS built from source: make driver-opendds) in real runs
through `./psbench ping|pubsub`: RTPS (the default) and the DCPSInfoRepo that psbench
starts for transport inforepo only (and stops, also when psbench is SIGKILLed);
reliability, durability and history by what they change, with known answers (a late
joiner's history, a stalled reader); refusals with their messages. Every test skips with
the reason and the command when OpenDDS is not built."""

import json
import os
import signal
import time
from pathlib import Path

import pytest

from conftest import (
    cli_in_background,
    live_processes,
    only_run,
    run_cli,
    stall_sub_for,
    wait_for_running,
)
from driver_checks import check_counts, check_samples_file, load, require_built
from driver_suite import Expect
from late_join_runs import framed_run
from test_services_outlive import listening, what_remains

DRIVER = "opendds"
# OpenDDS 3.12 takes 3-4 s here to discover a late joiner and complete its reliable
# association (SEDP's and the writer's handshakes, each paced by 1 s heartbeats): with the
# suite's 3 s pause the history reached the late joiner after the burst, or never framed.
SUITE = Expect(late_join=("tl-keep5", "tl-keep1", "volatile"), late_join_pause_s=6)
REPO_SERVICE = "DCPSInfoRepo"


@pytest.fixture(scope="module", autouse=True)
def opendds_built():
    require_built(DRIVER)


def repos_of(results: Path) -> list[int]:
    """Live DCPSInfoRepo processes started for runs under results (their IOR file is there)."""
    return live_processes(REPO_SERVICE, str(results))


def measured(results: Path, kind: str, *args: str, processes: int = 2):
    """One run through the CLI; the run record and the summaries by role. A run on
    transport inforepo went through a DCPSInfoRepo psbench started and stopped; others
    had none."""
    proc = run_cli([kind, "--driver", DRIVER, *args], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    assert len(record["processes"]) == processes
    assert record["driver"]["version"].startswith("3.12 (libOpenDDS_Dcps.so.3.12.0, TAO 2.2.2)")
    transport = next((b for a, b in zip(args, args[1:]) if a == "--transport"), None)
    if transport == "inforepo":
        [service] = record["services"]
        assert service["name"] == REPO_SERVICE and service["started_by_psbench"]
        assert service["version"].startswith("This is OpenDDS version 3.12,"), service
        for process in record["processes"]:
            assert f"broker={service['address']}" in process["argv"]
        assert repos_of(results) == []
        assert not listening(service["address"]), "the DCPSInfoRepo's port is still open"
    else:
        assert record["services"] == []
    return record


def summaries(record: dict, *roles: str) -> dict:
    return {role: load(record["_dir"], role) for role in roles}


PING_CASES = {
    "rtps-wait-64B": ([], 64, 500),
    "rtps-poll-16KiB-reliable": (["--notify", "poll", "--reliability", "reliable"], 16384, 300),
    "rtps-listener-1MiB-reliable": (
        ["--notify", "listener", "--reliability", "reliable"],
        1 << 20,
        30,
    ),
    "rtps-complex": (["--option", "type=complex", "--option", "elements=8"], 32, 300),
    "rtps-intra": (["--placement", "intra"], 256, 300),
    "inforepo-wait-64B": (["--transport", "inforepo"], 64, 500),
    "inforepo-listener-64KiB": (
        ["--transport", "inforepo", "--notify", "listener", "--reliability", "reliable"],
        65536,
        200,
    ),
}


@pytest.mark.parametrize("case", PING_CASES, ids=list(PING_CASES))
def test_ping(results, case):
    args, size, count = PING_CASES[case]
    record = measured(
        results,
        "ping",
        *args,
        "--size",
        str(size),
        "--count",
        str(count),
        "--warmup",
        "10",
        "--check-pattern",
        processes=1 if "intra" in case else 2,
    )
    s = summaries(record, "ping", "pong")
    check_counts(s["ping"], count)
    check_samples_file(record["_dir"], s["ping"], "rtt")
    assert s["pong"]["counts"]["received"] >= count


def one_to_three_keep_all(results, transport: str, reliability: str, count: int) -> dict:
    """A pub/sub of count 1 KiB samples at count/s to three subscribers, keep_all, the
    payload checked; its record."""
    argv = ["--transport", transport, "--subscribers", "3", "--reliability", reliability]
    argv += ["--history", "keep_all", "--size", "1024", "--count", str(count)]
    argv += ["--rate", str(count), "--check-pattern"]
    return measured(results, "pubsub", *argv, processes=4)


@pytest.mark.parametrize("transport", ["rtps", "inforepo"])
def test_pubsub_one_to_three(results, transport):
    # Reliable keep_all: every one of the three subscribers gets every sample.
    record = one_to_three_keep_all(results, transport, "reliable", 2000)
    subs = [p for p in os.listdir(record["_dir"]) if p.startswith("sub") and p.endswith(".json")]
    assert len(subs) == 3, subs
    for name in subs:
        sub = json.loads((record["_dir"] / name).read_text())
        check_counts(sub, 2000)


@pytest.mark.parametrize("transport", ["rtps", "inforepo"])
def test_best_effort_pubsub_one_to_three_accounts_for_every_sample(results, transport):
    # Best effort may drop on a busy machine: each subscriber's samples and losses add
    # up to what was written, intact (no sample twice, none corrupted).
    record = one_to_three_keep_all(results, transport, "best_effort", 1000)
    for name in ("sub-1", "sub-2", "sub-3"):
        counts = load(record["_dir"], name)["counts"]
        assert counts["samples"] + counts["lost"] + counts["late"] == 1000, counts
        assert counts["samples"] > 0, counts
        assert counts["corrupted"] == counts["duplicated"] == 0, counts


def test_inforepo_pubsub_reliable_back_to_back(results):
    record = measured(
        results,
        "pubsub",
        "--transport",
        "inforepo",
        "--reliability",
        "reliable",
        "--history",
        "keep_all",
        "--size",
        "4096",
        "--count",
        "3000",
        "--rate",
        "0",
    )
    check_counts(summaries(record, "sub")["sub"], 3000)


# A late joiner's history: the shared suite's cases (tests/test_late_join.py) with a 6 s
# pause instead of 3, as SUITE says. Best effort too, which only this driver offers.
def test_a_best_effort_late_joiner_gets_the_history_too(results):
    # OpenDDS sends the history when the late joiner associates, whatever the reliability
    # (Cyclone and Fast DDS do not, and their drivers refuse this combination); the
    # suite's run is reliable, the best_effort given after it is the one taken.
    qos = ["--reliability", "best_effort", "--durability", "transient_local",
           "--history", "keep_last:5"]  # fmt: skip
    _, record = framed_run(DRIVER, qos, results)
    late = json.loads((record["_dir"] / "late-sub.json").read_text())["late_join"]
    assert (late["history"], late["history_first_seq"], late["history_last_seq"]) == (5, 995, 999)
    assert late["first_live_seq"] is not None and late["first_live_seq"] >= 1000


STALL = ["--size", "1024", "--rate", "2000", "--count", "8000", "--warmup", "500"]


def stalled_run(results: Path, *qos: str) -> dict:
    with cli_in_background(["pubsub", "--driver", DRIVER, *qos, *STALL], results) as proc:
        stall_sub_for(results, proc, 1.5, settle_s=1.5)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    return load(only_run(results)["_dir"], "sub")


def test_a_stalled_reliable_keep_all_reader_loses_nothing(results):
    # The writer keeps every sample until the reader, stopped for 1.5 s (3000 samples),
    # has acknowledged it: all 8000 arrive, in order, once.
    sub = stalled_run(results, "--reliability", "reliable", "--history", "keep_all")
    check_counts(sub, 8000)


def test_a_stalled_best_effort_keep_last_reader_loses_samples(results):
    # Best effort keep_last 1: what the stopped reader's socket could not hold is gone,
    # counted lost; nothing is doubled or damaged.
    sub = stalled_run(results, "--reliability", "best_effort", "--history", "keep_last:1")
    counts = sub["counts"]
    assert counts["sent"] == 8000
    assert counts["lost"] > 0, counts
    assert counts["samples"] + counts["lost"] + counts["late"] == 8000, counts
    assert counts["corrupted"] == counts["duplicated"] == 0, counts


def test_vendor_ini_runs_as_transport_config(results, tmp_path):
    # RTPS configured by the user's .ini alone: static discovery settings and an rtps_udp
    # transport bound to 127.0.0.1.
    ini = tmp_path / "opendds.ini"
    ini.write_text(
        "[common]\nDCPSGlobalTransportConfig=$file\nDCPSDefaultDiscovery=DEFAULT_RTPS\n"
        "DCPSBit=0\n\n[transport/loopback]\ntransport_type=rtps_udp\n"
        "local_address=127.0.0.1:0\nuse_multicast=0\n"
    )
    record = measured(
        results,
        "ping",
        "--transport",
        "config",
        "--option",
        f"opendds_config={ini}",
        "--count",
        "200",
        "--warmup",
        "10",
    )
    ping = summaries(record, "ping")["ping"]
    assert ping["config"]["transport"] == "config"
    check_counts(ping, 200)


def test_a_failed_inforepo_run_leaves_no_inforepo_behind(results):
    # A run that fails after psbench started the DCPSInfoRepo (the nodes reach their
    # --timeout mid-run): the run says so, and the repository is gone with its port.
    proc = run_cli(
        ["ping", "--driver", DRIVER, "--transport", "inforepo", "--count", "2000000",
         "--timeout", "4", "--quiet"],
        results,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stdout + proc.stderr
    record = only_run(results)
    assert record["status"] == "timeout", record.get("message")
    [service] = record["services"]
    assert service["name"] == REPO_SERVICE and service["started_by_psbench"]
    assert repos_of(results) == []
    assert not listening(service["address"]), "the DCPSInfoRepo's port is still open"


def test_sigkill_of_psbench_leaves_no_inforepo_behind(results):
    with cli_in_background(
        [
            "ping",
            "--driver",
            DRIVER,
            "--transport",
            "inforepo",
            "--count",
            "2000000",
            "--timeout",
            "120",
            "--quiet",
        ],
        results,
    ) as proc:
        record = wait_for_running(results, proc)
        [service] = record["services"]
        assert service["name"] == REPO_SERVICE and service["started_by_psbench"]
        assert listening(service["address"])
        time.sleep(0.5)  # into the measurement
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    end = time.monotonic() + 5
    while what_remains(record, [service]) and time.monotonic() < end:
        time.sleep(0.1)
    assert what_remains(record, [service]) == []
    assert repos_of(results) == []


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--transport", "udp"],
            "opendds: transport 'udp' is not supported; this driver supports rtps|inforepo|config",
        ),
        (
            ["--option", "broker=127.0.0.1:1"],
            "opendds: option broker applies to transport inforepo only",
        ),
        (
            ["--transport", "inforepo", "--option", "broker=nowhere"],
            "opendds: option broker='nowhere'",
        ),
        (["--transport", "config"], "opendds: option opendds_config=PATH is missing"),
        (["--option", "opendds_config=x.ini"], "opendds: option opendds_config is a vendor"),
    ],
)
def test_refused_settings_say_why(results, args, message):
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr, proc.stderr
    assert repos_of(results) == []
