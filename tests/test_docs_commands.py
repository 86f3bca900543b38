"""Every `./psbench ...` command in a code block of the README and docs/ parses with the
CLI as it is (no unknown option, a real subcommand), and the experiment files and studies
they name exist: a renamed option or file cannot leave a doc example behind (issue 15,
section 7). Placeholders (`<sweep>`, `...`) and pipes are left out."""

import re
import shlex

import pytest

from conftest import REPO
from psbench.cli.main import build_parser
from psbench.reproduce import STUDIES

DOCS = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))
COMMAND = re.compile(r"^\s*(?:\$\s+)?\./psbench\s+(.*)$")


def _logical_lines(text: str):
    """(line number, line) with shell continuations (a trailing backslash) joined."""
    joined = []
    for number, line in enumerate(text.splitlines(), 1):
        if joined and joined[-1][1].endswith("\\"):
            joined[-1] = (joined[-1][0], joined[-1][1][:-1] + " " + line.strip())
        else:
            joined.append((number, line))
    return joined


def documented_commands() -> list[tuple[str, str]]:
    found = []
    for path in DOCS:
        in_code = False
        for number, line in _logical_lines(path.read_text()):
            if line.strip().startswith("```"):
                in_code = not in_code
                continue
            match = COMMAND.match(line) if in_code else None
            if match:
                text = match.group(1).split(" #")[0].strip()
                if not any(mark in text for mark in ("<", "...", "|")):
                    found.append((f"{path.relative_to(REPO)}:{number}", text))
    return found


COMMANDS = documented_commands()


def test_the_docs_have_commands_to_check():
    # Known answer: the README's quick start alone has more than ten.
    assert len(COMMANDS) > 40


@pytest.mark.parametrize("where,text", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_a_documented_command_parses_and_names_what_exists(where, text):
    try:
        args, extras = build_parser().parse_known_args(shlex.split(text))
    except SystemExit:
        pytest.fail(f"{where}: `./psbench {text}` is refused by the CLI")
    assert not extras, f"{where}: unknown options {extras}"
    assert hasattr(args, "handler"), f"{where}: no subcommand"
    experiment = getattr(args, "experiment", None)
    if experiment and experiment.startswith("experiments/"):
        assert (REPO / experiment).is_file(), f"{where}: {experiment} does not exist"
    study = getattr(args, "name", None)
    if text.startswith("reproduce ") and study:
        assert study in STUDIES, f"{where}: no study {study}"
