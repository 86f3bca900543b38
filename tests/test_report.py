"""`psbench report` on a real small sweep: every file written, statistics that agree with
the raw samples, the baseline ratio, the significance pairs, failed runs listed and left
out, the same report twice, and errors that name the fix."""

import csv
import json
import re

import numpy as np
import pytest
from scipy import stats as sps

from conftest import REPO, run_cli, run_records
from experiment_files import index_lines
from psbench.results.samples import read_samples

TABLES = ("summary", "delivery", "baseline", "significance", "not-ok")


@pytest.fixture(scope="module")
def report(report_sweep, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report"
    proc = run_cli(["report", str(report_sweep), "-o", str(out)], out.parent / "unused")
    assert proc.returncode == 0, proc.stderr
    return proc, out, json.loads((out / "report.json").read_text())


def config_named(doc, driver, size, kind="ping", **options):
    def options_of(params):  # experiment runs keep driver options as options.KEY
        return {k.split(".", 1)[1]: str(v) for k, v in params.items() if k.startswith("options.")}

    found = [
        c
        for c in doc["configurations"]
        if c["params"]["driver"] == driver
        and c["params"]["size"] == size
        and c["params"]["kind"] == kind
        and options_of(c["params"]) == options
    ]
    assert len(found) == 1, found
    return found[0]


def test_every_file_is_written(report):
    proc, out, doc = report
    for name in TABLES:
        for suffix in ("md", "csv", "json", "tex"):
            assert (out / f"{name}.{suffix}").stat().st_size > 0, (name, suffix)
    for name in ("report.html", "report.md", "report.tex"):
        assert (out / name).stat().st_size > 0
    assert doc["plots"] and all(
        (out / "plots" / p["png"]).is_file() and (out / "plots" / p["svg"]).is_file()
        for p in doc["plots"]
    )
    assert f"report: {out / 'report.html'}" in proc.stdout
    for title in (
        "Latency per configuration",
        "Ratio to the baseline floor",
        "Significance between configurations",
        "Runs that were not ok",
    ):
        assert title in proc.stdout


def nearest_rank(values: np.ndarray, q: float) -> float:
    ordered = np.sort(values)
    # Integer arithmetic (q in parts per 100,000): no float rank error.
    rank = max(1, (round(q * 1000) * len(ordered) + 99_999) // 100_000)
    return float(ordered[rank - 1])


def raw_latency(sweep, entry) -> np.ndarray:
    """The report's metric straight from the samples file: RTT/2 or one-way."""
    if entry["params"]["kind"] == "ping":
        return read_samples(sweep / entry["run_dir"] / "ping.samples").latency_ns / 2.0
    return read_samples(sweep / entry["run_dir"] / "sub.samples").latency_ns.astype(float)


def test_statistics_agree_with_the_raw_samples(report_sweep, report):
    _, _, doc = report
    sweep = report_sweep
    entries = [e for e in index_lines(sweep) if e["status"] == "ok"]
    assert len(entries) == 14
    measured = [c for c in doc["configurations"] if c["stats_ns"]["n"]]
    assert len(measured) == 7
    for config in measured:
        mine = [e for e in entries if e["run"] in config["runs"]]
        assert len(mine) == 2  # both repetitions
        per_rep = [raw_latency(sweep, e) for e in mine]
        stats = config["stats_ns"]
        # Best-effort runs may lose some; what arrived plus what was lost is what was sent.
        assert stats["n"] == sum(len(v) for v in per_rep)
        assert stats["n"] + config["counts"]["lost"] == 1000
        # A repetition too short for a percentile has none (docs/analysis.md: p99 needs 100
        # samples; a loaded machine's best-effort repetition can lose that many), and the
        # median is of those that have one.
        for key, q, needed in (("p50", 50, 2), ("p90", 90, 10), ("p99", 99, 100)):
            values = [nearest_rank(v, q) for v in per_rep if len(v) >= needed]
            assert stats[key] == (pytest.approx(np.median(values)) if values else None), key
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
        cyclone["stats_ns"]["p50"] / floor["stats_ns"]["p50"]
    )
    rows = list(csv.DictReader((out / "baseline.csv").open()))
    assert [r["configuration"] for r in rows] == [cyclone["label"]]


def test_significance_between_configurations_differing_in_one_setting(report_sweep, report):
    _, out, doc = report
    rows = list(csv.DictReader((out / "significance.csv").open()))
    pairs = {(r["setting"], r["a"], r["b"], r["at"]) for r in rows}
    assert pairs == {
        ("driver", "udp", "shm", "ping 64 B"),
        ("driver", "udp", "shm", "ping 4 KiB"),
        ("driver", "udp", "cyclonedds", "ping 64 B"),
        ("driver", "shm", "cyclonedds", "ping 64 B"),
        ("size", "64 B", "4 KiB", "ping udp"),
        ("size", "64 B", "4 KiB", "ping shm"),
        ("size", "64 B", "4 KiB", "pubsub shm rate=2000"),
    }
    # the seed papers' t-test table: t, df and p beside what is compared, labelled as
    # taking the samples as independent; the CI says what it covers
    header = (out / "significance.md").read_text().splitlines()[2]
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells[11:16] == ["CI covers", "verdict", "t (indep.)", "df", "p (t, indep.)"]
    by_label = {c["label"]: c for c in doc["configurations"]}
    entries = [e for e in index_lines(report_sweep) if e["status"] == "ok"]
    assert len(doc["comparisons"]) == len(rows)
    for row, pair in zip(rows, doc["comparisons"]):
        assert (row["setting"], row["at"]) == (pair["setting"], pair["where"])
        pooled = [
            np.concatenate(
                [
                    raw_latency(report_sweep, e)
                    for e in entries
                    if e["run"] in by_label[pair[side]]["runs"]
                ]
            )
            for side in ("a", "b")
        ]
        expected = sps.ttest_ind(pooled[0], pooled[1], equal_var=False)
        assert float(row["welch_t"]) == pytest.approx(expected.statistic)
        assert float(row["welch_df"]) == pytest.approx(expected.df)
        mw = sps.mannwhitneyu(pooled[0], pooled[1], method="asymptotic")
        assert float(row["mann_whitney_u"]) == pytest.approx(mw.statistic)
        assert re.fullmatch(
            r"(within noise|significant, B (slower|faster)|no interval)"
            r"( \(one run only\))?(; (A|B|A and B) changed level)?",
            row["verdict"],
        ), row["verdict"]
        assert row["covers"] in ("within one run (no repetitions)", "between runs (2 and 2)")
        assert float(row["median_ratio_low"]) <= float(row["median_ratio_high"])


def test_failed_runs_are_listed_and_left_out(report):
    proc, out, doc = report
    rows = list(csv.DictReader((out / "not-ok.csv").open()))
    assert {r["status"] for r in rows} == {"crashed"} and len(rows) == 2
    crashed = config_named(doc, "udp", 64, fault="crash", fault_after="50")
    assert crashed["stats_ns"]["n"] == 0
    summary = list(csv.DictReader((out / "summary.csv").open()))
    assert crashed["label"] not in {r["configuration"] for r in summary}
    assert len(summary) == 7


@pytest.mark.long
def test_the_same_data_gives_the_same_report(report_sweep, tmp_path):
    outs = [tmp_path / "one", tmp_path / "two"]
    for out in outs:
        proc = run_cli(["report", str(report_sweep), "-o", str(out)], tmp_path / "unused")
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


@pytest.mark.parametrize(
    "args, message",
    [
        (["report", "/nonexistent/psbench"], "/nonexistent/psbench: no such results folder"),
        (["report", str(REPO / "docs")], "holds no results"),
        (["report", str(REPO), "--alpha", "2"], "argument --alpha: is a fraction below 1"),
        (["report", str(REPO), "--resamples", "0"], "argument --resamples"),
    ],
)
def test_bad_arguments_are_named(results, args, message):
    proc = run_cli(args, results)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_output_over_a_foreign_folder_is_refused(report_sweep, tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    proc = run_cli(["report", str(report_sweep), "-o", str(foreign)], tmp_path / "unused")
    assert proc.returncode == 2 and "is not a psbench report" in proc.stderr
    assert (foreign / "notes.txt").read_text() == "keep me"
