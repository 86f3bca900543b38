"""DDS Security in the two DDS drivers, end to end: every mode delivers every sample intact
between two processes (`psbench ping|pubsub --security MODE`); a node without security
and a secured one never talk; bad credentials (wrong CA, expired certificate, permissions
that deny every topic) fail the run with the faulty side receiving nothing and the cause
named; a bad mode or a missing file is refused with exit 2, naming it."""

import json
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import only_run, run_cli
from driver_checks import check_bad_credentials_failed, check_counts, drivers_fixture, load
from psbench.run.security import credentials, dds_documents

DRIVERS = ["cyclonedds", "fastdds"]
NODE_TIMEOUT_S = 60


dds_libs = drivers_fixture("dds_libs", DRIVERS)


def _ping(results: Path, driver: str, *args: str) -> subprocess.CompletedProcess:
    argv = ["ping", "--driver", driver, "--size", "64", "--count", "300", "--warmup", "20"]
    return run_cli([*argv, "--check-pattern", *args], results)


@pytest.mark.parametrize("mode", dds_documents.MODES)
@pytest.mark.parametrize("driver", DRIVERS)
def test_every_mode_delivers_every_sample_intact(dds_libs, results, driver, mode):
    proc = _ping(results, driver, "--security", mode)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert record["security"]["mode"] == mode and record["security"]["fault"] is None
    ping, pong = load(record["_dir"], "ping"), load(record["_dir"], "pong")
    check_counts(ping, 300)
    assert pong["counts"]["write_errors"] == 0
    for summary in (ping, pong):  # the node records what the driver was given
        assert summary["config"]["options"]["security"] == mode
    # The credentials were the run's own, gone with it.
    assert not Path(ping["config"]["options"]["security_dir"]).exists()


@pytest.mark.parametrize("driver", DRIVERS)
def test_encrypted_fragmented_samples_arrive_intact(dds_libs, results, driver):
    # 16 KiB samples: every one is fragmented, each fragment protected.
    argv = ["pubsub", "--driver", driver, "--size", "16384", "--count", "300"]
    argv += ["--reliability", "reliable", "--history", "keep_all", "--check-pattern"]
    argv += ["--security", "encrypt"]
    proc = run_cli(argv, results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    check_counts(load(record["_dir"], "sub"), 300)


# fault -> what the run's error must say (openssl's words, or the permissions')
FAULTS = {
    "wrong-ca": "unable to get local issuer certificate",
    "expired": "certificate has expired",
    "deny": "permissions deny every topic",
}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("driver", DRIVERS)
def test_bad_credentials_fail_the_run_and_the_faulty_side_gets_nothing(
    dds_libs, results, driver, fault
):
    proc = _ping(results, driver, "--security", "encrypt", "--security-fault", fault,
                 "--match-timeout", "8")  # fmt: skip
    record = check_bad_credentials_failed(proc, results, fault, FAULTS[fault])
    pong = load(record["_dir"], "pong")
    assert pong["counts"]["received"] == 0, pong["counts"]  # the faulty side
    assert pong["exit_code"] != 0
    # Once pong has failed psbench may stop ping before it writes its summary.
    if (record["_dir"] / "ping.json").exists():
        ping = load(record["_dir"], "ping")
        assert ping["counts"]["received"] == ping["counts"]["samples"] == 0, ping["counts"]


def _credentials(tmp: Path, roles: list[str], mode: str) -> dict[str, Path]:
    """A folder per role with what psbench gives a secured node (run/security)."""
    ca = credentials.make_authority(tmp / "ca", "ca")
    folders = {}
    for role in roles:
        folder = tmp / role
        issued = credentials.issue(ca, folder, f"psbench-{role}")
        shutil.copyfile(ca.cert, folder / "ca.pem")
        dds_documents.write(folder, mode=mode, subject=issued.subject, ca=ca)
        folders[role] = folder
    return folders


def _node(node: Path, lib: Path, role: str, run_id: str, out: Path, *args: str):
    argv = [str(node), "--driver", str(lib), "--role", role, "--run-id", run_id]
    argv += ["--out", str(out), "--count", "100", "--match-timeout", "6", *args]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("secured", ["ping", "pong"])
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_node_without_security_never_talks_to_a_secured_one(
    node, dds_libs, tmp_path, driver, secured
):
    folders = _credentials(tmp_path / "credentials", [secured], "encrypt")
    run_id = "sec" + secrets.token_hex(5)
    out = tmp_path / "out"
    out.mkdir()
    options = ["--option", "security=encrypt", "--option", f"security_dir={folders[secured]}"]
    procs = {
        role: _node(
            node,
            dds_libs[driver],
            role,
            run_id,
            out,
            *(options if role == secured else []),
            *(["--check-pattern"] if role == "ping" else []),
        )  # fmt: skip
        for role in ("pong", "ping")
    }
    for proc in procs.values():
        proc.communicate(timeout=NODE_TIMEOUT_S)
    for role, proc in procs.items():
        summary = json.loads((out / f"{role}.json").read_text())
        assert summary["counts"]["received"] == 0, (role, summary["counts"])
        assert proc.returncode == 1 and "match timeout" in summary["error"], summary["error"]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_bad_mode_or_a_missing_file_is_refused_naming_it(node, dds_libs, tmp_path, driver):
    folder = _credentials(tmp_path, ["ping"], "encrypt")["ping"]

    def refusal_or_none(*options: str, transport: str = "udp") -> str | None:
        argv = [str(node), "--driver", str(dds_libs[driver]), "--role", "ping"]
        argv += ["--out", str(tmp_path / "out"), "--check", "--transport", transport]
        for option in options:
            argv += ["--option", option]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
        assert proc.returncode in (0, 2), (options, proc.stdout, proc.stderr)
        return proc.stdout + proc.stderr if proc.returncode == 2 else None

    def refusal(*options: str, transport: str = "udp") -> str:
        found = refusal_or_none(*options, transport=transport)
        assert found is not None, options
        return found

    assert f"{driver}: security=sign-only: not offered; the DDS Security modes are" in refusal(
        "security=sign-only", f"security_dir={folder}"
    )
    assert "security_dir='(missing)'" in refusal("security=encrypt")
    assert "is not an absolute path" in refusal("security=access", "security_dir=relative/dir")
    # check() opens no file (an experiment's check passes a folder made only for the run).
    assert refusal_or_none("security=access", f"security_dir={tmp_path}/nowhere") is None
    if driver == "cyclonedds":  # its shared memory is outside DDS Security (README)
        assert "security=encrypt: transport shm hands samples over iceoryx" in refusal(
            "security=encrypt", f"security_dir={folder}", transport="shm"
        )
    if driver == "fastdds":  # it takes domains up to 232; the documents cover up to 230
        assert "domain_id=231 is outside the domains" in refusal(
            "security=encrypt", f"security_dir={folder}", "domain_id=231"
        )
    # A file missing when the participant is created: an error naming it.
    (folder / "permissions.p7s").unlink()
    argv = [str(node), "--driver", str(dds_libs[driver]), "--role", "ping", "--out",
            str(tmp_path / "run"), "--transport", "udp", "--match-timeout", "2", "--option",
            "security=auth", "--option", f"security_dir={folder}"]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
    assert proc.returncode != 0
    assert f"{folder}/permissions.p7s is missing or unreadable" in proc.stdout + proc.stderr


def test_a_mode_the_manifest_does_not_list_is_refused_before_anything_starts(dds_libs, results):
    proc = run_cli(["ping", "--driver", "cyclonedds", "--security", "tls"], results)
    assert proc.returncode == 2
    assert "not tls" in proc.stderr and "encrypt-submessage" in proc.stderr
    assert not results.exists() or not list(results.rglob("run.json"))
