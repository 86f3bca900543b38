"""Throughput, latency under load, fan-out and rate search in `psbench report`: the
values of the tables computed from synthetic node outputs whose rates and percentiles are
known (tests/analysis_data.py), the fallback to the samples for results written before
the node counted throughput, the plots written, the same report twice, and one real run
of the current node through the CLI. The synthetic runs' run.json holds only what the
readers need, as older psbench wrote it: those tests are marked run_json_by_hand."""

import csv
import json
import os
import subprocess

import numpy as np
import pytest

from analysis_data import SECOND, Sub, pubsub_spec, search_document, write_run
from conftest import run_cli, run_records
from psbench.report.document import Settings, build_report, write_report
from psbench.results.load import load_results
from psbench.results.samples import read_samples

SIZE = 1024
ECHO_RTT_NS = [2 * k * 1000 for k in range(1, 301)]  # RTT/2 = 1..300 µs


def nearest_rank(values, q: float) -> float:
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    # Integer arithmetic (q in parts per 100,000): no float rank error.
    rank = max(1, (round(q * 1000) * len(ordered) + 99_999) // 100_000)
    return float(ordered[rank - 1])


def fanout_subs() -> list[Sub]:
    return [
        Sub("sub-1", 3000, 1000.0, 50_000, stored=2000),  # capped at 2000 samples
        Sub("sub-2", 3000, 1000.0, 60_000, lost=range(100, 130)),
        Sub("sub-3", 3000, 1000.0, 70_000, t0=400_000_000),
    ]  # joined 0.4 s later


PUB = {"pub": {"sent": 3000, "first_send_ns": 0, "last_send_ns": 2_999_000_000, "rate_hz": 1000.0}}


def fanout_run(folder, blocks=True):
    return write_run(
        folder,
        pubsub_spec(subscribers=3, echo_every=10),
        fanout_subs(),
        PUB,
        SIZE,
        blocks=blocks,
        echo={"publisher": "pub", "every": 10, "rtt_ns": ECHO_RTT_NS, "expected": 300},
    )


def report_of(folder, **settings):
    return build_report(load_results(folder), Settings(resamples=200, **settings))


def rows_of(report, name) -> list[dict]:
    return report.table(name).records()


# Loading ------------------------------------------------------------------------------


@pytest.mark.run_json_by_hand
def test_throughput_comes_from_the_node_blocks_not_the_capped_samples(tmp_path):
    run = load_results(fanout_run(tmp_path / "run")).runs[0]
    subs = {s.name: s for s in fanout_subs()}
    got = run.throughput
    assert got["source"] == "node" and list(got["subscribers"]) == ["sub-1", "sub-2", "sub-3"]
    for name, sub in subs.items():
        mine = got["subscribers"][name]
        assert mine["received"] == sub.received and mine["lost"] == sub.lost
        # (received - 1) / (last - first arrival) on the subscriber's clock
        assert mine["samples_per_s"] == pytest.approx((sub.received - 1) / sub.span_s)
        assert mine["mbit_per_s"] == pytest.approx((sub.received - 1) * SIZE * 8 / sub.span_s / 1e6)
        # the node's trailing empty bins (preallocated for the timeout) are dropped
        assert mine["per_bin"] == sub.per_second()
    # sub-1's file stops at 2000 samples; its rate counts all 3000 it received
    assert got["subscribers"]["sub-1"]["beyond_capacity"] == 1000
    assert got["subscribers"]["sub-1"]["samples_per_s"] == pytest.approx(2999 / 2.99900099)
    assert got["samples_per_s"] == pytest.approx(
        sum((s.received - 1) / s.span_s for s in subs.values())
    )
    assert got["loss_percent"] == pytest.approx(100 * 30 / 9000)
    assert got["per_bin"] == [2970, 3000, 3000]
    assert got["publishers"]["pub"]["achieved_rate_hz"] == pytest.approx(2999 / 2.999)
    assert got["offered_rate_hz"] == 1000.0


@pytest.mark.run_json_by_hand
def test_latency_under_load_is_kept_apart_from_the_one_way_series(tmp_path):
    run = load_results(fanout_run(tmp_path / "run")).runs[0]
    assert list(run.echo_by_publisher) == ["pub"]
    assert np.array_equal(np.sort(run.echo_latency_ns), np.arange(1, 301) * 1000.0)
    assert run.echo_every == 10
    assert run.echo_counts == {"expected": 300, "received": 300, "lost": 0}
    # the one-way series is the subscribers' samples only
    assert run.latency_ns.size == 2000 + 2970 + 3000
    assert run.latency_ns.min() >= 50_000


@pytest.mark.run_json_by_hand
def test_older_results_fall_back_to_the_samples(tmp_path):
    run = load_results(fanout_run(tmp_path / "run", blocks=False)).runs[0]
    got = run.throughput
    assert got["source"] == "samples"
    for sub in fanout_subs():
        mine = got["subscribers"][sub.name]
        receive = sub.receive[: sub.stored]
        span = (receive[-1] - receive[0]) / 1e9
        # (samples - 1) / span of the recorded samples, as before the blocks
        assert mine["samples_per_s"] == pytest.approx((sub.stored - 1) / span)
        assert mine["per_bin"] == [int(x) for x in np.bincount((receive - receive[0]) // SECOND)]
        assert mine["lost"] == sub.lost
    # no send times without the block: no achieved rate; offered from the pub's config
    assert got["publishers"]["pub"]["achieved_rate_hz"] is None
    assert got["achieved_rate_hz"] is None and got["offered_rate_hz"] == 1000.0


@pytest.mark.run_json_by_hand
def test_several_topics_and_publishers_load_in_natural_order(tmp_path):
    subs = [
        Sub("t2-sub-10", 300, 100.0, 40_000, topic="data2"),
        Sub("t1-sub", 300, 100.0, 30_000, topic="data1"),
        Sub("t2-sub-2", 300, 100.0, 40_000, topic="data2"),
    ]
    pubs = {
        name: {"sent": 300, "first_send_ns": 0, "last_send_ns": 2_990_000_000, "rate_hz": 100.0}
        for name in ("t2-pub-1", "t1-pub", "t2-pub-2")
    }
    folder = write_run(
        tmp_path / "run", pubsub_spec(topics=2, publishers=2, rate=100.0), subs, pubs, SIZE
    )
    run = load_results(folder).runs[0]
    assert list(run.receivers) == ["t1-sub", "t2-sub-2", "t2-sub-10"]
    assert list(run.publishers) == ["t1-pub", "t2-pub-1", "t2-pub-2"]
    assert run.throughput["offered_rate_hz"] == 300.0  # three publishers at 100/s
    assert run.throughput["achieved_rate_hz"] == pytest.approx(3 * 299 / 2.99)
    assert run.latency_ns.size == 900
    report = report_of(folder)
    assert [r["subscriber"] for r in rows_of(report, "subscribers")] == [
        "t1-sub",
        "t2-sub-2",
        "t2-sub-10",
    ]
    assert "under-load" not in {t.name for t in report.tables}


# Tables -------------------------------------------------------------------------------


@pytest.mark.run_json_by_hand
def test_delivery_table_has_offered_achieved_and_received_rates(tmp_path):
    report = report_of(fanout_run(tmp_path / "run"))
    (row,) = rows_of(report, "delivery")
    subs = fanout_subs()
    assert row["sent"] == 9000 and row["samples"] == 2000 + 2970 + 3000
    assert row["lost"] == 30 and row["lost_fraction"] == pytest.approx(30 / 9000)
    assert row["offered_rate_hz"] == 1000.0
    assert row["achieved_rate_hz"] == pytest.approx(2999 / 2.999)
    assert row["samples_per_s"] == pytest.approx(sum((s.received - 1) / s.span_s for s in subs))
    assert row["mbit_per_s"] == pytest.approx(row["samples_per_s"] * SIZE * 8 / 1e6)
    text = report.table("delivery").text_rows()[0]
    assert text[11:15] == ["1,000", "1,000", "2,990", "24.49"]  # offered .. Mbit/s
    assert not any("without the node's throughput" in n for n in report.table("delivery").notes)


@pytest.mark.run_json_by_hand
def test_latency_under_load_table(tmp_path):
    report = report_of(fanout_run(tmp_path / "run"))
    (row,) = rows_of(report, "under-load")
    assert (row["every"], row["expected"], row["received"], row["lost"], row["n"]) == (
        10,
        300,
        300,
        0,
        300,
    )
    values = np.arange(1, 301) * 1000.0
    assert row["p50_ns"] == nearest_rank(values, 50) == 150_000
    assert row["p99_ns"] == nearest_rank(values, 99) == 297_000
    assert row["max_ns"] == 300_000
    # the one-way p50 beside it is the subscribers' series, not the echoes
    assert row["one_way_p50_ns"] == report.configs[0].stats["p50"] != row["p50_ns"]


@pytest.mark.run_json_by_hand
def test_per_subscriber_table_for_fan_out(tmp_path):
    report = report_of(fanout_run(tmp_path / "run"))
    rows = rows_of(report, "subscribers")
    assert [r["subscriber"] for r in rows] == ["sub-1", "sub-2", "sub-3"]
    for row, sub in zip(rows, fanout_subs()):
        stored = sub.latency[: sub.stored]
        assert row["n"] == sub.stored and row["received"] == sub.received
        assert row["lost"] == sub.lost
        assert row["p50_ns"] == nearest_rank(stored, 50)
        assert row["p99_ns"] == nearest_rank(stored, 99)
        assert row["samples_per_s"] == pytest.approx((sub.received - 1) / sub.span_s)


@pytest.mark.run_json_by_hand
def test_one_subscriber_without_echo_adds_no_table(tmp_path):
    folder = write_run(
        tmp_path / "run", pubsub_spec(), [Sub("sub", 3000, 1000.0, 50_000)], PUB, SIZE
    )
    names = [t.name for t in report_of(folder).tables]
    assert names == ["summary", "intervals", "delivery", "baseline", "significance"]


# Rate search --------------------------------------------------------------------------

SEARCH_STEPS = [  # rate, loss %, p99 ns, passed
    (1000.0, 0.0, 120_000, True),
    (2000.0, 0.0, 150_000, True),
    (4000.0, 0.2, 300_000, True),
    (8000.0, 12.5, 2_400_000, False),
    (6000.0, 0.5, 450_000, True),
]


def search_folder(root):
    steps = []
    for number, (rate, loss, p99, passed) in enumerate(SEARCH_STEPS, start=1):
        name = f"step-{number:02d}-{int(rate)}hz"
        count = 1000
        lost = range(0, int(count * loss / 100))
        write_run(
            root / name,
            pubsub_spec(rate=rate, count=count),
            [Sub("sub", count, rate, 40_000 + int(rate), lost=lost)],
            {
                "pub": {
                    "sent": count,
                    "first_send_ns": 0,
                    "last_send_ns": int((count - 1) * SECOND / rate),
                    "rate_hz": rate,
                }
            },
            SIZE,
            run_id=f"step{number}",
        )
        steps.append(
            {
                "rate_hz": rate,
                "run_dir": name,
                "status": "ok",
                "achieved_rate_hz": rate * 0.999,
                "loss_percent": loss,
                "p99_ns": p99,
                "passed": passed,
                "why": None if passed else "loss 12.50% > 1%",
            }
        )
    (root / "search.json").write_text(json.dumps(search_document(steps, 6000.0, [6000.0, 8000.0])))
    return root


@pytest.mark.run_json_by_hand
def test_search_table_and_plots(tmp_path):
    folder = search_folder(tmp_path / "search")
    report = report_of(folder)
    rows = rows_of(report, "search")
    assert [(r["step"], r["rate_hz"], r["passed"]) for r in rows] == [
        (n, rate, passed) for n, (rate, _, _, passed) in enumerate(SEARCH_STEPS, start=1)
    ]
    assert rows[3]["loss_percent"] == 12.5 and rows[3]["why"] == "loss 12.50% > 1%"
    assert rows[3]["p99_ns"] == 2_400_000 and rows[0]["run_dir"] == "step-01-1000hz"
    notes = report.table("search").notes
    assert notes[0] == (
        "search: maximum sustainable rate 6,000/s where loss <= 1 % and p99 "
        "<= 500 µs; bracket 6,000..8,000/s; ended by precision"
    )
    assert "rate search search: maximum sustainable rate 6,000/s (5 steps)" in report.summary
    # the steps are runs too: five configurations differing only in rate
    assert len([c for c in report.configs if c.ok_runs]) == 5
    out = tmp_path / "report"
    write_report(report, out)
    doc = json.loads((out / "report.json").read_text())
    names = {p["name"] for p in doc["plots"]}
    assert {"rate-search", "latency-vs-rate"} <= names
    for name in ("rate-search", "latency-vs-rate"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 10_000
        assert (out / "plots" / f"{name}.svg").is_file()
    assert [r["rate_hz"] for r in csv.DictReader((out / "search.csv").open())] == [
        str(s[0]) for s in SEARCH_STEPS
    ]
    svg = (out / "plots" / "rate-search.svg").read_text()
    assert "max sustainable 6,000/s" in svg and "bound" in svg and "failed" in svg
    html = (out / "report.html").read_text()
    assert 'id="plot-rate-search"' in html and 'id="table-search"' in html


@pytest.mark.run_json_by_hand
def test_a_folder_of_searches_reads_every_search_and_its_steps(tmp_path):
    search_folder(tmp_path / "all" / "shm")
    search_folder(tmp_path / "all" / "udp")
    results = load_results(tmp_path / "all")
    assert [s.name for s in results.searches] == ["shm", "udp"]
    assert len(results.runs) == 10


@pytest.mark.run_json_by_hand
def test_an_unknown_search_format_is_named(tmp_path):
    folder = search_folder(tmp_path / "search")
    (folder / "search.json").write_text(json.dumps({"format": "psbench-search/9"}))
    with pytest.raises(Exception, match="psbench-search/9"):
        load_results(folder)


# Plots and determinism ----------------------------------------------------------------


@pytest.mark.run_json_by_hand
def test_throughput_over_time_is_drawn_and_reports_are_identical(tmp_path):
    root = tmp_path / "results"
    fanout_run(root / "fanout")
    search_folder(root / "search")
    outs = [tmp_path / "one", tmp_path / "two"]
    for out in outs:
        write_report(report_of(root), out)
    doc = json.loads((outs[0] / "report.json").read_text())
    names = {p["name"] for p in doc["plots"]}
    assert {"throughput-over-time", "rate-search", "latency-vs-rate"} <= names, doc["notes"]
    fanout = next(c for c in doc["configurations"] if c["params"].get("subscribers") == 3)
    assert fanout["per_second"] == [[2970, 3000, 3000]]
    assert fanout["echo_ns"]["p50"] == 150_000
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert len(files) > 30
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


@pytest.mark.run_json_by_hand
def test_short_runs_leave_throughput_over_time_out_with_a_note(tmp_path):
    folder = write_run(
        tmp_path / "run", pubsub_spec(count=1500), [Sub("sub", 1500, 1000.0, 50_000)], PUB, SIZE
    )
    out = tmp_path / "report"
    report = report_of(folder)
    write_report(report, out)
    assert not (out / "plots" / "throughput-over-time.png").exists()
    assert any(n.startswith("throughput over time:") for n in report.notes), report.notes


# A real run ---------------------------------------------------------------------------


def test_a_real_pubsub_run_reports_its_throughput(driver_libs, results):
    """3 s at 2000/s over shm through the CLI: the report's rates are those of the
    node's own counts (or, from a node without them, of its samples), and every
    received sample is in the per-second series."""
    proc = run_cli(["pubsub", "--driver", "shm", "--count", "6000", "--rate", "2000"], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = run_records(results)[0]["_dir"]
    out = results / "report"
    proc = run_cli(["report", str(run_dir), "-o", str(out)], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "offered /s" in proc.stdout and "pub sent/s" in proc.stdout
    sub = json.loads((run_dir / "sub.json").read_text())
    (row,) = list(csv.DictReader((out / "delivery.csv").open()))
    run = load_results(run_dir).runs[0]
    block = sub.get("throughput")
    if block:
        span = (block["last_arrival_ns"] - block["first_arrival_ns"]) / 1e9
        expected = (block["received"] - 1) / span
        assert float(row["achieved_rate_hz"]) > 0
    else:
        receive = run.receive_ns
        expected = (receive.size - 1) / ((receive.max() - receive.min()) / 1e9)
    assert float(row["samples_per_s"]) == pytest.approx(expected)
    assert float(row["offered_rate_hz"]) == 2000.0
    received = block["received"] if block else sub["counts"]["received"]
    assert sum(run.throughput["per_bin"]) == received > 0
    doc = json.loads((out / "report.json").read_text())
    assert "throughput-over-time" in {p["name"] for p in doc["plots"]}, doc["notes"]


@pytest.mark.run_json_by_hand
def test_a_real_echo_run_of_the_node_gives_latency_under_load(node, driver_libs, tmp_path):
    """The node's own --echo-every output (sub and pub started directly, no barrier:
    the pub waits for its reader to match), reported: RTT/2 of pub.samples in its own
    table, the one-way series untouched."""
    if "cyclonedds" not in driver_libs:
        pytest.skip("cyclonedds driver not built")
    run_dir = tmp_path / "echo-run"
    run_dir.mkdir()
    common = [
        "--driver",
        str(driver_libs["cyclonedds"]),
        "--out",
        str(run_dir),
        "--run-id",
        f"echo{os.getpid()}",
        "--size",
        "256",
        "--count",
        "500",
        "--rate",
        "1000",
        "--barrier",
        "none",
        "--echo-every",
        "5",
        "--reliability",
        "reliable",
        "--match-timeout",
        "10",
        "--timeout",
        "60",
    ]
    sub = subprocess.Popen(
        [str(node), "--role", "sub", "--name", "sub", *common],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        pub = subprocess.run(
            [str(node), "--role", "pub", "--name", "pub", *common],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert pub.returncode == 0, pub.stderr
        assert sub.wait(timeout=60) == 0, sub.stderr.read()
    finally:
        if sub.poll() is None:
            sub.kill()
            sub.wait()
    spec = {
        "kind": "pubsub",
        "driver": "cyclonedds",
        "size": 256,
        "count": 500,
        "rate": 1000.0,
        "echo_every": 5,
        "reliability": "reliable",
    }
    (run_dir / "run.json").write_text(
        json.dumps({"format": "psbench-run/1", "run_id": "echo", "spec": spec, "status": "ok"})
    )
    pub_summary = json.loads((run_dir / "pub.json").read_text())
    run = load_results(run_dir).runs[0]
    rtt = read_samples(run_dir / "pub.samples")
    assert rtt.kind == "rtt" and len(rtt) == pub_summary["echo"]["received"] > 0
    assert np.array_equal(np.sort(run.echo_latency_ns), np.sort(rtt.latency_ns / 2.0))
    assert (
        run.latency_ns.size == json.loads((run_dir / "sub.json").read_text())["counts"]["samples"]
    )
    (row,) = rows_of(report_of(run_dir), "under-load")
    assert row["every"] == 5 and row["n"] == len(rtt)
    assert row["expected"] == pub_summary["echo"]["expected"]
    assert row["p50_ns"] == nearest_rank(rtt.latency_ns / 2.0, 50)


@pytest.mark.run_json_by_hand
def test_a_search_with_several_publishers_says_its_rate_is_each_ones(tmp_path):
    folder = search_folder(tmp_path / "search")
    record = json.loads((folder / "search.json").read_text())
    record["publishers"] = 2
    record["criteria"]["confirm"] = 3
    record["steps"][0].update(runs=3, runs_passed=3)
    (folder / "search.json").write_text(json.dumps(record))
    table = report_of(folder).table("search")
    names = [c.name for c in table.columns]
    assert "offered /s per pub" in names and "all pubs /s" in names
    rows = rows_of(report_of(folder), "search")
    assert rows[0]["aggregate_rate_hz"] == 2 * rows[0]["rate_hz"]
    assert rows[0]["runs_passed"] == "3/3" and rows[3]["runs_passed"] == "0/1"
    assert table.notes[0].startswith(
        "search: maximum sustainable rate 6,000/s per "
        "publisher (12,000/s from all 2) where loss <= 1 % "
        "and p99 <= 500 µs and 3 of 3 runs passed"
    )
