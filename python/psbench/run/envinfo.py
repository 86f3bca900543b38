"""What shapes latency results on this machine, recorded next to every result.

Every probe is best effort: a file or tool that is missing gives None (JSON null) and
never an exception, because a result without its context is still worth keeping.
"""

import getpass
import os
import platform
import resource
import shutil
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import psbench
from psbench.base import paths

CPU_SYS = Path("/sys/devices/system/cpu")


def read_text(path: Path | str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def parse_cpu_list(text: str | None) -> list[int] | None:
    """'0-3,6' -> [0, 1, 2, 3, 6]; '' -> []; None -> None."""
    if text is None:
        return None
    cpus = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part:
                first, last = part.split("-", 1)
                cpus.extend(range(int(first), int(last) + 1))
            else:
                cpus.append(int(part))
        except ValueError:
            return None
    return cpus


def start_quiet(argv: list[str], cwd: Path | None = None) -> subprocess.Popen | None:
    """A short command started (None if it is missing), read by output_of: collect()
    starts its commands at once and reads them after, one wait for all."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, cwd=cwd, stdin=subprocess.DEVNULL)  # fmt: skip
    except OSError:
        return None


def output_of(proc: subprocess.Popen | None, any_exit: bool = False) -> str | None:
    """Its stdout, or None if it failed (any_exit: whatever its exit code) or took 10 s."""
    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return out.strip() if proc.returncode == 0 or any_exit else None


def run_quiet(argv: list[str], cwd: Path | None = None) -> str | None:
    """stdout of a short command, or None if it is missing or fails."""
    return output_of(start_quiet(argv, cwd))


def cpu_model() -> str | None:
    text = read_text("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def hypervisor_flag() -> bool | None:
    text = read_text("/proc/cpuinfo")
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return "hypervisor" in line.split(":", 1)[1].split()
    return None


def virtualization(detect: subprocess.Popen | None = None) -> dict:
    # systemd-detect-virt exits 1 and prints "none" on bare metal.
    detect = detect or start_quiet(["systemd-detect-virt"])
    detected = output_of(detect, any_exit=True) or None
    return {"systemd_detect_virt": detected, "hypervisor_flag": hypervisor_flag()}


def cpufreq_governors(cpus: list[int] | None) -> dict | str:
    governors = {}
    for cpu in cpus or []:
        governor = read_text(CPU_SYS / f"cpu{cpu}" / "cpufreq" / "scaling_governor")
        if governor is not None:
            governors[str(cpu)] = governor
    return governors or "unavailable"


def haltpoll_parameters() -> dict | None:
    folder = Path("/sys/module/haltpoll/parameters")
    if not folder.is_dir():
        return None
    return {p.name: read_text(p) for p in sorted(folder.iterdir())}


def rlimit(which: int) -> dict:
    def show(value: int):
        return "unlimited" if value == resource.RLIM_INFINITY else value

    soft, hard = resource.getrlimit(which)
    return {"soft": show(soft), "hard": show(hard)}


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def git_state(head: subprocess.Popen | None = None, status: subprocess.Popen | None = None) -> dict:
    head = head or start_quiet(["git", "rev-parse", "HEAD"], cwd=paths.REPO_ROOT)
    status = status or start_quiet(GIT_STATUS, cwd=paths.REPO_ROOT)
    commit, changes = output_of(head), output_of(status)
    return {"commit": commit, "dirty": None if commit is None or changes is None else bool(changes)}


GIT_STATUS = ["git", "status", "--porcelain", "--untracked-files=no"]


def numpy_version() -> str | None:
    try:
        import numpy  # the analysis imports it anyway; importlib.metadata costs 10 ms more
    except ImportError:
        return None
    return numpy.__version__


def user_name() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


def collect() -> dict:
    # The three commands run side by side while the files are read (a run pays this).
    detect = start_quiet(["systemd-detect-virt"])
    head = start_quiet(["git", "rev-parse", "HEAD"], cwd=paths.REPO_ROOT)
    status = start_quiet(GIT_STATUS, cwd=paths.REPO_ROOT)
    online = parse_cpu_list(read_text(CPU_SYS / "online"))
    return {
        "format": "psbench-env/1",
        "collected_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "hostname": socket.gethostname(),
        "machine": platform.machine(),
        "kernel": platform.release(),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "online_cpus": online,
        "isolated_cpus": parse_cpu_list(read_text(CPU_SYS / "isolated")),
        "allowed_cpus": sorted(os.sched_getaffinity(0)),
        "smt": {
            "control": read_text(CPU_SYS / "smt" / "control"),
            "active": read_text(CPU_SYS / "smt" / "active"),
        },
        "cpufreq_governor": cpufreq_governors(online),
        "cpuidle": {
            "driver": read_text(CPU_SYS / "cpuidle" / "current_driver"),
            "governor": read_text(CPU_SYS / "cpuidle" / "current_governor"),
        },
        "haltpoll": haltpoll_parameters(),
        "virtualization": virtualization(detect),
        "load_average": load_average(),
        "rlimit_rtprio": rlimit(resource.RLIMIT_RTPRIO),
        "rlimit_memlock_bytes": rlimit(resource.RLIMIT_MEMLOCK),
        "sched_rt_runtime_us": int_or_none(read_text("/proc/sys/kernel/sched_rt_runtime_us")),
        "user": user_name(),
        "is_root": os.geteuid() == 0,
        "cpu_dma_latency_writable": os.access("/dev/cpu_dma_latency", os.W_OK),
        "python": sys.version.split()[0],
        "numpy": numpy_version(),
        "psbench": psbench.__version__,
        "git": git_state(head, status),
    }
