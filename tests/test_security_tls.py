"""Mutual TLS to the brokers (--security tls, docs/security.md) through `./psbench pubsub`
with the brokers psbench starts: every sample arrives intact; the broker speaks only TLS
while it runs (its certificate, from the run's CA and for its address, as openssl sees
it; a plaintext client gets no answer of the protocol); bad credentials (--security-fault
wrong-ca, expired) fail the run with the cause named by the driver, the faulty subscriber
receives nothing, and nothing is left behind; a driver whose client library has no TLS
refuses the mode. Every driver whose manifest lists mode tls and a broker that serves it
for every run (tls_config) gets these (zenoh's router serves one transport of several:
tests/test_security_zenoh.py); the words a driver's library has for each fault are its
SUITE's (tests/driver_suite.py)."""

import importlib.util
import json
import socket
import subprocess
from pathlib import Path

import pytest

from conftest import (
    REPO,
    cli_in_background,
    live_processes,
    only_run,
    run_cli,
    run_records,
    wait_for_running,
)
from driver_checks import check_counts, load, require_built
from driver_suite import broker, broker_gone, capabilities, expect, said_all
from psbench.base import manifests

# Drivers whose broker serves mutual TLS to every run (its manifest: mode tls, a broker
# for all transports with a tls_config).
BROKERS = [
    n
    for n in manifests.driver_names()
    if manifests.TLS in manifests.load(n).security_modes
    and broker(n) is not None
    and broker(n).transport is None
    and (broker(n).tls_config or broker(n).tls_argv)
]
# Drivers with a broker and no security mode: they refuse it.
PLAINTEXT_BROKERS = [
    n for n in manifests.driver_names() if broker(n) and not manifests.load(n).security_modes
]
KIB = 1024


@pytest.fixture
def tmpdir_for_cli(tmp_path) -> Path:
    """The CLI's $TMPDIR: where its credentials folder (psbench-security-*) is made."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def built(driver: str, driver_libs) -> None:
    """Fails for a driver make test builds (kafka is built on request: make test does);
    skips one built from source, which most machines lack (require_built)."""
    if manifests.load(driver).source is not None:
        require_built(driver)
    elif driver not in driver_libs:
        pytest.fail(f"the {driver} driver is not built: run `make driver-{driver}`")


def check_nothing_left(driver: str, results: Path, tmpdir: Path):
    for record in run_records(results):
        assert [broker_gone(s) for s in record.get("services") or []] in ([], [[]])
    program = expect(driver).broker_program or broker(driver).name
    assert live_processes(program, str(results)) == []
    assert live_processes("sh", str(results)) == []  # a launcher (rabbitmq's)
    assert list(tmpdir.iterdir()) == []  # the credentials went with psbench


@pytest.mark.parametrize("size", [64, 16 * KIB])
@pytest.mark.parametrize("driver", BROKERS)
def test_secured_pubsub_delivers_every_sample_intact(
    driver, size, driver_libs, results, tmpdir_for_cli
):
    built(driver, driver_libs)
    count = 2000
    proc = run_cli(
        ["pubsub", "--driver", driver, "--security", "tls", "--check-pattern"]
        + ["--size", str(size), "--count", str(count), "--rate", "5000"],
        results,
        TMPDIR=str(tmpdir_for_cli),
    )
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert record["security"]["mode"] == "tls" and record["security"]["fault"] is None
    [broker] = record["services"]
    assert broker["security"] == "tls" and broker["started_by_psbench"]
    for process in record["processes"]:
        assert "security=tls" in process["argv"], process["argv"]
    summary = load(record["_dir"], "sub")
    check_counts(summary, count)
    assert summary["counts"]["received"] == count
    # No key of the run is kept beside its figures.
    assert not [p for p in Path(record["_dir"]).rglob("*") if p.name.endswith("key.pem")]
    check_nothing_left(driver, results, tmpdir_for_cli)


def _plaintext_exchange(address: str, greeting: bytes) -> bytes:
    """What a plaintext client gets back for a protocol greeting (b"" when the broker
    closed the connection)."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.settimeout(5)
        try:
            s.sendall(greeting)
            got = b""
            while len(got) < 4096:
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
        except (TimeoutError, ConnectionResetError, BrokenPipeError):
            return got if "got" in locals() else b""
    return got


# MQTT 3.1.1 CONNECT (client id "p", clean session), AMQP 0-9-1's protocol header, and a
# Kafka ApiVersions v0 request (correlation id 1, no client id).
MQTT_CONNECT = bytes([0x10, 13, 0, 4]) + b"MQTT" + bytes([4, 2, 0, 60, 0, 1]) + b"p"
AMQP_HEADER = b"AMQP\x00\x00\x09\x01"
KAFKA_API_VERSIONS = bytes.fromhex("0000000a0012000000000001ffff")
GREETINGS = {"mqtt": MQTT_CONNECT, "rabbitmq": AMQP_HEADER, "kafka": KAFKA_API_VERSIONS}


def _openssl_sees(address: str, ca: Path) -> str:
    host, _ = address.rsplit(":", 1)
    done = subprocess.run(
        ["openssl", "s_client", "-connect", address, "-CAfile", str(ca), "-verify_return_error"]
        + ["-verify_ip", host, "-brief"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.stdout + done.stderr


def check_speaks_tls_only(driver: str, address: str, ca: Path):
    if driver == "nats":
        # NATS greets in plaintext (INFO) and then upgrades: the INFO requires TLS and a
        # client certificate, and a client that goes on in plaintext is cut off.
        reply = _plaintext_exchange(address, b"CONNECT {}\r\nPING\r\n")
        info = json.loads(reply.split(b"\r\n", 1)[0].removeprefix(b"INFO "))
        assert info["tls_required"] is True and info["tls_verify"] is True, info
        assert b"PONG" not in reply, reply
        return
    seen = _openssl_sees(address, ca)
    # The handshake from the client's side (TLS 1.3: before it shows its certificate).
    assert "Verification: OK" in seen, seen
    assert "CN = psbench-broker" in seen, seen
    if driver not in GREETINGS:
        return
    reply = _plaintext_exchange(address, GREETINGS[driver])
    # No CONNACK (0x20), no Connection.Start (a method frame, 0x01), no protocol header,
    # no Kafka response (its correlation id after the size).
    assert not reply.startswith((b"\x20", b"\x01", b"AMQP")), reply
    assert reply[4:8] != bytes.fromhex("00000001"), reply


@pytest.mark.long
@pytest.mark.parametrize("driver", BROKERS)
def test_the_broker_speaks_tls_only(driver, driver_libs, results, tmpdir_for_cli):
    """Probed while the run goes on: its broker, then the run still ends ok."""
    built(driver, driver_libs)
    args = ["pubsub", "--driver", driver, "--security", "tls", "--duration", "10", "--rate", "200"]
    with cli_in_background(args, results, TMPDIR=str(tmpdir_for_cli)) as proc:
        record = wait_for_running(results, proc)
        [broker] = record["services"]
        [ca] = tmpdir_for_cli.glob("psbench-security-*/authorities/ca.pem")
        check_speaks_tls_only(driver, broker["address"], ca)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert only_run(results)["status"] == "ok"
    check_nothing_left(driver, results, tmpdir_for_cli)


@pytest.mark.parametrize("fault", ["wrong-ca", "expired"])
@pytest.mark.parametrize("driver", BROKERS)
def test_bad_credentials_fail_the_run_and_the_subscriber_gets_nothing(
    driver, fault, driver_libs, results, tmpdir_for_cli
):
    built(driver, driver_libs)
    proc = run_cli(
        ["pubsub", "--driver", driver, "--security", "tls", "--security-fault", fault]
        + ["--count", "500"],
        results,
        TMPDIR=str(tmpdir_for_cli),
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    record = only_run(results)
    assert record["status"] == "failed", record["message"]
    assert record["security"]["fault"] == fault
    # The driver names the cause in its library's words, psbench in openssl's.
    words = expect(driver).tls_faults.get(fault)
    # The whole message when it fails (a tuple would be shortened in pytest's report).
    assert words is None or said_all(record["message"], (words,)), (
        f"{words!r} not in: {record['message']}"
    )
    assert "security fault (test hook)" in record["message"], record["message"]
    assert "bad credentials were not refused" not in record["message"]
    assert record["exit_codes"]["sub"] != 0
    summary_file = Path(record["_dir"]) / "sub.json"
    if summary_file.exists():
        assert load(record["_dir"], "sub")["counts"]["received"] == 0
    check_nothing_left(driver, results, tmpdir_for_cli)


@pytest.mark.parametrize("driver", PLAINTEXT_BROKERS)
def test_a_driver_without_security_modes_takes_none(driver, driver_libs, results):
    """The manifest declares no mode (psbench refuses it before anything starts), and the
    driver refuses the options itself, saying why (SUITE.refusals["security"])."""
    built(driver, driver_libs)
    proc = run_cli(["pubsub", "--driver", driver, "--security", "tls"], results)
    assert proc.returncode == 2
    assert f"{driver} takes no security mode" in proc.stderr, proc.stderr
    assert not list(results.glob("*/run.json"))
    checked = _node_check(driver, driver_libs, ["security=tls", "security_dir=/nonexistent"])
    assert checked.returncode == 2
    words = f"{driver}: security=tls: not offered; {expect(driver).refusals.get('security', '')}"
    if "security" not in capabilities(driver)["option_keys"]:  # no security option at all
        words = f"{driver}: option 'security' is not known"
    assert words in checked.stdout + checked.stderr


def _node_check(driver: str, driver_libs, options: list[str]):
    from psbench.base import paths

    argv = [str(paths.node_path()), "--driver", str(driver_libs[driver]), "--role", "pub"]
    argv += ["--option", "broker=127.0.0.1:9"]
    for option in options:
        argv += ["--option", option]
    return subprocess.run(argv + ["--check"], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("driver", BROKERS)
@pytest.mark.parametrize(
    "options, words",
    [
        (["security=encrypt", "security_dir=/x"], "security=encrypt: not offered; the only mode"),
        (["security=tls"], "security=tls: security_dir='(missing)' is not an absolute path"),
        (["security_dir=/x"], "security_dir is given without security=MODE"),
    ],
)
def test_a_driver_refuses_security_it_cannot_honour(driver, options, words, driver_libs):
    built(driver, driver_libs)
    checked = _node_check(driver, driver_libs, options)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert f"{driver}: " in checked.stdout + checked.stderr
    assert words in checked.stdout + checked.stderr


def _settings(text: str) -> set[str]:
    return {line for line in text.splitlines() if line.strip() and not line.startswith("#")}


def test_rabbitmqs_tls_config_is_its_launchers_template():
    """The manifest's tls_config is broker_launch.py --tls-template, not a copy that drifts."""
    path = REPO / "drivers" / "rabbitmq" / "broker_launch.py"
    spec = importlib.util.spec_from_file_location("broker_launch", path)
    launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch)
    [broker] = manifests.load("rabbitmq").services
    assert broker.tls_config.lstrip("\n") == launch.tls_template()
    assert "listeners.tcp = none" in broker.tls_config


def test_kafkas_tls_config_differs_from_its_config_in_the_listeners_only():
    [broker] = manifests.load("kafka").services
    plain, tls = _settings(broker.config), _settings(broker.tls_config)
    assert plain - tls == {
        "listeners=PLAINTEXT://{address}:{port},CONTROLLER://{address}:{second_port}",
        "advertised.listeners=PLAINTEXT://{address}:{port}",
        "inter.broker.listener.name=PLAINTEXT",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    }
    assert "ssl.client.auth=required" in tls - plain
    assert "listeners=SSL://{address}:{port},CONTROLLER://{address}:{second_port}" in tls


@pytest.mark.long
@pytest.mark.parametrize("driver", BROKERS)
def test_tls_to_a_broker_on_an_emulated_host(driver, driver_libs, results, tmpdir_for_cli):
    """The broker's certificate names its emulated host's address, which the clients on
    the other hosts verify."""
    built(driver, driver_libs)
    proc = run_cli(
        ["ping", "--driver", driver, "--size", "64", "--count", "100", "--security", "tls"]
        + ["--host", "a", "--host", "b", "--host", "c"]
        + ["--place", "ping=a", "--place", "pong=b", "--place", "broker=c"],
        results,
        TMPDIR=str(tmpdir_for_cli),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    [broker] = record["services"]
    assert broker["security"] == "tls" and broker["address"].startswith("198.18.0.3:")
    check_counts(load(record["_dir"], "ping"), 100)
    check_nothing_left(driver, results, tmpdir_for_cli)
