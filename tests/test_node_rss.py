"""A node's peak RSS (`usage.process.max_rss_kb` in its role json) is its own: VmHWM of
its own image, not getrusage's ru_maxrss, which the kernel carries across fork and exec
from whatever started the node (the CLI's Python: 30-56 MB reported for nodes of 4-21
MB). A launcher that touches 200 MB and then execs the node must not show in it."""

import json
import subprocess
import sys

LAUNCHER = """
import os, sys
ballast = bytearray(200 * 1024 * 1024)
for page in range(0, len(ballast), 4096):
    ballast[page] = 1  # resident, every page
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(int(peak.split()[1]), flush=True)
os.execv(sys.argv[1], sys.argv[1:])
"""


def test_the_peak_rss_is_the_nodes_own_not_its_launchers(node, driver_libs, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(node), "--driver", str(driver_libs["udp"]),
         "--role", "ping,pong", "--count", "200", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    launcher_kb = int(proc.stdout.split()[0])
    assert launcher_kb > 200 * 1024  # the launcher did hold 200 MB when it exec'd
    for role in ("ping", "pong"):
        usage = json.loads((tmp_path / f"{role}.json").read_text())["usage"]["process"]
        assert 0 < usage["max_rss_kb"] < 100 * 1024, (role, usage)
