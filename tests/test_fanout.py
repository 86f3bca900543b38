"""Fan-out (`subscribers: N`): N subscriber processes and one publisher, through the CLI.
Real runs; counts are checked, timings never."""

import json
import textwrap

import pytest

from conftest import assert_nothing_left, only_run, run_cli, run_records

# Reliable with keep_all: no sample may be lost, so every subscriber must get every one.
LOSSLESS = ["--reliability", "reliable", "--history", "keep_all"]


def pubsub(results, driver, subscribers, *extra, count=300):
    return run_cli(
        [
            "pubsub",
            "--driver",
            driver,
            "--subscribers",
            str(subscribers),
            "--count",
            str(count),
            "--match-timeout",
            "10",
            *extra,
        ],
        results,
    )


def test_every_subscriber_gets_every_sample_and_its_own_files(driver_libs, results):
    proc = pubsub(results, "cyclonedds", 4, *LOSSLESS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    names = ["sub-1", "sub-2", "sub-3", "sub-4"]
    assert [p["name"] for p in record["processes"]] == names + ["pub"]
    assert all(p["exit_code"] == 0 for p in record["processes"])
    for process in record["processes"]:
        argv = process["argv"]
        assert argv[argv.index("--subscribers") + 1] == "4"
    run_dir = record["_dir"]
    pub = json.loads((run_dir / "pub.json").read_text())
    for name in names:
        summary = json.loads((run_dir / f"{name}.json").read_text())
        assert summary["role"] == "sub" and summary["name"] == name
        assert (run_dir / f"{name}.samples").is_file()
        assert (run_dir / f"{name}.stderr").exists()
        counts = summary["counts"]
        assert counts["sent"] == pub["counts"]["sent"] == 300
        assert counts["samples"] == 300 and counts["lost"] == 0
        assert record["stats"][name]["one_way"]["n"] == 300
    # The run's latency is every subscriber's samples together.
    assert record["stats"]["all_subs"]["one_way"]["n"] == 4 * 300
    for name in names:
        assert f"{name} counts: sent 300" in proc.stdout
    assert_nothing_left(record["run_id"])


def test_twelve_subscribers_each_get_every_sample(driver_libs, results):
    # The seeds scale to 12 readers; 13 participants of one Cyclone domain on one host
    # need more participant indices than Cyclone's default 10.
    proc = pubsub(results, "cyclonedds", 12, *LOSSLESS, count=100)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    assert len(record["processes"]) == 13
    for n in range(1, 13):
        counts = json.loads((record["_dir"] / f"sub-{n}.json").read_text())["counts"]
        assert counts["samples"] == 100 and counts["lost"] == 0, (n, counts)
    assert record["cpu_sharing"]["oversubscribed"] is not None
    assert_nothing_left(record["run_id"])


def test_oversubscription_is_recorded(driver_libs, results):
    proc = pubsub(results, "cyclonedds", 3, "--cpu", "sub=0", "--cpu", "pub=0", count=50)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sharing = only_run(results)["cpu_sharing"]
    assert sharing == {"roles": 4, "cpus": 1, "pinned": True, "oversubscribed": 4,
                       "spinning_per_cpu": None}  # fmt: skip
    assert "oversubscribed, 4 roles on 1 CPUs" in proc.stdout


def test_one_subscriber_keeps_the_plain_file_names(driver_libs, results):
    proc = pubsub(results, "shm", 1, count=50)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    assert [p["name"] for p in record["processes"]] == ["sub", "pub"]
    assert "--subscribers" not in record["processes"][1]["argv"]
    assert (record["_dir"] / "sub.samples").is_file() and "all_subs" not in record["stats"]


def test_a_driver_with_one_reader_per_topic_refuses_several(driver_libs, results):
    proc = pubsub(results / "shm", "shm", 2, count=50)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "shm: --subscribers 2 is not supported; this driver has at most 1 reader(s) per topic"
        in proc.stderr
    )
    # udp: one reader per topic on loopback and unicast (check() says), any on multicast.
    proc = pubsub(results / "udp", "udp", 2, count=50)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "udp: transport loopback delivers each datagram to one bound socket" in proc.stderr
    assert "2 readers need --transport multicast or broadcast" in proc.stderr
    for driver in ("shm", "udp"):
        record = only_run(results / driver)
        assert record["status"] == "refused"
        assert_nothing_left(record["run_id"])


@pytest.mark.parametrize(
    "transport", ["multicast", pytest.param("broadcast", marks=pytest.mark.long)]
)
def test_udp_multicast_is_the_fan_out_floor_every_subscriber_gets_every_sample(
    driver_libs, results, transport
):
    # Best effort: nothing resends, but on an idle loopback at 1 kHz none is lost; a loss
    # here would be the driver's (a reader not in the group, or two sharing datagrams).
    proc = pubsub(results, "udp", 3, "--transport", transport, "--rate", "1000", count=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    run_dir = next(results.rglob("run.json")).parent
    for name in ("sub-1", "sub-2", "sub-3"):
        counts = json.loads((run_dir / f"{name}.json").read_text())["counts"]
        assert counts["received"] == counts["sent"] == 300, (name, counts)
        assert counts["duplicated"] == counts["corrupted"] == 0, (name, counts)
    assert_nothing_left(record["run_id"])


def test_an_experiment_with_too_many_readers_for_the_driver_is_refused(driver_libs, tmp_path):
    experiment = tmp_path / "bad.yaml"
    experiment.write_text(
        "name: bad\ndefaults: {kind: pubsub, driver: shm}\nmatrix:\n  subscribers: [1, 2]\n"
    )
    proc = run_cli(["run", str(experiment), "--dry-run"], tmp_path / "results")
    assert proc.returncode == 2
    assert "matrix.subscribers: shm: --subscribers 2 is not supported" in proc.stderr
    # A limit of one transport's (the driver's check()) is found at validation too.
    experiment.write_text(
        "name: bad\ndefaults: {kind: pubsub, driver: udp}\nmatrix:\n  subscribers: [1, 2]\n"
        "  transport: [multicast, loopback]\n"
    )
    proc = run_cli(["run", str(experiment), "--dry-run"], tmp_path / "results")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "bad.yaml:4: matrix.subscribers: udp: transport loopback delivers" in proc.stderr
    assert "transport multicast delivers" not in proc.stderr and "1 problem" in proc.stderr


def test_several_subscribers_need_separate_processes(driver_libs, results):
    proc = run_cli(
        ["pubsub", "--driver", "shm", "--subscribers", "2", "--placement", "intra"], results
    )
    assert proc.returncode == 2 and "use --placement inter" in proc.stderr
    assert not run_records(results)


SWEEP = """
name: fanout
defaults: {kind: pubsub, driver: cyclonedds, count: 200, reliability: reliable,
           history: keep_all, match_timeout: 10}
matrix:
  subscribers: [1, 3]
"""


def test_a_sweep_over_subscribers_draws_latency_against_subscriber_count(driver_libs, tmp_path):
    experiment = tmp_path / "fanout.yaml"
    experiment.write_text(textwrap.dedent(SWEEP).lstrip())
    store, results = tmp_path / "sweep", tmp_path / "results"
    proc = run_cli(["run", str(experiment), "-o", str(store)], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entries = [json.loads(line) for line in (store / "index.jsonl").read_text().splitlines()]
    three = next(e for e in entries if e["params"]["subscribers"] == 3)
    assert three["latency"]["n"] == 3 * 200
    assert three["counts"]["sent"] == three["counts"]["samples"] == 3 * 200
    assert sorted(three["subscribers"]) == ["sub-1", "sub-2", "sub-3"]
    assert all(s["samples"] == 200 and s["p50"] for s in three["subscribers"].values())
    one = next(e for e in entries if e["params"]["subscribers"] == 1)
    assert "subscribers" not in one and one["latency"]["n"] == 200
    out = tmp_path / "report"
    proc = run_cli(["report", str(store), "-o", str(out)], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    assert "latency-vs-subscribers" in {p["name"] for p in doc["plots"]}
    assert (out / "plots" / "latency-vs-subscribers.png").is_file()
    for entry in entries:
        assert_nothing_left(entry["run_id"])
