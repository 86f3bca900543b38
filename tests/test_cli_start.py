"""The CLI starts fast (issue 16): `psbench --help` and a light command import only the
modules they use; numerical and plotting libraries wait for the commands that compute.
Checked by the modules the interpreter reports importing (-X importtime), never by time."""

import subprocess
import sys

import pytest

from conftest import REPO, python_env

HEAVY = ("numpy", "scipy", "matplotlib", "yaml", "hypothesis")


def imported(*args: str) -> set[str]:
    env = python_env()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "psbench", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
    )
    return {
        line.split("|")[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }


@pytest.mark.parametrize(
    "args", [("--help",), ("drivers", "--help"), ("env", "--help"), ("ping", "--help")]
)
def test_help_and_light_commands_import_no_heavy_library(args):
    modules = imported(*args)
    assert "psbench.cli.main" in modules  # known answer: the list is the real one
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []


def test_a_computing_command_still_gets_its_libraries():
    modules = imported("report", "--help")
    assert "numpy" in modules  # the report's own modules need it
    assert "psbench.cli.cmd_measure" not in modules  # and no other command's
