"""Removes the zenoh shared-memory segments (/dev/shm/<id>.zenoh) of this user that no
live process uses (drivers/shm_cleanup.py: mapped, open or locked; every process using a
segment holds a shared flock on it, which zenoh's own cleanup_orphaned_shm_segments()
looks for). zenoh keeps its process-wide segments until the process ends and does not
remove them then (nor can a killed process): psbench runs this after every zenoh run
(manifest `cleanup`). A segment a running process (another run's, another user's) uses
is left."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from shm_cleanup import remove_unused  # noqa: E402  (drivers/shm_cleanup.py)

removed, _ = remove_unused(re.compile(r"[0-9]+\.zenoh"), own_only=True)
print(f"zenoh: {len(removed)} orphaned shared-memory segment(s) removed")
