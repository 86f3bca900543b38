"""The results store of a sweep (`psbench run`): the experiment file as run, its runs as
expanded, the environment, one folder per run, and index.jsonl.

index.jsonl has one JSON line per run that ended, appended with a single write on an
O_APPEND descriptor and fsync'd before the next run starts: a kill -9 of psbench loses at
most the run in flight, and a reader never sees half a line (a torn last line, possible
only if the machine itself goes down, is skipped).
"""

import json
import os
import re
from pathlib import Path

from psbench.base.errors import UserError
from psbench.results import rundir

INDEX_FORMAT = "psbench-index/1"
EXPANDED_FORMAT = "psbench-experiment/1"
# A run that ended with one of these is not run again by --resume.
FINAL_STATUSES = ("ok", "incomplete", "failed", "crashed", "timeout", "refused")
EXPERIMENT_FILE = "experiment.yaml"
INDEX_FILE = "index.jsonl"


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "experiment"


def default_dir(results: Path, name: str) -> Path:
    """results/<UTC stamp>-<name>, made unique if a sweep of that name started this second."""
    base = results / f"{rundir.utc_stamp()}-{safe_name(name)}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def _write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Store:
    def __init__(self, root: Path):
        self.root = root
        self.index = root / INDEX_FILE

    @classmethod
    def create(cls, root: Path, source: bytes, expanded: dict, env: dict) -> "Store":
        """A new store in root (which must not exist yet, or be empty)."""
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise UserError(
                f"argument -o: {root} already exists and is not empty; "
                f"--resume continues the sweep stored there, or choose a new "
                f"directory"
            )
        try:
            (root / "runs").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(
                f"argument -o: cannot create {root}: {exc.strerror}; choose a writable directory"
            ) from None
        store = cls(root)
        _write_bytes(root / EXPERIMENT_FILE, source)
        rundir.write_json(
            root / "experiment.expanded.json", {"format": EXPANDED_FORMAT, **expanded}
        )
        rundir.write_json(root / "env.json", env)
        store.index.touch()
        _fsync_dir(root)
        return store

    @classmethod
    def resume(cls, root: Path, source: bytes, display: str, env: dict) -> "Store":
        """The store in root, if it was started with this very experiment file."""
        stored = root / EXPERIMENT_FILE
        if not stored.is_file():
            raise UserError(
                f"argument --resume: {root} holds no sweep (no "
                f"{EXPERIMENT_FILE}); give the -o directory of the sweep to "
                f"continue"
            )
        if stored.read_bytes() != source:
            raise UserError(
                f"argument --resume: {display} differs from {stored}, the file "
                f"the sweep in {root} was started with; resume with that file "
                f"(psbench run {stored} -o {root} --resume), or start a new "
                f"sweep without --resume"
            )
        store = cls(root)
        (root / "runs").mkdir(exist_ok=True)
        store._end_torn_line()
        rundir.write_json(root / f"env-resumed-{rundir.utc_stamp()}.json", env)
        return store

    def _end_torn_line(self) -> None:
        """A line cut short (machine crash) is ended, so the next line starts clean."""
        if not self.index.exists():
            self.index.touch()
            return
        data = self.index.read_bytes()
        if data and not data.endswith(b"\n"):
            self._append_bytes(b"\n")

    def entries(self) -> list[dict]:
        """Every complete line of the index, oldest first."""
        if not self.index.exists():
            return []
        found = []
        for line in self.index.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a torn line
            if isinstance(entry, dict):
                found.append(entry)
        return found

    def finished(self) -> dict[str, dict]:
        """identity -> the latest entry, for runs that ended with a final status."""
        done = {}
        for entry in self.entries():
            if entry.get("status") in FINAL_STATUSES and entry.get("identity"):
                done[entry["identity"]] = entry
        return done

    def run_parent(self, number: int, label: str) -> Path:
        """runs/<NNNN>-<label>/: measure.run puts each attempt's directory in it."""
        path = self.root / "runs" / f"{number:04d}-{label}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def append(self, entry: dict) -> None:
        line = (
            json.dumps({"format": INDEX_FORMAT, **entry}, default=str, separators=(",", ":")) + "\n"
        )
        self._append_bytes(line.encode())

    def _append_bytes(self, data: bytes) -> None:
        fd = os.open(self.index, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, data)  # one write: O_APPEND keeps it in one piece
            if written != len(data):
                raise OSError(f"short write to {self.index} ({written} of {len(data)} bytes)")
            os.fsync(fd)
        finally:
            os.close(fd)
