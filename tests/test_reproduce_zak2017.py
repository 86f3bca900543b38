"""Zak 2017 (seed 000): the full experiment file validates, the published figures are
the paper's, and the quick variant runs end to end through `psbench reproduce zak2017
--quick` and produces the paper's tables 1-6, figure 4 and the claims, with values
computed from the run's own samples (never a timing assertion)."""

import json

import numpy as np
import pytest
import yaml

from conftest import REPO, assert_nothing_left, run_cli, run_records
from psbench.base import paths
from psbench.results.load import load_results
from psbench.results.significance import welch
from psbench.run.experiment import prepare

SEEDS = REPO / "experiments" / "seeds"
PAPER_SIZES = [16 << i for i in range(11)]
QUICK_SIZES = [32, 256, 2048, 16384]
DDS = ("fastdds", "cyclonedds")


def test_the_full_file_validates_with_the_papers_method(results):
    proc = run_cli(["reproduce", "zak2017", "--dry-run"], results)
    assert proc.returncode == 0, proc.stderr
    assert "90 runs" in proc.stdout
    assert not results.exists()
    plan = prepare(SEEDS / "zak2017.yaml", "zak2017.yaml", skip_unbuilt=True)
    runs = [run.params for run in plan.expansion.runs]  # OpenDDS's too, built or not
    assert {(r["kind"], r["warmup"], r["count"]) for r in runs} == {("ping", 1000, 10000)}
    assert sorted({r["size"] for r in runs}) == PAPER_SIZES[1:]  # 16 B is measured at 32 B
    dds = [r for r in runs if r["driver"] in DDS]
    assert {r["transport"] for r in dds} == {"udp"}
    assert len(dds) == 2 * 2 * 10
    # OpenDDS 3.12 itself in the paper's federated model: over its DCPSInfoRepo.
    opendds = [r for r in runs if r["driver"] == "opendds"]
    assert {r["transport"] for r in opendds} == {"inforepo"} and len(opendds) == 2 * 10
    assert {
        (r["driver"], r["reliability"]) for r in runs if r["driver"] not in (*DDS, "opendds")
    } == {
        ("udp", "best_effort"),
        ("shm", "best_effort"),
        ("shm", "reliable"),
    }


def test_the_quick_file_keeps_the_method():
    full = prepare(SEEDS / "zak2017.yaml", "zak2017.yaml", skip_unbuilt=True).expansion.runs
    quick = prepare(SEEDS / "zak2017-quick.yaml", "zak2017-quick.yaml", skip_unbuilt=True)
    quick = quick.expansion.runs

    def shape(runs):
        return {
            (r.params["driver"], r.params["transport"], r.params["reliability"], r.params["notify"])
            for r in runs
        }

    assert shape(quick) == shape(full)
    assert sorted({r.params["size"] for r in quick}) == QUICK_SIZES


def test_the_published_figures_are_the_papers():
    doc = yaml.safe_load((SEEDS / "zak2017.published.yaml").read_text())
    assert doc["hardware"] and doc["versions"] and doc["source"]
    for impl in ("fastdds", "other"):
        for reliability in ("best_effort", "reliable"):
            rows = doc["latency"][impl][reliability]["rows"]
            assert sorted(rows) == PAPER_SIZES
            assert all(len(r) == 4 and r[0] <= r[2] <= r[1] for r in rows.values())
    for reliability in ("best_effort", "reliable"):
        rows = doc["ttest"][reliability]["rows"]
        assert sorted(rows) == PAPER_SIZES and all(t < 0 for t, _ in rows.values())
    # Two spot checks against the printed tables, and the text's averages (section 5).
    assert doc["latency"]["fastdds"]["best_effort"]["rows"][16] == [113, 679, 147.24, 28.46]
    assert doc["ttest"]["reliable"]["rows"][16384] == [-163.98, 11910]
    for impl, stated in (("fastdds", 50), ("other", 70)):
        be, rel = (doc["latency"][impl][r]["rows"] for r in ("best_effort", "reliable"))
        increase = np.mean([rel[s][2] - be[s][2] for s in PAPER_SIZES])
        assert abs(increase - stated) < 3


@pytest.fixture(scope="module")
def quick(driver_libs, tmp_path_factory):
    folder = tmp_path_factory.mktemp("zak2017")
    out = folder / "sweep"
    proc = run_cli(
        ["reproduce", "zak2017", "--quick", "-o", str(out), "--no-plots"],
        folder / "results",
        timeout=600,
    )
    for record in run_records(out):
        assert_nothing_left(record["run_id"])
    return proc, out, json.loads((out / "report" / "paper.json").read_text())


def _tables(doc) -> dict:
    return {t["name"]: t for s in doc["sections"] for t in s["tables"]}


@pytest.mark.long
def test_quick_runs_end_to_end_and_writes_the_papers_sections(quick):
    proc, out, doc = quick
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert doc["study"] == "zak2017" and doc["quick"] is True
    assert [s["title"] for s in doc["sections"]] == [
        "Setup",
        "Best effort: tables 1, 2, 3",
        "Reliable: tables 4, 5, 6",
        "Figure 4: mean latency",
        "The paper's claims against ours",
    ]
    tables = _tables(doc)
    for name in (
        "setup",
        "table1-fastdds-best-effort",
        "table2-cyclonedds-best-effort",
        "table3-ttest-best-effort",
        "table3-ttest-best-effort-cyclonedds",
        "table4-fastdds-reliable",
        "table5-cyclonedds-reliable",
        "table6-ttest-reliable",
        "table6-ttest-reliable-cyclonedds",
        "figure4-means",
        "claims-latency",
        "claims-ratio",
        "claims-significance",
    ):
        assert name in tables, name
        for suffix in ("md", "csv", "json", "tex"):
            assert (out / "report" / "paper" / f"{name}.{suffix}").is_file()
    for suffix in ("png", "svg"):
        assert (out / "report" / "paper" / f"figure4-mean-latency.{suffix}").is_file()
    assert (out / "report" / "report.html").is_file()
    printed = proc.stdout
    for title in (
        "Table 1: Fast DDS latency, best effort (paper: Fast RTPS)",
        "Table 2: Cyclone DDS latency, best effort (paper: OpenDDS)",
        "Table 3: Welch t-test",
        "Table 6: Welch t-test",
        "Figure 4 data: mean latency against size",
    ):
        assert title in printed
    assert "other hardware" in tables["table1-fastdds-best-effort"]["notes"][-1]


def _raw(out, driver, reliability, size) -> np.ndarray:
    found = [
        r.latency_ns
        for r in load_results(out).ok_runs
        if r.driver == driver
        and (r.params.get("reliability") or "best_effort") == reliability
        and r.size == size
    ]
    assert len(found) == 1
    return found[0]


@pytest.mark.long
def test_latency_tables_are_the_runs_statistics_beside_the_papers(quick):
    _, out, doc = quick
    tables = _tables(doc)
    built = paths.driver_libraries()
    for name, driver, reliability, paper_key in (
        ("table1-fastdds-best-effort", "fastdds", "best_effort", "fastdds"),
        ("table2-cyclonedds-best-effort", "cyclonedds", "best_effort", "other"),
        ("table4-fastdds-reliable", "fastdds", "reliable", "fastdds"),
        ("table5-cyclonedds-reliable", "cyclonedds", "reliable", "other"),
    ):
        rows = tables[name]["rows"]
        # The paper's 16 B row stands on our 32 B run.
        assert [r["size_bytes"] for r in rows] == [16] + QUICK_SIZES
        assert [r["our_size_bytes"] for r in rows] == [32] + QUICK_SIZES
        published = yaml.safe_load((SEEDS / "zak2017.published.yaml").read_text())
        for row in rows:
            paper = published["latency"][paper_key][reliability]["rows"][row["size_bytes"]]
            assert row["published_mean_ns"] == pytest.approx(paper[2] * 1000)
            if driver not in built:
                assert row["mean_ns"] is None
                continue
            raw = _raw(out, driver, reliability, row["our_size_bytes"])
            assert row["n"] == raw.size == 2000
            assert row["min_ns"] == raw.min() and row["max_ns"] == raw.max()
            assert row["mean_ns"] == pytest.approx(raw.mean())
            assert row["stdev_ns"] == pytest.approx(raw.std(ddof=1))
            assert row["mean_ratio"] == pytest.approx(raw.mean() / (paper[2] * 1000))


@pytest.mark.long
def test_t_tests_are_welch_on_the_runs_samples(quick):
    _, out, doc = quick
    if not all(d in paths.driver_libraries() for d in DDS):
        pytest.skip("Fast DDS and Cyclone DDS are not both built here")
    tables = _tables(doc)
    # The plain-named t-test tables are OpenDDS's (the first of its role, empty without its
    # build); Cyclone DDS, standing in, has its own beside them.
    for name, reliability in (
        ("table3-ttest-best-effort-cyclonedds", "best_effort"),
        ("table6-ttest-reliable-cyclonedds", "reliable"),
    ):
        for row in tables[name]["rows"][1:]:
            size = row["our_size_bytes"]
            expected = welch(
                _raw(out, "fastdds", reliability, size), _raw(out, "cyclonedds", reliability, size)
            )
            assert row["t"] == pytest.approx(expected.t)
            assert row["df"] == pytest.approx(expected.df)
            assert row["p"] == pytest.approx(expected.p)
            assert row["lower_mean"] in ("Fast DDS", "Cyclone DDS", "neither")
            assert row["published_p"] == "<2.2e-16" and row["published_t"] < 0


@pytest.mark.long
def test_figure4_data_has_every_series_and_the_floor(quick):
    _, out, doc = quick
    means = _tables(doc)["figure4-means"]
    row = means["rows"][-1]
    assert row["our_size_bytes"] == 16384
    raw = _raw(out, "udp", "best_effort", 16384)
    assert row["udp_best_effort_mean_ns"] == pytest.approx(raw.mean())
    assert row["shm_reliable_mean_ns"] > 0
    assert row["published_fastdds_best_effort_mean_ns"] == pytest.approx(221.26e3)
    assert row["published_other_reliable_mean_ns"] == pytest.approx(419.82e3)
    claims = _tables(doc)["claims-latency"]["rows"]
    assert claims[0]["published_text_ns"] == 50000 and claims[1]["published_text_ns"] == 70000


# The paper's claims print no verdict (ours beside the paper's tables and text); the
# judgements behind them, on made-up samples, come out either way ---------------------


def _study(published: dict, means: dict | None = None):
    """A study of no runs, then the given pooled samples: (driver, reliability, size) ->
    mean µs, 2,000 samples each, +- 10 µs."""
    from types import SimpleNamespace

    from psbench.reproduce.zak2017 import _Study

    study = _Study(SimpleNamespace(ok_runs=[]), published)
    offsets = np.linspace(-10, 10, 2000)
    study.samples = {key: (mean + offsets) * 1000 for key, mean in (means or {}).items()}
    study.sizes = sorted({size for (_, _, size) in study.samples}) or study.sizes
    return study


def _published() -> dict:
    return yaml.safe_load((SEEDS / "zak2017.published.yaml").read_text())


def test_lower_mean_names_the_faster_side_only_when_significant():
    from psbench.reproduce.zak2017 import _lower_mean

    assert _lower_mean(-5.0, 1e-9) == "Fast DDS"
    assert _lower_mean(5.0, 1e-9) == "Cyclone DDS"
    assert _lower_mean(-5.0, 0.3) == "neither"
    assert _lower_mean(-5.0, 1e-9, ("Fast RTPS", "OpenDDS")) == "Fast RTPS"


def test_faster_count_holds_and_fails_on_the_samples():
    faster = {("fastdds", "reliable", s): 100 for s in (64, 256)}
    faster.update({("cyclonedds", "reliable", s): 200 for s in (64, 256)})
    slower = {k: 300 - v for k, v in faster.items()}
    assert _study(_published(), faster)._faster_count("reliable") == "2 of 2"
    assert _study(_published(), slower)._faster_count("reliable") == "0 of 2"
    mixed = {**faster, ("fastdds", "reliable", 256): 200}  # equal means
    assert _study(_published(), mixed)._faster_count("reliable") == "1 of 2"


def test_the_claims_about_opendds_are_checked_on_opendds_where_it_ran_else_its_stand_in():
    stand_in = {("fastdds", "reliable", s): 100 for s in (64, 256)}
    stand_in.update({("cyclonedds", "reliable", s): 200 for s in (64, 256)})
    # Without OpenDDS's runs, Cyclone DDS (standing in) is what Fast DDS is compared with.
    study = _study(_published(), stand_in)
    assert study._judged_other() == "cyclonedds"
    assert study._ratio("reliable") == pytest.approx(2.0)
    # With them, OpenDDS itself, whatever the stand-in measured beside it.
    real = {**stand_in, **{("opendds", "reliable", s): 400 for s in (64, 256)}}
    study = _study(_published(), real)
    assert study._judged_other() == "opendds"
    assert study._ratio("reliable") == pytest.approx(4.0)
    assert study._faster_count("reliable") == "2 of 2"


def test_the_papers_side_is_counted_from_its_own_tables():
    published = _published()
    study = _study(published)
    # Every printed t is negative with p < 2.2e-16: 10 of 10 sizes (16 B is left out).
    assert study._published_faster_count("best_effort") == "10 of 10"
    assert study._published_every_size("best_effort") == "all sizes"
    # A positive t, or a p that is not significant, counts against the claim.
    flipped = yaml.safe_load(yaml.safe_dump(published))
    flipped["ttest"]["reliable"]["rows"][1024][0] = 12.0
    assert _study(flipped)._published_faster_count("reliable") == "9 of 10"
    flipped["ttest"]["reliable"]["p"] = "0.3"
    assert _study(flipped)._published_faster_count("reliable") == "0 of 10"
    assert _study(flipped)._published_every_size("reliable") is None


def test_the_papers_two_times_comes_from_the_published_file():
    published = _published()
    assert published["figure4"]["faster_factor"] == 2
    ratio = _study(published).claims_tables()[1]
    assert [row[3] for row in ratio.rows] == [2, 2]
    del published["figure4"]["faster_factor"]
    assert [row[3] for row in _study(published).claims_tables()[1].rows] == [None, None]
