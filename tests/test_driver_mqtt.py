"""The mqtt driver in real runs through `./psbench ping|pubsub`, with the mosquitto that
psbench starts (or one the test starts itself): every notify mode, both QoS, retained
messages, small and large messages, inter- and intra-process; counts, integrity, the
broker's address reaching the nodes, clean disconnects in the broker's log, its own
refusals, and no broker left running. What every broker driver gets (a broker given by
option, none at the given address, the broker killed mid-run, durability persistent
across a broker restart, the refusals of what --describe leaves out) is the driver
suite's (tests/driver_suite.py), with what mqtt says and counts declared in SUITE."""

import re
from pathlib import Path

import pytest

from conftest import live_processes, run_cli
from driver_checks import check_counts, driver_fixture, ping_cases, pubsub_case
from driver_suite import Expect, Restart, check_broker_used, measured

DRIVER = "mqtt"
KIB, MIB = 1 << 10, 1 << 20


mqtt = driver_fixture(DRIVER)
SUITE = Expect(
    late_join=("tl",),
    late_join_kept=1,  # the retained message
    no_broker=("mqtt: cannot connect to the broker at {address}: Connection refused",),
    refusals={
        "history keep_last": "(history keep_last:1 cannot be honoured: the broker queues "
        "every message for each subscriber",
        "history keep_all": "(history keep_all cannot be honoured",
    },
    tls_faults={
        "wrong-ca": "certificate verify failed",
        # Or, when the broker's alert is not read in time (TLS 1.3), the driver says so.
        "expired": ("certificate expired", "refuses this client's certificate"),
    },
    # mosquitto killed 1 s into the window and started again 1 s later, on its port,
    # configuration and database; under TLS too (libmosquitto alone would not notice a
    # refused connect there, and its own thread ends on the killed broker's TLS EPROTO).
    # Both clients come back to their sessions.
    restart=Restart(
        cases=(("wait", "none"), ("listener", "none"), ("wait", "tls"), ("listener", "tls")),
        duration_s=4,
        at_down="1:1",
        duplicates=True,  # QoS 1: at least once
        counters={("sub", "reader"): {"reconnects": 1, "sessions_lost": 0}},
    ),
)


def mosquitto_processes_mentioning(text: str) -> list[int]:
    """Live mosquitto processes whose command line contains text (a results path)."""
    return live_processes("mosquitto", text)


def check_clients_disconnected_cleanly(log: str, run_id: str, clients: int):
    """Every client of the run connected under its own id and said DISCONNECT."""
    ids = re.findall(rf" as (psb-{run_id}-\d+-\d+) \(", log)
    assert len(ids) == clients and len(set(ids)) == clients, log
    for client in ids:
        assert f"Client {client} disconnected." in log, log
        assert f"Client {client} closed its connection." not in log, log


def measured_mqtt(results: Path, kind: str, *args: str, processes: int = 2):
    """One run through the CLI with the broker psbench starts; returns the run record
    and its summaries."""
    record, s = measured(DRIVER, results, kind, *args)
    assert len(record["processes"]) == processes
    assert all(summary["config"]["transport"] == "tcp" for summary in s.values())
    assert re.fullmatch(r"libmosquitto 2\.\d+\.\d+", record["driver"]["version"])
    check_broker_used(DRIVER, record)
    # It is stopped after the run (the launcher waited for it), with a complete log.
    assert mosquitto_processes_mentioning(str(results)) == []
    [broker] = record["services"]
    check_clients_disconnected_cleanly(Path(broker["log"]).read_text(), record["run_id"], clients=2)
    return record, s


# Every notify mode at both QoS, small and large, closed and open loop, retained.
# Each notify mode at 32 B, 1 KiB and up to 1 MiB on the default transport is the
# conformance suite's (DeliversInEveryNotifyMode, DeliversSamplesIntactAndInOrder; run
# for this driver with its service by tests/test_conformance_services.py); these cases
# are what is this driver's own: its options, larger messages, other transports.
PING_CASES = {
    "wait-best_effort-4MiB": (["--notify", "wait"], 4 * MIB, 20),
    "open-loop-wait-reliable": (
        ["--notify", "wait", "--reliability", "reliable", "--rate", "2000"],
        1024,
        1000,
    ),
    "open-loop-poll-best_effort": (["--notify", "poll", "--rate", "2000"], 256, 1000),
    "open-loop-listener-reliable": (
        ["--notify", "listener", "--reliability", "reliable", "--rate", "2000"],
        256,
        1000,
    ),
    "retained-wait-reliable": (
        ["--durability", "transient_local", "--reliability", "reliable"],
        512,
        300,
    ),
    "retained-listener-best_effort": (
        ["--notify", "listener", "--durability", "transient_local"],
        64,
        300,
    ),
    "no-nodelay-keepalive": (["--option", "tcp_nodelay=false", "--option", "keepalive=5"], 64, 200),
}


test_ping = ping_cases(PING_CASES, measured_mqtt, "--check-pattern", driver=DRIVER)


def test_ping_intra_process(mqtt, results):
    """Both roles in one process: two contexts, two client ids, one broker."""
    record, s = measured_mqtt(
        results, "ping", "--placement", "intra", "--notify", "listener", "--size", "256", "--count",
        "300", "--warmup", "10", "--check-pattern", processes=1,
    )  # fmt: skip
    check_counts(s["ping"], 300)


# pubsub: the node cannot ask MQTT whether the subscriber is there (matched counts are
# -1), so nothing is lost only because create_reader returns after the SUBACK and the
# publisher starts after every node said READY. No warm-up to hide a late start.
PUBSUB_CASES = {
    "wait-best_effort-64B": (["--notify", "wait", "--rate", "1000"], 64, 1000),
    "poll-reliable-64B": (
        ["--notify", "poll", "--reliability", "reliable", "--rate", "2000"],
        64,
        1000,
    ),
    "listener-reliable-16KiB": (
        ["--notify", "listener", "--reliability", "reliable", "--rate", "500"],
        16 * KIB,
        500,
    ),
    "listener-best_effort-1MiB": (["--notify", "listener", "--rate", "50"], MIB, 50),
    "wait-best_effort-4MiB": (["--notify", "wait", "--rate", "20"], 4 * MIB, 20),
    "poll-reliable-4MiB": (
        ["--notify", "poll", "--reliability", "reliable", "--rate", "20"],
        4 * MIB,
        20,
    ),
    "back-to-back-reliable-4KiB": (["--reliability", "reliable", "--rate", "0"], 4 * KIB, 2000),
    "retained-wait-reliable": (
        ["--durability", "transient_local", "--reliability", "reliable", "--rate", "1000"],
        256,
        300,
    ),
}


@pytest.mark.parametrize("case", PUBSUB_CASES, ids=list(PUBSUB_CASES))
def test_pubsub_loses_nothing(mqtt, results, case):
    args, size, count = PUBSUB_CASES[case]
    _, s = pubsub_case(measured_mqtt, results, *args, "--size", str(size), "--warmup", "0",
                       "--check-pattern", count=count)  # fmt: skip
    assert s["pub"]["counts"]["sent"] == count
    # MQTT cannot count subscribers: no discovery time is claimed.
    assert s["pub"]["timing"]["discovery_ns"] is None


@pytest.mark.parametrize(
    "args,message",
    [
        (["--option", "keepalive=2"], "mqtt: option keepalive='2': use 0 (off) or 5 to 65535"),
        (["--option", "tcp_nodelay=yes"], "mqtt: option tcp_nodelay='yes': use true or false"),
        (["--option", "max_inflight=-3"], "mqtt: option max_inflight='-3'"),
    ],
)
def test_refused_settings_say_why(mqtt, results, args, message):
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr, proc.stderr
    assert mosquitto_processes_mentioning(str(results)) == []
