"""Removes from /dev/shm the Fast DDS files that no running process uses: the manifest's
cleanup, run after every run (python3, standard library only), with drivers/shm_cleanup.py
(which says when a file is in use).

Why not `fastdds shm clean` alone: fastdds-tools 2.9.1 matches lock files with
'^fastrtps_port\\d{,5}_el|_sl', which anchors "_sl" at the start of a name, so a killed
process's discovery port (fastrtps_port<N>, its _sl lock, sem.fastrtps_port<N>_mutex)
stays behind.

A name and its companions (NAME, NAME_el, NAME_sl, sem.NAME_mutex) go together: when
one of them is in use none is removed, as Fast DDS keeps a segment alive through its
lock files. Only names starting with fastrtps_ or sem.fastrtps_ are ever touched.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from shm_cleanup import SHM, remove_unused  # noqa: E402  (drivers/shm_cleanup.py)

NAME = re.compile(r"(?:sem\.)?fastrtps_[A-Za-z0-9_]+")


def group(name: str) -> str:
    """The segment or port a file belongs to: the name without sem. and its suffix."""
    return re.sub(r"_(?:el|sl|mutex)$", "", name.removeprefix("sem."))


if __name__ == "__main__":
    removed, kept = remove_unused(NAME, group)
    for name in removed:
        print(f"removed {SHM / name}")
    print(f"{len(removed)} removed, {len(kept)} kept (in use by a running process)")
