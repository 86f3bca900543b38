"""Throughput, loss, several publishers and topics, latency under load and flow control,
through the CLI over real runs of the baselines and Cyclone DDS. Counts and names are
checked; timings only within generous bounds (this machine is shared)."""

import json

import numpy as np
import pytest

from conftest import assert_nothing_left, only_run, run_cli, run_records
from experiment_files import index_lines, run_experiment, write
from psbench.results.load import load_results
from psbench.results.samples import read_samples

LOSSLESS = ["--reliability", "reliable", "--history", "keep_all"]


def pubsub(results, driver, *extra):
    return run_cli(["pubsub", "--driver", driver, "--match-timeout", "10", *extra], results)


def summaries(record) -> dict:
    return {
        p.stem: json.loads(p.read_text())
        for p in record["_dir"].glob("*.json")
        if p.name != "run.json"
    }


@pytest.mark.parametrize("driver", ["udp", "shm", "cyclonedds"])
def test_a_fixed_rate_run_sends_its_count_at_its_rate_and_the_counts_add_up(
    driver_libs, results, driver
):
    proc = pubsub(results, driver, "--rate", "2000", "--count", "1000")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    tp = record["throughput"]
    pub, sub = tp["publishers"]["pub"], tp["subscribers"]["sub"]
    assert pub["sent"] == 1000 and pub["offered_rate_hz"] == 2000
    # Within 50%: a rate, not a timing; the run's count is exact.
    assert 1000 <= pub["achieved_rate_hz"] <= 3000
    node = summaries(record)["sub"]
    counts = node["counts"]
    assert counts["sent"] == sub["sent"] == 1000
    assert sub["received"] + sub["lost"] + counts["corrupted"] == sub["sent"]
    assert counts["samples"] + counts["lost"] + counts["corrupted"] == counts["sent"]
    assert sum(node["throughput"]["per_bin"]) == sub["received"]
    assert sub["received_bytes"] == 64 * sub["received"]
    assert sub["loss_percent"] == pytest.approx(100 * sub["lost"] / 1000)
    if sub["received"] >= 2:
        assert sub["samples_per_s"] > 0 and sub["mbit_per_s"] == pytest.approx(
            sub["samples_per_s"] * 64 * 8 / 1e6
        )
    assert tp["aggregate_samples_per_s"] == sub["samples_per_s"]
    assert "samples/s" in proc.stdout and "pub rate:  achieved" in proc.stdout


def test_reliable_as_fast_as_possible_asks_for_keep_all_where_the_driver_has_it(
    driver_libs, results
):
    proc = pubsub(
        results / "dds",
        "cyclonedds",
        "--rate",
        "0",
        "--count",
        "20000",
        "--reliability",
        "reliable",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results / "dds")
    assert record["spec"]["history"] == "keep_all" and "history" in record["auto"]
    assert "auto" not in record["spec"]
    nodes = summaries(record)
    assert nodes["sub"]["config"]["history"] == "keep_all"
    # Flow control: the writer waited for the reader, so nothing was lost.
    assert nodes["sub"]["counts"]["lost"] == 0 and record["throughput"]["loss_percent"] == 0
    assert "chosen:    history keep_all" in proc.stdout
    # shm has no keep_all; a run at a fixed rate or with a history given is left alone.
    for name, driver, extra in (
        ("shm", "shm", ["--rate", "0"]),
        ("rate", "cyclonedds", ["--rate", "5000"]),
        ("given", "cyclonedds", ["--rate", "0", "--history", "keep_last:8"]),
    ):
        proc = pubsub(results / name, driver, "--count", "500", "--reliability", "reliable", *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        record = only_run(results / name)
        assert record["auto"] == {} and record["spec"]["history"] in (None, "keep_last:8")


def two_topics(results, driver: str, publishers: int, count: int, *extra):
    """pubsub on two topics, each with publishers writers sending count at 1 kHz, which
    must end ok: (the finished process, its run record)."""
    proc = pubsub(results, driver, "--topics", "2", "--publishers", str(publishers),
                  "--count", str(count), "--rate", "1000", *extra)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, only_run(results)


def writer_counts(path) -> list[int]:
    """Records per writer: the samples file holds writer 0's, then writer 1's ...; seq
    starts again at each writer."""
    seq = read_samples(path).records["seq"]
    starts = np.flatnonzero(np.diff(seq.astype(np.int64)) < 0) + 1
    return [len(part) for part in np.split(seq, starts)]


def test_every_subscriber_of_every_topic_gets_every_publishers_samples(driver_libs, results):
    proc, record = two_topics(results, "cyclonedds", 2, 200, "--subscribers", "2", *LOSSLESS)
    names = [p["name"] for p in record["processes"]]
    assert names == [
        "t1-sub-1",
        "t1-sub-2",
        "t1-pub-1",
        "t1-pub-2",
        "t2-sub-1",
        "t2-sub-2",
        "t2-pub-1",
        "t2-pub-2",
    ]
    for process in record["processes"]:
        argv = process["argv"]
        topic = "data" + process["name"][1]
        assert argv[argv.index("--topic") + 1] == topic
        assert argv[argv.index("--name") + 1] == process["name"]
        assert argv[argv.index("--publishers") + 1] == "2"
        if "-pub-" in process["name"]:
            assert argv[argv.index("--writer-id") + 1] == str(int(process["name"][-1]) - 1)
        else:
            assert "--writer-id" not in argv
    nodes = summaries(record)
    for name in names:
        if "-sub-" not in name:
            assert nodes[name]["counts"]["sent"] == 200
            continue
        counts = nodes[name]["counts"]
        assert counts["sent"] == 400 and counts["samples"] == 400 and counts["lost"] == 0
        assert writer_counts(record["_dir"] / f"{name}.samples") == [200, 200]
        assert record["throughput"]["subscribers"][name]["received"] == 400
    assert record["stats"]["all_subs"]["one_way"]["n"] == 4 * 400
    assert set(record["throughput"]["publishers"]) == {n for n in names if "-pub-" in n}
    assert "t2-sub-2 counts: sent 400" in proc.stdout


@pytest.mark.parametrize("driver, publishers", [("udp", 2), ("shm", 1)])
def test_baselines_take_several_topics_and_udp_several_publishers(
    driver_libs, results, driver, publishers
):
    _, record = two_topics(results, driver, publishers, 300)
    nodes = summaries(record)
    sent = publishers * 300
    for name in ("t1-sub", "t2-sub"):
        counts = nodes[name]["counts"]
        assert counts["sent"] == sent
        assert counts["samples"] + counts["lost"] + counts["corrupted"] == sent
        tp = record["throughput"]["subscribers"][name]
        assert tp["received"] + tp["lost"] + counts["corrupted"] == sent
        # Every writer got through (best effort may lose a few, not a whole writer).
        assert len(writer_counts(record["_dir"] / f"{name}.samples")) == publishers


def test_drivers_with_one_writer_per_topic_refuse_several_publishers(
    driver_libs, results, tmp_path
):
    proc = pubsub(results, "shm", "--publishers", "2", "--count", "100")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "shm: --publishers 2 is not supported; this driver has at most 1 writer(s) "
        "per topic" in proc.stderr
    )
    record = only_run(results)
    assert record["status"] == "refused"
    assert_nothing_left(record["run_id"])
    path = write(
        tmp_path,
        "name: bad\ndefaults: {kind: pubsub}\nmatrix:\n  driver: [udp, shm]\n  publishers: [2]\n",
    )
    proc = run_experiment(path, tmp_path / "results", "--dry-run")
    assert proc.returncode == 2
    assert (
        "exp.yaml:5: matrix.publishers: shm: --publishers 2 is not supported; this "
        "driver has at most 1 writer(s) per topic" in proc.stderr
    )
    assert "udp: --publishers" not in proc.stderr


@pytest.mark.parametrize("driver", ["udp", "cyclonedds"])
def test_an_echo_run_records_latency_under_load_in_pub_samples(driver_libs, results, driver):
    proc = pubsub(results, driver, "--rate", "2000", "--count", "2000", "--echo-every", "10")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    argv = {p["name"]: p["argv"] for p in record["processes"]}
    assert argv["pub"][argv["pub"].index("--echo-every") + 1] == "10"
    assert "--echo-every" in argv["sub"]
    pub = summaries(record)["pub"]
    assert pub["samples_file"] == "pub.samples" and (record["_dir"] / "pub.samples").is_file()
    echo = pub["echo"]
    assert echo["expected"] == 200 and echo["received"] + echo["lost"] == 200
    assert record["stats"]["pub"]["rtt"]["n"] == echo["received"] > 0
    assert "pub RTT/2" in proc.stdout and "latency under load: every 10th" in proc.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--publishers", "0"],
            "argument --publishers: must be a finite whole number, greater than 0",
        ),
        (["--topics", "x"], "argument --topics: 'x' is not a whole number"),
        (["--echo-every", "0"], "argument --echo-every: must be a finite whole number"),
        (["--max-samples", "-1"], "argument --max-samples: must be a finite whole number"),
        (
            ["--publishers", "2", "--placement", "intra"],
            "--publishers > 1: several publishers are separate processes; use --placement inter",
        ),
        (
            ["--topics", "2", "--placement", "intra"],
            "--topics > 1: several topics are run by separate processes; use --placement inter",
        ),
    ],
)
def test_bad_pubsub_arguments_are_named(driver_libs, results, args, message):
    proc = pubsub(results, "udp", *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not run_records(results)


BAD = """
name: bad
defaults: {kind: pubsub, driver: cyclonedds}
matrix:
  publishers: [1, 0]
  topics: [2]
runs:
  - {kind: ping, driver: udp, echo_every: 5}
  - {driver: cyclonedds, placement: intra, publishers: 3}
  - {driver: cyclonedds, max_samples: lots}
"""


def test_bad_experiment_fields_are_named_with_their_line_and_fix(driver_libs, tmp_path):
    path = write(tmp_path, BAD)
    proc = run_experiment(path, tmp_path / "results", "--dry-run")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    assert "exp.yaml:4: matrix.publishers: must be a finite whole number, greater than 0" in err
    assert "exp.yaml:7: runs[0].echo_every: applies to pubsub runs only" in err
    assert (
        "exp.yaml:8: runs[1].publishers: publishers > 1: several publishers are "
        "separate processes; use placement: inter"
    ) in err
    assert "exp.yaml:9: runs[2].max_samples: 'lots' is not a whole number" in err


SWEEP = """
name: load
defaults: {kind: pubsub, driver: udp, count: 1000, rate: 2000, match_timeout: 10}
runs:
  - {echo_every: 10}
  - {publishers: 2, topics: 2}
"""


def test_a_sweep_indexes_throughput_and_latency_under_load(driver_libs, tmp_path):
    store = tmp_path / "sweep"
    proc = run_experiment(write(tmp_path, SWEEP), tmp_path / "results", "-o", str(store))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    echo, several = index_lines(store)
    for entry in (echo, several):
        assert entry["throughput"]["offered_rate_hz"] == 2000
        assert entry["throughput"]["samples_per_s"] > 0
        assert entry["throughput"]["loss_percent"] is not None
    assert set(several["throughput"]["achieved_rate_hz"]) == {
        "t1-pub-1",
        "t1-pub-2",
        "t2-pub-1",
        "t2-pub-2",
    }
    assert several["counts"]["sent"] == 2 * 2 * 1000
    assert echo["under_load"]["echo_every"] == 10 and echo["under_load"]["n"] > 0
    assert echo["under_load"]["series"] == "rtt_half" and "under_load" not in several
    plan = json.loads((store / "experiment.expanded.json").read_text())
    assert plan["runs"][1]["spec"]["cpus"] == {
        "t1-sub": 0,
        "t1-pub-1": 1,
        "t1-pub-2": 0,
        "t2-sub": 1,
        "t2-pub-1": 0,
        "t2-pub-2": 1,
    }
    for entry in (echo, several):
        assert_nothing_left(entry["run_id"])


SEARCH = """
name: search
defaults: {kind: pubsub, duration: 0.3, match_timeout: 10}
matrix:
  driver: [udp]
search: {max_loss: 100, max_p99: 200ms, start_rate: 1000, max_steps: 2}
"""


def test_an_experiment_with_search_runs_a_search_per_run(driver_libs, tmp_path):
    store = tmp_path / "sweep"
    proc = run_experiment(write(tmp_path, SEARCH), tmp_path / "results", "-o", str(store))
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    (entry,) = index_lines(store)
    folder = store / entry["run_dir"]
    record = json.loads((folder / "search.json").read_text())
    assert record["format"] == "psbench-search/1" and len(record["steps"]) <= 2
    assert entry["search"]["steps"] == len(record["steps"])
    assert entry["search"]["bracket"] == record["bracket"]
    assert entry["status"] == ("ok" if record["max_sustainable_rate_hz"] else "failed")
    for step in record["steps"]:
        assert (folder / step["run_dir"] / "run.json").is_file()
    assert "max rate Hz" in proc.stdout
    # The report reads the sweep's searches and loads every step as a run of its own.
    results = load_results(store)
    assert [r.params.get("rate") for r in results.runs] == [s["rate_hz"] for s in record["steps"]]
    assert [r.run_dir.name for r in results.runs] == [s["run_dir"] for s in record["steps"]]
    assert len(results.searches) == 1


def test_a_search_experiment_must_leave_the_rate_to_the_search(driver_libs, tmp_path):
    path = write(
        tmp_path,
        SEARCH.replace("duration: 0.3", "rate: 5")
        .replace("max_steps: 2", "max_steps: 0")
        .replace("200ms", "3"),
    )
    proc = run_experiment(path, tmp_path / "results", "--dry-run")
    assert proc.returncode == 2
    assert "exp.yaml:2: defaults.rate: search: the search chooses each step's rate" in proc.stderr
    assert "search.max_steps: must be a finite whole number, greater than 0" in proc.stderr
    assert "search.max_p99: '3' is not a duration" in proc.stderr


def test_the_throughput_block_is_computed_from_the_node_summaries():
    from psbench.run.measure import throughput

    def sub(received, lost, first, last, size=100):
        return {
            "role": "sub",
            "counts": {"sent": received + lost, "lost": lost},
            "throughput": {
                "first_arrival_ns": first,
                "last_arrival_ns": last,
                "received": received,
                "received_bytes": received * size,
                "beyond_capacity": 0,
                "bin_ns": 10**9,
                "per_bin": [received],
            },
        }

    block = throughput(
        {
            "sub-1": sub(1000, 0, 0, 10**9),
            "sub-2": sub(500, 500, 0, 10**9),
            "pub": {
                "role": "pub",
                "counts": {"sent": 1000},
                "throughput": {
                    "first_send_ns": 5,
                    "last_send_ns": 5 + 2 * 10**9,
                    "sent": 1000,
                    "offered_rate_hz": 0,
                },
            },
        }
    )
    one, two = block["subscribers"]["sub-1"], block["subscribers"]["sub-2"]
    # n arrivals over the span are n - 1 intervals
    assert one["samples_per_s"] == 999 and one["mbit_per_s"] == pytest.approx(0.7992)
    assert two["loss_percent"] == 50 and block["loss_percent"] == 25
    assert block["aggregate_samples_per_s"] == 1498
    assert block["publishers"]["pub"]["achieved_rate_hz"] == 499.5
    # Fewer than two arrivals: no rate. An older node (no throughput blocks): no block.
    lone = throughput({"sub": sub(1, 0, 7, 7), "pub": {"role": "pub", "counts": {}}})
    assert lone["subscribers"]["sub"]["samples_per_s"] is None
    assert lone["aggregate_samples_per_s"] is None
    assert lone["publishers"]["pub"]["achieved_rate_hz"] is None
    assert (
        throughput(
            {
                "sub": {"role": "sub", "counts": {"sent": 3, "lost": 0}},
                "pub": {"role": "pub", "counts": {"sent": 3}},
            }
        )
        is None
    )
