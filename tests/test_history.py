"""`psbench history` on real result sets of the baseline drivers: one real sweep of udp
and shm with six repetitions, cut into three sets of two (repetitions of an unchanged
configuration, interleaved in time), and copies made slower by a known factor. What a
real run measures is the machine's business: only what follows from the factor and from
the sets' being repetitions is checked, never a timing."""

import json
import re
import shutil
import sqlite3
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from conftest import run_cli
from history_sets import repetitions, run_sweep, slower, split, versioned
from psbench.results.configs import build_configs
from psbench.results.load import load_results
from psbench.results.stats import nearest_rank

SERIES = ("shm 64 B on", "udp 64 B on")
# The known regression: a copy of a set whose every latency is this many times longer.
# Far beyond what this machine's scheduling can do to a whole run (one whose every
# wake-up waits out a 4 ms quantum is some 300 times slower), so that its noise, learnt
# from the repetitions, can never cover it.
SLOWER = 10_000
OLD_SETS = Path(__file__).with_name("data") / "history-e2fc036"


@pytest.fixture(scope="module")
def history_sweep(tmp_path_factory, driver_libs):
    """One real sweep of six repetitions, cut into three sets of two (thirds) and into two
    sets of three (halves)."""
    folder = tmp_path_factory.mktemp("history")
    store = run_sweep(folder, "sweep")
    (folder / "thirds").mkdir()
    (folder / "halves").mkdir()
    return {
        "sweep": store,
        "thirds": split(store, folder / "thirds", 3),
        "halves": split(store, folder / "halves", 2),
    }


@pytest.fixture
def thirds(history_sweep):
    return history_sweep["thirds"]


@pytest.fixture
def halves(history_sweep):
    return history_sweep["halves"]


def history(*args, db, results=None):
    # Generous: the machine may be shared with builds and other tests.
    return run_cli(["history", *args, "--db", str(db)], results or db.parent, timeout=600)


def trend(db, out, *args):
    proc = history("trend", "-o", str(out), *args, db=db)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc, json.loads((out / "trend.json").read_text())


def last_change(record, series_start, metric="p50"):
    series = next(s for s in record["series"] if s["series"].startswith(series_start))
    return series["changes"][metric][-1]


def counts(db) -> dict:
    with sqlite3.connect(db) as connection:
        return {
            table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("result_sets", "configs", "runs", "samples")
        }


def test_add_is_idempotent_and_a_set_is_its_content_not_its_path(thirds, tmp_path):
    db = tmp_path / "history.sqlite"
    first = history("add", *map(str, thirds), db=db)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("added: ") == 3
    before = counts(db)
    assert before == {"result_sets": 3, "configs": 6, "runs": 12, "samples": 12}
    again = history("add", *map(str, thirds), db=db)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already in the history: ") == 3
    assert counts(db) == before
    # A copy elsewhere is the same set; a report written into it changes nothing either.
    copy = tmp_path / "copy"
    shutil.copytree(thirds[0], copy)
    assert run_cli(["report", str(copy), "--no-plots"], tmp_path).returncode == 0
    proc = history("add", str(copy), db=db)
    assert "already in the history: " in proc.stdout, proc.stdout
    assert counts(db) == before
    # Moved: a set found again elsewhere, its old folder gone, is where it is now; its
    # samples are read there.
    own = slower(thirds[2], tmp_path / "own", 1)
    assert "added: " in history("add", str(own), db=db).stdout
    own.rename(tmp_path / "own-moved")
    proc = history("add", str(tmp_path / "own-moved"), db=db)
    assert f"moved: {tmp_path / 'own-moved'} (set 4; it was at {own})" in proc.stdout
    rows = json.loads(history("list", "--json", db=db).stdout)["rows"]
    assert [r["path"] for r in rows] == [*map(str, thirds), str(tmp_path / "own-moved")]
    _, record = trend(db, tmp_path / "trend")
    assert {last_change(record, name)["test"] for name in SERIES} == {"samples"}


def test_list_names_sets_versions_and_formats(thirds, tmp_path):
    db = tmp_path / "history.sqlite"
    history("add", str(thirds[0].parent.parent), db=db)  # the folder holding them all
    proc = history("list", db=db)
    assert proc.returncode == 0, proc.stderr
    for part in thirds:
        assert str(part) in proc.stdout
    rows = json.loads(history("list", "--json", db=db).stdout)["rows"]
    # The whole sweep, its thirds and its halves.
    assert len(rows) == 6
    assert all(r["kind"] == "sweep" and r["formats"] == "samples v2" for r in rows)
    assert all("udp linux" in r["versions"] and "shm " in r["versions"] for r in rows)


def again(history_sweep, tmp_path: Path, reps: set[int]) -> Path:
    """A set holding the very runs of these repetitions of the sweep, dated an hour later:
    what measuring an unchanged configuration again measures, exactly. (Whether real
    repetitions trip the gate is the machine's business: bench/history_noise.py --real
    counts how often they do.)"""
    picked = repetitions(history_sweep["sweep"], tmp_path / "picked", reps)
    return slower(picked, tmp_path / "again", 1)


def test_a_set_that_measured_what_its_reference_did_is_no_change(history_sweep, thirds, tmp_path):
    """Known answer: the third set holds the runs of the first two (repetitions 1, 4 and
    2, 5): pooled, its median is theirs, a ratio of exactly 1 against both sets together
    (against the second alone it would not be)."""
    db = tmp_path / "history.sqlite"
    same = again(history_sweep, tmp_path, {1, 2, 4, 5})
    history("add", str(thirds[0]), str(thirds[1]), str(same), db=db)
    proc, record = trend(db, tmp_path / "trend", "--fail-on-regression")
    assert proc.returncode == 0, proc.stdout
    assert "regression at the last point (p50): none" in proc.stdout
    assert record["regressions"] == []
    for name in SERIES:
        change = last_change(record, name)
        assert (change["verdict"], change["ratio"]) == ("no change", 1.0)
        assert change["reference_sets"] == [1, 2] and change["at_sets"] == [3]
        assert change["test"] == "samples"
        # Learnt from the 4 runs before (two sets) and the new set's 4.
        assert change["learnt_from"] == 8
        assert change["threshold"] >= 0.05
        # The first change had two runs before it: not judged.
        first = next(s for s in record["series"] if s["series"].startswith(name))
        assert first["changes"]["p50"][0]["verdict"] == "noise unknown"


def test_sets_of_three_repetitions_are_judged_at_once(history_sweep, halves, tmp_path):
    """The first set's three runs are enough to learn the noise from: the second set (the
    same runs again) is judged, not 'noise unknown'."""
    db = tmp_path / "history.sqlite"
    history("add", str(halves[0]), str(again(history_sweep, tmp_path, {1, 3, 5})), db=db)
    proc, record = trend(db, tmp_path / "trend", "--fail-on-regression")
    assert proc.returncode == 0, proc.stdout
    for name in SERIES:
        change = last_change(record, name)
        assert (change["verdict"], change["ratio"], change["learnt_from"]) == ("no change", 1.0, 6)


def p50_of(sets: list, series: str) -> float:
    """The median of every sample of a series' ok runs in these sets together, as
    psbench reads them (RTT/2 for ping)."""
    samples = [
        c.pooled_ns
        for folder in sets
        for c in build_configs(load_results(folder))
        if series.startswith(c.label)
    ]
    return float(nearest_rank(np.concatenate(samples), 50))


def test_a_known_regression_is_caught_named_and_fails_the_gate(thirds, halves, tmp_path):
    """Two sets, then a set of three runs SLOWER times slower: the first change is not
    judged (two runs before it), so the reference is both sets whatever this machine
    measured; three runs a side give an interval that a loaded machine's runs (one p50
    4.7 times the other's, seen) cannot widen back to 1."""
    db = tmp_path / "history.sqlite"
    slow = slower(halves[1], tmp_path / "slower", SLOWER)
    proc = history("add", str(thirds[0]), str(thirds[1]), str(slow), db=db)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "trend"
    proc, record = trend(db, out, "--fail-on-regression")
    assert proc.returncode == 1, proc.stdout
    verdict = proc.stdout.strip().splitlines()[-2]
    for name in SERIES:
        change = last_change(record, name)
        assert change["verdict"] == "regression"
        # Against the two sets before it, pooled: SLOWER x the third's median over theirs.
        expected = SLOWER * p50_of([halves[1]], name) / p50_of(thirds[:2], name)
        assert change["ratio"] == pytest.approx(expected)
        assert change["low"] > 1 + change["threshold"]
        assert change["reference_sets"] == [1, 2] and change["at_sets"] == [3]
        assert change["at"] > change["reference"][-1]
        assert f"{name} vm: p50 ×{change['ratio']:.3f} at " in verdict
    assert [r["series"].split(" on ")[0] for r in record["regressions"]] == ["shm 64 B", "udp 64 B"]
    # Without --fail-on-regression the trend is drawn and the exit code is 0.
    quiet = history("trend", "-o", str(tmp_path / "again"), db=db)
    assert quiet.returncode == 0, quiet.stdout
    # The same history gives the same verdicts.
    assert json.loads((tmp_path / "again" / "trend.json").read_text()) == record


def test_a_regression_followed_by_the_old_speed_no_longer_fails(halves, tmp_path):
    """Sets of three repetitions: each change has three runs before it to learn from."""
    db = tmp_path / "history.sqlite"
    slow = slower(halves[1], tmp_path / "slower", SLOWER, delay=timedelta(hours=1))
    back = slower(halves[1], tmp_path / "back", 1, delay=timedelta(hours=2))
    history("add", str(halves[0]), str(slow), str(back), db=db)
    proc, record = trend(db, tmp_path / "trend", "--fail-on-regression")
    assert proc.returncode == 0, proc.stdout
    for name in SERIES:
        series = next(s for s in record["series"] if s["series"].startswith(name))
        regression, back = series["changes"]["p50"]
        assert regression["verdict"] == "regression"
        # Back to the old speed: an improvement, or undecided where a loaded machine's
        # runs differed too much to tell - never "no change" for a ratio of 1/10,000
        # (it was, where one slow run in three had widened the band past 100%).
        assert back["ratio"] == pytest.approx(1 / SLOWER)
        assert back["verdict"] in ("improvement", "undecided"), back
        assert [c["learnt_from"] for c in series["changes"]["p50"]] == [6, 6]


@pytest.mark.run_json_by_hand  # a run.json with driver_version, as some sets have
def test_trend_against_version_tests_one_version_against_the_other(thirds, halves, tmp_path):
    """Two versions of each middleware: 1.0 (two sets of two runs, said in the driver
    block) and 2.0 (one set of three runs, SLOWER times slower, said as run.json's
    driver_version)."""
    db = tmp_path / "history.sqlite"
    old = [versioned(p, tmp_path / f"v1-{n}", "1.0") for n, p in enumerate(thirds[:2])]
    new = versioned(slower(halves[1], tmp_path / "slow", SLOWER), tmp_path / "v2", "2.0", "run")
    history("add", *map(str, old), str(new), db=db)
    proc, record = trend(db, tmp_path / "trend", "--by", "version", "--fail-on-regression")
    assert proc.returncode == 1, proc.stdout
    for name in SERIES:
        series = next(s for s in record["series"] if s["series"].startswith(name))
        assert [p["x"] for p in series["points"]] == ["1.0", "2.0"]
        assert [p["runs"] for p in series["points"]] == [4, 3]
        change = series["changes"]["p50"][-1]
        said = (change["verdict"], change["reference"], change["at"])
        assert said == ("regression", ["1.0"], "2.0"), change
    by_machine, record = trend(db, tmp_path / "machines", "--by", "machine")
    assert by_machine.returncode == 0
    assert all(len(s["points"]) == 1 for s in record["series"])


def test_the_outputs_exist_and_the_page_opens_offline(thirds, tmp_path):
    db = tmp_path / "history.sqlite"
    history("add", *map(str, thirds), db=db)
    out = tmp_path / "trend"
    proc, record = trend(db, out, "--driver", "udp")
    assert [s["series"].split(" on ")[0] for s in record["series"]] == ["udp 64 B"]
    assert f"trend: {out / 'trend.html'}" in proc.stdout
    assert sorted(p.suffix for p in (out / "plots").iterdir()) == [".png", ".svg"]
    page = (out / "trend.html").read_text()
    assert "://" not in page  # no URL of any kind: nothing is fetched
    assert 'http-equiv="Content-Security-Policy"' in page and "default-src 'none'" in page
    assert not re.search(r'(src|href)="(?!data:|#)', page)
    assert page.count('<img src="data:image/png;base64,') == 1
    assert "udp 64 B" in page
    markdown = (out / "trend.md").read_text()
    assert markdown.startswith("### The last change of every series")
    assert "### Result sets in the history" in markdown  # the sets the trend drew from
    assert all(str(p) in page for p in thirds)
    png = (out / "plots").glob("*.png").__next__().read_bytes()
    assert png.startswith(b"\x89PNG")


def test_older_result_sets_are_read_and_line_up_with_current_ones(tmp_path, driver_libs):
    """A run and a sweep made by psbench e2fc036 (before samples files v2), and a run of
    the same settings made now: one series of three points."""
    db = tmp_path / "history.sqlite"
    proc = history("add", str(OLD_SETS), db=db)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("added: ") == 2
    rows = json.loads(history("list", "--json", db=db).stdout)["rows"]
    assert [r["formats"] for r in rows] == ["samples v1", "samples v1"]
    ping = ["ping", "--driver", "udp", "--count", "200", "--warmup", "20"]
    assert run_cli([*ping, "--results", str(tmp_path / "new")], tmp_path).returncode == 0
    assert history("add", str(tmp_path / "new"), db=db).returncode == 0
    proc, record = trend(db, tmp_path / "trend")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (series,) = record["series"]
    assert series["series"].startswith("udp 64 B on ")
    assert [p["runs"] for p in series["points"]] == [1, 2, 1]


def test_every_kind_of_result_set_goes_in(tmp_path, driver_libs):
    """A single run, a rate search and a criteria battery (its verdicts: architecture is
    read from the manifests, no run) in one folder, added at once."""
    results = tmp_path / "results"
    ping = ["ping", "--driver", "udp", "--count", "200", "--results", str(results)]
    assert run_cli(ping, tmp_path).returncode == 0
    search = ["ratesearch", "--driver", "udp", "--duration", "0.2", "--max-steps", "2"]
    # Exit 1 when no rate was sustainable (a loaded machine): a result set all the same.
    assert run_cli([*search, "-o", str(results / "search")], tmp_path).returncode in (0, 1)
    assert (results / "search" / "search.json").is_file()
    battery = ["criteria", "--drivers", "udp", "--criteria", "architecture"]
    assert run_cli([*battery, "--results", str(results)], tmp_path).returncode == 0
    db = tmp_path / "history.sqlite"
    proc = history("add", str(results), db=db)
    assert proc.returncode == 0, proc.stderr
    assert "1 criteria verdicts" in proc.stdout
    rows = json.loads(history("list", "--json", db=db).stdout)["rows"]
    assert sorted(r["kind"] for r in rows) == ["criteria", "run", "search"]
    with sqlite3.connect(db) as connection:
        verdicts = connection.execute("SELECT criterion, driver, verdict FROM criteria")
        assert verdicts.fetchall() == [("architecture", "udp", "floor")]
    proc, record = trend(db, tmp_path / "trend")
    assert proc.returncode == 0
    assert any(s["series"].startswith("ping udp 64 B") for s in record["series"])


def test_a_set_whose_folder_is_gone_keeps_its_statistics(thirds, tmp_path):
    """The history keeps what it stored of a set whose folder was removed; its latency
    verdicts then come from the runs' stored values, and the trend says so."""
    copies = [shutil.copytree(p, tmp_path / p.name) for p in thirds]
    db = tmp_path / "history.sqlite"
    history("add", *map(str, copies), db=db)
    shutil.rmtree(copies[2])
    proc, record = trend(db, tmp_path / "trend")
    assert proc.returncode == 0, proc.stderr
    for name in SERIES:
        change = last_change(record, name)
        assert change["test"] == "run statistics"
        assert f"samples not read: {copies[2]}/runs/" in change["note"]
        assert "is missing (set moved? `psbench history add` its new folder)" in change["note"]
    assert "samples not read" in proc.stderr
    rows = json.loads(history("list", "--json", db=db).stdout)["rows"]
    assert len(rows) == 3
