"""Emulated hosts (psbench.hosts): namespaces joined through psbench's own bridge, links
shaped with what this kernel has, and nothing left behind on any exit. Traffic goes only
between addresses of 198.18.0.0/24 inside namespaces these tests make; every loop is
bounded in count and time. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN): CI runs as root."""

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import python_env
from psbench.base.errors import UserError
from psbench.hosts import emulated, netns, udp_receiver, udp_sender
from psbench.hosts.calibrate import calibrate
from psbench.hosts.emulated import EmulatedNetwork
from psbench.hosts.links import LinkShape, parse_shape

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="emulated hosts need root (CI is)")


def start_receiver(net, host, port, quiet=1.0, echo=False):
    proc = subprocess.Popen(
        net.argv(host, [sys.executable, str(udp_receiver.SCRIPT), net.hosts[host].address, str(port),
                        str(quiet), "echo" if echo else "count"]),
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout.readline().strip() == "ready"
    return proc


def send(net, host, to, port, count, size=64, gap=0.0, ping=False):
    out = subprocess.run(
        net.argv(host, [sys.executable, str(udp_sender.SCRIPT), net.hosts[to].address, str(port),
                        str(count), str(size), str(gap), "ping" if ping else "send"]),
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def result_of(receiver):
    out, _ = receiver.communicate(timeout=60)
    return json.loads(out)


def ours(net) -> set[str]:
    return {n for n in netns.existing() if n.startswith(net.tag)}


def test_two_hosts_reach_each_other_and_leave_nothing():
    net = EmulatedNetwork({"a": LinkShape(), "b": LinkShape()})
    with net:
        assert ours(net) == {net.switch, net.hosts["a"].namespace, net.hosts["b"].namespace}
        receiver = start_receiver(net, "b", 9000, echo=True)
        rtts = send(net, "a", "b", 9000, count=20, ping=True)["rtts"]
        assert len(rtts) == 20
        assert result_of(receiver)["count"] == 20
        described = net.describe()["hosts"]
        assert [described[h]["address"] for h in ("a", "b")] == ["198.18.0.1", "198.18.0.2"]
    assert ours(net) == set()


def test_link_counters_count_what_crossed_each_link():
    # Known answer: a UDP datagram of N payload bytes is N + 8 + 20 + 14 bytes on an
    # Ethernet (veth) link. Slack for the odd ARP or IPv6 packet the kernel sends itself:
    # the bytes beyond the datagrams' are in the packets beyond theirs (a few IPv6
    # neighbour and multicast listener packets once came to 1,180 bytes), each at most a
    # frame of the link's MTU.
    net = EmulatedNetwork({"a": LinkShape(), "b": LinkShape()})
    with net:
        receiver = start_receiver(net, "b", 9005, echo=True)
        assert len(send(net, "a", "b", 9005, count=1, ping=True)["rtts"]) == 1  # ARP done
        before = net.traffic()
        send(net, "a", "b", 9005, count=100, size=1000, gap=0.001)
        after = net.traffic()
        receiver.communicate(timeout=60)
    sent = {h: {k: after[h][k] - before[h][k] for k in before[h]} for h in before}
    wire = 100 * (1000 + 8 + 20 + 14)
    frame = 1500 + 14
    for host, side in (("a", "tx"), ("b", "rx")):
        packets, size = sent[host][f"{side}_packets"], sent[host][f"{side}_bytes"]
        assert 100 <= packets <= 105, sent[host]
        assert wire <= size <= wire + (packets - 100) * frame, sent[host]
    assert sent["b"]["tx_bytes"] >= 100 * 1042  # the echoes came back


def test_hosts_on_no_common_network_hear_each_other_only_through_one_on_both():
    net = EmulatedNetwork(
        {
            "a": LinkShape(networks=("left",)),
            "b": LinkShape(networks=("right",)),
            "r": LinkShape(networks=("left", "right")),
        }
    )
    with net:
        got = {}
        for sender, receiver, port in (("a", "r", 9006), ("b", "r", 9007), ("a", "b", 9008),
                                       ("b", "a", 9009), ("r", "b", 9010)):  # fmt: skip
            listening = start_receiver(net, receiver, port, quiet=0.5)
            send(net, sender, receiver, port, count=20, gap=0.001)
            send(net, "r", receiver, port, count=1)  # reaches all: the receiver then ends
            got[sender + receiver] = result_of(listening)["count"]
        applied = net.describe()["hosts"]
    assert got == {"ar": 21, "br": 21, "ab": 1, "ba": 1, "rb": 21}
    assert "from b: no common network" in applied["a"]["applied"]["networks"]
    assert "networks" not in applied["r"]["applied"]


def test_a_network_that_fails_half_way_is_removed(monkeypatch):
    # Injected fault: the second host's rate cannot be applied.
    real_tc = netns.tc
    calls = []

    def failing_tc(namespace, *args):
        calls.append(namespace)
        if namespace.endswith("-h1"):
            raise UserError("tc: injected failure")
        return real_tc(namespace, *args)

    monkeypatch.setattr(netns, "tc", failing_tc)
    net = EmulatedNetwork(
        {"a": LinkShape(rate_bps=10_000_000), "b": LinkShape(rate_bps=10_000_000)}
    )
    with pytest.raises(UserError, match="injected failure"):
        net.__enter__()
    assert any(c.endswith("-h1") for c in calls)
    assert ours(net) == set()


def test_the_keeper_removes_the_namespaces_of_a_killed_psbench():
    # A psbench (here: a Python process using the keeper as psbench does) makes two hosts
    # with a delay helper running in each, then is killed with SIGKILL.
    code = (
        "import sys, time\n"
        "from psbench.run import keeper\n"
        "from psbench.hosts.emulated import EmulatedNetwork\n"
        "from psbench.hosts.links import LinkShape\n"
        "k = keeper.instance()\n"
        "net = EmulatedNetwork({'a': LinkShape(delay_us=1000), 'b': LinkShape()},"
        " watch=k.watch_netns, release=k.release_netns).__enter__()\n"
        "print(net.tag, flush=True)\n"
        "time.sleep(60)\n"
    )
    env = python_env()
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        tag = proc.stdout.readline().strip()
        assert tag.startswith("psb"), tag
        assert len([n for n in netns.existing() if n.startswith(tag)]) == 3
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    end = time.monotonic() + 5
    while [n for n in netns.existing() if n.startswith(tag)] and time.monotonic() < end:
        time.sleep(0.1)
    assert [n for n in netns.existing() if n.startswith(tag)] == []
    helpers = subprocess.run(["pgrep", "-f", "psbench-netdelay"], capture_output=True, text=True)
    mine = (
        [
            p
            for p in helpers.stdout.split()
            if tag in Path(f"/proc/{p}/cmdline").read_text(errors="replace")
        ]
        if helpers.stdout
        else []
    )
    assert mine == []


def test_a_rate_is_never_exceeded_by_more_than_a_burst():
    rate = 2_000_000  # bit/s
    net = EmulatedNetwork({"a": LinkShape(), "b": LinkShape(rate_bps=rate)})
    with net:
        receiver = start_receiver(net, "b", 9001, quiet=1.5)
        send(net, "a", "b", 9001, count=400, size=1200)  # 480 kB as fast as a can
        got = result_of(receiver)
        applied = net.describe()["hosts"]["b"]["applied"]["rate"]
    assert got["count"] > 10
    burst = int(applied.split("burst ")[1].split()[0]) if "burst" in applied else 3028
    # What arrived after the first datagram, against what the rate lets through meanwhile
    # plus one bucket at each end (both ends of b's link are shaped) and one datagram.
    after_first = got["bytes"] - got["bytes"] / got["count"]
    allowed = rate / 8 * (got["last"] - got["first"]) + 2 * burst + 1242
    assert after_first <= allowed, (after_first, allowed, applied)


@pytest.mark.parametrize("lossy", ["b", "a"])
def test_loss_is_within_a_binomial_interval_of_what_was_asked(lossy):
    # Into the lossy host (b), or out of it (a): a packet lost on the way out must be lost
    # on the wire, never a failed send (send() raising would fail the sender, check=True).
    n, loss = 2000, 20.0
    net = EmulatedNetwork({h: LinkShape(loss_pct=loss if h == lossy else None) for h in "ab"})
    with net:
        receiver = start_receiver(net, "b", 9002, quiet=1.0)
        send(net, "a", "b", 9002, count=n, gap=0.0002)
        got = result_of(receiver)["count"]
        assert "loss" in net.describe()["hosts"][lossy]["applied"]
    # One crossing of the lossy link each; the other link loses nothing.
    p = 1 - loss / 100
    half_width = 3.29 * math.sqrt(n * p * (1 - p))  # 99.9 %
    assert abs(got - n * p) <= half_width + 1, (got, n * p, half_width)


def test_a_message_takes_at_least_its_bits_over_the_rate_after_the_bucket():
    # 16 KiB in one datagram (IP fragments) over 100 Mbit/s, echoed: each way the bits
    # beyond the bucket's two frames take at least their time at the rate (a bucket of
    # 1 ms, 12,500 B, once let it cross in half that).
    size, rate_bps = 16384, 100_000_000
    net = EmulatedNetwork({"a": LinkShape(rate_bps=rate_bps), "b": LinkShape()})
    with net:
        receiver = start_receiver(net, "b", 9004, echo=True)
        rtts = send(net, "a", "b", 9004, count=5, size=size, ping=True)["rtts"]
        result_of(receiver)
        burst = int(net.describe()["hosts"]["a"]["applied"]["rate"].split("burst ")[1].split()[0])
    assert len(rtts) == 5 and burst == 2 * (1500 + 14)
    assert min(rtts) >= 2 * (size - burst) * 8 / rate_bps, (min(rtts), burst)


def test_delay_is_added_on_both_ways_of_the_link():
    if not emulated.netdelay_path().is_file():
        pytest.fail(f"{emulated.netdelay_path()} is not built: run make build")
    delay_us = 5000
    net = EmulatedNetwork({"a": LinkShape(), "b": LinkShape(delay_us=delay_us)})
    with net:
        receiver = start_receiver(net, "b", 9003, echo=True)
        rtts = send(net, "a", "b", 9003, count=20, ping=True)["rtts"]
        result_of(receiver)
        applied = net.describe()["hosts"]["b"]["applied"]["delay"]
    assert len(rtts) == 20
    # A round trip crosses b's link twice (into b, out of b): at least 2 x the delay.
    assert min(rtts) >= 2 * delay_us / 1e6, (min(rtts), applied)


def test_calibration_measures_no_less_than_configured_and_counts_lost_probes():
    shapes = {"a": LinkShape(delay_us=1000), "b": LinkShape(), "c": LinkShape(loss_pct=20.0)}
    with EmulatedNetwork(shapes) as net:
        clean = calibrate(net, "a", "b")
        lossy = calibrate(net, "a", "c")
    # a's link twice: 2 ms configured, and no round trip can be shorter.
    assert clean["configured_rtt_us"] == 2000 and clean["probes"] == clean["received"] == 200
    assert clean["rtt_us"]["min"] >= 2000 and clean["added_us"] == clean["rtt_us"]["p50"] - 2000
    # Each probe crosses c's link twice at 20 %: about 64 % return, and all 200 only with
    # a chance of 1e-39 (a drop on the way out of c is a loss, not an error that would
    # end the echo).
    assert lossy["configured_rtt_us"] == 2000  # a's delay again; c has none
    assert 0 < lossy["received"] < lossy["probes"] <= 200, lossy


def test_without_the_capabilities_it_is_refused_saying_what_is_missing():
    code = (
        "from psbench.base.errors import UserError\n"
        "from psbench.hosts.emulated import EmulatedNetwork\n"
        "from psbench.hosts.links import LinkShape\n"
        "try:\n"
        "    EmulatedNetwork({'a': LinkShape()}).__enter__()\n"
        "except UserError as e:\n"
        "    print(e.exit_code, e)\n"
    )
    env = python_env()
    out = subprocess.run(
        ["setpriv", "--inh-caps=-net_admin,-sys_admin", "--bounding-set=-net_admin,-sys_admin",
         sys.executable, "-c", code],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert out.stdout.startswith("2 emulated hosts need CAP_NET_ADMIN and CAP_SYS_ADMIN"), (
        out.stdout + out.stderr
    )


@pytest.mark.parametrize(
    "spec,message",
    [
        ({"rate": "fast"}, "lab.yaml: hosts.b.rate: 'fast' is not a value; write it like 100mbit"),
        ({"loss": "0.5"}, "lab.yaml: hosts.b.loss: '0.5': write a percentage below 100, like 0.5%"),
        ({"jitter": "1ms"}, "lab.yaml: hosts.b.jitter: give a delay too"),
        ({"mtu": 100}, "lab.yaml: hosts.b.mtu: 100: give bytes from 576 to 9000"),
        ({"latency": "1ms"}, "lab.yaml: hosts.b.latency: unknown link property"),
        ({"networks": "Left"}, "lab.yaml: hosts.b.networks: 'Left': give network names"),
        ({"networks": []}, "lab.yaml: hosts.b.networks: []: give network names"),
    ],
)
def test_a_bad_link_property_names_the_field_and_the_fix(spec, message):
    with pytest.raises(UserError) as err:
        parse_shape("lab.yaml: hosts.b", spec)
    assert str(err.value).startswith(message)
    assert err.value.exit_code == 2


def test_link_words_become_numbers():
    shape = parse_shape(
        "x", {"rate": "1.5mbit", "delay": "2ms", "jitter": "100us", "loss": "0.5%", "mtu": 1400}
    )
    assert shape == LinkShape(1_500_000, 2000, 100, 0.5, 1400)
