"""Checks shared by the driver tests that run through the CLI."""

import json
from pathlib import Path

from psbench.results.samples import read_samples


def check_counts(summary: dict, sent: int):
    """A run over a connection that stays up: nothing lost, late, damaged or doubled."""
    counts = summary["counts"]
    assert counts["sent"] == sent
    assert counts["samples"] == sent, counts
    assert counts["lost"] == counts["late"] == counts["corrupted"] == 0, counts
    assert counts["duplicated"] == 0, counts
    assert summary["error"] is None


def check_samples_file(run_dir: Path, summary: dict, kind: str):
    """The raw samples file agrees with the summary, every latency positive."""
    samples = read_samples(run_dir / summary["samples_file"])
    assert samples.kind == kind == summary["sample_kind"]
    assert len(samples) == summary["counts"]["samples"] > 0
    assert (samples.latency_ns > 0).all()


def load(run_dir: Path, role: str) -> dict:
    """A node's summary (<role>.json) in a run directory."""
    return json.loads((run_dir / f"{role}.json").read_text())


def only_versions_not_built(proc) -> bool:
    """A dry run refused only because drivers NAME@VERSION it names are not built (an
    experiment of versions side by side, on a machine that built only the defaults)."""
    problems = [line for line in proc.stderr.splitlines() if ": " in line and ".yaml:" in line]
    return (
        proc.returncode == 2
        and bool(problems)
        and all("@" in line and "is not built; `make driver-" in line for line in problems)
    )


def only_on_request_drivers_not_built(proc) -> bool:
    """A dry run refused only because drivers built on request or from source that it
    names are not built here (`make driver-NAME`: a seed study's own systems, ORTE,
    OpenSplice, OpenDDS, on a machine that did not build them)."""
    problems = [line for line in proc.stderr.splitlines() if ": " in line and ".yaml:" in line]
    return (
        proc.returncode == 2
        and bool(problems)
        and all("is not built; `make driver-" in line for line in problems)
    )


def require_built(name: str) -> None:
    """Skips the test unless drivers/NAME is built, saying why and what builds it (a
    driver built from source is missing on most machines; make test stays green)."""
    import pytest

    from psbench.base import paths
    from psbench.run.drivers import build_hint

    if name not in paths.driver_libraries():
        pytest.skip(f"{name} is not built: {build_hint(name)}")
