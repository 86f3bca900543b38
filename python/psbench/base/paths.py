"""Where things are: repository, build outputs, node binary, drivers, results."""

import os
from pathlib import Path

from psbench.base.errors import UserError

REPO_ROOT = Path(__file__).resolve().parents[3]  # python/psbench/base/paths.py


def _from_env(name: str, default: Path) -> Path:
    """A path from an environment variable; relative values are taken from the repo root
    so that the launcher gives the same answer from any working directory."""
    value = os.environ.get(name)
    if not value:
        return default
    path = Path(value).expanduser()
    return path if path.is_absolute() else REPO_ROOT / path


def build_dir() -> Path:
    """`build/` under the repo, or $PSBENCH_BUILD."""
    return _from_env("PSBENCH_BUILD", REPO_ROOT / "build")


def node_path() -> Path:
    return build_dir() / "core" / "psbench-node"


def require_node() -> Path:
    """The node binary, or a UserError telling how to build it."""
    node = node_path()
    if not (node.is_file() and os.access(node, os.X_OK)):
        raise UserError(
            f"the measuring node is not built: {node} is missing; run `make build` in {REPO_ROOT}",
            exit_code=1,
        )
    return node


def driver_library(name: str) -> Path:
    """Where the build puts driver name's library (built or not)."""
    return build_dir() / "drivers" / name / f"libpsbench-{name}.so"


def driver_libraries() -> dict[str, Path]:
    """Every built driver, by name: build/drivers/*/libpsbench-<name>.so."""
    found = {}
    for lib in sorted(build_dir().glob("drivers/*/libpsbench-*.so")):
        name = lib.name[len("libpsbench-") : -len(".so")]
        found.setdefault(name, lib)
    return found


def source_cache() -> Path:
    """Where middlewares built from source live (scripts/build-source's
    PSBENCH_SOURCE_CACHE, else ~/.cache/psbench)."""
    return _from_env("PSBENCH_SOURCE_CACHE", Path.home() / ".cache" / "psbench")


def results_dir(override: str | None = None) -> Path:
    """--results DIR, else $PSBENCH_RESULTS, else results/ under the repo."""
    if override:
        return Path(override).expanduser().resolve()
    return _from_env("PSBENCH_RESULTS", REPO_ROOT / "results")


def shm_dir() -> Path:
    return Path("/dev/shm")
