"""`psbench criteria --quick --criteria discovery,low_bandwidth` end to end on a
peer-to-peer library and a broker: the cells and their figures as the run directories
say them, the report's files, and nothing left behind (nodes, the broker, the emulated
hosts' namespaces). Low bandwidth needs root for its emulated hosts (CI is); without it
the cell must say so."""

import csv
import json
import os
from pathlib import Path

import pytest

from conftest import live_processes, node_processes_with, run_cli
from psbench.hosts import netns
from psbench.run.criteria import low_bandwidth

pytestmark = pytest.mark.long  # about a minute and a half: two slow-link runs per driver


def test_quick_discovery_and_low_bandwidth_of_a_library_and_a_broker(driver_libs, results):
    for driver in ("zeromq", "mqtt"):
        if driver not in driver_libs:
            pytest.skip(f"{driver} is not built")
    proc = run_cli(["criteria", "--quick", "--drivers", "zeromq,mqtt",
                    "--criteria", "discovery,low_bandwidth"], results, timeout=400)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (folder,) = results.glob("*-criteria")
    record = json.loads((folder / "criteria.json").read_text())
    assert record["finished_utc"] and [c["name"] for c in record["criteria"]] == [
        "discovery", "low_bandwidth"]  # fmt: skip
    found = {(v["driver"], v["criterion"]): v for v in record["verdicts"]}
    assert len(found) == 4

    for driver in ("zeromq", "mqtt"):
        # Discovery: --quick climbs 1 and 10 subscribers, each level its own run.
        cell = found[driver, "discovery"]
        assert cell["verdict"] == "yes", cell
        levels = cell["figures"]["levels"]
        assert [lv["subscribers"] for lv in levels] == [1, 10]
        assert [lv["processes"] for lv in levels] == [2, 11]
        for lv in levels:
            assert lv["status"] == "ok" and lv["all_matched_ms"] > 0
            run = json.loads((Path(lv["run_dir"]) / "run.json").read_text())
            assert run["status"] == "ok" and run["spec"]["subscribers"] == lv["subscribers"]
            subs = [p for p in run["processes"] if p["name"].startswith("sub")]
            assert len(subs) == lv["subscribers"]
            # Delivered counts are the subscribers' own, summed.
            got = sum(json.loads((Path(lv["run_dir"]) / f"{p['name']}.json").read_text())
                      ["counts"]["received"] for p in subs)  # fmt: skip
            assert got == lv["delivered"]
            assert 0 < lv["least_delivered"] and lv["delivered"] <= lv["expected"]
            assert lv["expected"] == 200 * lv["subscribers"]
        assert "1: " in cell["evidence"] and "10: " in cell["evidence"]

        # Low bandwidth: two runs on emulated hosts, b's link shaped.
        low = found[driver, "low_bandwidth"]
        if os.geteuid() != 0:
            assert low["verdict"] == "not testable here" and "CAP_NET_ADMIN" in low["evidence"]
            continue
        f = low["figures"]
        assert low["verdict"] == "yes", low
        run = json.loads((folder / low["run_dir"] / "run.json").read_text())
        assert run["status"] == "ok" and run["spec"]["hosts"]["b"] == low_bandwidth.LINK
        assert run["network"]["hosts"]["b"]["link"] == {"rate_bps": 256000, "loss_pct": 2.0}
        # 5 s at 50 Hz: 250 sent; the figure is the sub's own count; wire bytes counted.
        assert f["sent"] == 250 and f["delivered_percent"] >= 90
        sub = json.loads((folder / low["run_dir"] / "sub.json").read_text())
        assert f["delivered"] == sub["counts"]["received"]
        assert f["wire_bytes_into_b"] == run["network"]["traffic"]["hosts"]["b"]["rx_bytes"]
        assert f["wire_bytes_into_b_per_payload_byte"] > 1  # headers: never below the payload
        assert f["goodput_kbit_s"] is not None and f["goodput_run_dir"]
        fast = json.loads((Path(f["goodput_run_dir"]) / "run.json").read_text())
        assert fast["spec"]["rate"] == 0 and fast["spec"]["duration"] == 3
        # Every namespace of both runs is gone.
        for r in (run, fast):
            made = {h["namespace"] for h in r["network"]["hosts"].values()}
            assert made and not made & set(netns.existing())

    # The report's files carry the new columns.
    with open(folder / "report" / "criteria-matrix.csv") as f:
        rows = {r["driver"]: r for r in csv.DictReader(f)}
    assert rows["zeromq"]["discovery"] == "yes" and "low_bandwidth" in rows["mqtt"]
    assert "discovery (1 to 50 subscribers)" in (folder / "report" / "criteria.md").read_text()
    assert "[criteria discovery 2/2] mqtt: yes" in proc.stderr
    assert node_processes_with(str(results)) == []
    assert live_processes("mosquitto", str(results)) == []
