"""scripts/build-source against real git repositories made here: the pinned commit is
what is built, a wrong or missing tree is refused with what was found, a failed step is
named with its log, a second build skips what passed, and the record says what was built
from what."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "build-source"

BUILD_SDK = """#!/usr/bin/env bash
source "$PSB_LIB"
step configure bash -c 'cat "$PSB_SRC_CORE/VERSION" > "$PSB_PREFIX/installed"; echo ran >> "$PSB_PREFIX/configure-runs"'
step compile bash -c 'echo compiling; test ! -e "$PSB_PREFIX/../fail" || { echo "error: the compiler said no"; exit 3; }'
record_flag std gnu++98
record_flag std gnu++11
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()  # fmt: skip


def make_repo(path: Path, versions: list[str]) -> list[str]:
    """A repository with one commit per version (VERSION says it); their commits."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    commits = []
    for version in versions:
        (path / "VERSION").write_text(f"core version {version}\n")
        git(path, "add", "VERSION")
        git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", version)
        commits.append(git(path, "rev-parse", "HEAD"))
    return commits


@pytest.fixture
def setup(tmp_path):
    upstream = tmp_path / "upstream"
    commits = make_repo(upstream, ["1.0", "2.0"])
    drivers = tmp_path / "drivers"
    folder = drivers / "srcmw"
    folder.mkdir(parents=True)
    (folder / "manifest.toml").write_text(f"""architecture = "peer-to-peer"
build = "from-source"
[source]
system = "core"
version = "1.0"
[[source.trees]]
name = "core"
var = "CORE_SRC"
url = "file://{upstream}"
tag = "v1.0"
commit = "{commits[0]}"
version_file = "VERSION"
version_regex = "core version 1\\\\.0"
""")
    (folder / "build-sdk").write_text(BUILD_SDK)
    (folder / "build-sdk").chmod(0o755)
    cache = tmp_path / "cache"
    env = dict(os.environ, PSBENCH_DRIVERS_DIR=str(drivers), PSBENCH_SOURCE_CACHE=str(cache))
    env.pop("CORE_SRC", None)

    def run(*args, **extra):
        return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=60,
                              env={**env, **extra})  # fmt: skip

    return run, upstream, commits, cache / "core-1.0"


def test_the_pinned_commit_is_built_not_the_repository_head(setup):
    run, upstream, commits, prefix = setup
    proc = run("srcmw", CORE_SRC=str(upstream))
    assert proc.returncode == 0, proc.stderr
    assert (prefix / "installed").read_text() == "core version 1.0\n"  # HEAD says 2.0
    record = json.loads((prefix / "psbench-sdk.json").read_text())
    assert record["system"] == "core" and record["version"] == "1.0"
    assert record["trees"] == [
        {
            "name": "core",
            "url": f"file://{upstream}",
            "tag": "v1.0",
            "commit": commits[0],
            "origin": f"CORE_SRC={upstream}",
        }
    ]
    assert record["flags"] == {"std": "gnu++11"}  # the last word on a flag is kept
    assert set(record["steps"]) == {"configure", "compile"}
    assert run("srcmw", "--check").returncode == 0
    assert run("srcmw", "--prefix").stdout.strip() == str(prefix)


def test_a_second_build_skips_the_steps_that_passed(setup):
    run, upstream, _, prefix = setup
    assert run("srcmw", CORE_SRC=str(upstream)).returncode == 0
    again = run("srcmw", CORE_SRC=str(upstream))
    assert again.returncode == 0, again.stderr
    assert "step configure: done before" in again.stdout
    assert (prefix / "configure-runs").read_text() == "ran\n"


def test_without_the_variable_the_public_url_is_cloned_at_the_commit(setup):
    run, _, _, prefix = setup
    proc = run("srcmw")
    assert proc.returncode == 0, proc.stderr
    assert "cloning file://" in proc.stdout
    assert (prefix / "installed").read_text() == "core version 1.0\n"


def test_a_repository_without_the_pinned_commit_is_refused_with_what_it_has(setup, tmp_path):
    run, _, commits, prefix = setup
    other = tmp_path / "other"
    make_repo(other, ["3.1"])
    git(other, "tag", "v3.1")
    proc = run("srcmw", CORE_SRC=str(other))
    assert proc.returncode == 2
    assert f"CORE_SRC={other}: this repository lacks commit {commits[0]}" in proc.stderr
    assert "its HEAD is v3.1" in proc.stderr
    assert not (prefix / "psbench-sdk.json").exists()


def test_a_plain_tree_of_another_version_is_refused_with_what_its_file_says(setup, tmp_path):
    run, *_ = setup
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "VERSION").write_text("core version 2.0\n")
    proc = run("srcmw", CORE_SRC=str(plain))
    assert proc.returncode == 2
    assert "VERSION says 'core version 2.0'" in proc.stderr and "v1.0" in proc.stderr
    (plain / "VERSION").write_text("core version 1.0\n")
    assert run("srcmw", CORE_SRC=str(plain)).returncode == 0


def test_a_missing_tree_is_refused(setup, tmp_path):
    run, *_ = setup
    proc = run("srcmw", CORE_SRC=str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "no such directory" in proc.stderr and "CORE_SRC" in proc.stderr


def test_a_failed_step_is_named_with_its_log_and_nothing_counts_as_built(setup):
    run, upstream, _, prefix = setup
    prefix.mkdir(parents=True)
    (prefix.parent / "fail").touch()
    proc = run("srcmw", CORE_SRC=str(upstream))
    assert proc.returncode == 1
    log = prefix / "logs" / "compile.log"
    assert f"step compile failed (exit 3); log: {log}" in proc.stderr
    assert "error: the compiler said no" in proc.stderr  # the log's end, shown
    assert "error: the compiler said no" in log.read_text()
    assert not (prefix / "psbench-sdk.json").exists()
    assert run("srcmw", "--check").returncode == 1
    (prefix.parent / "fail").unlink()  # fixed: the failed step runs again, the other not
    again = run("srcmw", CORE_SRC=str(upstream))
    assert again.returncode == 0 and "step configure: done before" in again.stdout


def test_a_driver_not_built_from_source_is_refused(setup, tmp_path):
    run, *_ = setup
    assert run("nosuch").returncode == 2
    proc = subprocess.run([str(SCRIPT), "udp"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "is not built from source" in proc.stderr


def test_a_built_tree_needs_neither_its_repository_nor_the_network_again(setup, tmp_path):
    run, upstream, commits, prefix = setup
    assert run("srcmw", CORE_SRC=str(upstream)).returncode == 0
    upstream.rename(tmp_path / "gone")  # no local copy, and the url leads nowhere
    again = run("srcmw")
    assert again.returncode == 0, again.stderr
    assert "cloning" not in again.stdout
    record = json.loads((prefix / "psbench-sdk.json").read_text())
    assert record["trees"][0]["origin"] == f"CORE_SRC={upstream}"  # as first built
