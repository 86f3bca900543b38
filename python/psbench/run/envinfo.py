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
from importlib import metadata
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


def run_quiet(argv: list[str], cwd: Path | None = None) -> str | None:
    """stdout of a short command, or None if it is missing or fails."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=10, cwd=cwd, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


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


def virtualization() -> dict:
    # systemd-detect-virt exits 1 and prints "none" on bare metal.
    detected = None
    if shutil.which("systemd-detect-virt"):
        try:
            proc = subprocess.run(
                ["systemd-detect-virt"],
                capture_output=True,
                text=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
            )
            detected = proc.stdout.strip() or None
        except (OSError, subprocess.TimeoutExpired):
            pass
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


def git_state() -> dict:
    commit = run_quiet(["git", "rev-parse", "HEAD"], cwd=paths.REPO_ROOT)
    status = (
        run_quiet(["git", "status", "--porcelain", "--untracked-files=no"], cwd=paths.REPO_ROOT)
        if commit
        else None
    )
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def user_name() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


def collect() -> dict:
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
        "virtualization": virtualization(),
        "load_average": load_average(),
        "rlimit_rtprio": rlimit(resource.RLIMIT_RTPRIO),
        "rlimit_memlock_bytes": rlimit(resource.RLIMIT_MEMLOCK),
        "sched_rt_runtime_us": int_or_none(read_text("/proc/sys/kernel/sched_rt_runtime_us")),
        "user": user_name(),
        "is_root": os.geteuid() == 0,
        "cpu_dma_latency_writable": os.access("/dev/cpu_dma_latency", os.W_OK),
        "python": sys.version.split()[0],
        "numpy": metadata.version("numpy"),
        "psbench": psbench.__version__,
        "git": git_state(),
    }
