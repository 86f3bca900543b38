"""The nats driver in real two-process runs through `./psbench ping|pubsub`, with the
nats-server psbench starts for them: every notify mode, small and large messages, both
send modes, intra-process placement, counts and integrity checked; its own refusals; a
server of this module's with a smaller max_payload. What every broker driver gets (a
broker given by option, none at the given address, the broker killed mid-run, the
refusals of what --describe leaves out) is the driver suite's (tests/driver_suite.py),
with the words declared in SUITE."""

import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import live_processes, run_cli
from driver_checks import driver_fixture, ping_cases, pubsub_case
from driver_suite import Expect, check_broker_used, measured
from psbench.run.service_definitions import free_port

DRIVER = "nats"
MIB = 1 << 20


nats = driver_fixture(DRIVER)
SUITE = Expect(
    no_broker=("cannot connect to nats-server at {address}",),
    # The connection closed: a write or take failed, or the listener's connection said so.
    broker_gone=(("is closed", "closed during the run"),),
    tls_faults={
        "wrong-ca": "unable to get local issuer certificate",
        "expired": "refuses a client certificate",
    },
    slow_kill={"listener": "cnats's listener takes about 20 s to see the server gone"},
)


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


def measured_nats(results: Path, kind: str, *args: str):
    """One run through the CLI with the nats-server psbench starts and stops."""
    record, s = measured(DRIVER, results, kind, *args)
    assert len(record["processes"]) == (1 if "intra" in args else 2)
    assert record["driver"]["version"].startswith("cnats 3.")
    check_broker_used(DRIVER, record)
    assert nats_server_pids(str(results)) == []
    return record, s


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


test_ping = ping_cases(PING_CASES, measured_nats, "--transport", "tcp", driver=DRIVER)


@pytest.mark.parametrize("notify", ["wait", "poll", "listener"])
def test_pubsub_without_warmup_loses_nothing(nats, results, notify):
    # No warm-up and matched counts of -1: the node cannot wait for a match, so this
    # passes only because the subscription is in force at the server before the sub
    # reports ready.
    _, s = pubsub_case(measured_nats, results, "--notify", notify, "--size", "64",
                       "--rate", "2000", "--warmup", "0", "--check-pattern", count=2000)  # fmt: skip
    assert s["sub"]["counts"]["warmup"] == 0


def test_pubsub_large_messages(nats, results):
    pubsub_case(measured_nats, results, "--notify", "wait", "--size", str(4 * MIB),
                "--rate", "20", "--check-pattern", count=40)  # fmt: skip


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


def test_its_own_option_values_are_refused(nats, results):
    proc = run_cli(["ping", "--driver", DRIVER, "--option", "send_asap=maybe"], results)
    assert proc.returncode == 2, proc.stderr
    assert "nats: option send_asap='maybe': use true or false" in proc.stderr
    assert nats_server_pids(str(results)) == []
