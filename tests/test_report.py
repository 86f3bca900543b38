"""`psbench report` on a real small sweep: every file written, statistics that agree with
the raw samples, the baseline ratio, the significance pairs, failed runs listed and left
out, the same report twice, and errors that name the fix."""

import csv
import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from conftest import REPO, assert_nothing_left, run_cli, run_records
from experiment_files import index_lines, run_experiment, write
from psbench.samples import read_samples

SWEEP = """
    name: report-sweep
    defaults: {kind: ping, count: 300, warmup: 30, timeout: 60}
    matrix:
      driver: [udp, shm]
      size: [64, 1KiB]
    runs:
      - {driver: cyclonedds, size: 64}
      - {driver: udp, size: 64, options: {fault: crash, fault_after: 50}}
    repetitions: 2
"""
TABLES = ("summary", "delivery", "baseline", "significance", "not-ok")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    results = folder / "results"
    proc = run_experiment(write(folder, SWEEP), results, "-o", str(results / "sweep"))
    assert proc.returncode == 1, proc.stderr     # the crashing runs
    yield results / "sweep"
    for record in run_records(results):
        assert_nothing_left(record["run_id"])


@pytest.fixture(scope="module")
def report(sweep, tmp_path_factory):
    proc = run_cli(["report", str(sweep)], tmp_path_factory.mktemp("unused"))
    assert proc.returncode == 0, proc.stderr
    out = sweep / "report"
    return proc, out, json.loads((out / "report.json").read_text())


def config_named(doc, driver, size, **options):
    def options_of(params):   # experiment runs keep driver options as options.KEY
        return {k.split(".", 1)[1]: str(v) for k, v in params.items()
                if k.startswith("options.")}

    found = [c for c in doc["configurations"] if c["params"]["driver"] == driver
             and c["params"]["size"] == size and options_of(c["params"]) == options]
    assert len(found) == 1, found
    return found[0]


def test_every_file_is_written(report):
    proc, out, doc = report
    for name in TABLES:
        for suffix in ("md", "csv", "json", "tex"):
            assert (out / f"{name}.{suffix}").stat().st_size > 0, (name, suffix)
    for name in ("report.html", "report.md", "report.tex"):
        assert (out / name).stat().st_size > 0
    assert doc["plots"] and all((out / "plots" / p["png"]).is_file() and
                                (out / "plots" / p["svg"]).is_file() for p in doc["plots"])
    assert f"report: {out / 'report.html'}" in proc.stdout
    for title in ("Latency per configuration", "Ratio to the baseline floor",
                  "Significance between configurations", "Runs that were not ok"):
        assert title in proc.stdout


def nearest_rank(values: np.ndarray, q: float) -> float:
    ordered = np.sort(values)
    return float(ordered[math.ceil(q / 100 * len(ordered)) - 1])


def raw_rtt_half(sweep, entry) -> np.ndarray:
    return read_samples(sweep / entry["run_dir"] / "ping.samples").latency_ns / 2.0


def test_statistics_agree_with_the_raw_samples(sweep, report):
    _, _, doc = report
    entries = [e for e in index_lines(sweep) if e["status"] == "ok"]
    assert len(entries) == 10
    measured = [c for c in doc["configurations"] if c["stats_ns"]["n"]]
    assert len(measured) == 5
    for config in measured:
        mine = [e for e in entries if e["run"] in config["runs"]]
        assert len(mine) == 2     # both repetitions
        per_rep = [raw_rtt_half(sweep, e) for e in mine]
        stats = config["stats_ns"]
        assert stats["n"] == sum(len(v) for v in per_rep) == 600
        for key, q in (("p50", 50), ("p90", 90), ("p99", 99)):
            assert stats[key] == pytest.approx(np.median([nearest_rank(v, q)
                                                          for v in per_rep])), key
        assert stats["min"] == pytest.approx(np.median([v.min() for v in per_rep]))
        assert stats["stdev"] == pytest.approx(np.median([v.std(ddof=1) for v in per_rep]))
        assert config["counts"]["lost"] == sum(e["counts"]["lost"] for e in mine)


def test_middleware_is_read_against_the_baseline_floor(report):
    _, out, doc = report
    cyclone = config_named(doc, "cyclonedds", 64)
    floors = [config_named(doc, d, 64) for d in ("udp", "shm")]
    floor = min(floors, key=lambda c: c["stats_ns"]["p50"])
    assert cyclone["baseline"]["driver"] == floor["params"]["driver"]
    assert cyclone["baseline"]["p50_ratio"] == pytest.approx(
        cyclone["stats_ns"]["p50"] / floor["stats_ns"]["p50"])
    rows = list(csv.DictReader((out / "baseline.csv").open()))
    assert [r["configuration"] for r in rows] == [cyclone["label"]]


SIZES = {"64 B": 64, "1 KiB": 1024}


def pair_configs(doc, row):
    """The two configurations of a significance row (this sweep varies driver and size)."""
    if row["setting"] == "driver":
        return [config_named(doc, row[side], SIZES[row["at"]]) for side in ("a", "b")]
    return [config_named(doc, row["at"], SIZES[row[side]]) for side in ("a", "b")]


def test_significance_between_configurations_differing_in_one_setting(sweep, report):
    _, out, doc = report
    rows = list(csv.DictReader((out / "significance.csv").open()))
    pairs = {(r["setting"], r["a"], r["b"], r["at"]) for r in rows}
    assert pairs == {("driver", "udp", "shm", "64 B"), ("driver", "udp", "shm", "1 KiB"),
                     ("driver", "udp", "cyclonedds", "64 B"),
                     ("driver", "shm", "cyclonedds", "64 B"),
                     ("size", "64 B", "1 KiB", "udp"), ("size", "64 B", "1 KiB", "shm")}
    # the seed papers' t-test table: t, df and p beside what is compared
    header = (out / "significance.md").read_text().splitlines()[2]
    assert [c.strip() for c in header.strip("|").split("|")][11:14] == ["t", "df", "p (t)"]
    entries = [e for e in index_lines(sweep) if e["status"] == "ok"]
    for row in rows:
        pooled = [np.concatenate([raw_rtt_half(sweep, e) for e in entries
                                  if e["run"] in config["runs"]])
                  for config in pair_configs(doc, row)]
        expected = sps.ttest_ind(pooled[0], pooled[1], equal_var=False)
        assert float(row["welch_t"]) == pytest.approx(expected.statistic)
        assert float(row["welch_df"]) == pytest.approx(expected.df)
        assert row["verdict"] in ("within noise", "significant, B slower",
                                  "significant, B faster")
        assert float(row["median_ratio_low"]) <= float(row["median_ratio_high"])


def test_failed_runs_are_listed_and_left_out(sweep, report):
    proc, out, doc = report
    rows = list(csv.DictReader((out / "not-ok.csv").open()))
    assert {r["status"] for r in rows} == {"crashed"} and len(rows) == 2
    crashed = config_named(doc, "udp", 64, fault="crash", fault_after="50")
    assert crashed["stats_ns"]["n"] == 0
    summary = list(csv.DictReader((out / "summary.csv").open()))
    assert crashed["label"] not in {r["configuration"] for r in summary}
    assert len(summary) == 5


def test_the_same_data_gives_the_same_report(sweep, tmp_path):
    outs = [tmp_path / "one", tmp_path / "two"]
    for out in outs:
        proc = run_cli(["report", str(sweep), "-o", str(out)], tmp_path / "unused")
        assert proc.returncode == 0, proc.stderr
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert len(files) > 20
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


def test_a_single_run_folder(results):
    proc = run_cli(["ping", "--driver", "shm", "--count", "200", "--warmup", "20"], results)
    assert proc.returncode == 0, proc.stderr
    run_dir = run_records(results)[0]["_dir"]
    proc = run_cli(["report", str(run_dir), "--no-plots"], results)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((run_dir / "report" / "report.json").read_text())
    assert [c["stats_ns"]["n"] for c in doc["configurations"]] == [200]
    assert doc["plots"] == []


@pytest.mark.parametrize("args, message", [
    (["report", "/nonexistent/psbench"], "/nonexistent/psbench: no such results folder"),
    (["report", str(REPO / "docs")], "holds no results"),
    (["report", str(REPO), "--alpha", "2"], "argument --alpha: is a fraction below 1"),
    (["report", str(REPO), "--resamples", "0"], "argument --resamples"),
])
def test_bad_arguments_are_named(results, args, message):
    proc = run_cli(args, results)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_output_over_a_foreign_folder_is_refused(sweep, tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    proc = run_cli(["report", str(sweep), "-o", str(foreign)], tmp_path / "unused")
    assert proc.returncode == 2 and "is not a psbench report" in proc.stderr
    assert (foreign / "notes.txt").read_text() == "keep me"
