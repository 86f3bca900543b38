"""Removes from /dev/shm the Fast DDS files that no running process uses: the manifest's
cleanup, run after every run (python3, standard library only).

Why not `fastdds shm clean` alone: fastdds-tools 2.9.1 matches lock files with
'^fastrtps_port\\d{,5}_el|_sl', which anchors "_sl" at the start of a name, so a killed
process's discovery port (fastrtps_port<N>, its _sl lock, sem.fastrtps_port<N>_mutex)
stays behind. Here a file counts as in use when any live process has it mapped
(/proc/*/maps), open (/proc/*/fd) or flock-ed (/proc/locks, which also shows the locks
of processes whose /proc entries cannot be read). Files are matched by device and
inode, not by path.

A name and its companions (NAME, NAME_el, NAME_sl, sem.NAME_mutex) go together: when
one of them is in use none is removed, as Fast DDS keeps a segment alive through its
lock files. Only names starting with fastrtps_ or sem.fastrtps_ are ever touched.

Race left open, as with the vendor's tool: a process that opens a leftover file between
the scan and the removal keeps a file no one else finds by its name.
"""

import os
import re
import sys
from pathlib import Path

SHM = Path("/dev/shm")
NAME = re.compile(r"(?:sem\.)?fastrtps_[A-Za-z0-9_]+")


def group(name: str) -> str:
    """The segment or port a file belongs to: the name without sem. and its suffix."""
    base = name.removeprefix("sem.")
    return re.sub(r"_(?:el|sl|mutex)$", "", base)


def in_use() -> set[tuple[int, int, int]]:
    """(major, minor, inode) of every file a live process maps, holds open or locks."""
    used = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:  # a process that exits meanwhile, or one we may not read: skip it
            for line in proc.joinpath("maps").read_text().splitlines():
                fields = line.split(maxsplit=5)
                if len(fields) >= 5 and fields[4] != "0":
                    major, minor = (int(x, 16) for x in fields[3].split(":"))
                    used.add((major, minor, int(fields[4])))
        except (OSError, ValueError):
            pass
        try:
            fds = list(proc.joinpath("fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(fd)
            except OSError:
                continue
            used.add((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
    try:  # "1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END"
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            ident = next((f for f in fields if f.count(":") == 2), None)
            if ident:
                major, minor, inode = ident.split(":")
                used.add((int(major, 16), int(minor, 16), int(inode)))
    except (OSError, ValueError):
        pass
    return used


def main() -> int:
    # List before scanning /proc: a file a live process creates is open or mapped by
    # the time its name appears, so the scan that follows sees it.
    try:
        names = sorted(n for n in os.listdir(SHM) if NAME.fullmatch(n))
    except OSError:
        names = []
    files = {}
    for name in names:
        try:
            st = os.lstat(SHM / name)
        except OSError:
            continue
        files[name] = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    used = in_use()
    busy = {group(n) for n, key in files.items() if key in used}
    removed, kept = [], [n for n in files if group(n) in busy]
    for name in files:
        if name in kept:
            continue
        try:
            (SHM / name).unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            print(f"cannot remove {SHM / name}: {exc}", file=sys.stderr)
            continue
        removed.append(name)
    for name in removed:
        print(f"removed {SHM / name}")
    print(f"{len(removed)} removed, {len(kept)} kept (in use by a running process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
