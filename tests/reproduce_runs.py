"""What the seed-study tests share: one `psbench reproduce NAME --quick` run, the sweep's
runs, the paper's tables as `paper.json` holds them, and Study, which says a study's name,
drivers and sections once for all of these."""

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import LAUNCHER, REPO, cli_env
from experiment_files import index_lines
from psbench.base import paths
from psbench.run.experiment import prepare

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


def check_paper_written(quick, study: str, sections: list[str]) -> tuple[Path, dict]:
    """ok_paper, and the reproduction wrote every section to paper.md, paper.json and
    the terminal; (root, paper.json)."""
    root, paper = ok_paper(quick)
    assert paper["study"] == study and paper["quick"] is True
    assert [s["title"] for s in paper["sections"]] == sections
    text = (root / "report" / "paper.md").read_text()
    for title in sections:
        assert f"## {title}" in text
        assert f"== {study}: {title} ==" in quick[0].stdout
    return root, paper


def check_paper_tables_written(root: Path, names) -> None:
    """Each of the paper's tables named is in report/paper in every format."""
    for name in names:
        for suffix in ("md", "csv", "json", "tex"):
            assert (root / "report" / "paper" / f"{name}.{suffix}").is_file(), (name, suffix)


class Study:
    """A seed study as its tests see it: its name, the drivers its quick file runs and its
    paper's sections, given once here rather than to every helper at every call."""

    def __init__(self, name: str, drivers: tuple[str, ...], sections: list[str]):
        self.name, self.drivers, self.sections = name, drivers, sections

    def built(self) -> list[str]:
        """Those of its drivers that are built here, in their order."""
        libs = paths.driver_libraries()
        return [d for d in self.drivers if d in libs]

    def file(self, variant: str = "") -> Path:
        """experiments/seeds/NAME{variant}.yaml (variant: "", "-quick", "-network" ...)."""
        return SEEDS / f"{self.name}{variant}.yaml"

    def plan(self, variant: str = "", **options):
        """That file prepared as `psbench run` prepares it."""
        return prepare(self.file(variant), self.file(variant).name, **options)

    def published(self) -> dict:
        """Its published figures (experiments/seeds/NAME.published.yaml)."""
        return yaml.safe_load((SEEDS / f"{self.name}.published.yaml").read_text())

    def published_sourced(self, key: str = "kind") -> dict:
        """The published figures, which name their hardware, versions and source, and
        every claim its source, its text and its key."""
        published = self.published()
        assert published["hardware"] and published["versions"] and published["source"]
        for claim in published["claims"]:
            assert claim["source"] and claim["text"] and claim[key], claim
        return published

    def quick_fixture(self, can_run, why_not: str, timeout: float):
        """A module fixture named quick: one `psbench reproduce NAME --quick` for a file's
        tests, (completed process, sweep root). It fails without the node and skips
        (why_not) unless can_run() says the drivers it needs are built."""

        @pytest.fixture(scope="module", name="quick")
        def quick_run(tmp_path_factory):
            if not paths.node_path().is_file():
                pytest.fail("build/core/psbench-node is missing: run `make build`")
            if not can_run():
                pytest.skip(why_not)
            return reproduce_quick(self.name, tmp_path_factory.mktemp(self.name), timeout)

        return quick_run

    def table(self, paper: dict, name: str) -> dict:
        """The paper's table NAME-name, from paper.json."""
        return paper_table(paper, f"{self.name}-{name}")

    def check_written(self, quick, tables) -> tuple[Path, dict]:
        """The quick fixture's reproduction ended ok and wrote every section, and each of
        the tables (NAME-table) in every format: (root, paper.json)."""
        root, paper = check_paper_written(quick, self.name, self.sections)
        check_paper_tables_written(root, [f"{self.name}-{t}" for t in tables])
        return root, paper

    def claims(self, paper: dict) -> dict:
        """The paper's claims table, whose rows are the published claims in their order."""
        claims = self.table(paper, "claims")
        assert [r["id"] for r in claims["rows"]] == [c["id"] for c in self.published()["claims"]]
        return claims
