"""Helpers for the experiment tests: write a file, plan it, run it through the CLI."""

import json
import textwrap
from pathlib import Path

from conftest import run_cli
from psbench.run.experiment import prepare


def write(folder: Path, text: str, name: str = "exp.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def plan_of(folder: Path, text: str, filters=(), **extra):
    path = write(folder, text)
    return prepare(path, path.name, list(filters), **extra)


def run_experiment(path: Path, results: Path, *args, timeout: float = 120):
    return run_cli(["run", str(path), *args], results, timeout=timeout)


def index_lines(store: Path) -> list[dict]:
    text = (store / "index.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]
