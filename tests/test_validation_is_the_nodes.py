"""Experiment validation asks the node (`psbench-node --check-stdin`), so every refusal
the node would make at run time is reported before anything runs, with file and line;
each case goes through both paths and the two must say the same (issue 16: one source
of truth for refusals)."""

import json
import subprocess

import pytest

from conftest import REPO, run_cli
from driver_checks import only_on_request_drivers_not_built, only_versions_not_built
from experiment_files import run_experiment, write

# (driver, setting lines of a run, the setting's line in the file, words of the refusal)
CASES = {
    # Only the driver's check() knows these (the old Python mirror let them through); it
    # names the setting each concerns, and that setting's line is blamed.
    "complex type at another size": (
        "cyclonedds",
        "size: 64\noptions: {type: complex}",
        4,
        "cyclonedds: type complex is sized by option elements=N; use --size 32",
    ),
    "transient_local with best_effort": (
        "cyclonedds",
        "durability: transient_local\nreliability: best_effort",
        4,
        "transient_local",
    ),
    # The node's own capability checks, blamed on the setting's line.
    "a QoS outside the capabilities": (
        "udp",
        "reliability: reliable",
        4,
        "udp: reliability 'reliable' is not supported",
    ),
    "an unknown option": ("udp", "options: {colour: blue}", 4, "udp: option 'colour' is not known"),
}


def node_refusal(driver_libs, driver, argv) -> str:
    proc = subprocess.run(
        [
            str(REPO / "build" / "core" / "psbench-node"),
            "--driver",
            str(driver_libs[driver]),
            "--role",
            "ping",
            *argv,
            "--check",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    verdict = json.loads(proc.stdout)
    assert (proc.returncode == 0) == verdict["accepted"]
    return "; ".join(r["message"] for r in verdict["refusals"])


@pytest.mark.parametrize("name", list(CASES))
def test_dry_run_reports_what_the_node_refuses(driver_libs, results, tmp_path, name):
    driver, settings, line, words = CASES[name]
    if driver not in driver_libs:
        pytest.skip(f"{driver} is not built")
    path = write(tmp_path, _flow(driver, settings), "refused.yaml")
    proc = run_experiment(path, results, "--dry-run")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith(f"{path}:{line}:")]
    assert any(words in ln for ln in lines), proc.stderr
    # The node itself, given the same run, refuses with the same words.
    assert words in node_refusal(driver_libs, driver, _node_args(settings))


def test_dry_run_reports_every_refusal_of_a_run_each_on_its_line(driver_libs, results, tmp_path):
    # Two independent problems of one run: a QoS udp does not offer (the node's own
    # refusal, with the driver's reason) and an option value only udp's check() judges.
    # Both are reported, each at its own line, as the node itself lists both.
    settings = "reliability: reliable\noptions: {port_base: 80}"
    path = write(tmp_path, _flow("udp", settings), "two.yaml")
    proc = run_experiment(path, results, "--dry-run")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    expected = {
        4: "udp: reliability 'reliable' is not supported; this driver supports "
        "best_effort (reliability must be best_effort: the kernel neither "
        "acknowledges nor resends)",
        5: "udp: option port_base='80': use a number from 1024 to 52767",
    }
    for line, words in expected.items():
        assert any(
            ln.startswith(f"{path}:{line}:") and words in ln for ln in proc.stderr.splitlines()
        ), (line, proc.stderr)
    told = node_refusal(driver_libs, "udp", _node_args(settings))
    assert all(words in told for words in expected.values()), told


def _flow(driver: str, settings: str) -> str:
    """A one-run experiment: the run's first line, then its settings one per line."""
    body = "\n".join(f"    {line.strip()}" for line in settings.splitlines())
    return f"name: refused\nruns:\n  - kind: ping\n{body}\n    driver: {driver}\n"


def _node_args(settings: str) -> list[str]:
    args = []
    for line in settings.splitlines():
        key, _, value = line.strip().partition(": ")
        if key == "options":
            for item in value.strip("{}").split(","):
                k, _, v = item.strip().partition(": ")
                args += ["--option", f"{k}={v}"]
        else:
            args += [f"--{key}", value]
    return args


def test_shipped_experiments_validate_through_the_node(driver_libs, results):
    # Every experiment and seed study the repository ships passes the node's own check.
    for path in sorted((REPO / "experiments").rglob("*.yaml")):
        if path.name.endswith((".published.yaml", ".layout.yaml")):  # data, not experiments
            continue
        proc = run_cli(["run", str(path), "--dry-run"], results, timeout=60)
        if only_versions_not_built(proc):
            continue  # experiments/upgrade.yaml where the versions were not built
        if only_on_request_drivers_not_built(proc):
            continue  # a seed study naming its paper's own systems where they are not built
        assert proc.returncode == 0, (path, proc.stderr)
