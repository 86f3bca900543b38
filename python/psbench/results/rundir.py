"""Result directories: names, creation, and JSON files written atomically."""

import json
import os
import secrets
import string
from datetime import UTC, datetime
from pathlib import Path

from psbench.base.errors import UserError

RUN_ID_ALPHABET = string.ascii_letters + string.digits


def new_run_id() -> str:
    """Random [A-Za-z0-9]{10}: names topics, ports and shm objects of one run."""
    return "".join(secrets.choice(RUN_ID_ALPHABET) for _ in range(10))


def utc_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def create(parent: Path, name: str) -> Path:
    """A new, empty directory parent/name (never reuses an existing one)."""
    try:
        parent.mkdir(parents=True, exist_ok=True)
        path = parent / name
        path.mkdir()
    except OSError as exc:
        raise UserError(
            f"argument --results: cannot create a result directory in "
            f"{parent}: {exc.strerror}; choose a writable directory"
        ) from None
    return path


def write_json(path: Path, value) -> None:
    """Writes via a temporary file and rename, so a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=2, default=str) + "\n")
    os.replace(tmp, path)
