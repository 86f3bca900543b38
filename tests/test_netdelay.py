"""psbench-netdelay (netem/, docs/netdelay.md), the userspace delay stage, on real
packets: two namespaces of the test's own joined by a veth pair, datagrams from one to
the other steered to an NFQUEUE that the helper serves. Only lower bounds on time are
asserted (this machine is shared and noisy); order, counts and cleanup are exact."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from netns_pair import HELPER, NetnsPair, run  # noqa: E402


def _namespaces_usable() -> bool:
    return (
        shutil.which("ip") is not None and run("ip", "netns", "list", check=False).returncode == 0
    )


needs_netns = pytest.mark.skipif(
    os.geteuid() != 0 or not _namespaces_usable(),
    reason="needs root and `ip netns` (iproute2) to make private network namespaces",
)


@pytest.fixture(scope="module")
def helper() -> Path:
    if not os.access(HELPER, os.X_OK):
        pytest.fail(
            f"{HELPER} is missing: cmake --build build --target psbench-netdelay "
            "(needs libnetfilter-queue-dev)"
        )
    if shutil.which("iptables") is None:
        pytest.fail("iptables is missing: apt-get install iptables (scripts/debian-packages.txt)")
    return HELPER


@pytest.fixture
def pair(helper):
    p = NetnsPair()
    with p:
        yield p
    # Ours only: other tests may have pairs of their own alive in parallel.
    listed = run("ip", "netns", "list").stdout
    assert p.a not in listed and p.b not in listed
    for proc in p.procs:
        assert not Path(f"/proc/{proc.pid}").exists(), f"process {proc.args} still runs"


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--queue", "1"],
        ["--delay-us", "10"],
        ["--queue", "70000", "--delay-us", "10"],
        ["--queue", "1", "--delay-us", "-5"],
        ["--queue", "1", "--delay-us", "1ms"],
        ["--queue", "1", "--delay-us", "10", "--limit", "0"],
        ["--queue", "1", "--delay-us", "10", "--jitter"],
        ["--queue", "1", "--delay-us", "10", "--bypass"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(helper, args):
    proc = subprocess.run([str(helper), *args], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("psbench-netdelay: "), proc.stderr


@needs_netns
def test_every_datagram_arrives_in_order_and_at_least_delay_later(pair):
    delay_us = 20_000
    pair.add_queue_rule()
    pair.start_helper("--delay-us", str(delay_us))
    out = pair.client("ping", 50, wait=5)
    summary = pair.stop_helper()
    assert out["got"] == list(range(50))
    assert min(out["rtts_ns"]) >= delay_us * 1000
    assert summary["queue"] == pair.queue and summary["delay_us"] == delay_us
    assert summary["packets"] == 50 and summary["dropped_over_limit"] == 0
    assert summary["max_hold_us"] >= delay_us


@needs_netns
def test_order_is_kept_under_jitter(pair):
    # Jitter far above the gap between back-to-back datagrams (a few µs): without the
    # order rule most neighbours would swap.
    pair.add_queue_rule()
    pair.start_helper("--delay-us", "2000", "--jitter-us", "1500", "--seed", "7")
    out = pair.client("burst", 200, wait=2)
    summary = pair.stop_helper()
    assert out["got"] == list(range(200))
    assert summary["packets"] == 200 and summary["jitter_us"] == 1500


@needs_netns
def test_over_the_limit_packets_are_dropped_and_counted(pair):
    pair.add_queue_rule()
    pair.start_helper("--delay-us", "50000", "--limit", "5")
    out = pair.client("burst", 50, wait=2)
    summary = pair.stop_helper()
    assert summary["dropped_over_limit"] > 0
    assert summary["packets"] == 50
    assert len(out["got"]) + summary["dropped_over_limit"] == 50
    assert out["got"] == sorted(out["got"])


@needs_netns
def test_sigterm_lets_held_packets_go(pair):
    # A 30 s delay: only the exit's release can deliver them in time.
    pair.add_queue_rule()
    pair.start_helper("--delay-us", "30000000")
    client = pair.spawn(pair.a, [sys.executable, "-c", _BURST_THEN_WAIT])
    assert client.stdout.readline().strip() == "sent"
    summary = pair.stop_helper()
    out, _ = client.communicate(timeout=30)
    assert summary["packets"] == 10 and summary["dropped_over_limit"] == 0
    assert out.split() == [str(i) for i in range(10)]


_BURST_THEN_WAIT = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("198.18.0.2", 9000))
for i in range(10):
    s.send(i.to_bytes(4, "big"))
print("sent", flush=True)
s.settimeout(20)
for _ in range(10):
    print(int.from_bytes(s.recv(64), "big"), flush=True)
"""


@needs_netns
def test_a_killed_helper_means_no_traffic_not_undelayed_traffic(pair):
    # No --queue-bypass: with the listener gone the kernel drops what the rule queues,
    # so a dead stage shows as lost traffic instead of silently undelayed traffic.
    pair.add_queue_rule()
    helper = pair.start_helper("--delay-us", "1000")
    assert pair.client("ping", 3, wait=5)["got"] == [0, 1, 2]
    helper.send_signal(signal.SIGKILL)
    helper.wait(timeout=10)
    assert pair.queue not in pair.bound_queues()
    assert pair.client("ping", 5, wait=1)["got"] == []


@needs_netns
def test_the_helper_dies_with_its_parent(pair, helper):
    # A parent that starts the helper and is then SIGKILLed: PR_SET_PDEATHSIG ends it.
    pair.add_queue_rule()
    parent = pair.spawn(pair.a, [sys.executable, "-c", _PARENT, str(helper), str(pair.queue)])
    child_pid = int(parent.stdout.readline())
    for _ in range(200):
        if pair.queue in pair.bound_queues():
            break
        subprocess.run(["sleep", "0.025"])
    parent.kill()
    parent.wait(timeout=10)
    for _ in range(400):
        if not Path(f"/proc/{child_pid}").exists():
            break
        subprocess.run(["sleep", "0.025"])
    assert not Path(f"/proc/{child_pid}").exists()


_PARENT = """
import subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "--queue", sys.argv[2], "--delay-us", "1000"],
                     stdout=subprocess.DEVNULL)
print(p.pid, flush=True)
time.sleep(60)
"""
