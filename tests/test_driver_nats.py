"""The nats driver in real two-process runs through `./psbench ping|pubsub`, with the
nats-server psbench starts for them (or one this module starts, given as option broker):
every notify mode, small and large messages, both send modes, intra-process placement,
counts and integrity checked; refusals with their messages; a server with a smaller
max_payload, no server at all, and a server killed in the middle of a run."""

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import cli_in_background, live_processes, only_run, run_cli
from driver_checks import load
from psbench.results.samples import read_samples
from psbench.run.service_definitions import free_port

DRIVER = "nats"
MIB = 1 << 20


@pytest.fixture(scope="module")
def nats(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


def nats_server_pids(marker: str) -> list[int]:
    """Live nats-server processes whose command line holds marker (a results folder):
    other engineers' servers on this machine are not ours."""
    return live_processes("nats-server", marker)


@contextmanager
def own_server(folder: Path, max_payload: int):
    """A nats-server of our own (not psbench's) on 127.0.0.1; yields its HOST:PORT."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = folder / "nats-server.conf"
    config.write_text(f"listen: 127.0.0.1:{port}\nmax_payload: {max_payload}\n")
    exe = shutil.which("nats-server") or shutil.which("nats-server", path="/usr/sbin:/sbin")
    assert exe, "nats-server is not installed (Debian package nats-server)"
    proc = subprocess.Popen(
        [exe, "-c", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        end = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < end, "nats-server did not start"
                time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measured(results: Path, kind: str, *args: str, own_broker: str | None = None):
    """One run through the CLI; returns the run record and the summaries by role."""
    extra = ["--option", f"broker={own_broker}"] if own_broker else []
    proc = run_cli([kind, "--driver", DRIVER, *args, *extra], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    intra = "intra" in args
    assert len(record["processes"]) == (1 if intra else 2)
    assert record["driver"]["name"] == DRIVER
    assert record["driver"]["version"].startswith("cnats 3.")
    if own_broker:
        assert record["services"] == [], "psbench started a server although one was given"
        address = own_broker
    else:
        [service] = record["services"]
        assert service["name"] == "nats-server" and service["started_by_psbench"]
        address = service["address"]
        assert address.startswith("127.0.0.1:")
    for process in record["processes"]:
        assert f"broker={address}" in process["argv"]
    # psbench stopped the server it started.
    assert nats_server_pids(str(results)) == []
    run_dir = record["_dir"]
    roles = ("ping", "pong") if kind == "ping" else ("pub", "sub")
    return record, {role: load(run_dir, role) for role in roles}


def check_all_arrived(run_dir: Path, summary: dict, sent: int, kind: str):
    counts = summary["counts"]
    assert counts["sent"] == sent
    assert counts["samples"] == sent, counts
    assert counts["lost"] == counts["late"] == counts["corrupted"] == counts["duplicated"] == 0
    assert summary["error"] is None
    samples = read_samples(run_dir / summary["samples_file"])
    assert samples.kind == kind and len(samples) == sent
    assert (samples.latency_ns > 0).all()


# Each notify mode at 32 B, 1 KiB and up to 1 MiB on the default transport is the
# conformance suite's (DeliversInEveryNotifyMode, DeliversSamplesIntactAndInOrder; run
# for this driver with its service by tests/test_conformance_services.py); these cases
# are what is this driver's own: its options, larger messages, other transports.
PING_CASES = {
    "wait-4MiB": (["--notify", "wait", "--check-pattern"], 4 * MIB, 20),
    "poll-4MiB": (["--notify", "poll", "--check-pattern"], 4 * MIB, 20),
    "wait-16KiB-send_asap-false": (["--option", "send_asap=false", "--check-pattern"], 16384, 200),
    "intra-listener-16KiB": (
        ["--placement", "intra", "--notify", "listener", "--check-pattern"],
        16384,
        300,
    ),
    "intra-poll-64B": (["--placement", "intra", "--notify", "poll"], 64, 300),
}


@pytest.mark.parametrize("case", PING_CASES, ids=list(PING_CASES))
def test_ping(nats, results, case):
    args, size, count = PING_CASES[case]
    record, s = measured(
        results,
        "ping",
        *args,
        "--transport",
        "tcp",
        "--size",
        str(size),
        "--count",
        str(count),
        "--warmup",
        "10",
    )
    ping = s["ping"]
    assert ping["config"]["size"] == size and ping["config"]["transport"] == "tcp"
    assert ping["ended_by"] == "count"
    check_all_arrived(record["_dir"], ping, count, "rtt")
    assert s["pong"]["counts"]["received"] >= count


@pytest.mark.parametrize("notify", ["wait", "poll", "listener"])
def test_pubsub_without_warmup_loses_nothing(nats, results, notify):
    # No warm-up and matched counts of -1: the node cannot wait for a match, so this
    # passes only because the subscription is in force at the server before the sub
    # reports ready.
    record, s = measured(
        results,
        "pubsub",
        "--notify",
        notify,
        "--size",
        "64",
        "--count",
        "2000",
        "--rate",
        "2000",
        "--warmup",
        "0",
        "--check-pattern",
    )
    sub = s["sub"]
    assert sub["counts"]["warmup"] == 0
    check_all_arrived(record["_dir"], sub, 2000, "one_way")
    assert sub["ended_by"] in ("count", "end_marker")


def test_pubsub_large_messages(nats, results):
    record, s = measured(
        results,
        "pubsub",
        "--notify",
        "wait",
        "--size",
        str(4 * MIB),
        "--count",
        "40",
        "--rate",
        "20",
        "--check-pattern",
    )
    check_all_arrived(record["_dir"], s["sub"], 40, "one_way")


def test_own_broker_is_used_and_no_server_started(nats, results, tmp_path):
    with own_server(tmp_path / "own", 8 * MIB) as address:
        record, s = measured(
            results, "ping", "--size", "256", "--count", "200", "--warmup", "10", own_broker=address
        )
    check_all_arrived(record["_dir"], s["ping"], 200, "rtt")
    assert s["ping"]["config"]["options"]["broker"] == address


def test_message_over_the_servers_max_payload_is_refused(nats, results, tmp_path):
    with own_server(tmp_path / "small", MIB) as address:
        proc = run_cli(
            [
                "ping",
                "--driver",
                DRIVER,
                "--size",
                str(2 * MIB),
                "--count",
                "5",
                "--option",
                f"broker={address}",
            ],
            results,
        )
    assert proc.returncode == 1, proc.stderr
    assert "messages of 2097152 bytes do not fit" in proc.stderr
    assert f"nats-server at {address} accepts at most 1048576 bytes" in proc.stderr


def test_no_server_at_the_given_address(nats, results):
    port = free_port()
    proc = run_cli(
        [
            "ping",
            "--driver",
            DRIVER,
            "--count",
            "5",
            "--match-timeout",
            "5",
            "--option",
            f"broker=127.0.0.1:{port}",
        ],
        results,
    )
    assert proc.returncode == 1, proc.stderr
    assert f"cannot connect to nats-server at 127.0.0.1:{port}" in proc.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--reliability", "reliable"],
            "nats: reliability 'reliable' is not supported; this driver supports best_effort",
        ),
        (
            ["--durability", "transient_local"],
            "nats: durability 'transient_local' is not supported; this driver supports volatile",
        ),
        (["--history", "keep_last:1"], "nats: history 'keep_last' is not supported"),
        (["--history", "keep_all"], "nats: history 'keep_all' is not supported"),
        (
            ["--transport", "udp"],
            "nats: transport 'udp' is not supported; this driver supports tcp",
        ),
        (["--loan"], "nats: --loan is not supported"),
        (["--option", "send_asap=maybe"], "nats: option send_asap='maybe': use true or false"),
        (["--option", "broker=nowhere"], "nats: option broker='nowhere' is not HOST:PORT"),
        (
            ["--option", "colour=red"],
            "nats: option 'colour' is not known; this driver takes broker|send_asap",
        ),
    ],
)
def test_refused_settings_say_why(nats, results, args, message):
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert nats_server_pids(str(results)) == []


# The listener case takes about 20 s to end here, the others 4 s: make test-long runs it.
@pytest.mark.parametrize(
    "notify", ["wait", "poll", pytest.param("listener", marks=pytest.mark.long)]
)
def test_server_killed_mid_run_fails_the_run(nats, results, notify):
    with cli_in_background(
        [
            "ping",
            "--driver",
            DRIVER,
            "--notify",
            notify,
            "--duration",
            "60",
            "--warmup",
            "10",
            "--rate",
            "500",
        ],
        results,
    ) as proc:
        end = time.monotonic() + 30
        while not (pids := nats_server_pids(str(results))) or not list(
            results.rglob("pong.stderr")
        ):
            assert time.monotonic() < end and proc.poll() is None, "the run did not start"
            time.sleep(0.05)
        time.sleep(1.0)  # measuring by now
        [pid] = pids
        os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    record = only_run(results)
    assert record["status"] != "ok"
    run_dir = record["_dir"]
    stderr = "".join((run_dir / f"{role}.stderr").read_text() for role in ("ping", "pong"))
    # Each node said what happened: the connection closed (a write or take failed, or
    # the listener's connection reported it).
    assert "is closed" in stderr or "closed during the run" in stderr, stderr
    assert "ping" in record["exit_codes"] and record["exit_codes"]["ping"] != 0
    assert nats_server_pids(str(results)) == []
