"""Shared-memory files that killed processes left in /dev/shm, removed when no live process
uses them: what the cleanup scripts of the manifests of fastdds (shm_clean.py) and zenoh
(clean_shm.py) share, each naming its middleware's files (python3, standard library only).

A file counts as in use when any live process has it mapped (/proc/*/maps), open
(/proc/*/fd) or flock-ed (/proc/locks, which also shows the locks of processes whose /proc
entries cannot be read). Files are matched by device and inode, not by path. Files of one
group (a segment and its lock files, say) go together: when one of them is in use none is
removed.

Race left open, as with the middlewares' own tools: a process that opens a leftover file
between the scan and the removal keeps a file no one else finds by its name.
"""

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

SHM = Path("/dev/shm")


def _maps_and_fds(proc: Path, used: set[tuple[int, int, int]]) -> None:
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
        return
    for fd in fds:
        try:
            st = os.stat(fd)
        except OSError:
            continue
        used.add((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))


def in_use() -> set[tuple[int, int, int]]:
    """(major, minor, inode) of every file a live process maps, holds open or locks."""
    used: set[tuple[int, int, int]] = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            _maps_and_fds(proc, used)
    try:  # "1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END"
        for line in Path("/proc/locks").read_text().splitlines():
            ident = next((f for f in line.split() if f.count(":") == 2), None)
            if ident:
                major, minor, inode = ident.split(":")
                used.add((int(major, 16), int(minor, 16), int(inode)))
    except (OSError, ValueError):
        pass
    return used


def remove_unused(
    names: re.Pattern,
    group: Callable[[str], str] = lambda name: name,
    own_only: bool = False,
    folder: Path = SHM,
) -> tuple[list[str], list[str]]:
    """Removes the files of folder whose names match names in full (own_only: this user's
    only) that no live process uses, nor any file of their group (group(name)). Returns
    the names removed and those kept in use; one that cannot be removed is said on stderr."""
    # List before scanning /proc: a file a live process creates is open or mapped by the
    # time its name appears, so the scan that follows sees it.
    try:
        listed = sorted(n for n in os.listdir(folder) if names.fullmatch(n))
    except OSError:
        listed = []
    files = {}
    for name in listed:
        try:
            st = os.lstat(folder / name)
        except OSError:
            continue
        if not own_only or st.st_uid == os.getuid():
            files[name] = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    used = in_use()
    busy = {group(n) for n, key in files.items() if key in used}
    removed, kept = [], [n for n in files if group(n) in busy]
    for name in files:
        if name in kept:
            continue
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            print(f"cannot remove {folder / name}: {exc}", file=sys.stderr)
            continue
        removed.append(name)
    return removed, kept
