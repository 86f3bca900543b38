"""The package is declared the ecosystem's way (pyproject.toml, issue 16): its pinned
dependencies are the lock file's, its console script is the CLI, and its version the
package's."""

import re
import subprocess
import tomllib

import psbench
from conftest import REPO


def pins(lines) -> dict[str, str]:
    found = {}
    for line in lines:
        match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)==([^\s#]+)\s*(#.*)?", line)
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def test_every_declared_dependency_is_pinned_as_in_the_lock_file():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = pins(project["dependencies"] + project["optional-dependencies"]["test"])
    locked = pins((REPO / "requirements.txt").read_text().splitlines())
    assert declared and len(declared) == len(project["dependencies"]) + len(
        project["optional-dependencies"]["test"]
    ), "a dependency without a pin"
    assert {name: locked.get(name) for name in declared} == declared


def test_the_console_script_is_the_cli():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"psbench": "psbench.cli.main:main"}
    script = REPO / ".venv" / "bin" / "psbench"
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == f"psbench {psbench.__version__}"
