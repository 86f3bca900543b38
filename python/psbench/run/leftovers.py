"""What a run may leave behind, removed once its processes are gone: files named after
the run id, and whatever the driver's own cleanup command removes. Both the runner (after
each run) and the keeper (after psbench was killed) call it."""

import shutil
import subprocess
import tempfile
from pathlib import Path

from psbench.base import paths, programs


def remove_leftovers(run_id: str) -> list[str]:
    """Files a killed node may leave, named after this run, in /dev/shm (shared memory)
    and the temporary directory (a middleware's sockets, locks, ipc endpoints). Run ids
    are random, so the glob cannot match another run's files."""
    removed = []
    for folder in (paths.shm_dir(), Path(tempfile.gettempdir())):
        for path in folder.glob(f"*psbench*{run_id}*"):
            try:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
                removed.append(str(path))
            except OSError:
                pass
    return removed


def remove_service_leftovers(names) -> None:
    """What a stopped service's manifest says it leaves: /dev/shm names, and absolute
    paths (a file, or a directory with what is in it: its data in its folder)."""
    for name in names:
        path = paths.shm_dir() / name  # an absolute name is that path itself
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


CLEANUP_TIMEOUT_S = 30.0


def run_cleanup_command(argv: list[str] | None) -> dict | None:
    """The driver's own cleanup of what killed processes leave behind (its
    capabilities name it, e.g. a vendor tool that removes stale shared memory); its
    outcome, for run.json."""
    if not argv:
        return None
    try:
        proc = programs.output(argv, CLEANUP_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"argv": argv, "exit_code": None, "error": str(exc)}
    return {
        "argv": argv,
        "exit_code": proc.returncode,
        "error": proc.stderr.strip()[-500:] if proc.returncode else None,
    }
