"""`psbench drivers` and `psbench env`: what they report and its shape."""

import json

from conftest import run_cli
from psbench.base import manifests

CAPABILITY_SETS = ("reliability", "durability", "history", "notify", "transports", "option_keys")


def test_drivers_json_lists_baselines_with_capabilities(driver_libs, results):
    proc = run_cli(["drivers", "--json"], results)
    assert proc.returncode == 0, proc.stderr
    listed = {d["name"]: d for d in json.loads(proc.stdout)}
    for name in ("udp", "shm"):
        assert name in listed, f"{name} missing from {sorted(listed)}"
        entry = listed[name]
        assert entry["error"] is None
        describe = entry["describe"]
        assert describe["name"] == name
        assert isinstance(describe["version"], str) and describe["version"]
        assert describe["abi_version"] == 8
        caps = describe["capabilities"]
        for key in CAPABILITY_SETS:
            assert isinstance(caps[key], list), key
            assert all(isinstance(v, str) for v in caps[key]), key
        # history may be empty: a driver without a history setting (udp) has none.
        for key in ("reliability", "durability", "notify", "transports"):
            assert caps[key], f"{name}: empty capability set {key}"
        assert set(caps["reliability"]) <= {"best_effort", "reliable"}
        assert set(caps["notify"]) <= {"listener", "wait", "poll"}
        assert isinstance(caps["max_payload"], int) and caps["max_payload"] >= 32
        assert isinstance(caps["loan"], bool)  # derived: loan() and write_loan() present
        # One status per service the driver's manifest names, each a yes/no.
        assert [s["name"] for s in entry["services"]] == [
            e.rpartition(":")[2] for e in manifests.service_entries(name)
        ]
        for service in entry["services"]:
            assert isinstance(service["installed"], bool)
            assert isinstance(service["running"], bool)


def test_drivers_table_names_baselines(driver_libs, results):
    proc = run_cli(["drivers"], results)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["driver", "version"]
    assert {line.split()[0] for line in lines[2:]} >= {"udp", "shm"}


def test_env_json_keys_and_types(results):
    proc = run_cli(["env", "--json"], results)
    assert proc.returncode == 0, proc.stderr
    env = json.loads(proc.stdout)
    assert env["format"] == "psbench-env/1"
    assert isinstance(env["kernel"], str)
    assert isinstance(env["logical_cpus"], int) and env["logical_cpus"] >= 1
    for key in ("online_cpus", "isolated_cpus"):
        assert env[key] is None or all(isinstance(c, int) for c in env[key]), key
    assert isinstance(env["allowed_cpus"], list)
    assert isinstance(env["cpufreq_governor"], (dict, str))
    assert set(env["cpuidle"]) == {"driver", "governor"}
    assert env["haltpoll"] is None or isinstance(env["haltpoll"], dict)
    assert set(env["virtualization"]) == {"systemd_detect_virt", "hypervisor_flag"}
    assert env["load_average"] is None or len(env["load_average"]) == 3
    for key in ("rlimit_rtprio", "rlimit_memlock_bytes"):
        assert set(env[key]) == {"soft", "hard"}
        assert all(isinstance(v, int) or v == "unlimited" for v in env[key].values())
    assert env["sched_rt_runtime_us"] is None or isinstance(env["sched_rt_runtime_us"], int)
    assert isinstance(env["is_root"], bool)
    assert isinstance(env["cpu_dma_latency_writable"], bool)
    assert set(env["smt"]) == {"control", "active"}
    assert isinstance(env["python"], str) and isinstance(env["psbench"], str)
    assert set(env["git"]) == {"commit", "dirty"}


def test_env_table(results):
    proc = run_cli(["env"], results)
    assert proc.returncode == 0, proc.stderr
    names = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    assert {"kernel", "cpuidle.driver", "is_root", "sched_rt_runtime_us"} <= names


def test_service_entries_name_the_transport_that_needs_them():
    from psbench.run.drivers import service_status

    only_shm = service_status("shm:iox-roudi", running={"iox-roudi"})
    assert (only_shm.name, only_shm.transport, only_shm.running) == ("iox-roudi", "shm", True)
    always = service_status("surely-not-installed-broker", running=set())
    assert always.transport is None and not always.installed and not always.running


def test_a_driver_not_built_is_listed_with_the_command_that_builds_it(
    driver_libs, tmp_path, monkeypatch
):
    import pytest

    from psbench.base.errors import UserError
    from psbench.run import drivers

    # The real drivers' folders, and two that were never built: one built with the
    # others, one built on request (a heavy one).
    for real in manifests.driver_names():
        (tmp_path / real).symlink_to(manifests.DRIVERS_DIR / real)
    source = ('build = "from-source"\n[source]\nsystem = "srcmw"\nversion = "3.1"\n'
              'build_minutes = 42\n[[source.trees]]\nname = "srcmw"\n')  # fmt: skip
    for name, build in (("plainmw", ""), ("heavymw", 'build = "on-request"\n'),
                        ("sourcemw", source)):  # fmt: skip
        (tmp_path / name).mkdir()
        (tmp_path / name / "CMakeLists.txt").write_text("")
        (tmp_path / name / "manifest.toml").write_text('architecture = "broker"\n' + build)
    monkeypatch.setattr(manifests, "DRIVERS_DIR", tmp_path)
    manifests.load.cache_clear()
    try:
        infos = {i.name: i for i in drivers.discover()}
        assert infos["heavymw"].library is None
        assert infos["heavymw"].build_command == "make driver-heavymw"
        assert infos["plainmw"].build_command == "make build"
        assert infos["udp"].library is not None and infos["udp"].build_command is None
        with pytest.raises(UserError, match=r"'heavymw' is not built; `make driver-heavymw`"):
            drivers.find_driver("heavymw")
        # One built from source: the same command, and what it will take.
        assert infos["sourcemw"].build_command == "make driver-sourcemw"
        assert infos["sourcemw"].build_hint == (
            "`make driver-sourcemw` builds it (srcmw 3.1 from source, about 42 min on 2 "
            "cores: docs/source-builds.md)")  # fmt: skip
    finally:
        manifests.load.cache_clear()
