"""`psbench reproduce`, the framework: the list of studies, an unknown name, a study whose
module is not there yet, and a whole (tiny, made-up) study run in-process through the
CLI: its experiment run like `psbench run`, the normal report, and the paper's sections
written as paper.md, paper.json and paper/<table>.md|csv|json|tex plus its figures."""

import json
import sys
import textwrap
import types

import pytest
from matplotlib.figure import Figure

from conftest import run_cli
from psbench import reproduce
from psbench.cli.main import main
from psbench.report.plots import Drawing
from psbench.report.tables import Column, Table
from psbench.reproduce import common

FAKE = "fakestudy1999"


def test_list_names_every_study_and_what_is_not_available_yet(results):
    proc = run_cli(["reproduce", "--list"], results)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(reproduce.STUDIES)
    for name, description in reproduce.STUDIES.items():
        line = next(line for line in lines if line.split()[0] == name)
        assert description in line
        assert ("[not yet available]" in line) == (not reproduce.available(name))
    assert reproduce.available("zak2017")


def test_unknown_study_names_the_known_ones(results):
    proc = run_cli(["reproduce", "nosuchpaper"], results)
    assert proc.returncode == 2
    assert "unknown study 'nosuchpaper'" in proc.stderr
    for name in reproduce.STUDIES:
        assert name in proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_name_is_an_error(results):
    proc = run_cli(["reproduce"], results)
    assert proc.returncode == 2
    assert "--list" in proc.stderr


def test_a_study_without_its_module_says_it_is_not_available(monkeypatch, capsys):
    monkeypatch.setitem(reproduce.STUDIES, FAKE, "a study whose module does not exist")
    assert not reproduce.available(FAKE)
    assert main(["reproduce", FAKE]) == 2
    err = capsys.readouterr().err
    assert f"study '{FAKE}' is not yet available" in err
    assert main(["reproduce", "--list"]) == 0
    assert "[not yet available]" in next(
        line for line in capsys.readouterr().out.splitlines() if line.startswith(FAKE)
    )


def _sections(results, published):
    """The made-up study's paper: one table computed from the run, one figure."""
    rows = [
        [run.size, float(run.latency_ns.mean()), published["mean_us"] * 1000]
        for run in results.ok_runs
    ]
    table = Table(
        "table1-means",
        "Table 1: mean latency",
        [
            Column("size B", "size", "count"),
            Column("mean µs", "mean_ns", "us"),
            Column("paper mean µs", "published_mean_ns", "us"),
        ],
        rows,
        [common.published_marker(published)],
    )
    figure = Figure(figsize=(3, 2))
    figure.add_subplot().plot([r[0] for r in rows], [r[1] for r in rows])
    return [
        common.Section(
            "Latency",
            [table],
            [Drawing("figure1", "Figure 1: latency", "the mean", figure)],
            ["a note of the section"],
        )
    ]


@pytest.fixture
def fake_study(monkeypatch, tmp_path, driver_libs):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / f"{FAKE}.yaml").write_text(
        textwrap.dedent("""
        name: fake-full
        defaults: {kind: ping, driver: udp, count: 100000, warmup: 10}
    """)
    )
    (seeds / f"{FAKE}-quick.yaml").write_text(
        textwrap.dedent("""
        name: fake-quick
        defaults: {kind: ping, driver: udp, count: 300, warmup: 10}
        matrix: {size: [64, 1KiB]}
    """)
    )
    (seeds / f"{FAKE}.published.yaml").write_text(
        "source: Table 1\nhardware: a 1999 workstation\nversions: middleware 0.1\nmean_us: 120\n"
    )
    module = types.ModuleType(reproduce.module_name(FAKE))
    module.sections = _sections
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(reproduce.STUDIES, FAKE, "a made-up study for the tests")
    monkeypatch.setattr(common, "seeds_dir", lambda: seeds)
    return seeds


def test_a_study_runs_reports_and_writes_the_papers_sections(fake_study, results, capsys):
    out = results / "fake"
    assert main(["reproduce", FAKE, "--quick", "-o", str(out), "--no-plots"]) == 0
    printed = capsys.readouterr().out
    report = out / "report"
    # The sweep, as `psbench run` stores it, and its normal report.
    assert (out / "index.jsonl").read_text().count("\n") == 2
    assert "fake-quick" in (out / "experiment.yaml").read_text()
    assert (report / "report.html").is_file() and (report / "summary.md").is_file()
    # The paper's sections.
    for suffix in ("md", "csv", "json", "tex"):
        assert (report / "paper" / f"table1-means.{suffix}").stat().st_size > 0
    for suffix in ("png", "svg"):
        assert (report / "paper" / f"figure1.{suffix}").stat().st_size > 0
    doc = json.loads((report / "paper.json").read_text())
    assert doc["format"] == common.PAPER_FORMAT and doc["study"] == FAKE and doc["quick"]
    assert doc["published"]["hardware"] == "a 1999 workstation"
    [section] = doc["sections"]
    assert section["title"] == "Latency" and section["notes"] == ["a note of the section"]
    [table] = section["tables"]
    assert [row["size"] for row in table["rows"]] == [64, 1024]
    assert all(row["mean_ns"] > 0 and row["published_mean_ns"] == 120000 for row in table["rows"])
    assert "other hardware (a 1999 workstation)" in table["notes"][0]
    assert section["figures"][0]["png"] == "paper/figure1.png"
    paper = (report / "paper.md").read_text()
    assert "## Latency" in paper and "### Table 1: mean latency" in paper
    assert "![Figure 1: latency](paper/figure1.svg)" in paper
    # Printed: the paper's tables, and where everything is.
    assert f"== {FAKE}: Latency ==" in printed and "Table 1: mean latency" in printed
    assert f"paper: {report / 'paper.md'}" in printed


def test_dry_run_lists_the_runs_and_runs_nothing(fake_study, results, capsys):
    assert main(["reproduce", FAKE, "--dry-run"]) == 0
    assert "fake-full" in capsys.readouterr().out
    assert not results.exists()


def test_a_missing_published_file_is_an_error_before_anything_runs(fake_study, results, capsys):
    (fake_study / f"{FAKE}.published.yaml").unlink()
    assert main(["reproduce", FAKE, "--quick", "-o", str(results / "x")]) == 2
    assert "published figures" in capsys.readouterr().err
    assert not results.exists()


def test_resume_needs_the_directory(fake_study, capsys):
    assert main(["reproduce", FAKE, "--resume"]) == 2
    assert "-o DIR" in capsys.readouterr().err


@pytest.mark.parametrize("name", [n for n in reproduce.STUDIES if reproduce.available(n)])
def test_every_available_study_has_its_files_and_they_validate(name):
    from psbench.run.experiment import prepare

    for quick in (False, True):
        path = common.experiment_path(name, quick)
        assert prepare(path, path.name, skip_unbuilt=True).runs
    published = common.load_published(name)
    assert published.get("source") and published.get("hardware") and published.get("versions"), (
        f"{name}.published.yaml needs source, hardware, versions"
    )
    assert callable(reproduce.load(name).sections)
