"""Removes the zenoh shared-memory segments (/dev/shm/<id>.zenoh) of this user that no
live process holds, as zenoh's own cleanup_orphaned_shm_segments() does: every process
using a segment holds a shared flock on it, so one that takes an exclusive lock at once is
orphaned. zenoh keeps its process-wide segments until the process ends and does not remove
them then (nor can a killed process): psbench runs this after every zenoh run (manifest
`cleanup`). A segment a running process (another run's, another user's) uses is left."""

import fcntl
import os
from pathlib import Path

removed = 0
for path in Path("/dev/shm").glob("*.zenoh"):
    if not path.stem.isdigit():
        continue
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        continue  # gone, or another user's
    try:
        if os.fstat(fd).st_uid != os.getuid():
            continue
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        continue  # held: in use
    else:
        path.unlink(missing_ok=True)
        removed += 1
    finally:
        os.close(fd)
print(f"zenoh: {removed} orphaned shared-memory segment(s) removed")
