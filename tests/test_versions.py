"""Several versions of one middleware side by side (docs/versions.md): the manifests'
[[versions]], the versions psbench refuses (naming those it builds), a service of another
version started from its own executable under its own key, and, where they are built
here, a sweep of two versions of two middlewares whose runs record what they ran and
whose report compares the versions."""

import json
import shutil
import subprocess

import pytest

from conftest import REPO, refused_manifest, run_cli
from driver_checks import require_built
from experiment_files import run_experiment, write
from psbench.base import manifests
from psbench.base.errors import UserError
from psbench.run import drivers, services


def test_the_manifests_declare_their_versions():
    cyclone = manifests.load("cyclonedds@11.0.1")  # NAME@VERSION reads NAME's manifest
    assert cyclone.name == "cyclonedds"
    assert [(v.version, v.service) for v in cyclone.versions] == [("11.0.1", None)]
    assert [(v.version, v.service) for v in manifests.load("nats").versions] == [
        ("2.15.2", "nats-server")
    ]


@pytest.mark.parametrize(
    "entry, words",
    [
        ('version = "2.0"\n', "versions[0].version: give the version and its source trees"),
        ('version = "2.0"\ngo = "example.org/x@v2"\n', "versions[0].service: a version built"),
        (
            'version = "a@b"\n[[versions.trees]]\nname = "x"\n',
            "versions[0].version: 'a@b' is not a new version name",
        ),
    ],
)
def test_a_broken_versions_entry_is_refused_naming_it(mw_drivers_dir, entry, words):
    refused = refused_manifest(mw_drivers_dir, 'architecture = "broker"\n[[versions]]\n' + entry)
    assert "manifest.toml: " + words in refused


def test_a_version_psbench_does_not_build_is_refused_with_those_it_does(tmp_path):
    proc = subprocess.run([str(REPO / "scripts" / "build-version"), "cyclonedds", "9.9",
                           str(tmp_path)], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2
    assert "cyclonedds 9.9: psbench does not build this version" in proc.stderr
    assert "make driver-cyclonedds VERSION=11.0.1" in proc.stderr
    with pytest.raises(UserError, match="does not build version 9.9 of cyclonedds; it builds "
                                        "11.0.1 beside the default"):  # fmt: skip
        drivers.find_driver("cyclonedds@9.9")


def test_a_version_not_built_says_what_builds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PSBENCH_BUILD", str(tmp_path))  # nothing built there
    with pytest.raises(UserError, match=r"'nats@2.15.2' is not built; `make driver-nats "
                                        r"VERSION=2.15.2` builds it \(its nats-server at "
                                        r"version 2.15.2"):  # fmt: skip
        drivers.find_driver("nats@2.15.2")


def test_a_service_of_another_version_runs_its_own_executable_under_its_own_key(tmp_path):
    # Debian's nats-server, copied: stands for another version's program (its path differs).
    other = tmp_path / "bin" / "nats-server"
    other.parent.mkdir()
    shutil.copy2(shutil.which("nats-server"), other)
    describe = {
        "name": "nats",
        "capabilities": {"transports": ["tcp"]},
        "build": {"version": "9.9.9", "service_executables": {"nats-server": str(other)}},
    }
    plain = {"name": "nats", "capabilities": {"transports": ["tcp"]}}
    logs = tmp_path / "logs"
    logs.mkdir()
    with services.ServicePool() as pool:
        [versioned] = pool.ensure(describe, None, logs)
        [default] = pool.ensure(plain, None, logs)
        assert versioned is not default
        assert versioned.argv[0] == str(other) and default.argv[0] != str(other)
        assert sorted(pool.services) == ["nats-server", "nats-server@9.9.9"]
        assert services.instance_keys(describe, None, [], None, False) == {"nats-server@9.9.9"}


VERSIONS = """
    name: versions
    defaults: {kind: ping, count: 300, warmup: 50}
    matrix:
      driver: [nats, nats@2.15.2, cyclonedds, cyclonedds@11.0.1]
    repetitions: 2
    """


def test_two_versions_of_two_middlewares_in_one_sweep_are_recorded_and_compared(
    driver_libs, results, tmp_path
):
    for label in ("nats@2.15.2", "cyclonedds@11.0.1"):
        require_built(label)
    store = tmp_path / "store"
    proc = run_experiment(write(tmp_path, VERSIONS), results, "-o", str(store), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = {}
    for path in store.rglob("run.json"):
        record = json.loads(path.read_text())
        records.setdefault(record["spec"]["driver"], []).append(record)
    assert sorted(records) == ["cyclonedds", "cyclonedds@11.0.1", "nats", "nats@2.15.2"]
    for label, runs in records.items():
        assert len(runs) == 2 and all(r["status"] == "ok" for r in runs)
        build = runs[0]["driver"].get("build")
        assert (build is None) == ("@" not in label)  # what a version was built from
    assert records["cyclonedds@11.0.1"][0]["driver"]["version"].startswith("11.0.1")
    assert records["cyclonedds"][0]["driver"]["version"].startswith("0.10")
    assert records["cyclonedds@11.0.1"][0]["driver"]["build"]["sdk"]["trees"][0]["tag"] == "11.0.1"
    server = {label: runs[0]["services"][0]["version"] for label, runs in records.items()
              if label.startswith("nats")}  # fmt: skip
    assert "v2.15.2" in server["nats@2.15.2"] and "v2.15.2" not in server["nats"]
    report = run_cli(["report", str(store)], results)
    assert report.returncode == 0, report.stderr
    rows = [line.split() for line in report.stdout.splitlines()]
    compared = {(r[1], r[2]) for r in rows if len(r) > 3 and r[0] == "driver"}
    assert ("nats", "nats@2.15.2") in compared
    assert ("cyclonedds", "cyclonedds@11.0.1") in compared
