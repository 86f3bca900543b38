"""The monitoring criterion with real tools beside real brokers psbench started:
rabbitmqctl (the bindings of the broker's node, reached through the service's folder:
{service_dir}) and Kafka's console consumer (fetched beside the broker's jars, a `~` path).
Yes with the tool's output kept and naming the run's own exchange or topic; no when the
manifest's `expect` names another run's; nothing of the broker or the tool left after."""

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import live_processes, run_cli
from psbench.base import manifests, paths
from psbench.run import drivers as driver_info
from psbench.run import envinfo, services
from psbench.run.criteria import monitoring
from psbench.run.criteria.context import Context
from psbench.run.service_definitions import find_executable

RUN_TIMEOUT_S = 300  # a broker's start (a JVM, an Erlang node) is most of it
GONE_WITHIN_S = 10  # a killed beam.smp or JVM takes a moment to free its memory
LEFT_BEHIND = ("beam.smp", "java", "sh", "epmd")  # the broker, the tool, their launchers


def tool_of(driver: str) -> str:
    monitor = manifests.load(driver).monitor
    return monitor.name or Path(os.path.expanduser(monitor.argv[0])).name


@pytest.fixture(params=["rabbitmq", "kafka"])
def broker_driver(request, driver_libs):
    driver = request.param
    if driver not in driver_libs:
        pytest.fail(f"the {driver} driver is not built: run `make driver-{driver}`")
    monitor = manifests.load(driver).monitor
    for program in (monitor.argv[0], monitor.name):
        if program and find_executable(os.path.expanduser(program)) is None:
            pytest.fail(f"{program} is missing: `make driver-{driver}` installs or fetches it")
    return driver


def the_runs_own(driver: str, run_id: str) -> str:
    """What the tool prints of the run's own traffic (the manifests' comments say why)."""
    if driver == "rabbitmq":  # a binding of the run's exchange to a reader's queue
        return f"psbench.{run_id}.psb_{run_id}_data\tamq.gen-"
    return f"Adding newly assigned partitions: [psb_{run_id}_data-0]"  # the run's topic


def what_remains(marker: str) -> list[str]:
    """Processes of the broker or the tool whose command line names marker, once they have
    had GONE_WITHIN_S to end (polled)."""
    end = time.monotonic() + GONE_WITHIN_S
    while True:
        left = [f"{p} {pid}" for p in LEFT_BEHIND for pid in live_processes(p, marker)]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.2)


def test_the_tool_sees_the_runs_own_traffic(broker_driver, results):
    proc = run_cli(["criteria", "--drivers", broker_driver, "--criteria", "monitoring"],
                   results, timeout=RUN_TIMEOUT_S)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [folder] = results.glob("*-criteria")
    [verdict] = json.loads((folder / "criteria.json").read_text())["verdicts"]
    assert verdict["verdict"] == "yes", verdict["evidence"]
    tool = tool_of(broker_driver)
    log = folder / "monitoring" / f"{broker_driver}-{tool}.log"
    assert verdict["figures"]["log"] == str(log) and verdict["figures"]["tool"] == tool
    [run_json] = (folder / "monitoring").glob("*/run.json")
    run = json.loads(run_json.read_text())
    assert run["status"] == "ok"
    output = log.read_text(errors="replace")
    assert the_runs_own(broker_driver, run["run_id"]) in output
    assert f"psb_{run['run_id']}_data" in verdict["evidence"]
    if broker_driver == "kafka":  # and the records themselves, the first one among them
        assert "\nPartition:0\tOffset:0\n" in output
    # Nothing left: the broker, the tool (a JVM, or sh asking rabbitmqctl), their files.
    assert what_remains(str(results)) == []
    assert not list(folder.glob("monitoring/service-*/data"))


def test_no_when_its_output_never_shows_what_the_manifest_expects(
    broker_driver, tmp_path, monkeypatch
):
    """The tool sees this run; `expect` names a run that is not this one: no."""
    real = manifests.load(broker_driver)
    other = real.monitor.expect.replace("psb_[A-Za-z0-9]+_", "psb_NotThisRun_")
    assert other != real.monitor.expect
    changed = dataclasses.replace(real, monitor=dataclasses.replace(real.monitor, expect=other))
    load = manifests.load
    monkeypatch.setattr(manifests, "load", lambda name: changed if name == broker_driver
                        else load(name))  # fmt: skip
    node = paths.require_node()
    library = paths.driver_libraries()[broker_driver]
    describes = {broker_driver: driver_info.describe(node, library)}
    with services.ServicePool() as pool:
        ctx = Context([broker_driver], {broker_driver: library}, describes, tmp_path,
                      envinfo.collect(), ["pytest", *sys.argv[1:]], pool)  # fmt: skip
        verdict = monitoring.assess(ctx)[broker_driver]
    assert verdict.verdict == "no", verdict.evidence
    assert "never showed /" in verdict.evidence and "psb_NotThisRun_" in verdict.evidence
    # It did see the run: its output, kept, has the run's own traffic.
    [run_json] = (tmp_path / "monitoring").glob("*/run.json")
    output = Path(verdict.figures["log"]).read_text(errors="replace")
    assert the_runs_own(broker_driver, json.loads(run_json.read_text())["run_id"]) in output
    assert verdict.figures["output_lines"] == output.count("\n") > 0
    assert what_remains(str(tmp_path)) == []


def test_rabbitmqctl_is_not_asked_without_the_brokers_epmd(tmp_path):
    """Without the broker's own epmd, rabbitmqctl would start an epmd daemon on its port
    that outlives everything: the loop ends at once instead, asking nothing."""
    monitor = manifests.load("rabbitmq").monitor
    with socket.socket() as probe:  # a port no epmd listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "epmd.port").write_text(f"{port}\n")
    argv = monitoring._argv(monitor.argv, "127.0.0.1:5672", tmp_path)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "")
    with socket.socket() as client:
        assert client.connect_ex(("127.0.0.1", port)) != 0  # no epmd was started there
