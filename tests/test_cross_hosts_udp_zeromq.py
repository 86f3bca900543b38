"""The udp and zeromq drivers across emulated hosts (psbench.hosts.emulated): ping in host
a and pong in host b over udp unicast to the peers, udp multicast and zeromq tcp, each
message really going over host a's eth0; a 1->2 udp multicast fan-out to subscribers in
hosts b and c, and a zeromq tcp pub waiting for its two subscribers in hosts b and c;
and the transports kept to one host refusing --address (setting "hosts").
Traffic goes only between 198.18.0.0/24 addresses inside namespaces these tests make;
every run is bounded (--count, --timeout). Needs root, as tests/test_emulated_hosts.py."""

import json
import os
import secrets
import subprocess
from pathlib import Path

import pytest

from conftest import processes_of_run
from psbench.base import paths
from psbench.hosts.emulated import EmulatedNetwork
from psbench.hosts.links import LinkShape

COUNT = 200
NODE_TIMEOUT = 60  # the node's own --timeout; the waits below are longer

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="emulated hosts need root (CI is)")


@pytest.fixture(scope="module")
def libs(driver_libs) -> dict[str, Path]:
    for name in ("udp", "zeromq"):
        if name not in driver_libs:
            pytest.fail(f"the {name} driver is not built: run `make build`")
    return driver_libs


def fresh_run_id() -> str:
    return "xh" + secrets.token_hex(5)


def tx_packets(net: EmulatedNetwork, host: str, interface: str = "") -> int:
    """Packets sent so far by the host's eth0 (or interface) (its namespace's own sysfs)."""
    interface = interface or net.hosts[host].interface
    out = subprocess.run(
        net.argv(host, ["cat", f"/sys/class/net/{interface}/statistics/tx_packets"]),
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return int(out.stdout)


def node_argv(lib: Path, run_id: str, transport: str, role: str, out: Path, *more: str) -> list:
    return [
        str(paths.node_path()), "--driver", str(lib), "--run-id", run_id, "--role", role,
        "--transport", transport, "--out", str(out), "--timeout", str(NODE_TIMEOUT),
        "--match-timeout", "20", *more,
    ]  # fmt: skip


def on_host(net: EmulatedNetwork, host: str, *others: str) -> list[str]:
    """--address of the host and a --peer for each other host."""
    args = ["--address", net.hosts[host].address]
    for other in others:
        args += ["--peer", net.hosts[other].address]
    return args


def start_sub(net: EmulatedNetwork, host: str, lib, run_id: str, transport: str, folder: Path,
              *args: str, stdin=None) -> subprocess.Popen:  # fmt: skip
    """A sub node in host (its files in folder/host), told of every other host; its
    output piped."""
    others = [h for h in net.hosts if h != host]
    argv = node_argv(lib, run_id, transport, "sub", folder / host, *args,
                     *on_host(net, host, *others))  # fmt: skip
    return subprocess.Popen(net.argv(host, argv), stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def summary(out: Path, name: str) -> dict:
    return json.loads((out / f"{name}.json").read_text())


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=NODE_TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return proc.returncode, out, err


def assert_nothing_left(run_id: str) -> None:
    assert processes_of_run(run_id) == [], f"node processes of run {run_id} still alive"


PING_CASES = {
    "udp-unicast": ("udp", "unicast"),
    "udp-multicast": ("udp", "multicast"),
    "zeromq-tcp": ("zeromq", "tcp"),
}


@needs_root
@pytest.mark.parametrize("case", PING_CASES)
def test_ping_in_host_a_pong_in_host_b(libs, tmp_path, case):
    driver, transport = PING_CASES[case]
    run_id = fresh_run_id()
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    common = ["--count", str(COUNT), "--warmup", "20", "--barrier", "none"]
    with EmulatedNetwork({"a": LinkShape(), "b": LinkShape()}) as net:
        before, lo_before = tx_packets(net, "a"), tx_packets(net, "a", "lo")
        pong = subprocess.Popen(
            net.argv("b", node_argv(libs[driver], run_id, transport, "pong", out_b, *common,
                                    *on_host(net, "b", "a"))),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            ping = subprocess.run(
                net.argv("a", node_argv(libs[driver], run_id, transport, "ping", out_a, *common,
                                        *on_host(net, "a", "b"))),
                capture_output=True, text=True, timeout=NODE_TIMEOUT + 30,
            )  # fmt: skip
        finally:
            pong_code, _, pong_err = finish(pong)
        after, lo_after = tx_packets(net, "a"), tx_packets(net, "a", "lo")
    assert ping.returncode == 0, ping.stdout + ping.stderr
    assert pong_code == 0, pong_err
    got = summary(out_a, "ping")
    counts = got["counts"]
    assert counts["sent"] == counts["samples"] == COUNT, counts
    assert counts["lost"] == counts["late"] == counts["corrupted"] == 0, counts
    assert got["error"] is None and got["driver"]["name"] == driver
    assert got["config"]["transport"] == transport
    assert got["config"]["address"] == "198.18.0.1" and got["config"]["peers"] == ["198.18.0.2"]
    echoed = summary(out_b, "pong")
    assert echoed["config"]["address"] == "198.18.0.2"
    assert echoed["config"]["peers"] == ["198.18.0.1"]
    # Every measured ping left host a through eth0, not lo: at least one packet each.
    assert after - before >= COUNT, (before, after)
    assert lo_after - lo_before < COUNT, (lo_before, lo_after)
    assert_nothing_left(run_id)


@needs_root
def test_udp_multicast_fans_out_to_subscribers_in_two_hosts(libs, tmp_path):
    run_id = fresh_run_id()
    hosts = ("a", "b", "c")
    sub_args = ["--count", str(COUNT), "--barrier", "stdio", "--idle-timeout", "10"]
    # Each subscriber here is one reader in its own host, each node told of its own
    # (--subscribers 1); udp has no matched count for pub to wait on.
    pub_args = ["--count", str(COUNT), "--warmup", "20", "--rate", "2000", "--barrier", "none"]
    with EmulatedNetwork({h: LinkShape() for h in hosts}) as net:
        subs = {}
        try:
            for host in ("b", "c"):
                subs[host] = start_sub(net, host, libs["udp"], run_id, "multicast", tmp_path,
                                       *sub_args, stdin=subprocess.PIPE)  # fmt: skip
            for host, proc in subs.items():  # each has joined the group
                line = proc.stdout.readline().strip()
                assert line == "READY", (host, line, proc.stderr.read() if not line else "")
            for proc in subs.values():
                proc.stdin.write("GO\n")
                proc.stdin.flush()
            before = tx_packets(net, "a")
            pub = subprocess.run(
                net.argv("a", node_argv(libs["udp"], run_id, "multicast", "pub", tmp_path / "a",
                                        *pub_args, *on_host(net, "a", "b", "c"))),
                capture_output=True, text=True, timeout=NODE_TIMEOUT + 30,
            )  # fmt: skip
            after = tx_packets(net, "a")
        finally:
            ended = {host: finish(proc) for host, proc in subs.items()}
    assert pub.returncode == 0, pub.stdout + pub.stderr
    sent = summary(tmp_path / "a", "pub")
    assert sent["counts"]["sent"] == COUNT and sent["config"]["peers"] == [
        "198.18.0.2",
        "198.18.0.3",
    ]
    for host, (code, _, err) in ended.items():
        assert code == 0, (host, err)
        got = summary(tmp_path / host, "sub")
        counts = got["counts"]
        assert counts["sent"] == counts["samples"] == COUNT, (host, counts)
        assert counts["lost"] == counts["corrupted"] == counts["duplicated"] == 0, (host, counts)
        assert got["config"]["address"] == net.hosts[host].address
    # One multicast datagram per message leaves host a, whatever the number of readers.
    assert after - before >= COUNT, (before, after)
    assert_nothing_left(run_id)


@needs_root
def test_zeromq_tcp_pub_waits_for_subscribers_in_two_hosts(libs, tmp_path):
    # Each SUB connects to both of its peers (the writer's host and the other
    # subscriber's, where nobody binds): the pub's matched count (--subscribers 2) holds
    # the start until both subscriptions arrived, so nothing measured is lost.
    run_id = fresh_run_id()
    hosts = ("a", "b", "c")
    common = ["--count", str(COUNT), "--barrier", "none"]
    with EmulatedNetwork({h: LinkShape() for h in hosts}) as net:
        subs = {}
        try:
            for host in ("b", "c"):
                subs[host] = start_sub(net, host, libs["zeromq"], run_id, "tcp", tmp_path, *common)
            pub = subprocess.run(
                net.argv("a", node_argv(libs["zeromq"], run_id, "tcp", "pub", tmp_path / "a",
                                        *common, "--subscribers", "2", "--rate", "2000",
                                        "--warmup", "20", *on_host(net, "a", "b", "c"))),
                capture_output=True, text=True, timeout=NODE_TIMEOUT + 30,
            )  # fmt: skip
        finally:
            ended = {host: finish(proc) for host, proc in subs.items()}
    assert pub.returncode == 0, pub.stdout + pub.stderr
    assert summary(tmp_path / "a", "pub")["counts"]["sent"] == COUNT
    for host, (code, _, err) in ended.items():
        assert code == 0, (host, err)
        counts = summary(tmp_path / host, "sub")["counts"]
        assert counts["sent"] == counts["samples"] == COUNT, (host, counts)
        assert counts["lost"] == counts["corrupted"] == 0, (host, counts)
    assert_nothing_left(run_id)


REFUSED = {
    "udp-loopback": ("udp", "loopback", "--transport unicast"),
    "udp-default": ("udp", "default", "--transport unicast"),
    "zeromq-ipc": ("zeromq", "ipc", "--transport tcp"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_transport_kept_to_one_host_refuses_an_address(libs, tmp_path, case):
    # Refused before anything is opened: no namespace or traffic needed.
    driver, transport, fix = REFUSED[case]
    run_id = fresh_run_id()
    proc = subprocess.run(
        node_argv(libs[driver], run_id, transport, "ping", tmp_path,
                  "--address", "198.18.0.1", "--peer", "198.18.0.2"),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "hosts" in proc.stderr and fix in proc.stderr, proc.stderr
    check = subprocess.run(
        [*node_argv(libs[driver], run_id, transport, "ping", tmp_path), "--check",
         "--address", "198.18.0.1", "--peer", "198.18.0.2"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert check.returncode == 2, check.stdout + check.stderr
    assert f"refused (hosts): {driver}: transport" in check.stdout + check.stderr
    assert_nothing_left(run_id)


@pytest.mark.parametrize("driver,transport", [("udp", "unicast"), ("udp", "multicast"),
                                              ("zeromq", "tcp")])  # fmt: skip
def test_the_transports_that_cross_hosts_accept_an_address(libs, tmp_path, driver, transport):
    proc = subprocess.run(
        [*node_argv(libs[driver], fresh_run_id(), transport, "ping", tmp_path), "--check",
         "--address", "198.18.0.1", "--peer", "198.18.0.2"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
