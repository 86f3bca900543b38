"""A sweep stops each service (broker, daemon) once no later run needs it, so an idle
broker never sits beside other middlewares' runs, and by default runs the runs needing
one service together within a round; run.json records which services were alive during
each run. Known answers: which broker is alive during which run, for a sweep written
interleaved, run grouped and as written."""

import json
from types import SimpleNamespace

import pytest

from conftest import live_processes
from experiment_files import index_lines, run_experiment, write
from psbench.run.experiment.service_plan import grouped, still_needed

INTERLEAVED = """
    name: brokers
    defaults: {kind: ping, count: 30, warmup: 5}
    matrix:
      size: [64, 128]
      driver: [mqtt, udp, nats]
    """


def alive_during(store) -> list[tuple[str, list[str]]]:
    """(label, names of the services alive during it) of each run, in execution order."""
    found = []
    for entry in index_lines(store):
        record = json.loads((store / entry["run_dir"] / "run.json").read_text())
        found.append((entry["label"], sorted(s["name"] for s in record["services_alive"])))
    return found


@pytest.mark.parametrize(
    "order, expected",
    [
        ("grouped", [("mqtt-64B", ["mosquitto"]), ("mqtt-128B", ["mosquitto"]),
                     ("udp-64B", []), ("udp-128B", []),
                     ("nats-64B", ["nats-server"]), ("nats-128B", ["nats-server"])]),
        ("as-written", [("mqtt-64B", ["mosquitto"]), ("udp-64B", ["mosquitto"]),
                        ("nats-64B", ["mosquitto", "nats-server"]),
                        ("mqtt-128B", ["mosquitto", "nats-server"]),
                        ("udp-128B", ["nats-server"]), ("nats-128B", ["nats-server"])]),
    ],
)  # fmt: skip
def test_a_broker_lives_only_while_a_later_run_needs_it(driver_libs, results, tmp_path, order,
                                                        expected):  # fmt: skip
    path = write(tmp_path, INTERLEAVED + f"order: {order}\n")
    store = tmp_path / "store"
    proc = run_experiment(path, results, "-o", str(store))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert alive_during(store) == expected
    assert not live_processes("mosquitto", str(store)) and not live_processes("nats-server",
                                                                                str(store))  # fmt: skip


def test_grouping_keeps_rounds_apart_and_the_first_appearance_order():
    runs = [SimpleNamespace(rep=r) for r in (1, 1, 1, 1, 2, 2, 2, 2)]
    a, b, none = frozenset({"a"}), frozenset({"b"}), frozenset()
    needs = [b, none, a, b] * 2
    assert grouped(runs, needs) == [0, 3, 1, 2, 4, 7, 5, 6]
    assert still_needed(needs, 3) == {"a", "b"} and still_needed(needs, 8) == set()


def test_an_unknown_order_is_refused(driver_libs, results, tmp_path):
    path = write(tmp_path, INTERLEAVED + "order: random\n")
    proc = run_experiment(path, results, "--dry-run")
    assert proc.returncode == 2
    assert "order: expected one of grouped, as-written, got random" in proc.stderr
