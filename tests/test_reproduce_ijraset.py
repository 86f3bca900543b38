"""IJRASET criteria paper (`psbench reproduce ijraset`): the relay role (the middle
process of the three-process echo) forwards every sample intact and ends with the
others; the full file validates; the quick file runs end to end and produces the paper's
sections with figures recomputed from the run's own samples. Real runs; values are
checked against the samples and summaries, timings never."""

import json

import numpy as np
import pytest
import yaml

from conftest import run_cli
from reproduce_runs import (SEEDS, check_paper_written, ok_paper, paper_table, reproduce_quick,
                            runs_by_label)
from psbench import paths
from psbench.experiment import prepare
from psbench.samples import read_samples

STUDY = "ijraset"
DDS = ("cyclonedds", "fastdds")
NAMES = {"cyclonedds": "Cyclone DDS", "fastdds": "Fast DDS"}
LABEL_SIZE = {32: "32B", 1024: "1KiB", 8192: "8KiB"}  # as run labels print sizes
SECTIONS = ["Latency: minimum and median against payload (Figures 3, 4)",
            "Throughput at the offered rate (Figure 7, Table 1)",
            "The criteria table (Table 1)", "The paper's statements"]


def built() -> list[str]:
    libs = paths.driver_libraries()
    return [d for d in DDS if d in libs]


# The relay role ----------------------------------------------------------------------

@pytest.mark.parametrize("driver", ["udp", "cyclonedds"])
def test_relay_forwards_every_sample_intact_and_ends_with_the_others(node, results, driver):
    if driver not in paths.driver_libraries():
        pytest.skip(f"{driver} is not built")
    # udp: best effort by nature; cyclonedds reliable keep_all: nothing may be lost.
    reliable = ["--reliability", "reliable", "--history", "keep_all"] \
        if driver == "cyclonedds" else []
    proc = run_cli(["pubsub", "--driver", driver, "--relays", "1", "--size", "256",
                    "--count", "300", "--rate", "500", "--warmup", "5", "--check-pattern",
                    "--timeout", "60", *reliable], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = next(p for p in results.iterdir() if p.is_dir() and (p / "relay.json").is_file())
    sub = json.loads((run_dir / "sub.json").read_text())
    relay = json.loads((run_dir / "relay.json").read_text())
    pub = json.loads((run_dir / "pub.json").read_text())
    assert relay["role"] == "relay" and relay["ended_by"] == "end_marker"
    assert sub["ended_by"] in ("end_marker", "count") and pub["ended_by"] == "count"
    # The sub listens on the relay's topic, the relay on the pub's.
    topics = {name: s["config"]["topics"] for name, s in (("pub", pub), ("relay", relay),
                                                          ("sub", sub))}
    assert topics["relay"] == [topics["pub"][0], topics["sub"][0]]
    assert topics["sub"][0].endswith("_data_relay")
    # Counts add up: every measured sample the pub sent, the relay took and forwarded,
    # and the sub recorded intact (--check-pattern: the payload byte for byte).
    assert pub["counts"]["sent"] == 300
    assert sub["counts"]["corrupted"] == 0
    samples = read_samples(run_dir / "sub.samples")
    assert len(samples) == sub["counts"]["samples"]
    assert relay["counts"]["sent"] == relay["counts"]["received"]
    assert sub["counts"]["samples"] + sub["counts"]["lost"] == pub["counts"]["sent"]
    if driver == "cyclonedds":  # reliable on both hops: nothing lost
        assert sub["counts"]["samples"] == relay["counts"]["received"] == 300
    assert (samples.latency_ns > 0).all()


def test_relay_settings_that_cannot_work_are_refused(results):
    for extra, flag in ((["--subscribers", "2"], "subscribers"), (["--placement", "intra"], "placement"),
                        (["--echo-every", "10"], "echo_every")):
        proc = run_cli(["pubsub", "--driver", "udp", "--relays", "1", *extra], results)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "--relays" in proc.stderr, proc.stderr
    proc = run_cli(["pubsub", "--driver", "udp", "--relays", "2"], results)
    assert proc.returncode == 2 and "not 0 or 1" in proc.stderr


# The study ---------------------------------------------------------------------------

def test_full_file_validates_and_is_the_papers_method(node, results):
    proc = run_cli(["reproduce", STUDY, "--dry-run"], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = prepare(SEEDS / f"{STUDY}.yaml", f"{STUDY}.yaml", skip_unbuilt=True)
    runs = [r.params for r in plan.expansion.runs]
    assert len(runs) == 54
    sizes = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    for driver in ("cyclonedds", "fastdds", "zeromq"):
        mine = [p for p in runs if p["driver"] == driver]
        latency = [p for p in mine if p.get("relays") == 1]
        throughput = [p for p in mine if p.get("relays") == 0]
        # Latency: the three-process echo at 1 Hz for 200 s (200 samples) per payload.
        assert sorted(p["size"] for p in latency) == sizes
        assert {(p["rate"], p["duration"]) for p in latency} == {(1, 200)}
        # Throughput: pub -> sub at 5,500 samples/s offered for 200 s per payload.
        assert sorted(p["size"] for p in throughput) == sizes
        assert {(p["rate"], p["duration"]) for p in throughput} == {(5500, 200)}


def test_published_figures_name_their_sources():
    published = yaml.safe_load((SEEDS / f"{STUDY}.published.yaml").read_text())
    assert published["hardware"] and published["versions"] and published["source"]
    for block in ("latency_min_us", "throughput_mbit_s", "criteria"):
        assert published[block]["source"]
        assert set(published[block]["values"]) == set(published["systems"])
    assert {v["driver"] for v in published["systems"].values()} == {"cyclonedds", "fastdds", None}
    for claim in published["claims"]:
        assert claim["source"] and claim["text"] and claim["id"], claim


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One `psbench reproduce ijraset --quick` for the tests below."""
    if not paths.node_path().is_file():
        pytest.fail("build/core/psbench-node is missing: run `make build`")
    if built() != list(DDS):
        pytest.skip("the quick file runs cyclonedds and fastdds: build both")
    return reproduce_quick(STUDY, tmp_path_factory.mktemp("ijraset"), timeout=900)






def test_quick_runs_end_to_end_with_the_papers_sections(quick):
    proc, root = quick
    check_paper_written(proc, root, STUDY, SECTIONS)
    report = root / "report"
    for name in ("ijraset-latency", "ijraset-throughput", "ijraset-throughput-published",
                 "ijraset-criteria", "ijraset-criteria-published", "ijraset-claims"):
        for suffix in ("md", "csv", "json", "tex"):
            assert (report / "paper" / f"{name}.{suffix}").is_file()
    # Every run went through three processes (latency) or two (throughput).
    for label, line in runs_by_label(root).items():
        assert line["status"] == "ok", line
        names = {p.stem for p in (root / line["run_dir"]).glob("*.json")
                 if p.stem in ("pub", "relay", "sub")}
        assert names == ({"pub", "relay", "sub"} if "relays=1" in label else {"pub", "sub"})


def test_latency_and_throughput_are_the_runs_own(quick):
    root, paper = ok_paper(quick)
    published = yaml.safe_load((SEEDS / f"{STUDY}.published.yaml").read_text())
    runs = runs_by_label(root)
    latency = paper_table(paper, "ijraset-latency")["rows"]
    for driver in DDS:
        rows = [r for r in latency if r["middleware"] == NAMES[driver]]
        assert [r["size"] for r in rows] == [32, 1024, 8192]
        for row in rows:
            run_dir = root / runs[f"{driver}-{LABEL_SIZE[row['size']]}-100Hz-relays=1"]["run_dir"]
            values = read_samples(run_dir / "sub.samples").latency_ns.astype(np.float64)
            assert row["n"] == values.size > 0
            assert row["min_ns"] == values.min()
            assert row["median_ns"] == pytest.approx(np.median(values))
            assert row["min_half_ns"] == pytest.approx(values.min() / 2)
        key = "opensplice" if driver == "cyclonedds" else "fastrtps"
        paper_min = published["latency_min_us"]["values"][key]
        assert rows[0]["paper_min_ns"] == paper_min[32] * 1000
        assert rows[1]["paper_min_ns"] is None
        assert rows[2]["paper_min_ns"] == paper_min[8192] * 1000
    throughput = paper_table(paper, "ijraset-throughput")["rows"]
    for driver in DDS:
        rows = [r for r in throughput if r["middleware"] == NAMES[driver]]
        assert [r["size"] for r in rows] == [32, 1024, 8192]
        for row in rows:
            run_dir = root / runs[f"{driver}-{LABEL_SIZE[row['size']]}-5500Hz-relays=0"]["run_dir"]
            tp = json.loads((run_dir / "run.json").read_text())["throughput"]
            assert row["offered_rate_hz"] == 5500
            assert row["samples_per_s"] == pytest.approx(tp["aggregate_samples_per_s"])
            assert row["mbit_per_s"] == pytest.approx(tp["aggregate_mbit_per_s"])


def test_criteria_table_names_each_cells_source(quick):
    root, paper = ok_paper(quick)
    criteria = paper_table(paper, "ijraset-criteria")
    described = json.loads(run_cli(["drivers", "--json"], root.parent).stdout)
    drivers = {d["name"]: d["describe"] for d in described if d["describe"]}
    rows = {r["middleware"]: r for r in criteria["rows"]}
    for driver in DDS:
        row = rows[NAMES[driver]]
        assert row["version"] == drivers[driver]["version"]
        assert row["persistence"].startswith("transient_local")  # the capability
        assert "measured" in row["sources"] and "documented" in row["sources"]
        assert "capability" in row["sources"]
        assert "B" in row["latency"] and "Mbit/s" in row["throughput"]
    assert "raw UDP" not in rows and "shared memory" not in rows
    published = paper_table(paper, "ijraset-criteria-published")
    assert [r["system"] for r in published["rows"]] == [
        "Vortex OpenSplice", "eProsima Fast RTPS", "RTI Connext DDS", "CoreDX DDS", "OpenDDS"]
    assert [r["low_bandwidth"] for r in published["rows"]] == ["yes", "yes", "yes", "No", "No"]
    claims = paper_table(paper, "ijraset-claims")
    assert [r["id"] for r in claims["rows"]] == [
        c["id"] for c in yaml.safe_load((SEEDS / f"{STUDY}.published.yaml").read_text())["claims"]]
    verdicts = {r["id"]: r for r in claims["rows"]}
    # The per-size throughput of the paper needs more samples/s than it says it sent.
    # The paper's own figures exceed what its stated rate allows (5,500/s x 1,024 B x 8 =
    # 45 Mbit/s against its 600 Mbit/s): inconsistent in the paper, whatever we measure.
    assert verdicts["bandwidth"]["verdict"].startswith("inconsistent in the paper:")
    assert verdicts["tput-1024"]["verdict"].startswith("inconsistent in the paper:")
    assert "73,242 samples/s" in verdicts["tput-1024"]["verdict"]
    assert verdicts["tput-connext"]["verdict"].startswith("not testable:")
    assert verdicts["offered-rate"]["verdict"] in ("same method", "differs")
