"""`psbench compare` on real sweeps: A against itself, two sweeps of the same file,
and copies of A with their raw samples rewritten into a known regression or improvement.
Which way two real sweeps differ is the machine's business: only the consistency of
verdicts and exit code is checked, never a timing."""

import json
import shutil

import numpy as np
import pytest

from conftest import assert_nothing_left, run_cli, run_records
from experiment_files import index_lines, write
from psbench.results.samples import HEADER_SIZE, read_samples

EXPERIMENT = """
    name: compare
    defaults: {{kind: ping, count: {count}, warmup: 50, timeout: 60}}
    matrix:
      driver: {drivers}
      size: {sizes}
"""
CONFIGS = ["udp 64 B", "udp 1 KiB", "shm 64 B", "shm 1 KiB"]
VERDICTS = {"slower", "faster", "no change"}


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory, driver_libs):
    """Runs a sweep once per module: sweeps("a", drivers="[udp]", sizes="[64]")."""
    folder = tmp_path_factory.mktemp("compare")
    made = {}

    def sweep(name, drivers="[udp, shm]", sizes="[64, 1KiB]", count=2000):
        if name not in made:
            path = write(
                folder, EXPERIMENT.format(drivers=drivers, sizes=sizes, count=count), f"{name}.yaml"
            )
            proc = run_cli(["run", str(path), "-o", str(folder / name)], folder)
            assert proc.returncode == 0, proc.stderr
            for record in run_records(folder / name):
                assert_nothing_left(record["run_id"])
            made[name] = folder / name
        return made[name]

    return sweep


def compare(a, b, *args, results=None):
    return run_cli(["compare", str(a), str(b), *args], results or a.parent)


def compare_json(a, b, tmp_path, *args):
    """The exit code and the JSON record of one comparison."""
    out = tmp_path / "compare.json"
    proc = compare(a, b, "--json", str(out), *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc, json.loads(out.read_text())


def rows_of(record, table="compare"):
    return next(t["rows"] for t in record["tables"] if t["name"] == table)


def verdict_line(proc):
    return proc.stdout.strip().splitlines()[-1]


def rewritten(store, tmp_path, name, change):
    """A copy of a sweep with every run's latencies passed through change()."""
    copy = tmp_path / name
    shutil.copytree(store, copy)
    for samples_file in sorted(copy.glob("runs/*/*/ping.samples")):
        samples = read_samples(samples_file)
        records = samples.records.copy()
        records["latency_ns"] = change(records["latency_ns"])
        header = samples_file.read_bytes()[:HEADER_SIZE]
        samples_file.write_bytes(header + records.tobytes())
    return copy


def test_a_against_itself_is_no_change_and_deterministic(sweeps, tmp_path):
    a = sweeps("a")
    proc, record = compare_json(a, a, tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(record)
    assert [r["config"] for r in rows] == CONFIGS
    for row in rows:
        assert row["p50_ratio"] == row["p99_ratio"] == 1.0
        assert row["p50_verdict"] == "no change"
        # p99 of 2,000 serially dependent samples may have no interval: '-', never a change
        assert row["p99_verdict"] in ("no change", "-")
        assert row["p50_low"] <= 1.0 <= row["p50_high"]
        assert row["covers"] == "within one run (no repetitions)"
        assert row["n_a"] == row["n_b"] == 2000
    assert verdict_line(proc) == "0 slower, 0 faster, 4 no change; regression beyond 5% (p50): no"
    assert compare(a, a).stdout == proc.stdout


def test_two_real_sweeps_verdicts_agree_with_exit_code(sweeps, tmp_path):
    a, b = sweeps("a"), sweeps("b")
    proc, record = compare_json(a, b, tmp_path)
    rows = rows_of(record)
    assert [r["config"] for r in rows] == CONFIGS
    assert all(r["p50_verdict"] in VERDICTS and r["p99_verdict"] in VERDICTS | {"-"} for r in rows)
    slower = [r for r in rows if r["p50_verdict"] == "slower"]
    assert proc.returncode == (1 if slower else 0), proc.stdout
    assert record["regression"] is bool(slower)
    assert record["counts"]["slower"] == len(slower)
    for config in CONFIGS:
        assert config in proc.stdout
    again = compare(a, b, "--json", str(tmp_path / "again.json"))
    assert again.stdout == proc.stdout  # same inputs: same intervals


def steady(store, tmp_path):
    """A copy of a real sweep with latencies 100 µs + (the real ones mod 1 µs), in a
    shuffled order: a real median can sit between two modes (12 µs wake-ups and 50 µs
    ones, on a loaded VM), and then even a doubling has an interval that reaches 1; this
    one cannot. The shuffle removes the serial dependence a loaded machine puts in the
    order (with it, a run's samples may be worth too few for any interval of p99)."""

    def shuffled(ns):
        return 100_000 + np.random.default_rng(1).permutation(ns) % 1000

    return rewritten(store, tmp_path, "steady", shuffled)


def test_doubled_latency_is_slower_everywhere(sweeps, tmp_path):
    a = steady(sweeps("a"), tmp_path)
    doubled = rewritten(a, tmp_path, "doubled", lambda ns: ns * 2)
    proc, record = compare_json(a, doubled, tmp_path)
    assert proc.returncode == 1, proc.stdout
    for row in rows_of(record):
        assert row["p50_verdict"] == "slower"
        assert row["p50_ratio"] == row["p99_ratio"] == pytest.approx(2.0)
        # p99 of 2,000 samples is the 21st largest: its interval may be too wide to call.
        assert row["p99_verdict"] in ("slower", "no change")
    assert verdict_line(proc) == "4 slower, 0 faster, 0 no change; regression beyond 5% (p50): yes"


def test_halved_latency_is_faster_and_passes(sweeps, tmp_path):
    a = steady(sweeps("a"), tmp_path)
    halved = rewritten(a, tmp_path, "halved", lambda ns: ns // 2)
    proc, record = compare_json(a, halved, tmp_path, "--fail-on", "any")
    assert proc.returncode == 0, proc.stdout
    assert {r["p50_verdict"] for r in rows_of(record)} == {"faster"}
    assert record["counts"] == {"slower": 0, "faster": 4, "no change": 0}


def test_fail_on_chooses_the_statistic(sweeps, tmp_path):
    """Only the slowest 5% of each run made slower: the median is the same, p99 is far
    above anything A had (past twice its maximum). On the steady copy (no serial
    dependence left) 2,000 samples are enough for an interval of p99 (368 independent
    ones would be)."""
    a = steady(sweeps("a"), tmp_path)

    def tail_slower(ns):
        return np.where(ns > np.percentile(ns, 95), ns + 2 * ns.max(), ns)

    tail = rewritten(a, tmp_path, "tail", tail_slower)
    proc, record = compare_json(a, tail, tmp_path)
    assert proc.returncode == 0, proc.stdout
    for row in rows_of(record):
        assert row["p50_ratio"] == 1.0 and row["p50_verdict"] == "no change"
        assert row["p99_verdict"] == "slower"
    for fail_on in ("p99", "any"):
        proc = compare(a, tail, "--fail-on", fail_on)
        assert proc.returncode == 1, proc.stdout
        assert (
            verdict_line(proc) == f"4 slower, 0 faster, 0 no change; "
            f"regression beyond 5% ({fail_on}): yes"
        )


def test_threshold_decides_what_is_noise(sweeps, tmp_path):
    """20% slower everywhere: a regression beyond 5%, noise below 30%."""
    a = sweeps("a")
    slower = rewritten(a, tmp_path, "slower20", lambda ns: ns * 6 // 5)
    assert compare(a, slower).returncode == 1
    proc, record = compare_json(a, slower, tmp_path, "--threshold", "0.3")
    assert proc.returncode == 0, proc.stdout
    assert {r["p50_verdict"] for r in rows_of(record)} == {"no change"}
    assert verdict_line(proc).endswith("regression beyond 30% (p50): no")


def test_p99_needs_100_samples_a_side(sweeps, tmp_path):
    few = sweeps("few", drivers="[udp]", sizes="[64]", count=50)
    proc, record = compare_json(few, few, tmp_path, "--fail-on", "p99")
    assert proc.returncode == 0, proc.stdout
    [row] = rows_of(record)
    assert row["p50_verdict"] == "no change"
    assert row["p99_ratio"] is None and row["p99_verdict"] == "-"
    assert (
        verdict_line(proc) == "0 slower, 0 faster, 0 no change, 1 without p99; "
        "regression beyond 5% (p99): no"
    )
    assert "p99 '-': fewer than 100 samples on a side" in proc.stdout


def test_extra_size_in_b_is_listed_only_in_b(sweeps, tmp_path):
    a = sweeps("a")
    extra = sweeps("extra", drivers="[udp]", sizes="[64, 2KiB]")
    proc, record = compare_json(a, extra, tmp_path)
    assert [r["config"] for r in rows_of(record)] == ["udp 64 B"]
    only_b = rows_of(record, "only_b")
    assert [(r["config"], r["status_b"]) for r in only_b] == [("udp 2 KiB", "ok")]
    assert [r["config"] for r in rows_of(record, "only_a")] == [
        "udp 1 KiB",
        "shm 64 B",
        "shm 1 KiB",
    ]
    assert "only in B" in proc.stdout and "udp 2 KiB" in proc.stdout


def test_failed_run_on_one_side_is_not_comparable(sweeps, tmp_path):
    a = sweeps("a")
    broken = tmp_path / "broken"
    shutil.copytree(a, broken)
    entries = index_lines(broken)
    entries[0]["status"] = "failed"
    (broken / "index.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    proc, record = compare_json(a, broken, tmp_path)
    assert [r["config"] for r in rows_of(record)] == CONFIGS[1:]
    assert rows_of(record, "not_comparable") == [
        {"config": "udp 64 B", "metric": "RTT/2", "status_a": "ok", "status_b": "failed"}
    ]


def test_nothing_in_common_exits_2_and_lists_both_sides(sweeps):
    a = sweeps("a")
    other = sweeps("other", drivers="[udp]", sizes="[2KiB]")
    proc = compare(a, other)
    assert proc.returncode == 2, proc.stdout
    assert "nothing to compare" in proc.stderr
    assert "udp 64 B; udp 1 KiB; shm 64 B; shm 1 KiB" in proc.stderr
    assert "udp 2 KiB" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_folder_exits_2_naming_it(sweeps, tmp_path):
    missing = tmp_path / "no-such-sweep"
    proc = compare(sweeps("a"), missing)
    assert proc.returncode == 2
    assert f"B: {missing}: no such results folder" in proc.stderr


@pytest.mark.parametrize(
    "args, named",
    [
        (["--threshold", "5"], "--threshold"),
        (["--threshold", "-0.1"], "--threshold"),
        (["--confidence", "95"], "--confidence"),
        (["--resamples", "10"], "--resamples"),
        (["--seed", "x"], "--seed"),
        (["--fail-on", "mean"], "--fail-on"),
        (["--json", "/no/such/folder/c.json"], "--json"),
    ],
)
def test_bad_arguments_exit_2_naming_them(sweeps, args, named):
    a = sweeps("a")
    proc = compare(a, a, *args)
    assert proc.returncode == 2
    assert named in proc.stderr and "Traceback" not in proc.stderr


def test_markdown_and_json_files(sweeps, tmp_path):
    a, b = sweeps("a"), sweeps("b")
    md, js = tmp_path / "compare.md", tmp_path / "compare.json"
    proc = compare(a, b, "--markdown", str(md), "--json", str(js))
    assert proc.returncode in (0, 1), proc.stderr
    text = md.read_text()
    for config in CONFIGS:
        assert f"| {config} | RTT/2 | 2,000 | 2,000 |" in text
    assert verdict_line(proc) in text
    record = json.loads(js.read_text())
    assert record["format"] == "psbench-compare/1"
    assert record["verdict"] == verdict_line(proc)
    assert len(rows_of(record)) == 4
