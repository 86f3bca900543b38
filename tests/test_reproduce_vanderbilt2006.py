"""Vanderbilt 2006 (`psbench reproduce vanderbilt2006`): the full file validates and is
the paper's method, the published file holds only what the slides print, and the quick
file runs end to end and produces the paper's sections with values computed from the
run's own files. Real runs; values are checked against the samples and summaries,
timings never."""

import json

import numpy as np
import pytest

from conftest import run_cli
from experiment_files import index_lines
from psbench.base import paths
from psbench.results.samples import read_samples
from reproduce_runs import Study, ok_paper

MIDDLEWARES = ("cyclonedds", "fastdds")
NAMES = {"cyclonedds": "Cyclone DDS", "fastdds": "Fast DDS"}
PAPER = {"cyclonedds": "DDS1", "fastdds": "DDS2", "opensplice5": "DDS2"}
# What the tables say of each: Fast DDS stands in for DDS2, whose own system (OpenSplice,
# federated) is drivers/opensplice5 where it is built.
PAPER_COLUMN = {**PAPER, "fastdds": "DDS2 (stand-in)"}
SECTIONS = [
    "Method",
    "Latency and jitter: sequence of bytes and complex type",
    "Scaling up subscribers: throughput 1-to-N over unicast and multicast",
    "Listener against waitset",
    "The paper's statements",
    "Runs and versions",
]
TABLES = [
    "method",
    "latency-bytes",
    "latency-complex",
    "throughput",
    "listener-waitset",
    "claims",
    "runs",
]
STUDY = Study("vanderbilt2006", MIDDLEWARES, SECTIONS)


def test_full_file_validates_and_is_the_papers_method(node, results):
    if len(STUDY.built()) < len(MIDDLEWARES):
        pytest.skip("the full file names Cyclone DDS and Fast DDS; not both are built")
    proc = run_cli(["reproduce", STUDY.name, "--dry-run"], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "312 runs" in proc.stdout
    plan = STUDY.plan(skip_unbuilt=True)
    runs = [r.params for r in plan.expansion.runs]
    assert len(runs) == 312
    pings = [p for p in runs if p["kind"] == "ping"]
    pubs = [p for p in runs if p["kind"] == "pubsub"]
    # 100 primer and 10,000 stats samples, a 32-byte ack for the paper's 4-byte one.
    assert {
        (p["warmup"], p["count"], p["reply_size"], p["driver"], p["transport"]) for p in pings
    } == {(100, 10000, 32, d, "shm" if d == "opensplice5" else "udp") for d in PAPER}
    lengths = [2**k for k in range(2, 15)]  # the paper's 4 to 16,384
    powers = [length + 32 for length in lengths]  # after psbench's 32-byte header
    for driver in MIDDLEWARES:
        simple = [p for p in pings if p["driver"] == driver and "options.type" not in p]
        assert sorted(p["size"] for p in simple) == powers
        complex_ = [
            p for p in pings if p["driver"] == driver and p.get("options.type") == "complex"
        ]
        assert sorted(int(p["options.elements"]) for p in complex_) == lengths
        assert {p["size"] for p in complex_} == {32}
        fan = [p for p in pubs if p["driver"] == driver and p["notify"] == "listener"]
        assert sorted({(p["transport"], p["subscribers"]) for p in fan}) == [
            ("multicast", 4),
            ("multicast", 8),
            ("multicast", 12),
            ("udp", 4),
            ("udp", 8),
            ("udp", 12),
        ]
        assert len(fan) == 6 * len(powers)
        wait = [p for p in pubs if p["driver"] == driver and p["notify"] == "wait"]
        assert sorted(p["size"] for p in wait) == powers
        # multicast: the one transport the paper's DDS1 and DDS2 both had
        assert {(p["transport"], p["subscribers"]) for p in wait} == {("multicast", 4)}
    assert {(p["rate"], p["history"], p["reliability"], p["count"]) for p in pubs} == {
        (0.0, "keep_last:1", "best_effort", 10000)
    }
    # DDS2 itself (OpenSplice 5.5.1, federated): the same latency runs, and DDS2's fan-out
    # and listener/waitset runs through its daemon's shared memory.
    mine = [p for p in runs if p["driver"] == "opensplice5"]
    assert {p["transport"] for p in mine} == {"shm"}
    assert (
        sorted(p["size"] for p in mine if p["kind"] == "ping" and "options.type" not in p) == powers
    )
    fan = [p for p in mine if p["kind"] == "pubsub" and p["notify"] == "listener"]
    assert sorted({p["subscribers"] for p in fan}) == [4, 8, 12] and len(fan) == 3 * len(powers)
    wait = [p for p in mine if p["kind"] == "pubsub" and p["notify"] == "wait"]
    assert {p["subscribers"] for p in wait} == {4} and len(wait) == len(powers)


def test_quick_file_keeps_the_method():
    plan = STUDY.plan("-quick", skip_unbuilt=True)
    runs = [r.params for r in plan.expansion.runs]  # every run, the skipped ones too
    assert {p["kind"] for p in runs} <= {"ping", "pubsub"}
    assert all(p["reply_size"] == 32 for p in runs if p["kind"] == "ping")
    assert all(p["history"] == "keep_last:1" for p in runs)


def test_published_file_holds_what_the_slides_print():
    published = STUDY.published_sourced()
    assert published["systems"] == PAPER
    assert published["systems_unicast"] == {"cyclonedds": "DDS1", "fastdds": "DDS3"}
    method = published["method"]
    assert (method["primer_samples"], method["stats_samples"], method["ack_bytes"]) == (
        100,
        10000,
        4,
    )
    assert method["subscribers"] == [4, 8, 12]


# One `psbench reproduce vanderbilt2006 --quick` for the tests below.
quick = STUDY.quick_fixture(
    lambda: bool(STUDY.built()), "neither cyclonedds nor fastdds is built here", timeout=900
)


@pytest.mark.long
def test_quick_runs_end_to_end_with_the_papers_sections(quick):
    root, _ = STUDY.check_written(quick, TABLES)
    report = root / "report"
    for suffix in ("png", "svg"):
        for plot in ("latency", "throughput"):
            assert (report / "paper" / f"vanderbilt2006-{plot}-plot.{suffix}").stat().st_size > 0


@pytest.mark.long
def test_latency_is_the_runs_own_round_trip_with_a_32_byte_ack(quick):
    root, paper = ok_paper(quick)
    runs = index_lines(root)
    simple = STUDY.table(paper, "latency-bytes")["rows"]
    complex_ = STUDY.table(paper, "latency-complex")["rows"]
    for driver in STUDY.built():
        rows = [r for r in simple if r["middleware"] == NAMES[driver]]
        assert [r["sequence"] for r in rows] == [4, 1024, 16384]
        assert {r["paper_system"] for r in rows} == {PAPER_COLUMN[driver]}
        for row in rows:
            [line] = [
                line
                for line in runs
                if line["params"]["kind"] == "ping"
                and line["params"]["driver"] == driver
                and "options.type" not in line["params"]
                and line["params"]["size"] == row["sequence"] + 32
            ]
            run_dir = root / line["run_dir"]
            rtt = read_samples(run_dir / "ping.samples").latency_ns.astype(np.float64)
            assert row["n"] == rtt.size == 500
            assert row["mean_ns"] == pytest.approx(rtt.mean())
            assert row["stdev_ns"] == pytest.approx(rtt.std(ddof=1))
            assert row["max_ns"] == pytest.approx(rtt.max())
            assert row["corrupted"] == 0
            # Both nodes were told: pong answered with the header only.
            for role in ("ping", "pong"):
                summary = json.loads((run_dir / f"{role}.json").read_text())
                assert summary["config"]["reply_size"] == 32
        rows = [r for r in complex_ if r["middleware"] == NAMES[driver]]
        assert [r["elements"] for r in rows] == [4, 256]
        for row in rows:
            assert row["n"] == 500 and row["corrupted"] == 0


@pytest.mark.long
def test_throughput_is_the_subscribers_own_count(quick):
    root, paper = ok_paper(quick)
    rows = STUDY.table(paper, "throughput")["rows"]
    cast = {"unicast": "udp", "multicast": "multicast"}
    lines = [
        ln
        for ln in index_lines(root)
        if ln["params"]["kind"] == "pubsub" and ln["params"]["notify"] == "listener"
    ]
    for driver in STUDY.built():
        mine = [r for r in rows if r["middleware"] == NAMES[driver]]
        assert sorted({(r["cast"], r["subscribers"]) for r in mine}) == [
            ("multicast", 4),
            ("multicast", 8),
            ("multicast", 12),
            ("unicast", 4),
            ("unicast", 8),
            ("unicast", 12),
        ]
        for row in mine:
            [line] = [
                ln
                for ln in lines
                if ln["params"]["driver"] == driver
                and ln["params"]["transport"] == cast[row["cast"]]
                and ln["params"]["subscribers"] == row["subscribers"]
                and ln["params"]["size"] == row["size"]
            ]
            run_dir = root / line["run_dir"]
            subs = sorted(run_dir.glob("sub-*.json"))
            assert len(subs) == row["subscribers"]
            total = 0.0
            for path in subs:
                block = json.loads(path.read_text())["throughput"]
                if block["received"] < 2:
                    # A subscriber starved of CPU (13 processes on 2 cores) may get
                    # nothing: it has no rate and adds none to the total.
                    continue
                span = (block["last_arrival_ns"] - block["first_arrival_ns"]) / 1e9
                total += (block["received"] - 1) / span * row["sequence"] / 1000
            if total == 0:
                assert row["kb_per_s_total"] is None and row["loss_percent"] > 99
                continue
            assert row["kb_per_s_total"] == pytest.approx(total, rel=0.01)
            assert row["kb_per_s_per_subscriber"] == pytest.approx(total / len(subs), rel=0.01)
    waitset = STUDY.table(paper, "listener-waitset")["rows"]
    waitset = [r for r in waitset if r["middleware"] in {NAMES[d] for d in MIDDLEWARES}]
    assert sorted((r["middleware"], r["sequence"]) for r in waitset) == sorted(
        (NAMES[d], s) for d in STUDY.built() for s in (1024, 16384)
    )
    assert {r["cast"] for r in waitset} == {"multicast"}
    for row in waitset:
        assert row["listener_kb_per_s"] and row["waitset_kb_per_s"]
        assert row["ratio"] == pytest.approx(
            row["waitset_kb_per_s"] / row["listener_kb_per_s"], rel=0.02
        )


@pytest.mark.long
def test_every_statement_is_checked(quick):
    root, paper = ok_paper(quick)
    claims = STUDY.claims(paper)
    for row, claim in zip(claims["rows"], STUDY.published()["claims"]):
        if claim["kind"] == "not_testable":
            assert row["verdict"] == "not testable: " + claim["reason"]
        elif set(claim.get("systems") or MIDDLEWARES) & set(STUDY.built()):
            assert row["verdict"] in ("agrees", "differs", "partly"), row
    assert any("other hardware" in note for note in claims["notes"])
    runs = STUDY.table(paper, "runs")["rows"]
    # One row per run of the quick file whose driver is built: the stand-ins' 19 each and,
    # where `make driver-opensplice5` was run, DDS2's own system's.
    libs = paths.driver_libraries()
    plan = STUDY.plan("-quick", skip_unbuilt=True)
    assert len(runs) == sum(r.params["driver"] in libs for r in plan.expansion.runs)
    assert all(r["status"] == "ok" for r in runs)


# The statement checks on made-up throughput: each can come out either way -----------


def _points(kbps: dict) -> dict:
    """(driver, transport, subscribers, sequence B) -> KB/s per subscriber, as configs."""
    from types import SimpleNamespace

    points = {}
    for (driver, transport, n, sequence), per_sub in kbps.items():
        size = sequence + 32
        rate = None if per_sub is None else per_sub * n * 1000 / sequence
        points[(driver, transport, n, size)] = SimpleNamespace(
            params={"subscribers": n}, size=size, rate={"samples_per_s": rate, "loss_percent": 0.0}
        )
    return points


def _verdict(kind: str, claim: dict, kbps: dict) -> str:
    from psbench.reproduce import vanderbilt2006_claims as module

    check = {
        "multicast_above": module._check_multicast_above,
        "gap_grows": module._check_gap_grows,
        "levels_off_less": module._check_levels_off_less,
    }[kind]
    return check(dict(claim, systems=["cyclonedds"]), _points(kbps))[1]


def test_multicast_above_agrees_and_differs():
    claim = {"subscribers": 4, "min_fraction": 0.75}
    above = {
        ("cyclonedds", t, 4, s): (200 if t == "multicast" else 100)
        for t in ("udp", "multicast")
        for s in (1024, 4096)
    }
    below = {k: 300 - v for k, v in above.items()}
    assert _verdict("multicast_above", claim, above) == "agrees"
    assert _verdict("multicast_above", claim, below) == "differs"
    # A run with no rate (every subscriber starved) is left out, not a crash.
    starved = {**above, ("cyclonedds", "udp", 4, 4096): None}
    assert _verdict("multicast_above", claim, starved) == "agrees"


GROWS = {
    ("cyclonedds", "udp", 4, 1024): 100,
    ("cyclonedds", "multicast", 4, 1024): 150,
    ("cyclonedds", "udp", 8, 1024): 50,
    ("cyclonedds", "multicast", 8, 1024): 150,
}
LESS = {
    ("cyclonedds", "udp", 4, 4096): 100,
    ("cyclonedds", "udp", 4, 16384): 110,
    ("cyclonedds", "multicast", 4, 4096): 100,
    ("cyclonedds", "multicast", 4, 16384): 300,
}


@pytest.mark.parametrize(
    "kind, claim, agreeing, differing",
    [
        pytest.param("gap_grows", {"fewer": 4, "more": 8}, GROWS,
                     {**GROWS, ("cyclonedds", "multicast", 8, 1024): 60}, id="gap_grows"),
        pytest.param("levels_off_less", {"subscribers": [4]}, LESS,
                     {**LESS, ("cyclonedds", "multicast", 4, 16384): 100}, id="levels_off_less"),
    ],
)  # fmt: skip
def test_a_check_agrees_and_differs(kind, claim, agreeing, differing):
    assert _verdict(kind, claim, agreeing) == "agrees"
    assert _verdict(kind, claim, differing) == "differs"


def test_a_claim_no_driver_can_test_says_why_whatever_the_data():
    from psbench.reproduce import vanderbilt2006_claims as module

    published = STUDY.published()
    untestable = [c for c in published["claims"] if c["kind"] == "not_testable"]
    assert untestable and all(c["reason"] for c in untestable)
    for kbps in ({}, {("cyclonedds", "multicast", 4, 1024): 200}):
        rows = {r[0]: r[-1] for r in module._claims_table(_points(kbps), published).rows}
        for claim in untestable:
            assert rows[claim["id"]] == "not testable: " + claim["reason"]
