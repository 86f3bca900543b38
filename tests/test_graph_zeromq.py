"""Every process of a run with topics of its own naming is told all of them, in one order
(--run-topics), so a driver gives each topic its own port: the zeromq driver used to hash
such topics into 5 ports per run, and graphs/reference-system.yaml (21 topics) failed at
bind ("port ... is in use"). Known answers: the argument lists of a graph run and of a
pubsub run with several topics; the reference system through zeromq over tcp ends ok
with every path reached."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import LAUNCHER, REPO, cli_env
from psbench.base import paths
from psbench.run.graph.plans import graph_of
from psbench.run.spec import MeasureSpec, node_argv


def run_topics_of(spec: MeasureSpec) -> list[list[str] | None]:
    """Each process's --run-topics, split; None where it is not given."""
    out = []
    for plan in spec.processes():
        argv = node_argv(Path("node"), spec, plan, "r1", Path("out"), "stdio")
        given = argv[argv.index("--run-topics") + 1] if "--run-topics" in argv else None
        out.append(given.split(",") if given is not None else None)
    return out


def test_every_process_of_a_graph_run_gets_the_graphs_topics_in_file_order():
    spec = MeasureSpec(kind="graph", driver="zeromq", driver_path=Path("z.so"), size=None,
                       graph="graphs/reference-system.yaml")  # fmt: skip
    topics = list(graph_of(spec).topics)
    assert len(topics) == 21 and topics[:3] == ["front_lidar", "rear_lidar", "map_points"]
    given = run_topics_of(spec)
    assert len(given) == 22 and all(g == topics for g in given)


def test_a_pubsub_run_with_several_topics_lists_them_and_their_echoes():
    def spec(**kw) -> MeasureSpec:
        return MeasureSpec(kind="pubsub", driver="zeromq", driver_path=Path("z.so"), size=64, **kw)

    assert run_topics_of(spec(topics=2)) == [["data1", "data2"]] * 4
    echoes = ["data1", "data2", "data3", "data1_echo", "data2_echo", "data3_echo"]
    assert run_topics_of(spec(topics=3, echo_every=10)) == [echoes] * 6
    # The node's own topics need no list: drivers tell them apart as before.
    assert run_topics_of(spec()) == [None, None]
    assert run_topics_of(spec(relays=1)) == [None] * 3
    ping = MeasureSpec(kind="ping", driver="zeromq", driver_path=Path("z.so"), size=64)
    assert run_topics_of(ping) == [None, None]


@pytest.mark.skipif("zeromq" not in paths.driver_libraries(), reason="zeromq is not built")
def test_the_reference_system_runs_through_zeromq_over_tcp(tmp_path):
    done = subprocess.run(
        [str(LAUNCHER), "graph", "run", "--graph", "graphs/reference-system.yaml",
         "--driver", "zeromq", "--duration", "2", "--timeout", "120"],
        capture_output=True, text=True, timeout=240, cwd=REPO,
        env=cli_env(tmp_path / "results"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (record_path,) = (tmp_path / "results").rglob("run.json")
    record = json.loads(record_path.read_text())
    assert record["status"] == "ok", record["message"]
    figures = record["graph"]["paths"]
    assert len(figures) == 4
    assert all(path["reached"] > 0 for path in figures.values()), figures
