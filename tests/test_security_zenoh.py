"""security=tls in the zenoh driver, end to end through `./psbench ping|pubsub --security
tls`: peers (the run's own TLS endpoints) and clients of the zenohd psbench starts with
its tls_config deliver every sample intact; on loopback the traffic is TLS records and the
payload pattern is nowhere (while a plaintext run shows it: the capture works); bad
credentials (wrong CA, expired certificate) fail the run, the faulty side receives
nothing and the error names the cause; transport shm, a bad mode and a missing file are
refused, naming them; nothing is left behind (conftest, and the router's port)."""

import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import live_processes, only_run, run_cli
from driver_checks import check_bad_credentials_failed, check_counts, load
from lo_capture import captured, tcp_segment
from psbench.run.security import credentials
from test_services_outlive import listening
from wire_pattern import plain_pattern

DRIVER = "zenoh"
ROUTER = "zenohd"
TRANSPORTS = ["peer", "client"]
NODE_TIMEOUT_S = 60
# The peers' rendezvous port (drivers/zenoh/src/settings.rs): 20000 + FNV-1a-32(run id)
# % 12768.
PORT_FIRST, PORT_COUNT = 20000, 12768

pytestmark = pytest.mark.xdist_group("zenoh")


@pytest.fixture(scope="module")
def zenoh(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: make driver-zenoh")
    return driver_libs[DRIVER]


def _fnv1a32(text: str) -> int:
    h = 0x811C9DC5
    for b in text.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


# zenoh 1.10.2's TLS link reads and writes one rustls connection from two tasks, each with
# its own lock (zenoh-link-tls unicast.rs, get_mut_socket): a write that lands while the
# read side processes a post-handshake message (a TLS 1.3 session ticket, just after the
# link opened) gets rustls's placeholder error "handshake not complete", and zenoh closes
# the transport. The run fails naming it (drivers/zenoh/README.md, "Known problems"); it
# is zenoh's race, about 1 run in 10 to 20 on this loaded machine: such a run is kept
# aside and made once more.
ZENOH_TLS_RACE = "TX task failed: handshake not complete"


def _run(results: Path, kind: str, transport: str, *args: str):
    argv = [kind, "--driver", DRIVER, "--transport", transport, "--check-pattern", *args]
    proc = run_cli(argv, results)
    if proc.returncode != 0 and ZENOH_TLS_RACE in proc.stderr:
        results.rename(results.with_name(results.name + "-zenoh-tls-race"))
        proc = run_cli(argv, results)
    return proc


def _router_gone(results: Path, record: dict) -> None:
    if record["services"]:
        [service] = record["services"]
        assert service["name"] == ROUTER and service["started_by_psbench"]
        assert live_processes(ROUTER, str(results)) == []
        assert not listening(service["address"]), "zenohd's port is still open"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tls_delivers_every_sample_intact(zenoh, results, transport):
    # 16 KiB: every sample spans several TLS records (16 KiB of plaintext at most each).
    proc = _run(results, "pubsub", transport, "--security", "tls", "--size", "16384",
                "--count", "500", "--reliability", "reliable", "--history", "keep_all")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert record["security"]["mode"] == "tls" and record["security"]["fault"] is None
    sub, pub = load(record["_dir"], "sub"), load(record["_dir"], "pub")
    check_counts(sub, 500)
    for summary in (sub, pub):  # the node records what the driver was given
        assert summary["config"]["options"]["security"] == "tls"
    # The credentials were the run's own, gone with it.
    assert not Path(sub["config"]["options"]["security_dir"]).exists()
    assert [s["name"] for s in record["services"]] == ([ROUTER] if transport == "client" else [])
    _router_gone(results, record)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tls_ping_pong(zenoh, results, transport):
    proc = _run(results, "ping", transport, "--security", "tls", "--size", "64",
                "--count", "300")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    check_counts(load(record["_dir"], "ping"), 300)
    _router_gone(results, record)


# ---- what is on the wire ------------------------------------------------------------

TLS_APPLICATION_DATA = b"\x17\x03\x03"  # a TLS 1.2/1.3 application data record's header


def _the_runs_port(record: dict) -> int:
    """The TCP port every byte of the run crossed: zenohd's, or the peers' rendezvous."""
    if record["services"]:
        return int(record["services"][0]["address"].rsplit(":", 1)[1])
    return PORT_FIRST + _fnv1a32(record["run_id"]) % PORT_COUNT


def _captured_run(results: Path, transport: str, *security: str) -> list[bytes]:
    """The payloads of the TCP segments on the run's own port, from a run whose capture
    dropped nothing (lo_capture)."""
    records = []

    def run():
        proc = _run(results, "ping", transport, "--size", "1024", "--count", "200", *security)
        assert proc.returncode == 0, proc.stderr
        record = only_run(results)
        assert record["status"] == "ok", record.get("message")
        shutil.rmtree(results)  # the next run's record is then the only one
        records.append(record)

    segments = captured(tcp_segment, run)
    port = _the_runs_port(records[-1])
    return [p for s, d, p in segments if port in (s, d)]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_on_loopback_the_pattern_is_readable_in_plaintext_and_nowhere_with_tls(
    zenoh, results, transport
):
    plain = _captured_run(results, transport)
    assert len(plain) >= 400  # 200 pings and 200 pongs at least, plus the warm-up
    assert any(plain_pattern(p) for p in plain)
    assert not any(p.startswith(TLS_APPLICATION_DATA) for p in plain)
    secured = _captured_run(results, transport, "--security", "tls")
    assert len(secured) >= 400
    assert not any(plain_pattern(p) for p in secured)
    assert sum(p.startswith(TLS_APPLICATION_DATA) for p in secured) >= 400


# ---- bad credentials ----------------------------------------------------------------

# fault -> what the run's error must say (openssl's words, psbench's diagnosis)
FAULTS = {
    "wrong-ca": "unable to get local issuer certificate",
    "expired": "certificate has expired",
}
# fault -> rustls's words for it, in the driver's own error (zenoh's TLS link)
DRIVER_CAUSE = {"wrong-ca": "UnknownIssuer", "expired": "Expired"}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_bad_credentials_fail_the_run_and_the_faulty_side_gets_nothing(
    zenoh, results, transport, fault
):
    proc = _run(results, "ping", transport, "--size", "64", "--count", "300",
                "--security", "tls", "--security-fault", fault, "--match-timeout", "8")  # fmt: skip
    record = check_bad_credentials_failed(proc, results, fault, FAULTS[fault])
    # zenoh's handshake error (rustls's words) in the node's error that saw it.
    assert DRIVER_CAUSE[fault] in proc.stderr, proc.stderr
    exits = {p["name"]: p["exit_code"] for p in record["processes"]}
    assert exits["pong"] != 0 and exits["ping"] != 0, exits
    # The faulty side and the sound side received nothing (a node stopped before it
    # wrote its summary received nothing it could count either).
    for role in ("pong", "ping"):
        if (record["_dir"] / f"{role}.json").exists():
            assert load(record["_dir"], role)["counts"]["received"] == 0, role
    _router_gone(results, record)


def _listening_on(port: int) -> bool:
    """Whether a socket of this machine listens on the TCP port (/proc/net/tcp: no
    connection is made, so the listener sees no handshake)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
            return True
    return False


# fault -> what the faulty node, dialling, must say: it does not trust the sound one's
# certificate (wrong CA), or the sound one refused its own (expired)
CONNECTOR_CAUSE = {"wrong-ca": "UnknownIssuer", "expired": "CertificateExpired"}


@pytest.mark.parametrize("fault", list(CONNECTOR_CAUSE))
def test_a_faulty_peer_that_dials_fails_naming_the_cause(node, zenoh, tmp_path, fault):
    # psbench starts the receiving role first, so in its runs the faulty peer listens;
    # here the sound one listens (started first) and the faulty one dials it.
    ca = credentials.make_authority(tmp_path / "ca", "ca")
    other = credentials.make_authority(tmp_path / "other", "other")
    run_id = "zt" + secrets.token_hex(5)
    out = tmp_path / "out"
    out.mkdir()

    def start(role: str, authority, expired: bool) -> subprocess.Popen:
        folder = tmp_path / role
        credentials.issue(authority, folder, f"psbench-{role}", expired=expired)
        shutil.copyfile(authority.cert, folder / "ca.pem")
        argv = [str(node), "--driver", str(zenoh), "--role", role, "--run-id", run_id]
        argv += ["--out", str(out), "--count", "100", "--match-timeout", "4"]
        argv += ["--option", "security=tls", "--option", f"security_dir={folder}"]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    sound = start("ping", ca, expired=False)
    port = PORT_FIRST + _fnv1a32(run_id) % PORT_COUNT
    for _ in range(200):  # bounded: 10 s
        if _listening_on(port) or sound.poll() is not None:
            break
        time.sleep(0.05)
    assert _listening_on(port), "the sound peer never listened"
    faulty = start("pong", other if fault == "wrong-ca" else ca, expired=fault == "expired")
    _, faulty_err = faulty.communicate(timeout=NODE_TIMEOUT_S)
    sound.communicate(timeout=NODE_TIMEOUT_S)
    assert faulty.returncode != 0 and sound.returncode != 0
    assert CONNECTOR_CAUSE[fault] in faulty_err, faulty_err
    pong, ping = load(out, "pong"), load(out, "ping")
    assert pong["counts"]["received"] == ping["counts"]["received"] == 0
    # The sound listener saw the failed handshake (zenoh's log) and names it too.
    assert "a TLS handshake failed" in ping["error"], ping["error"]


# fault -> what the error says across hosts: whichever side reports first (a peer there
# keeps dialling in the background, so the cause reaches a reader waiting for data)
ACROSS_HOSTS_CAUSE = {"wrong-ca": ("UnknownCA", "UnknownIssuer"), "expired": ("Expired",)}


@pytest.mark.skipif(os.geteuid() != 0, reason="emulated hosts need root (CI is)")
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_across_hosts_tls_delivers_and_bad_credentials_fail_naming_the_cause(
    zenoh, results, transport
):
    hosts = ["--host", "a", "--host", "b", "--place", "ping=a", "--place", "pong=b"]
    proc = _run(results, "ping", transport, *hosts, "--count", "200", "--security", "tls")
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    check_counts(load(record["_dir"], "ping"), 200)
    _router_gone(results, record)
    for fault, causes in ACROSS_HOSTS_CAUSE.items():
        shutil.rmtree(results)
        proc = _run(results, "ping", transport, *hosts, "--count", "200", "--security", "tls",
                    "--security-fault", fault, "--match-timeout", "20")  # fmt: skip
        assert proc.returncode != 0
        record = only_run(results)
        assert record["status"] == "failed", record.get("message")
        assert FAULTS[fault] in proc.stderr, proc.stderr
        assert any(c in proc.stderr for c in causes), proc.stderr
        assert "match timeout" not in proc.stderr, proc.stderr
        pong = record["_dir"] / "pong.json"
        assert not pong.exists() or load(record["_dir"], "pong")["counts"]["received"] == 0
        _router_gone(results, record)


# ---- refusals -----------------------------------------------------------------------


def _credentials(tmp: Path, role: str) -> Path:
    ca = credentials.make_authority(tmp / "ca", "ca")
    folder = tmp / role
    credentials.issue(ca, folder, f"psbench-{role}")
    shutil.copyfile(ca.cert, folder / "ca.pem")
    return folder


def _node(node: Path, lib: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    argv = [str(node), "--driver", str(lib), "--role", "ping", "--out", str(tmp / "out")]
    argv += ["--run-id", "zt" + secrets.token_hex(5), "--match-timeout", "3", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=NODE_TIMEOUT_S)


def test_shm_a_bad_mode_and_a_lone_folder_are_refused(node, zenoh, tmp_path):
    def refusal(*options: str, transport: str = "peer") -> str:
        args = ["--check", "--transport", transport]
        for option in options:
            args += ["--option", option]
        proc = _node(node, zenoh, tmp_path, *args)
        assert proc.returncode == 2, (options, proc.stdout, proc.stderr)
        return proc.stdout + proc.stderr

    folder = str(tmp_path / "nowhere")  # a check opens nothing
    assert "zenoh: security=tls: transport shm hands messages" in refusal(
        "security=tls", f"security_dir={folder}", transport="shm"
    )
    assert "zenoh: security=encrypt: this driver supports security tls" in refusal(
        "security=encrypt", f"security_dir={folder}"
    )
    assert "needs security_dir=DIR" in refusal("security=tls")
    assert "without security=tls" in refusal(f"security_dir={folder}")


@pytest.mark.parametrize("missing", ["ca.pem", "cert.pem", "key.pem"])
def test_a_missing_file_is_an_error_naming_it(node, zenoh, tmp_path, missing):
    folder = _credentials(tmp_path, "ping")
    (folder / missing).unlink()
    proc = _node(node, zenoh, tmp_path, "--option", "security=tls",
                 "--option", f"security_dir={folder}")  # fmt: skip
    assert proc.returncode != 0
    assert f"cannot read {folder}/{missing}" in proc.stdout + proc.stderr


def test_a_mode_the_manifest_does_not_list_is_refused_before_anything_starts(zenoh, results):
    proc = run_cli(["ping", "--driver", DRIVER, "--security", "encrypt"], results)
    assert proc.returncode == 2
    assert "takes security tls" in proc.stderr and "not encrypt" in proc.stderr
    assert not results.exists() or not list(results.rglob("run.json"))
