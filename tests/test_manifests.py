"""Each driver declares itself in drivers/<name>/manifest.toml (issue 16): its
architecture, whether it is a baseline floor, its packages and the services it needs.
Checked against what the built drivers say of themselves, against the packages setup
installs, and with broken manifests that must be refused naming the file and the field."""

import subprocess
import sys

import pytest

from conftest import REPO, refused_manifest
from psbench.base import manifests, paths
from psbench.base.errors import UserError
from psbench.run import drivers


def test_every_driver_folder_has_a_manifest_that_loads():
    names = manifests.driver_names()
    assert {"udp", "shm", "cyclonedds", "nats"} <= set(names)
    for name in names:
        assert manifests.load(name).architecture in manifests.ARCHITECTURES


def test_the_manifest_is_the_only_place_of_services_and_cleanup(driver_libs):
    # Driver ABI 5 dropped services and cleanup_command from the capabilities: the
    # manifest is their one source, and --describe no longer says either.
    node = paths.require_node()
    for name, library in driver_libs.items():
        capabilities = drivers.describe(node, library)["capabilities"]
        assert "services" not in capabilities and "cleanup_command" not in capabilities, name
    assert manifests.service_entries("cyclonedds") == ["shm:iox-roudi"]
    fastdds = REPO / "drivers" / "fastdds"
    assert manifests.cleanup_command("fastdds") == [sys.executable, f"{fastdds}/shm_clean.py"]


def test_setup_installs_every_package_a_manifest_names():
    listed = subprocess.run(
        ["bash", str(REPO / "scripts" / "setup-system"), "--list", "--with", "all"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.split()
    for name in manifests.driver_names():
        assert set(manifests.load(name).debian) <= set(listed), name


def test_setup_installs_a_driver_built_on_request_only_when_asked():
    def listed(*args):
        return subprocess.run(
            ["bash", str(REPO / "scripts" / "setup-system"), "--list", *args],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout.split()  # fmt: skip

    # kafka is built on request and alone needs librdkafka: installed with it, not before.
    assert manifests.load("kafka").build == "on-request"
    assert "librdkafka-dev" not in listed()
    assert "librdkafka-dev" in listed("--with", "kafka")
    assert "librdkafka-dev" in listed("--with", "all")
    for name in manifests.driver_names():
        if manifests.load(name).build == "on-request":
            assert set(manifests.load(name).debian) <= set(listed("--with", name)), name


BROKEN = {
    "not TOML": ("architecture = \n", "manifest.toml: cannot be read"),
    "unknown field": (
        'architecture = "broker"\nbaseline = false\ncolour = "blue"\n',
        "manifest.toml: colour: unknown field; the fields are architecture",
    ),
    "wrong kind": (
        'architecture = "broker"\nbaseline = "yes"\n',
        "manifest.toml: baseline: must be bool",
    ),
    "unknown architecture": (
        'architecture = "cloud"\n',
        "manifest.toml: architecture: give one of floor, peer-to-peer",
    ),
    "service without a name": (
        'architecture = "broker"\n[[services]]\nbroker = true\n',
        "manifest.toml: services[0].name: missing",
    ),
    "config file without a config": (
        'architecture = "broker"\n[[services]]\nname = "b"\nconfig_file = "b.conf"\n',
        "manifest.toml: services[0].config_file: give config (a template) or config_script",
    ),
    "a package that is not a string": (
        'architecture = "broker"\n[packages]\ndebian = [1]\n',
        "manifest.toml: packages.debian: must be a list of strings",
    ),
    "an unknown build": (
        'architecture = "broker"\nbuild = "sometimes"\n',
        "manifest.toml: build: give one of always, on-request, from-source",
    ),
    "built from source without saying from what": (
        'architecture = "peer-to-peer"\nbuild = "from-source"\n',
        'manifest.toml: source: a driver has a [source] table exactly when its build is "from-source"',
    ),
    "a source table of a driver built from packages": (
        'architecture = "peer-to-peer"\n[source]\nsystem = "x"\n',
        'manifest.toml: source: a driver has a [source] table exactly when its build is "from-source"',
    ),
    "a source without its version": (
        'architecture = "peer-to-peer"\nbuild = "from-source"\n[source]\nsystem = "x"\n'
        '[[source.trees]]\nname = "x"\n',
        "manifest.toml: source.version: missing",
    ),
    "a wire that is not a string": (
        'architecture = "peer-to-peer"\nwire = 7\n',
        "manifest.toml: wire: must be str",
    ),
    "a second port of a service that is no broker": (
        'architecture = "broker"\n[[services]]\nname = "d"\nsecond_port = true\n',
        "manifest.toml: services[0].second_port: only a broker (broker = true) has ports",
    ),
    "an executable that is not a string": (
        'architecture = "broker"\n[[services]]\nname = "b"\nexecutable = 1\n',
        "manifest.toml: services[0].executable: must be str",
    ),
    "from a driver without that service": (
        'architecture = "peer-to-peer"\n[[services]]\nname = "d"\nfrom = "other"\n',
        "manifest.toml: services[0].from: drivers/other declares no service 'd'",
    ),
    "tls among the modes, a broker without tls_config": (
        'architecture = "broker"\n[security]\nmodes = ["tls"]\n'
        '[[services]]\nname = "b"\nbroker = true\n',
        "manifest.toml: security.modes: tls needs every broker's tls_config; b has none",
    ),
    "tls_argv without tls_config": (
        'architecture = "broker"\n[[services]]\nname = "b"\nbroker = true\n'
        'tls_argv = ["{executable}"]\n',
        "manifest.toml: services[0].tls_argv: give tls_config too",
    ),
    "documents of an unknown kind": (
        'architecture = "peer-to-peer"\n[security]\nmodes = ["auth"]\ndocuments = "x"\n',
        "manifest.toml: security.documents: give one of dds-security",
    ),
    "none among the modes": (
        'architecture = "peer-to-peer"\n[security]\nmodes = ["none", "auth"]\n',
        "manifest.toml: security.modes: none is every driver's",
    ),
    "an unknown field of security": (
        'architecture = "peer-to-peer"\n[security]\nmode = ["auth"]\n',
        "manifest.toml: security.mode: unknown field; the fields are modes, documents",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_manifest_is_refused_naming_the_file_and_field(drivers_dir, case):
    text, words = BROKEN[case]
    for name in ("mw", "other"):
        (drivers_dir / name).mkdir()
        (drivers_dir / name / "CMakeLists.txt").write_text("")
    (drivers_dir / "other" / "manifest.toml").write_text('architecture = "floor"\n')
    assert words in refused_manifest(drivers_dir, text)


def test_a_folder_without_a_manifest_is_told_to_add_one(drivers_dir):
    (drivers_dir / "mw").mkdir()
    with pytest.raises(UserError, match="missing; every driver folder declares itself"):
        manifests.load("mw")


def test_cleanup_expands_the_driver_folder_and_the_interpreter(drivers_dir):
    (drivers_dir / "mw").mkdir()
    (drivers_dir / "mw" / "CMakeLists.txt").write_text("")
    (drivers_dir / "mw" / "manifest.toml").write_text(
        'architecture = "broker"\ncleanup = ["{python}", "{folder}/clean.py", "--x={port}"]\n'
    )
    assert manifests.cleanup_command("mw") == [
        sys.executable,
        f"{drivers_dir}/mw/clean.py",
        "--x={port}",  # only {folder} and {python} are placeholders here
    ]
    (drivers_dir / "plain").mkdir()
    (drivers_dir / "plain" / "CMakeLists.txt").write_text("")
    (drivers_dir / "plain" / "manifest.toml").write_text('architecture = "floor"\n')
    assert manifests.cleanup_command("plain") is None
    assert manifests.cleanup_command("not-a-driver") is None


def test_drivers_of_one_wire_are_found_from_their_manifests(drivers_dir):
    for name, text in (("a", 'wire = "rtps"\n'), ("b", 'wire = "rtps"\n'), ("c", "")):
        (drivers_dir / name).mkdir()
        (drivers_dir / name / "CMakeLists.txt").write_text("")
        (drivers_dir / name / "manifest.toml").write_text('architecture = "peer-to-peer"\n' + text)
    assert manifests.speaking("rtps") == ["a", "b"]
    assert manifests.speaking("mqtt") == []


def test_a_service_the_build_makes_is_found_under_the_build_directory(
    drivers_dir, tmp_path, monkeypatch
):
    from psbench.run.drivers import service_status
    from psbench.run.service_definitions import definition

    name = "psbench-test-routerd"  # on no PATH
    (drivers_dir / "mw").mkdir()
    (drivers_dir / "mw" / "CMakeLists.txt").write_text("")
    (drivers_dir / "mw" / "manifest.toml").write_text(
        f'architecture = "broker"\n[[services]]\nname = "{name}"\n'
        f'executable = "{{build}}/drivers/mw/bin/{name}"\nargv = ["{{executable}}", "--x"]\n'
    )
    build = tmp_path / "the-build"
    monkeypatch.setenv("PSBENCH_BUILD", str(build))
    assert not service_status(name, set()).installed  # not built yet
    exe = build / "drivers" / "mw" / "bin" / name
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    assert not service_status(name, set()).installed  # not executable
    exe.chmod(0o755)
    assert service_status(name, set()).path == str(exe)
    launch = definition(name).launch(tmp_path, 64)
    assert launch.argv == [str(exe), "--x"]
