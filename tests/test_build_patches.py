"""scripts/lib/build-steps.sh's apply_patches and patches_digest (the fix-ups the
from-source drivers make to a middleware's code), on a tree made here: a patch applies
once and a second build finds it applied, one that neither applies nor reverses stops the
build with the tree untouched, and the digest the steps are named with follows the text."""

import os
import re
import subprocess
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "scripts" / "lib" / "build-steps.sh"
BEFORE = "int wait(void) {\n  return list_empty();\n}\n"
AFTER = "int wait(void) {\n  return list_empty() && spliced_returned();\n}\n"
PATCH = """--- a/src/wait.c
+++ b/src/wait.c
@@ -1,3 +1,3 @@
 int wait(void) {
-  return list_empty();
+  return list_empty() && spliced_returned();
 }
"""


def library(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    """script run in bash with build-steps.sh sourced, as a build-sdk runs it."""
    return subprocess.run(
        ["bash", "-c", f'source "{LIB}"; {script}', "bash", *args],
        env=dict(os.environ, PSB_PREFIX=str(tmp_path / "prefix")),
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip


def tree(tmp_path: Path, text: str) -> Path:
    source = tmp_path / "tree"
    (source / "src").mkdir(parents=True)
    (source / "src" / "wait.c").write_text(text)
    return source


def test_a_patch_applies_once_and_a_second_build_finds_it_applied(tmp_path):
    source = tree(tmp_path, BEFORE)
    patch = tmp_path / "fix.patch"
    patch.write_text(PATCH)
    first = library(tmp_path, 'apply_patches "$1" "$2"', str(source), str(patch))
    assert first.returncode == 0, first.stderr
    assert (source / "src" / "wait.c").read_text() == AFTER
    second = library(tmp_path, 'apply_patches "$1" "$2"', str(source), str(patch))
    assert second.returncode == 0, second.stderr
    assert "fix.patch: applied before" in second.stdout
    assert (source / "src" / "wait.c").read_text() == AFTER


def test_a_patch_that_fits_neither_way_stops_the_build(tmp_path):
    other = "int wait(void) {\n  return 0;\n}\n"
    source = tree(tmp_path, other)
    patch = tmp_path / "fix.patch"
    patch.write_text(PATCH)
    run = library(tmp_path, 'apply_patches "$1" "$2"; echo after', str(source), str(patch))
    assert run.returncode != 0 and "after" not in run.stdout, run.stdout
    assert (source / "src" / "wait.c").read_text() == other


def test_the_digest_follows_the_patches_text(tmp_path):
    one, same, other = tmp_path / "one.patch", tmp_path / "same.patch", tmp_path / "other.patch"
    one.write_text(PATCH)
    same.write_text(PATCH)
    other.write_text(PATCH.replace("spliced_returned", "spliced_gone"))
    digests = [
        library(tmp_path, 'patches_digest "$@"', str(p)).stdout.strip() for p in (one, same, other)
    ]
    assert all(re.fullmatch(r"[0-9a-f]{8}", d) for d in digests), digests
    assert digests[0] == digests[1] != digests[2]
    both = library(tmp_path, 'patches_digest "$@"', str(one), str(other)).stdout.strip()
    assert both not in digests
