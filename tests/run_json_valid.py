"""Every run.json the tests make is checked against run.json's JSON Schema
(docs/run.schema.json, generated from python/psbench/results/run_record.py): conftest.py
checks each test's own folder when it ends and, when a module ends, the folders its
fixtures made. A test that writes or damages run.json by hand on purpose (an old format,
a record cut short) says so with @pytest.mark.run_json_by_hand."""

import json
from functools import cache
from pathlib import Path

import jsonschema

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "run.schema.json"


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def refusals(paths) -> list[str]:
    """What the schema refuses in each run.json: the file, the field, why."""
    found = []
    for path in paths:
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            found.append(f"{path}: not readable JSON ({exc})")
            continue
        for error in sorted(_validator().iter_errors(record), key=lambda e: e.json_path):
            found.append(f"{path}: {error.json_path}: {error.message}")
    return found


class Checker:
    """The run.json files of one pytest process (an xdist worker has its own): each test's
    folder at its end, then at a module's end those under the other folders of the
    session's base (the fixtures'), each file once."""

    def __init__(self):
        self.test_dirs: set[str] = set()  # the tests' own folders, by name under the base
        self.checked: set[Path] = set()

    def test_folder(self, tmp_path: Path, by_hand: bool) -> list[str]:
        self.test_dirs.add(tmp_path.name)
        return [] if by_hand else refusals(sorted(tmp_path.rglob("run.json")))

    def fixture_folders(self, base: Path) -> list[str]:
        # pytest also links NAMEcurrent to a test's latest folder: links are not followed.
        folders = [
            d
            for d in sorted(base.iterdir())
            if d.is_dir() and not d.is_symlink() and d.name not in self.test_dirs
        ]
        new = [p for d in folders for p in sorted(d.rglob("run.json")) if p not in self.checked]
        self.checked.update(new)
        return refusals(new)
