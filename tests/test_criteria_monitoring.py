"""The monitoring criterion with the tools the drivers' builds make: Cyclone DDS's
`cyclonedds ls` (cyclonedds-python), NATS's `nats sub` (natscli) and iceoryx2's
`iox2 service list` (iceoryx2-cli) each run beside a
real run and show the run's own topic (yes, their output kept); the same tool with an
`expect` that names another topic is judged no. The manifest fields that take them
there ({build}, env, options, stop_signal) are read, and refused with one message when
wrong. The tools are built by make build-all only: the tests that run them are long
(make test-long)."""

import dataclasses
import json
import subprocess
import time
from pathlib import Path

import pytest

from conftest import refused_manifest, run_cli
from psbench.base import manifests, paths

# What the log of each tool shows of the run's own topic, from the run's id (its
# topic is psb_<run id>_data).
OWN_TOPIC = {
    "cyclonedds": "─ psb_{run_id}_data ─",
    "nats": 'Received on "psbench.{run_id}.psb_{run_id}_data"',
    "iceoryx2": 'PublishSubscribe("psb_{run_id}_data")',
}
# The injected fault's expect: the tool's line of another topic, which no run has.
ANOTHER_TOPIC = {
    "cyclonedds": "─ psb_[A-Za-z0-9]+_elsewhere ─",
    "nats": r'Received on "psbench\.[A-Za-z0-9]+\.psb_[A-Za-z0-9]+_elsewhere"',
    "iceoryx2": r'PublishSubscribe\("psb_[A-Za-z0-9]+_elsewhere"\)',
}
DRIVERS = list(OWN_TOPIC)


def tool_path(driver: str) -> Path:
    return Path(manifests.load(driver).monitor.argv[0].replace("{build}", str(paths.build_dir())))


def writing_into(folder: Path) -> list[int]:
    """pids of processes with a file of folder open (the tool writes its log there; other
    tests' tools, of this build too, write elsewhere)."""
    found = []
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        try:
            if fd.readlink().is_relative_to(folder):
                found.append(int(fd.parent.parent.name))
        except OSError:
            continue
    return sorted(set(found))


def run_id_of(folder: Path, run_dir: str) -> str:
    return json.loads((folder / run_dir / "run.json").read_text())["run_id"]


def require_tool(driver: str, driver_libs) -> None:
    """The tools are built by make build-all (make test-long), not by make test."""
    if driver not in driver_libs:
        pytest.skip(f"{driver} is not built")
    if not tool_path(driver).exists():
        pytest.fail(f"{tool_path(driver)} is missing: make build-all builds the monitoring tools")


@pytest.mark.long
@pytest.mark.parametrize("driver", DRIVERS)
def test_the_drivers_tool_observes_the_runs_own_topic(driver_libs, results, driver):
    require_tool(driver, driver_libs)
    proc = run_cli(["criteria", "--drivers", driver, "--criteria", "monitoring"], results,
                   timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (folder,) = results.glob("*-criteria")
    record = json.loads((folder / "criteria.json").read_text())
    (seen,) = [v for v in record["verdicts"] if v["criterion"] == "monitoring"]
    tool = tool_path(driver)
    if not tool.exists():  # built by make build-all / make driver-<name> only
        assert seen["verdict"] == "not testable here", seen
        assert f"{tool.name} is not built" in seen["evidence"]
        return
    assert seen["verdict"] == "yes", seen["evidence"]
    assert seen["figures"]["tool"] == tool.name and "psb_" in seen["evidence"]
    # Its output is kept, and names this run's own topic.
    log = Path(seen["figures"]["log"])
    assert log == folder / "monitoring" / f"{driver}-{tool.name}.log"
    own = OWN_TOPIC[driver].format(run_id=run_id_of(folder, seen["run_dir"]))
    assert own in log.read_text(errors="replace")
    given = manifests.load(driver).monitor.options
    assert all(f"--option {o}" in seen["experiment"] for o in given)
    assert writing_into(results) == []  # the tool is gone


@pytest.mark.long
@pytest.mark.parametrize("driver", DRIVERS)
def test_an_expect_naming_another_topic_is_judged_no(driver_libs, tmp_path, monkeypatch,
                                                     driver):  # fmt: skip
    require_tool(driver, driver_libs)
    from psbench.run import drivers as driver_info
    from psbench.run import envinfo, services
    from psbench.run.criteria import monitoring
    from psbench.run.criteria.context import Context

    # The injected fault: the manifest's [monitor] with an expect no run of it shows.
    real = manifests.load(driver)
    wrong = ANOTHER_TOPIC[driver]
    faulty = dataclasses.replace(real, monitor=dataclasses.replace(real.monitor, expect=wrong))
    load = manifests.load
    monkeypatch.setattr(manifests, "load", lambda name: faulty if name == driver else load(name))
    node = paths.require_node()
    describes = {driver: driver_info.describe(node, driver_libs[driver])}
    with services.ServicePool() as pool:
        ctx = Context([driver], {driver: driver_libs[driver]}, describes, tmp_path,
                      envinfo.collect(), ["psbench", "criteria"], pool)  # fmt: skip
        found = monitoring.assess(ctx)[driver]
    assert found.verdict == "no", found.evidence
    assert f"never showed /{wrong}/" in found.evidence
    # The tool did see the run: only the expect was wrong.
    run_id = run_id_of(tmp_path / "monitoring", found.run_dir)
    log = Path(found.figures["log"]).read_text(errors="replace")
    assert OWN_TOPIC[driver].format(run_id=run_id) in log
    assert writing_into(tmp_path) == []  # the tool is gone


# The manifest's fields --------------------------------------------------------------


MONITOR = '[monitor]\nargv = ["t"]\nexpect = "x"\n'
BROKEN = {
    "env not a table": ('env = "A=1"\n', "monitor.env: must be dict"),
    "env value": ("env = { A = 1 }\n", "monitor.env.A: must be str"),
    "option without value": ('options = ["domain_id"]\n', "'domain_id': give KEY=VALUE"),
    "stop signal": ('stop_signal = "HUP"\n', "monitor.stop_signal: give one of TERM, INT"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_monitor_field_is_refused_naming_it(mw_drivers_dir, case):
    text, words = BROKEN[case]
    assert words in refused_manifest(mw_drivers_dir, 'architecture = "broker"\n' + MONITOR + text)


def test_env_options_and_stop_signal_are_read(mw_drivers_dir):
    (mw_drivers_dir / "mw" / "manifest.toml").write_text(
        'architecture = "broker"\n' + MONITOR + 'options = ["domain_id=229"]\n'
        'stop_signal = "INT"\nenv = { MW_URI = "file://{folder}/mw.xml" }\n'
    )
    m = manifests.load("mw").monitor
    assert m.options == ("domain_id=229",) and m.stop_signal == "INT"
    assert m.env == {"MW_URI": "file://{folder}/mw.xml"}
    from psbench.run.criteria import monitoring

    env = monitoring._env(m, mw_drivers_dir / "mw")
    assert env["MW_URI"] == f"file://{mw_drivers_dir}/mw/mw.xml" and env["PATH"]


def test_a_tool_the_build_makes_and_did_not_is_not_testable(mw_drivers_dir, tmp_path, monkeypatch):
    from psbench.run.criteria import monitoring
    from psbench.run.criteria.context import Context

    monkeypatch.setenv("PSBENCH_BUILD", str(tmp_path / "no-build"))
    (mw_drivers_dir / "mw" / "manifest.toml").write_text(
        'architecture = "broker"\n[monitor]\nargv = ["{build}/drivers/mw/bin/mw-watch"]\n'
        'expect = "psb_"\n'
    )
    ctx = Context(["mw"], {}, {"mw": {}}, tmp_path, {}, ["psbench", "criteria"])
    found = monitoring.assess(ctx)["mw"]
    assert found.verdict == "not testable here"
    assert (
        "its monitoring tool mw-watch is not built (make build-all builds the monitoring tools)"
        in (found.evidence)
    )
    # Once there, it is the tool psbench runs.
    tool = tmp_path / "no-build" / "drivers" / "mw" / "bin" / "mw-watch"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert monitoring._program("{build}/drivers/mw/bin/mw-watch") == str(tool)


def _running(pid: int) -> bool:
    """Whether pid is a live process (a zombie no one reaped yet is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_stopping_a_tool_ends_what_it_started_even_after_the_tool_itself_ended():
    from psbench.run.criteria import monitoring

    # The tool (a shell) is gone at once; its child ignores SIGTERM and would outlive it.
    proc = subprocess.Popen(
        ["sh", "-c", "(trap '' TERM; exec sleep 60) & echo $! ; exit 0"],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    child = int(proc.stdout.readline())
    proc.wait(timeout=10)
    assert _running(child)
    monitoring._stop(proc)
    end = time.monotonic() + 10
    while _running(child) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _running(child)
    monitoring._stop(proc)  # safe twice
