"""The three architectures (`psbench reproduce architectures`): the quick file runs end to
end on every built middleware, each row's figures are those of its own runs (checked
against the samples files), each middleware sits in its manifest's class, and the
brokers' own CPU is in the cost of a round trip. Real runs; timings never asserted."""

import json

import numpy as np
import pytest

from psbench.base import manifests, paths
from psbench.reproduce import architectures
from psbench.results.samples import read_samples
from reproduce_runs import SEEDS, check_paper_written, paper_table, reproduce_quick, runs_by_label

STUDY = "architectures"
SECTIONS = ["The three architectures: decentralized, federated, centralized"]


@pytest.mark.parametrize(
    "expect,first,second,verdict",
    [
        ("federated below decentralized", 10.0, 20.0, "agrees"),
        ("federated below decentralized", 20.0, 10.0, "differs"),
        ("federated below decentralized", 10.0, 10.0, "differs"),
        ("federated not above decentralized", 10.0, 10.0, "agrees"),
        ("federated not above decentralized", 11.0, 10.0, "differs"),
    ],
)
def test_a_claim_is_judged_on_the_class_medians_both_ways(expect, first, second, verdict):
    claim = {"metric": "throughput", "expect": expect}
    classes = {"federated": {"throughput": first}, "decentralized": {"throughput": second}}
    assert architectures._verdict(claim, classes)[1] == verdict


def test_a_claim_without_both_classes_is_not_testable():
    claim = {"metric": "latency_64", "expect": "decentralized not above federated"}
    ours, verdict = architectures._verdict(claim, {"decentralized": {"latency_64": 30.0}})
    assert ours == "-" and verdict.startswith("not testable: no latency_64 measured for federated")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    return reproduce_quick(STUDY, tmp_path_factory.mktemp(STUDY), timeout=1500)


def _file_drivers() -> set[str]:
    text = (SEEDS / f"{STUDY}-quick.yaml").read_text()
    return {d for d in manifests.driver_names() if f"driver: {d}," in text}


@pytest.mark.long
@pytest.mark.host_wide
def test_every_built_middleware_is_measured_in_its_class(quick):
    root, paper = check_paper_written(quick, STUDY, SECTIONS)
    table = paper_table(paper, "architectures-per-middleware")["rows"]
    built = _file_drivers() & set(paths.driver_libraries())
    assert {r["driver"] for r in table} == built
    # A back-to-back run a broker could not drain in time (kafka, a loaded machine) ends
    # in a timeout: its row has no throughput then, and only then.
    drained = {
        (line["params"]["driver"], line["params"].get("transport") or "default")
        for line in runs_by_label(root).values()
        if line["params"].get("rate") == 0 and line["status"] == "ok"
    }
    for row in table:
        manifest = manifests.load(row["driver"])
        kind = manifest.transport_architecture.get(row["transport"], manifest.architecture)
        assert row["architecture"] == architectures.CLASSES[kind], row
        assert row["latency_64"] is not None, row
        assert (row["throughput"] is not None) == ((row["driver"], row["transport"]) in drained)
        assert row["first_message"] is not None and row["first_message"] > 0
    if "zenoh" in built:  # peer to peer by default, through its router on transport client
        classes = {r["transport"]: r["architecture"] for r in table if r["driver"] == "zenoh"}
        assert classes == {"default": "decentralized", "client": "federated"}


@pytest.mark.long
@pytest.mark.host_wide
def test_latency_cells_are_their_runs_samples(quick):
    root, paper = check_paper_written(quick, STUDY, SECTIONS)
    table = paper_table(paper, "architectures-per-middleware")["rows"]
    rows = {(r["driver"], r["transport"]): r for r in table}
    for line in runs_by_label(root).values():
        params = line["params"]
        if params["kind"] != "ping" or params["size"] != 64 or line["status"] != "ok":
            continue
        key = (params["driver"], params.get("transport") or "default")
        if key not in rows:  # a floor is one row whatever its transport
            key = (params["driver"], "default")
        samples = read_samples(root / line["run_dir"] / "ping.samples")
        rtt_half_us = samples.latency_ns / 2000.0  # the node's round trips, halved
        # The table rounds to 2 decimals (1 above 100 µs); nearest rank against the mean
        # of the two middle values of 300 samples: within a few percent.
        assert rows[key]["latency_64"] == pytest.approx(float(np.median(rtt_half_us)), rel=0.03), (
            key
        )


@pytest.mark.long
@pytest.mark.host_wide
def test_a_brokers_work_is_in_the_cost_of_a_round_trip(quick):
    root, _ = check_paper_written(quick, STUDY, SECTIONS)
    for label, line in runs_by_label(root).items():
        driver = line["params"]["driver"]
        if line["params"]["kind"] != "ping" or line["status"] != "ok":
            continue
        if manifests.load(driver).architecture != "broker":
            continue
        record = json.loads((root / line["run_dir"] / "run.json").read_text())
        assert record["resources"]["measured"], (label, record["resources"])
        services = record["resources"]["services"]
        # Every message passes through the broker: its process tree used CPU for it.
        assert services["cpu_ns"] and services["cpu_ns"] > 0, (label, services)
