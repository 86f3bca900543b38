"""What the seed-study tests share: one `psbench reproduce NAME --quick` run, the sweep's
runs, and the paper's tables as `paper.json` holds them."""

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import LAUNCHER, REPO, cli_env
from experiment_files import index_lines
from psbench.base import paths

SEEDS = REPO / "experiments" / "seeds"


def reproduce_quick(study: str, folder: Path, timeout: float = 900, network: bool = False):
    """Runs the study's quick variant (its network variant's with network) into
    folder/sweep; (completed process, sweep root)."""
    root = folder / "sweep"
    proc = subprocess.run(
        [str(LAUNCHER), "reproduce", study, "--quick", "-o", str(root)]
        + (["--network"] if network else []),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout,
        env=cli_env(folder / "results"),
    )
    return proc, root


def built_of(drivers) -> list[str]:
    """Those of drivers that are built here, in their order."""
    libs = paths.driver_libraries()
    return [d for d in drivers if d in libs]


def published_of(study: str) -> dict:
    """The study's published figures (experiments/seeds/STUDY.published.yaml)."""
    return yaml.safe_load((SEEDS / f"{study}.published.yaml").read_text())


def check_claims_sourced(published: dict, key: str = "kind") -> None:
    """Every published claim names its source, its text and its key."""
    for claim in published["claims"]:
        assert claim["source"] and claim["text"] and claim[key], claim


def quick_run_fixture(study: str, can_run, why_not: str, timeout: float):
    """A module fixture named quick: one `psbench reproduce STUDY --quick` for a file's
    tests, (completed process, sweep root). It fails without the node and skips (why_not)
    unless can_run() says the drivers it needs are built."""

    @pytest.fixture(scope="module", name="quick")
    def quick_run(tmp_path_factory):
        if not paths.node_path().is_file():
            pytest.fail("build/core/psbench-node is missing: run `make build`")
        if not can_run():
            pytest.skip(why_not)
        return reproduce_quick(study, tmp_path_factory.mktemp(study), timeout=timeout)

    return quick_run


def runs_by_label(root: Path) -> dict[str, dict]:
    """label -> index line of every run of the sweep."""
    return {line["label"]: line for line in index_lines(root)}


def paper_table(paper: dict, name: str) -> dict:
    """One of the paper's tables, by name, from paper.json."""
    return next(t for s in paper["sections"] for t in s["tables"] if t["name"] == name)


def ok_paper(quick) -> tuple[Path, dict]:
    """The quick fixture's (process, root): the reproduction ended ok; (root, paper.json)."""
    proc, root = quick
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return root, json.loads((root / "report" / "paper.json").read_text())


def check_paper_written(proc, root: Path, study: str, sections: list[str]) -> dict:
    """The reproduction ended ok and wrote every section to paper.md, paper.json and the
    terminal; returns paper.json."""
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = root / "report"
    paper = json.loads((report / "paper.json").read_text())
    assert paper["study"] == study and paper["quick"] is True
    assert [s["title"] for s in paper["sections"]] == sections
    text = (report / "paper.md").read_text()
    for title in sections:
        assert f"## {title}" in text
        assert f"== {study}: {title} ==" in proc.stdout
    return paper


def check_paper_tables_written(root: Path, names) -> None:
    """Each of the paper's tables named is in report/paper in every format."""
    for name in names:
        for suffix in ("md", "csv", "json", "tex"):
            assert (root / "report" / "paper" / f"{name}.{suffix}").is_file(), (name, suffix)
