"""`psbench criteria --quick` end to end on real drivers: the matrix's cells from the
experiments (a late joiner's exact history, a refusal quoted, a monitoring tool that saw
the run's topics), the files of the result set, and nothing left running."""

import csv
import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from conftest import cli_in_background, live_processes, node_processes_with, run_cli
from psbench.base import manifests


def verdicts(folder) -> dict:
    record = json.loads((folder / "criteria.json").read_text())
    assert record["format"] == "psbench-criteria/1" and record["finished_utc"]
    return {(v["driver"], v["criterion"]): v for v in record["verdicts"]}


def only_set(results):
    sets = list(results.glob("*-criteria"))
    assert len(sets) == 1, sets
    return sets[0]


def test_quick_criteria_of_a_peer_to_peer_library_and_a_broker(driver_libs, results):
    for driver in ("zeromq", "mqtt"):
        if driver not in driver_libs:
            pytest.skip(f"{driver} is not built")
    proc = run_cli(["criteria", "--quick", "--drivers", "zeromq,mqtt"], results, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = only_set(results)
    found = verdicts(folder)
    # Architecture and licence: the manifest, and the packages' copyright files.
    assert found["zeromq", "architecture"]["verdict"] == "peer-to-peer"
    assert found["mqtt", "architecture"]["verdict"] == "broker"
    assert "LGPL-3.0" in found["zeromq", "licence"]["verdict"]
    assert found["mqtt", "licence"]["verdict"] == "EPL-2.0 or EDL-1.0"
    assert "/usr/share/doc/mosquitto/copyright" in found["mqtt", "licence"]["evidence"]
    # Neither speaks a wire protocol with another driver.
    assert found["zeromq", "interoperability"]["verdict"] == "not applicable"
    # Persistence: the broker's one retained message, exactly; ZeroMQ refuses, quoted.
    late = found["mqtt", "persistence"]
    assert late["verdict"] == "yes" and late["figures"]["history"] == 1
    assert (late["figures"]["first_seq"], late["figures"]["last_seq"]) == (999, 999)
    run = json.loads((folder / late["run_dir"] / "run.json").read_text())
    assert run["status"] == "ok" and run["late_join"]["late-sub"]["history"] == 1
    refused = found["zeromq", "persistence"]
    assert refused["verdict"] == "not applicable"
    assert "zeromq: durability 'transient_local' is not supported" in refused["evidence"]
    # Durability across a restart: the broker killed mid-stream kept every sample its
    # persistent sessions were given; ZeroMQ has no broker to restart.
    kept = found["mqtt", "restart"]
    assert kept["verdict"] == "yes", kept["evidence"]
    assert kept["figures"]["lost"] == 0
    assert kept["figures"]["received"] == kept["figures"]["published"] > 0
    run = json.loads((folder / kept["run_dir"] / "run.json").read_text())
    assert run["restart"]["done"] and run["services"][0]["restarts"] == 1
    no_broker = found["zeromq", "restart"]
    assert no_broker["verdict"] == "not applicable" and "no broker" in no_broker["evidence"]
    # Monitoring: the broker's own client tool saw the run's topics; ZeroMQ has none.
    seen = found["mqtt", "monitoring"]
    if shutil.which("mosquitto_sub"):
        assert seen["verdict"] == "yes" and "psb_" in seen["evidence"]
        assert "psb_" in (folder / "monitoring" / "mqtt-mosquitto_sub.log").read_text(
            errors="replace")  # fmt: skip
    else:
        assert seen["verdict"] == "not testable here" and "not installed" in seen["evidence"]
    assert found["zeromq", "monitoring"]["verdict"] == "not testable here"
    # Routing: through the broker on the host of both networks (as root, which CI is);
    # ZeroMQ has no router here: its manifest's claim beside, with its source.
    if os.geteuid() == 0:
        routing = found["mqtt", "routing"]
        assert routing["verdict"] == "yes" and routing["figures"]["received"] == 100
    routing = found["zeromq", "routing"]
    assert routing["verdict"] == "not testable here" and routing["source"].startswith("http")
    # The report's files, and the matrix printed.
    with open(folder / "report" / "criteria-matrix.csv") as f:
        rows = {r["driver"]: r for r in csv.DictReader(f)}
    assert (
        rows["mqtt"]["persistence"] == "yes" and rows["zeromq"]["persistence"] == "not applicable"
    )
    for name in ("criteria.md", "criteria.html", "criteria-evidence.json", "report.json"):
        assert (folder / "report" / name).is_file(), name
    assert "Criteria matrix" in proc.stdout and f"results: {folder}" in proc.stdout
    assert "[criteria persistence 2/2] mqtt: yes" in proc.stderr
    # Each run records the services alive during it: ZeroMQ's runs never had the MQTT
    # broker of an earlier criterion idle beside them (it stops once mqtt's runs end).
    runs = [json.loads(p.read_text()) for p in folder.rglob("run.json")]
    zeromq_runs = [r for r in runs if r["driver"]["name"] == "zeromq"]
    assert zeromq_runs and all("services_alive" in r for r in zeromq_runs)
    assert all(r["services_alive"] == [] for r in zeromq_runs), [
        r["services_alive"] for r in zeromq_runs
    ]
    assert any(s["name"] == "mosquitto" for r in runs for s in r.get("services_alive", []))
    # Nothing left: no node, no broker, no monitoring tool.
    assert node_processes_with(str(results)) == []
    assert live_processes("mosquitto", str(results)) == []


@pytest.mark.long
def test_quick_criteria_of_the_dds_drivers(driver_libs, results):
    for driver in ("cyclonedds", "fastdds"):
        if driver not in driver_libs:
            pytest.skip(f"{driver} is not built")
    proc = run_cli(["criteria", "--quick", "--drivers", "cyclonedds,fastdds", "--criteria",
                    "interoperability,persistence"], results, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = only_set(results)
    found = verdicts(folder)
    # Partners are every built driver of the wire (also a DDS built from source here).
    speakers = [d for d in manifests.speaking("rtps") if d in driver_libs]
    for driver, other in (("cyclonedds", "fastdds"), ("fastdds", "cyclonedds")):
        interop = found[driver, "interoperability"]
        assert interop["verdict"] == "yes", interop
        assert interop["figures"]["cells"] == 2 * (len(speakers) - 1)
        assert interop["figures"]["partners"][other]["cells"] == 2
        assert interop["figures"]["partners"][other]["worked"] == 2
        late = found[driver, "persistence"]
        assert late["verdict"] == "yes" and late["figures"]["history"] == 5, late
        assert (late["figures"]["first_seq"], late["figures"]["last_seq"]) == (995, 999)
    assert (folder / "interoperability" / "rtps" / "interop.json").is_file()
    beside = json.loads((folder / "report" / "criteria-ijraset.json").read_text())["rows"]
    fast = {r["criterion"]: r for r in beside if r["driver"] == "fastdds"}
    assert fast["persistence"]["agreement"] == "agree"
    assert fast["interoperability"]["agreement"] == "agree"


def _children(pid: int, program: str) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        if name.split("(", 1)[1] == program and int(rest.split()[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_sigterm_stops_the_battery_its_tool_and_keeps_what_it_found(driver_libs, results):
    if "mqtt" not in driver_libs or not shutil.which("mosquitto_sub"):
        pytest.skip("mqtt is not built or mosquitto_sub is not installed")
    args = ["criteria", "--drivers", "mqtt", "--criteria", "architecture,monitoring"]
    with cli_in_background(args, results) as proc:
        tools = []
        for _ in range(300):  # the tool starts about a second before its run: 30 s at most
            tools = _children(proc.pid, "mosquitto_sub")
            if tools and list(results.glob("*-criteria/monitoring/*/run.json")):
                break
            time.sleep(0.1)
        assert tools, "the monitoring tool never started"
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted in monitoring" in err
    folder = only_set(results)
    record = json.loads((folder / "criteria.json").read_text())
    assert record["interrupted_in"] == "monitoring" and record["finished_utc"] is None
    assert [v["criterion"] for v in record["verdicts"]] == ["architecture"]
    for _ in range(50):  # the tool's group was sent SIGTERM: it is gone within moments
        if not any(Path(f"/proc/{pid}").exists() for pid in tools):
            break
        time.sleep(0.1)
    assert not any(Path(f"/proc/{pid}").exists() for pid in tools)
    assert node_processes_with(str(results)) == []
    assert live_processes("mosquitto", str(results)) == []
