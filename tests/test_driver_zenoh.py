"""The zenoh driver in real two-process runs through `./psbench ping|pubsub`: peer mode
(the run's own endpoints on 127.0.0.1), shared memory, and client mode through the zenohd
router psbench starts for those runs only (and stops: no process, no listening port); a
stalled reader (SIGSTOP) under reliable and best effort with the counts each must give;
its own refusals; two peer runs at once. What every broker driver gets (a router given
by option, none at the given address, the router killed mid-run, psbench killed, the
refusals of what --describe leaves out) is the driver suite's (tests/driver_suite.py),
with what zenoh says declared in SUITE."""

import fcntl
import os
import time
from functools import partial
from pathlib import Path

import pytest

from conftest import (
    cli_in_background,
    live_processes,
    only_run,
    run_cli,
    stall_sub_for,
)
from driver_checks import check_counts, driver_fixture, load, ping_case
from driver_suite import Expect
from test_services_outlive import listening

DRIVER = "zenoh"
ROUTER = "zenohd"


zenoh = driver_fixture(DRIVER)
SUITE = Expect(
    broker_syntax="ADDRESS:PORT",
    # With what zenoh logged about it (a debug line of its transport, nowhere else): its
    # reader's end of file, after the writer's reset when a write was in flight (CI saw both).
    broker_gone=(
        "the connection to zenohd closed during the run",
        "(zenoh: ",
        "RX task failed: Read error on TCP link 127.0.0.1:",
    ),
    group="zenoh",  # see pytestmark below
)


def routers_of(results: Path) -> list[int]:
    """Live zenohd processes started for runs under results (their config is there)."""
    return live_processes(ROUTER, str(results))


# One at a time: a test asserts that no zenoh segment is orphaned after its run, and a
# segment of another zenoh run in flight (another worker) may be between its owner's end
# and that run's cleanup.
pytestmark = pytest.mark.xdist_group("zenoh")


def orphaned_segments() -> list[str]:
    """zenoh shared-memory segments of this user that no process holds (zenoh's own test:
    every user of a segment holds a shared flock on it), twice 1 s apart: a segment another
    run (another test's, beside this one) is creating has its flock by then."""
    first = _unlocked_segments()
    if not first:
        return []
    time.sleep(1)
    return sorted(set(first) & set(_unlocked_segments()))


def _unlocked_segments() -> list[str]:
    orphans = []
    for path in Path("/dev/shm").glob("*.zenoh"):
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            orphans.append(path.name)
        except OSError:
            pass
        finally:
            os.close(fd)
    return orphans


def measured_on(transport: str, results: Path, kind: str, *args: str):
    """One run through the CLI on a transport; the run record and the summaries by role.
    A client run went through a zenohd psbench started and stopped; other runs had none."""
    proc = run_cli([kind, "--driver", DRIVER, "--transport", transport, *args], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert record["driver"]["version"] == "zenoh 1.10.2"
    if transport == "client":
        [service] = record["services"]
        assert service["name"] == ROUTER and service["started_by_psbench"]
        address = service["address"]
        assert address.startswith("127.0.0.1:")
        for process in record["processes"]:
            assert f"broker={address}" in process["argv"]
        assert routers_of(results) == []
        assert not listening(address), "zenohd's port is still open"
    else:
        assert record["services"] == []
    # The manifest's cleanup ran and removed what zenoh left in /dev/shm.
    assert record["cleanup"]["exit_code"] == 0, record["cleanup"]
    assert orphaned_segments() == []
    roles = ("ping", "pong") if kind == "ping" else ("pub", "sub")
    summaries = {role: load(record["_dir"], role) for role in roles}
    for s in summaries.values():
        assert s["config"]["transport"] == transport
    return record, summaries


PING_CASES = {
    "peer-wait-64B": ("peer", ["--notify", "wait"], 64, 500),
    "peer-poll-16KiB": ("peer", ["--notify", "poll", "--check-pattern"], 16384, 300),
    # Reliable: best effort lets zenoh drop a message that finds its queue full (a 1 MiB
    # one, in fragments, after 50 ms: drop/max_wait_before_drop_fragments); one of 30
    # went so in one of 8 runs of the zenoh tests beside others on 2 cores.
    "peer-listener-1MiB": (
        "peer",
        ["--notify", "listener", "--check-pattern", "--reliability", "reliable"],
        1 << 20,
        30,
    ),
    "peer-intra-wait-64B": ("peer", ["--placement", "intra"], 64, 300),
    "shm-wait-16KiB": ("shm", ["--notify", "wait", "--check-pattern"], 16384, 300),
    "shm-listener-64B": ("shm", ["--notify", "listener"], 64, 300),
    "client-wait-64B": ("client", ["--notify", "wait"], 64, 500),
    "client-listener-16KiB": ("client", ["--notify", "listener", "--check-pattern"], 16384, 300),
    "client-poll-best-effort": (
        "client",
        ["--notify", "poll", "--reliability", "best_effort"],
        64,
        300,
    ),
}


@pytest.mark.parametrize("case", PING_CASES, ids=list(PING_CASES))
def test_ping(zenoh, results, case):
    transport, args, size, count = PING_CASES[case]
    measure = partial(measured_on, transport)
    _, s = ping_case(measure, results, *args, size=size, count=count)
    # Each node opened a transport to the other (peer) or to the router (client); only
    # transport shm negotiated shared memory on it.
    for role in ("ping", "pong"):
        writer = s[role]["middleware_counters"]["writer"]
        assert writer["transports_opened"] >= 1, writer
        assert (writer["shm_transports_opened"] >= 1) == (transport == "shm"), writer


# 16 KiB at 4000/s for 4 s: the 2 s stall holds back 128 MB, more than loopback TCP's
# buffers and zenoh's queues take, so the writer meets a full queue.
STALL = ["--size", "16384", "--rate", "4000", "--count", "16000", "--warmup", "0"]


def stalled_run(results: Path, reliability: str):
    with cli_in_background(
        ["pubsub", "--driver", DRIVER, "--reliability", reliability, *STALL], results
    ) as proc:
        stall_sub_for(results, proc, 2.0, settle_s=1.0)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    record = only_run(results)
    return record, load(record["_dir"], "sub")


def test_a_stalled_reader_holds_a_reliable_writer_back_and_loses_nothing(zenoh, results):
    # Congestion control Block: the writer waits for room (less than zenoh's 5 s
    # wait_before_close), then every message arrives.
    _, sub = stalled_run(results, "reliable")
    check_counts(sub, 16000)


def test_a_stalled_reader_makes_a_best_effort_writer_drop(zenoh, results):
    # Congestion control Drop: what does not fit in the full queue is dropped by the
    # writer, and counted lost at the reader; everything else arrives once and intact.
    _, sub = stalled_run(results, "best_effort")
    counts = sub["counts"]
    assert counts["sent"] == 16000
    assert counts["lost"] > 0, counts
    assert counts["samples"] + counts["lost"] == 16000, counts
    assert counts["corrupted"] == counts["duplicated"] == 0, counts


def test_its_own_refusal(zenoh, results):
    proc = run_cli(
        ["ping", "--driver", DRIVER, "--count", "10", "--option", "broker=127.0.0.1:7447"],
        results,
    )
    assert proc.returncode == 2, proc.stderr
    assert "zenoh: option broker applies to transport client only" in proc.stderr
    assert routers_of(results) == []


def test_two_peer_runs_at_once_each_keep_to_their_own(zenoh, results):
    # Each run's peers meet on the run's own port (from its run id) and keys: two runs side
    # by side both complete with every one of their own messages and nothing else.
    first, second = results / "a", results / "b"
    args = ["ping", "--driver", DRIVER, "--size", "256", "--count", "3000", "--warmup", "10"]
    with cli_in_background(args, first) as a, cli_in_background(args, second) as b:
        outs = [p.communicate(timeout=120) for p in (a, b)]
    for proc, (out, err) in zip((a, b), outs):
        assert proc.returncode == 0, out + err
    ids = set()
    for folder in (first, second):
        record = only_run(folder)
        assert record["status"] == "ok", record.get("message")
        check_counts(load(record["_dir"], "ping"), 3000)
        ids.add(record["run_id"])
    assert len(ids) == 2
