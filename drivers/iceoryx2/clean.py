"""Removes what killed iceoryx2 nodes of psbench runs left behind: the run's shared memory
(/dev/shm/psbench_iox2_<run id>_*) and its root directory of node and service files
(<temporary directory>/psbench_iox2_<run id>), for every run whose files no live process
holds open or mapped. The driver names everything of a run so; a live process of a run
keeps its node's monitor file open and its shared memory mapped, so its run is left alone,
as is a run whose root directory is younger than 2 s (a node being created). Prints what it removed.
Usage: python3 clean.py [SHM_DIR [TMP_DIR]] (defaults /dev/shm and the temporary
directory); exit 0, or 1 when something could not be removed."""

import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

RUN = re.compile(r"psbench_iox2_([A-Za-z0-9]+)")
YOUNG_S = 2.0


def runs_in_use() -> set[str]:
    """Run ids of every psbench_iox2 file a live process has open or mapped."""
    used = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            targets = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:
            targets = []
        try:
            targets.append((proc / "maps").read_text())
        except OSError:
            pass
        used.update(m.group(1) for t in targets for m in RUN.finditer(t))
    return used


def main() -> int:
    shm = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/dev/shm")
    tmp = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.gettempdir())
    found = [p for d in (shm, tmp) if d.is_dir() for p in d.iterdir() if RUN.match(p.name)]
    if not found:
        return 0
    used, now, status = runs_in_use(), time.time(), 0
    for path in found:  # a run whose root directory is young may be starting: leave it
        try:
            if path.is_dir() and now - path.stat().st_mtime < YOUNG_S:
                used.add(RUN.match(path.name).group(1))
        except OSError:
            pass
    for path in found:
        if RUN.match(path.name).group(1) in used:
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            print(f"removed {path}")
        except FileNotFoundError:
            pass
        except OSError as exc:
            print(f"cannot remove {path}: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
