"""iox-roudi as the tests of the drivers that use it see it (iceoryx, and Cyclone DDS on
shm): its processes, its shared memory, and a bounded wait for one that is stopping."""

import getpass
import signal
import time
from pathlib import Path


def roudi_pids() -> list[int]:
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == "iox-roudi":
                pids.append(int(comm.parent.name))
        except OSError:
            pass
    return pids


def iceoryx_shm_files() -> list[str]:
    # RouDi's management segment, and its data segment named after the user.
    return [name for name in ("iceoryx_mgmt", getpass.getuser()) if Path("/dev/shm", name).exists()]


def wait_for_no_roudi(seconds: float = 10) -> bool:
    """A RouDi found running may be one a previous test's psbench is still stopping (its
    keeper gives it seconds): wait a bounded moment before taking it for someone else's.
    True when none runs."""
    end = time.monotonic() + seconds
    while roudi_pids() and time.monotonic() < end:
        time.sleep(0.1)
    return not roudi_pids()


def stop_roudi(proc) -> None:
    """Stops a RouDi this test started with SIGTERM (SIGKILL if it does not end within
    20 s); it must end cleanly, with no process and none of its shared memory left."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None and not proc.stdout.closed:
            proc.stdout.close()
    assert proc.returncode == 0, f"iox-roudi ended with {proc.returncode}"
    assert proc.pid not in roudi_pids(), "iox-roudi remains"
    assert iceoryx_shm_files() == [], "iox-roudi left its shared memory in /dev/shm"
