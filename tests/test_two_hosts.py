"""experiments/two-hosts.yaml end to end: ping on emulated host a, pong on host b, for
every driver that crosses hosts (a broker on a), over an unshaped link and over shaped ones; the run
records the network, the report names the link, and a killed psbench leaves no
namespace. Needs root (CI runs as root)."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import LAUNCHER, REPO, cli_env
from experiment_files import run_experiment
from psbench.hosts import netns

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="emulated hosts need root (CI is)")

EXPERIMENT = REPO / "experiments" / "two-hosts.yaml"


def records(results: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(results.rglob("run.json"))]


# The sweep (14 runs, about 60 s) and the slower variations: make test-long (CI runs it
# too), for make test's 8-minute budget.
SWEEP = pytest.mark.long


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("two-hosts") / "results"
    proc = run_experiment(EXPERIMENT, out.parent, "-o", str(out), timeout=600)
    return proc, out


@SWEEP
def test_every_driver_that_crosses_hosts_runs_between_two_hosts(swept):
    proc, out = swept
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = records(out)
    crossing = {"udp", "zeromq", "cyclonedds", "fastdds", "mqtt", "nats", "redis"}
    assert {r["driver"]["name"] for r in found} == crossing
    assert len(found) == 14 and all(r["status"] == "ok" for r in found), [
        (r["driver"]["name"], r["status"], r["message"]) for r in found
    ]
    for record in found:
        network = record["network"]
        assert network["kind"] == "emulated"
        assert {h: network["hosts"][h]["address"] for h in ("a", "b")} == {
            "a": "198.18.0.1",
            "b": "198.18.0.2",
        }
        commands = {p["name"]: p["argv"] for p in record["processes"]}
        # Each node ran inside its host's namespace, told its address and its peer.
        assert commands["ping"][:4] == ["ip", "netns", "exec", network["hosts"]["a"]["namespace"]]
        assert commands["pong"][:4] == ["ip", "netns", "exec", network["hosts"]["b"]["namespace"]]
        ping_argv = commands["ping"]
        assert ping_argv[ping_argv.index("--address") + 1] == "198.18.0.1"
        assert ping_argv[ping_argv.index("--peer") + 1] == "198.18.0.2"
        for service in record.get("services") or []:  # a broker: on host a, at its address
            assert service["host"] == "a" and service["address"].startswith("198.18.0.1:")


@SWEEP
def test_a_shaped_link_is_recorded_with_its_mechanisms_and_obeyed(swept):
    _, out = swept
    shaped = [r for r in records(out) if r["network"]["hosts"]["a"]["link"]]
    assert len(shaped) == 7
    for record in shaped:
        for host in ("a", "b"):
            entry = record["network"]["hosts"][host]
            assert entry["link"] == {"rate_bps": 100_000_000, "delay_us": 500}
            assert set(entry["applied"]) == {"rate", "delay"}
        # Each way crosses a's link and b's, 500 us each: no round trip under 2 ms.
        assert record["stats"]["ping"]["rtt"]["min"] >= 2_000_000, record["stats"]["ping"]["rtt"]
        # The calibration before the run saw the same links: 2 ms configured, no less.
        (pair,) = record["network"]["calibration"]
        assert pair["hosts"] == ["a", "b"] and pair["configured_rtt_us"] == 2000, pair
        assert pair["received"] == pair["probes"] and pair["rtt_us"]["min"] >= 2000, pair


@SWEEP
def test_the_report_names_the_link_and_its_calibration(swept):
    _, out = swept
    report = subprocess.run(
        [str(LAUNCHER), "report", str(out)], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert report.returncode == 0, report.stderr
    assert "cyclonedds 1 KiB hosts=a(100mbit,500us)+b(100mbit,500us)" in report.stdout
    assert "zeromq 1 KiB hosts=a+b" in report.stdout
    assert "Emulated links: configured and measured round trip" in report.stdout


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.mark.parametrize(
    "driver,stop",
    [
        ("zeromq", signal.SIGKILL),
        pytest.param("mqtt", signal.SIGKILL, marks=SWEEP),
        ("mqtt", signal.SIGINT),
    ],
    ids=["zeromq-sigkill", "mqtt-sigkill", "mqtt-ctrl-c"],
)
def test_sigkill_or_ctrl_c_of_psbench_mid_run_leaves_no_namespace_or_broker(tmp_path, driver, stop):
    out = tmp_path / "results"
    experiment = tmp_path / "long.yaml"
    experiment.write_text(
        "name: long\n"
        f"defaults: {{kind: ping, driver: {driver}, duration: 60, rate: 100,\n"
        "           hosts: {a: {delay: 1ms}, b: {}}, place: {ping: a, pong: b}}\n"
    )
    proc = subprocess.Popen(
        [str(LAUNCHER), "run", str(experiment), "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
        env=cli_env(tmp_path),
        start_new_session=True,
    )
    try:
        end = time.monotonic() + 60
        namespaces, brokers = [], []
        while not namespaces:
            assert proc.poll() is None and time.monotonic() < end, "the run did not start"
            for record in records(out) if out.exists() else []:
                if record.get("status") == "running" and record.get("network"):
                    namespaces = [h["namespace"] for h in record["network"]["hosts"].values()]
                    brokers = [s["pid"] for s in record.get("services") or []]
            time.sleep(0.1)
        assert set(namespaces) <= netns.existing()
        assert len(brokers) == (driver == "mqtt") and all(alive(pid) for pid in brokers)
    finally:
        os.killpg(proc.pid, stop)  # SIGINT to the group: what a terminal's Ctrl-C sends
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
    if stop == signal.SIGINT:
        assert code == 130, code
        assert [r["status"] for r in records(out)] == ["interrupted"]
    end = time.monotonic() + 5
    while (set(namespaces) & netns.existing() or any(map(alive, brokers))) and (
        time.monotonic() < end
    ):
        time.sleep(0.1)
    assert set(namespaces) & netns.existing() == set()
    assert not any(map(alive, brokers)), brokers


@SWEEP
def test_a_run_on_hosts_that_times_out_is_recorded_and_leaves_no_namespace(tmp_path):
    out = tmp_path / "results"
    experiment = tmp_path / "stuck.yaml"
    experiment.write_text(
        "name: stuck\n"
        "defaults: {kind: ping, driver: udp, transport: unicast, count: 500, timeout: 5,\n"
        "           options: {fault: hang, fault_after: 50},\n"  # a node that hangs
        "           hosts: {a: {}, b: {}}, place: {ping: a, pong: b}}\n"
    )
    proc = run_experiment(experiment, tmp_path, "-o", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (record,) = records(out)
    assert record["status"] == "timeout", record["status"]
    namespaces = {h["namespace"] for h in record["network"]["hosts"].values()}
    assert namespaces & netns.existing() == set()
    assert not any(alive(p["pid"]) for p in record["processes"] if p.get("pid"))


# make test has a broker on emulated hosts in the Ctrl-C test above; these in test-long.
@SWEEP
@pytest.mark.parametrize("driver", ["mqtt", "nats", "redis"])
def test_a_broker_runs_on_its_placed_host_and_every_message_crosses_its_link(tmp_path, driver):
    # ping on a, pong on b, the broker on c behind 2 ms each way: each round trip goes
    # through c four times (ping -> broker -> pong -> broker -> ping), at least 8 ms. A
    # broker beside either node would make it far less.
    out = tmp_path / "results"
    proc = subprocess.run(
        [str(LAUNCHER), "ping", "--driver", driver, "--size", "64", "--count", "100",
         "--host", "a", "--host", "b", "--host", "c:delay=2ms", "--place", "ping=a",
         "--place", "pong=b", "--place", "broker=c", "--results", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
        env=cli_env(tmp_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    (record,) = records(out)
    (service,) = record["services"]
    assert service["host"] == "c" and service["address"].startswith("198.18.0.3:"), service
    for process in record["processes"]:
        assert f"broker={service['address']}" in process["argv"], process["argv"]
    assert record["stats"]["ping"]["rtt"]["min"] >= 8e6, record["stats"]["ping"]["rtt"]
    # Every message crossed c's link in and out twice (ping's and pong's), and a's once
    # each way: the link counters saw at least their payloads (headers come on top).
    (ping_json,) = out.rglob("ping.json")
    counts = json.loads(ping_json.read_text())["counts"]
    payload = 64 * (counts["samples"] + counts["warmup"])
    traffic = record["network"]["traffic"]["hosts"]
    assert traffic["c"]["rx_bytes"] >= 2 * payload and traffic["c"]["tx_bytes"] >= 2 * payload
    assert traffic["a"]["tx_bytes"] >= payload and traffic["a"]["rx_bytes"] >= payload
    assert not alive(service["pid"]), "the broker outlived its run"
    assert {h["namespace"] for h in record["network"]["hosts"].values()} & netns.existing() == set()


@pytest.mark.parametrize(
    "driver,transport",
    [
        ("zeromq", "tcp"),
        pytest.param("cyclonedds", "udp", marks=SWEEP),
        pytest.param("udp", "broadcast", marks=SWEEP),
    ],
)
def test_a_subscriber_beside_its_publisher_and_one_across_both_get_every_message(
    tmp_path, driver, transport
):
    # zeromq's sub-1 was once given only the other host as its peer, looked for its
    # publisher there alone and never matched.
    out = tmp_path / "results"
    proc = subprocess.run(
        [
            str(LAUNCHER),
            "pubsub",
            "--driver",
            driver,
            "--transport",
            transport,
            "--size",
            "64",
            "--count",
            "200",
            "--rate",
            "1000",
            "--subscribers",
            "2",
            "--host",
            "a",
            "--host",
            "b",
            "--place",
            "pub=a",
            "--place",
            "sub-1=a",
            "--place",
            "sub-2=b",
            "--results",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
        env=cli_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = [p.parent for p in out.rglob("run.json")]
    for sub in ("sub-1", "sub-2"):
        counts = json.loads((run / f"{sub}.json").read_text())["counts"]
        assert counts["sent"] == 200 and counts["received"] + counts["lost"] == 200, counts
        assert counts["received"] > 0 and counts["corrupted"] == 0, counts
    network = json.loads((run / "run.json").read_text())["network"]
    assert set(network["hosts"]) == {"a", "b"}


def test_hosts_on_two_networks_talk_through_a_broker_on_both_and_not_directly(tmp_path):
    # a (left) and b (right) share no network; r is on both. Through a broker on r every
    # round trip arrives; peer to peer (zeromq over TCP, a to b) nothing can.
    def ping(driver, *extra):
        out = tmp_path / driver
        proc = subprocess.run(
            [str(LAUNCHER), "ping", "--driver", driver, "--count", "100", "--match-timeout", "3",
             "--host", "a:networks=left", "--host", "b:networks=right",
             "--host", "r:networks=left+right", "--place", "ping=a", "--place", "pong=b",
             *extra, "--results", str(out), "--quiet"],
            capture_output=True, text=True, timeout=180, cwd=REPO, env=cli_env(tmp_path),
        )  # fmt: skip
        (record,) = records(out)
        return proc, record

    proc, record = ping("mqtt", "--place", "broker=r")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (ping_json,) = (tmp_path / "mqtt").rglob("ping.json")
    assert json.loads(ping_json.read_text())["counts"]["received"] == 100
    assert record["network"]["hosts"]["a"]["link"]["networks"] == ["left"]
    # Calibrated only where a link can be measured: a to r, never a to b.
    assert [c["hosts"] for c in record["network"]["calibration"]] == [["a", "r"]]
    proc, record = ping("zeromq")
    assert proc.returncode != 0 and record["status"] != "ok"
    pings = list((tmp_path / "zeromq").rglob("ping.json"))
    assert not pings or not json.loads(pings[0].read_text())["counts"]["received"]
