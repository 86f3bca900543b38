"""The credentials psbench makes for secured runs (run/security/): judged by openssl
itself, never by psbench's own code; where they live and that nothing outlives psbench,
however it ends; and which requests for security are refused before anything starts."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import python_env, run_cli
from psbench.run.security import credentials
from psbench.run.security.session import Session, problem
from psbench.run.spec import MeasureSpec


def _openssl(*args) -> str:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, check=True)
    return done.stdout


def test_issued_certificates_verify_against_their_ca_only(tmp_path):
    ca = credentials.make_authority(tmp_path / "a", "ca")
    other = credentials.make_authority(tmp_path / "b", "other-ca")
    good = credentials.issue(ca, tmp_path / "good", "psbench-sub")
    stranger = credentials.issue(other, tmp_path / "stranger", "psbench-sub")
    expired = credentials.issue(ca, tmp_path / "expired", "psbench-sub", expired=True)
    assert credentials.verify(ca.cert, good.cert) is None
    assert credentials.verify(ca.cert, stranger.cert) == "unable to get local issuer certificate"
    assert credentials.verify(ca.cert, expired.cert) == "certificate has expired"
    # Subject as DDS permissions name it; an unencrypted PKCS#8 key.
    assert "CN = psbench-sub" in _openssl("x509", "-in", str(good.cert), "-noout", "-subject")
    assert good.key.read_text().startswith("-----BEGIN PRIVATE KEY-----")


def test_a_server_certificate_names_its_addresses(tmp_path):
    ca = credentials.make_authority(tmp_path, "ca")
    server = credentials.issue(
        ca, tmp_path / "s", "psbench-broker", ips=("127.0.0.1", "198.18.0.2")
    )
    text = _openssl("x509", "-in", str(server.cert), "-noout", "-ext", "subjectAltName")
    assert "IP Address:127.0.0.1" in text and "IP Address:198.18.0.2" in text


def test_the_fingerprint_is_openssls(tmp_path):
    ca = credentials.make_authority(tmp_path, "ca")
    shown = _openssl("x509", "-in", str(ca.cert), "-noout", "-fingerprint", "-sha256")
    assert shown.strip().split("=", 1)[1] == ca.fingerprint


def _pubsub(**settings) -> MeasureSpec:
    values = dict(kind="pubsub", driver="x", driver_path=Path("x"), size=64, duration=3.0)
    return MeasureSpec(**{**values, **settings})


def test_only_the_receivers_get_the_fault():
    session = Session()
    try:
        spec = _pubsub(subscribers=2, security="tls", security_fault="expired")
        faulty = session.prepare_nodes(spec, "run1", None)
        assert faulty == {"sub-1": "expired", "sub-2": "expired"}
        ca = session.authority().cert
        pub = session.node_dir("run1", "pub")
        assert sorted(p.name for p in pub.iterdir()) == ["ca.pem", "cert.pem", "key.pem"]
        assert (pub / "ca.pem").read_text() == ca.read_text()
        assert credentials.verify(ca, pub / "cert.pem") is None
        for sub in ("sub-1", "sub-2"):
            assert credentials.verify(ca, session.node_dir("run1", sub) / "cert.pem") == (
                "certificate has expired"
            )
        lines = session.diagnosis("run1", faulty)
        assert len(lines) == 2 and all("certificate has expired" in line for line in lines)
        wrong = _pubsub(kind="ping", security="tls", security_fault="wrong-ca")
        assert session.prepare_nodes(wrong, "run2", None) == {"pong": "wrong-ca"}
        pong = session.node_dir("run2", "pong")
        assert (pong / "ca.pem").read_text() != ca.read_text()  # it trusts the other CA
        assert credentials.verify(pong / "ca.pem", pong / "cert.pem") is None
        session.forget_run("run1")
        assert not session.node_dir("run1", "pub").exists()
    finally:
        root = session._root
        session.close()
    assert root is not None and not root.exists()


def test_secured_runs_are_refused_before_anything_starts():
    assert problem(_pubsub(), ["udp"]) is None
    assert problem(_pubsub(security_fault="expired"), ["udp"])[0] == "security_fault"
    refused = problem(_pubsub(security="tls"), ["udp"])
    assert refused == ("security", "udp takes no security mode (its manifest declares none)")
    assert problem(_pubsub(security="tls"), ["not-a-driver"])[0] == "security"
    # Permissions that deny are checked only under access control.
    refused = problem(_pubsub(security="auth", security_fault="deny"), ["cyclonedds"])
    assert refused[0] == "security_fault" and "deny needs a mode with access control" in refused[1]
    assert problem(_pubsub(security="access", security_fault="deny"), ["cyclonedds"]) is None
    by_hand = _pubsub(options=["security_dir=/tmp/mine"])
    assert problem(by_hand, ["udp"])[0] == "options"


@pytest.mark.parametrize("how", ["exit", "sigkill"])
def test_the_credentials_folder_outlives_psbench_in_no_case(tmp_path, how):
    """Made by a psbench process that then exits, or is killed with SIGKILL (its keeper
    removes the folder: docs/security.md)."""
    code = (
        "import sys\n"
        "from psbench.run.security.session import session\n"
        "s = session()\n"
        "s.authority()\n"
        "print(s.root, flush=True)\n"
        "sys.stdin.readline()\n"  # until the test has seen the folder
    )
    env = python_env()
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    root = Path(proc.stdout.readline().strip())
    assert (root / "authorities" / "ca.key").exists()
    if how == "sigkill":
        proc.send_signal(signal.SIGKILL)
    proc.stdin.close()
    proc.wait(timeout=30)
    for _ in range(100):  # the keeper notices end-of-file, then removes it
        if not root.exists():
            break
        time.sleep(0.1)
    assert not root.exists()


def test_a_mode_the_driver_does_not_declare_exits_2(driver_libs, results):
    proc = run_cli(["ping", "--driver", "udp", "--count", "10", "--security", "tls"], results)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "psbench: error: security: udp takes no security mode (its manifest declares none)"
    ]
    assert not list(Path(results).glob("*/run.json"))  # nothing ran
