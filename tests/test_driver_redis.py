"""The redis driver in real runs through `./psbench ping|pubsub`, with the redis-server
psbench starts for them: every notify mode, small and large messages, intra-process
placement, back-to-back pubsub with nothing lost from the first message on, counts and
integrity checked; the TCP connections the nodes really open; a node without a broker.
What every broker driver gets (a broker given by option, none at the given address, the
broker killed mid-run, durability persistent across a broker restart, the refusals of
what --describe leaves out) is the driver suite's (tests/driver_suite.py), with what
redis says declared in SUITE."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import live_processes, only_run
from driver_checks import driver_fixture, nodes_seen_running, ping_cases, pubsub_case
from driver_suite import Expect, Restart, check_broker_used, measured
from proc_sockets import tcp_sockets_of

DRIVER = "redis"
MIB = 1 << 20


redis = driver_fixture(DRIVER)
SUITE = Expect(
    no_broker=("cannot connect the probe to redis-server at {address}",),
    broker_gone=("closed the subscriber connection of psbench:",),
    refusals={"security": "hiredis 0.14.1"},  # has no TLS
    # Streams (README.md, "A broker restart"): the writer's ring holds what is written
    # while the server is down and refuses the rest (write errors, counted); every entry
    # written arrives, those resent after the reconnection possibly twice; writer and
    # reader each reconnect once.
    restart=Restart(
        write_errors="some",
        all_written=False,
        duplicates=True,
        counters={("pub", "writer"): {"reconnects": 1}, ("sub", "reader"): {"reconnects": 1}},
    ),
)


def redis_servers_at(address: str) -> list[int]:
    """Live redis-server processes serving address ("127.0.0.1:PORT"). redis-server
    rewrites its command line to "redis-server 127.0.0.1:PORT" (set-proc-title), so its
    configuration's path is no longer there to look for."""
    return live_processes("redis-server", address)


def assert_servers_stopped(results: Path) -> None:
    """Every redis-server psbench started for the runs under results is gone."""
    for run_json in results.rglob("run.json"):
        for service in json.loads(run_json.read_text()).get("services") or []:
            if service["started_by_psbench"]:
                assert redis_servers_at(service["address"]) == [], service


def measured_redis(results: Path, kind: str, *args: str):
    """One run through the CLI with the redis-server psbench starts and stops."""
    record, summaries = measured(DRIVER, results, kind, *args)
    assert len(record["processes"]) == (1 if "intra" in args else 2)
    assert all(summary["config"]["transport"] == "tcp" for summary in summaries.values())
    # --describe connects nowhere: the client's (header) version only.
    assert record["driver"]["version"] == "0.14.1 (hiredis header)"
    check_broker_used(DRIVER, record)
    assert_servers_stopped(results)
    for summary in summaries.values():
        # The node, having connected, adds the server's version (INFO server).
        assert summary["driver"]["version"].startswith("0.14.1 (hiredis header); server redis ")
    [service] = record["services"]
    server = next(iter(summaries.values()))["driver"]["version"].rsplit(" ", 1)[1]
    assert f"v={server} " in service["version"]  # what `redis-server --version` said
    return record, summaries


# Every notify mode, small and large (up to the 4 MiB largest), both placements.
# Each notify mode at 32 B, 1 KiB and up to 1 MiB on the default transport is the
# conformance suite's (DeliversInEveryNotifyMode, DeliversSamplesIntactAndInOrder; run
# for this driver with its service by tests/test_conformance_services.py); these cases
# are what is this driver's own: its options, larger messages, other transports.
PING_CASES = {
    "wait-4MiB": (["--notify", "wait"], 4 * MIB, 20),
    "listener-4MiB": (["--notify", "listener"], 4 * MIB, 20),
    "intra-wait-16KiB": (["--placement", "intra", "--notify", "wait"], 16384, 300),
    "intra-listener-64B": (["--placement", "intra", "--notify", "listener"], 64, 300),
}


test_ping = ping_cases(PING_CASES, measured_redis, "--check-pattern", driver=DRIVER)


@pytest.mark.parametrize(
    "notify,size,count", [("wait", 64, 3000), ("poll", 4096, 2000), ("listener", 4 * MIB, 40)]
)
def test_back_to_back_pubsub_loses_nothing_from_the_first_message(
    redis, results, notify, size, count
):
    # No warm-up: the subscriber's SUBSCRIBE is confirmed before its node reports ready,
    # and the publisher waits until PUBSUB NUMSUB counts it, so message 0 arrives too.
    _, s = pubsub_case(measured_redis, results, "--notify", notify, "--size", str(size),
                       "--warmup", "0", "--rate", "0", "--check-pattern", count=count)  # fmt: skip
    sub, pub = s["sub"], s["pub"]
    assert pub["counts"]["write_errors"] == 0
    # matched_readers is real (the publisher waited for it); matched_writers is not.
    assert pub["timing"]["discovery_ns"] is not None
    assert sub["timing"]["discovery_ns"] is None


# --- what goes over the wire -------------------------------------------------------------


def test_each_node_holds_a_publishing_and_a_subscribing_connection_to_the_server(redis, results):
    # Two ESTABLISHED (01) connections, then half a second more: measuring by now, the
    # open() probe long closed.
    seen = nodes_seen_running(
        ["ping", "--driver", DRIVER, "--duration", "3", "--warmup", "10", "--size", "256"],
        results,
        tcp_sockets_of,
        ready=lambda sockets: len([s for s in sockets if s[2] == "01"]) >= 2,
        settle_s=0.5,
    )
    [service] = only_run(results)["services"]
    for pid, sockets in seen.items():
        established = [s for s in sockets if s[2] == "01"]
        assert len(established) == 2, f"node {pid}: {sockets}"
        assert all(remote == service["address"] for _, remote, _ in established), sockets
        assert all(local.startswith("127.0.0.1:") for local, _, _ in established), sockets


def test_the_node_without_a_broker_option_is_refused(redis, node, tmp_path):
    proc = subprocess.run(
        [
            str(node),
            "--driver",
            str(redis),
            "--role",
            "ping,pong",
            "--out",
            str(tmp_path),
            "--run-id",
            "nobroker",
            "--count",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert (
        "redis: option broker=HOST:PORT is missing; psbench sets it when it starts "
        "redis-server, or give the address of your own redis-server"
    ) in proc.stderr
