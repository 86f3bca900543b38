"""Graphs run end to end through the real node and a real driver (udp, multicast): a
source, a filter on its input and a controller on its timer whose state feeds the filter
back (a cycle closed through a timer). Known answers: the source's activations are
--count; every source sample reaches the filter (on any input, nothing lost on this
machine), so none is dropped and, against a 1 ns deadline, every reaction misses while
none misses against 10 s; the run ends by itself despite the cycle; the report shows
one configuration per path and draws the graph; no node is left, also when psbench is
killed (SIGKILL) or interrupted (Ctrl-C) mid-run."""

import json
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import (
    LAUNCHER,
    REPO,
    assert_nothing_left,
    cli_env,
    cli_in_background,
    live_processes,
    shm_files_of_run,
    wait_for_running,
)
from psbench.base import paths

GRAPH = """\
name: loop
modules:
  sensor: {period: 5ms, publishes: [raw]}
  filter: {on: any, work: 100us, subscribes: [raw, state], publishes: [filtered]}
  control: {period: 10ms, work: 200us, subscribes: [filtered], publishes: [state]}
topics:
  raw: {size: 256}
  filtered: {size: 256}
  state: {size: 128}
paths:
  to_filter: {from: sensor, to: filter, deadline: 1ns}
  to_filter_slack: {from: sensor, to: filter, deadline: 10s}
  to_control: {from: sensor, to: control}
"""

pytestmark = pytest.mark.skipif(
    "udp" not in paths.driver_libraries(), reason="the udp driver is not built"
)


def run(args: list[str], tmp_path: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(LAUNCHER), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env=cli_env(tmp_path / "results"))  # fmt: skip


def test_a_graph_with_a_cycle_runs_ends_and_counts_what_it_should(tmp_path):
    graph = tmp_path / "loop.yaml"
    graph.write_text(GRAPH)
    # With a warm-up: what circulates in the cycle must not keep it warm-up for ever.
    done = run(["graph", "run", "--graph", str(graph), "--driver", "udp", "--transport",
                "multicast", "--count", "40", "--warmup", "5", "--timeout", "60"], tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (record_path,) = (tmp_path / "results").rglob("run.json")
    record = json.loads(record_path.read_text())
    assert record["status"] == "ok", record["message"]
    figures = record["graph"]
    assert figures["modules"]["sensor"]["activations"] == 40
    # The filter is activated by each sample: every one reaches it as the newest.
    strict, slack = figures["paths"]["to_filter"], figures["paths"]["to_filter_slack"]
    assert (strict["published"], strict["reached"], strict["dropped"]) == (40, 40, 0)
    assert strict["deadline_misses"] == 40 and slack["deadline_misses"] == 0
    assert strict["in_flight_at_end"] == 0
    # The controller samples on its own timer: what it did not take is counted dropped.
    control = figures["paths"]["to_control"]
    assert control["reached"] + control["dropped"] == control["published"] <= 40
    assert control["reached"] > 0
    assert figures["modules"]["sensor"]["counts"]["warmup"] == 5
    assert control["deadline_misses"] is None
    # The filter's state input closes the cycle: it did not wait for its end markers.
    argv = {p["name"]: " ".join(p["argv"]) for p in record["processes"]}
    assert "--input state:1:feedback" in argv["filter"]
    assert "--input raw:1 " in argv["filter"] + " "
    assert "to_filter " in done.stdout and "sensor -> filter" in done.stdout
    assert live_processes("psbench-node", record["run_id"]) == []
    out = tmp_path / "report"
    report = run(["report", str(record_path.parent), "-o", str(out)], tmp_path)
    assert report.returncode == 0, report.stderr
    assert "path=to_filter " in report.stdout and "reaction" in report.stdout
    # The drawing: every module, and every edge with its topic (dot's SVG has the text).
    svg = (out / "plots" / "graph-loop-one-host-udp.svg").read_text()
    for text in ("sensor", "filter", "control", "raw", "filtered", "state", "every 5 ms"):
        assert f">{text}" in svg, text
    assert "Graph loop, one-host, udp" in (out / "report.html").read_text()


def test_a_graph_in_an_experiment_is_validated_at_its_own_lines(tmp_path):
    experiment = tmp_path / "g.yaml"
    experiment.write_text(
        "name: g\n"
        "defaults: {kind: graph, graph: graphs/cwalker.yaml, driver: udp, transport: multicast}\n"
        "matrix:\n"
        "  mapping: [mapping1, mapping4]\n"
        "  cpus: [{PT: 0}, {NOPE: 1}]\n"
    )
    done = run(["run", str(experiment), "--dry-run"], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "g.yaml:4: matrix.mapping: 'mapping4' is not one of graphs/cwalker.yaml's mappings" in (
        done.stderr
    )
    assert "g.yaml:5: matrix.cpus: 'NOPE' is not a module of graphs/cwalker.yaml" in done.stderr
    assert "Traceback" not in done.stderr
    fine = experiment.read_text().replace(", mapping4", "").replace(", {NOPE: 1}", "")
    experiment.write_text(fine)
    planned = run(["run", str(experiment), "--dry-run"], tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert "1 run" in planned.stdout + planned.stderr


@pytest.mark.parametrize("how", ["sigkill", pytest.param("ctrl-c", marks=pytest.mark.long)])
def test_a_graph_run_killed_or_interrupted_leaves_no_module(tmp_path, how):
    graph = tmp_path / "loop.yaml"
    graph.write_text(GRAPH)
    results = tmp_path / "results"
    args = ["graph", "run", "--graph", str(graph), "--driver", "udp", "--transport",
            "multicast", "--duration", "60", "--timeout", "120", "--results", str(results)]  # fmt: skip
    with cli_in_background(args, results) as proc:
        record = wait_for_running(results, proc)
        assert len(live_processes("psbench-node", record["run_id"])) == 3
        proc.send_signal(signal.SIGKILL if how == "sigkill" else signal.SIGINT)
        proc.communicate(timeout=30)
    assert_nothing_left(record["run_id"])
    assert shm_files_of_run(record["run_id"]) == []
    if how == "ctrl-c":  # recorded, with what the modules wrote on their way out
        final = json.loads((record["_dir"] / "run.json").read_text())
        assert final["status"] == "interrupted"
        assert (record["_dir"] / "sensor.activations").is_file()


def test_a_modules_priority_and_the_topics_reliability_reach_the_nodes(tmp_path):
    if "cyclonedds" not in paths.driver_libraries():
        pytest.skip("the cyclonedds driver is not built (it takes reliable; udp refuses it)")
    graph = tmp_path / "qos.yaml"
    graph.write_text(
        GRAPH.replace("filter: {on: any,", "filter: {on: any, priority: 70,").replace(
            "state: {size: 128}", "state: {size: 128, reliability: reliable}"
        )
    )
    experiment = tmp_path / "e.yaml"
    experiment.write_text(
        f"name: e\ndefaults: {{kind: graph, graph: {graph}, driver: cyclonedds, fifo: 20}}\n"
    )
    planned = run(["run", str(experiment), "--dry-run"], tmp_path)
    assert planned.returncode == 0, planned.stderr
    from psbench.run.experiment import prepare

    plan = prepare(experiment, "e.yaml")
    spec = next(iter(plan.specs.values()))
    assert spec.reliability == "reliable"  # the topics' own
    from psbench.run.spec import node_argv

    argv = {
        p.name: node_argv(Path("node"), spec, p, "r", tmp_path, "stdio") for p in spec.processes()
    }
    # The filter's own priority, the run's for the others: one --fifo each.
    assert [argv["filter"][i + 1] for i, a in enumerate(argv["filter"]) if a == "--fifo"] == ["70"]
    assert [argv["sensor"][i + 1] for i, a in enumerate(argv["sensor"]) if a == "--fifo"] == ["20"]
    # A run that asks for another reliability than the topics' is refused, naming both.
    experiment.write_text(experiment.read_text().replace("fifo: 20}", "fifo: 20, reliability: "
                                                         "best_effort}"))  # fmt: skip
    refused = run(["run", str(experiment), "--dry-run"], tmp_path)
    assert refused.returncode == 2
    assert "defaults.reliability: the graph's topics ask for reliable, the run for best_effort" in (
        refused.stderr
    )
    cli = run(["graph", "run", "--graph", str(graph), "--driver", "udp", "--reliability",
               "best_effort"], tmp_path)  # fmt: skip
    assert cli.returncode == 2 and "argument --reliability: the graph's topics ask" in cli.stderr
