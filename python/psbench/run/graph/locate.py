"""Where a graph file named in a command or an experiment is."""

from pathlib import Path

from psbench.base import paths


def resolve(path) -> Path:
    """A graph file as given: relative to the working directory, else to psbench's own
    folder (so graphs/cwalker.yaml works from anywhere)."""
    path = Path(path)
    if path.is_absolute() or path.exists():
        return path
    shipped = paths.REPO_ROOT / path
    return shipped if shipped.exists() else path
