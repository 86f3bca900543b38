"""What a run costs: CPU time, context switches and peak memory of every process it
involved (its node processes and the services they use: brokers, daemons) over the
measurement window, read from /proc when the measuring senders say their window begins
and ends (the node's WINDOW lines, --window-lines).

CPU time is the sum of each thread's on-CPU time (/proc/PID/task/TID/schedstat, in ns):
a thread that existed at both edges counts its difference, one started inside the window
all of its time; one that ended inside the window is lost (counted in threads_ended).
The user/system split comes from /proc/PID/stat (whole process, clock ticks: 10 ms
steps). Peak RSS is VmHWM: a node's over its life (it lives for the run); a service's,
shared between runs, reset at the window's start (/proc/PID/clear_refs) so that it is
the window's peak. The reset can move the process's own getrusage ru_maxrss too (the
kernel takes it from the same mark), which is why nodes are left alone (their summaries
report ru_maxrss), and so is a service psbench did not start (a daemon
already running, found by its name): its lifetime peak is given and says so.
"""

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Snapshot:
    at_ns: int  # time.monotonic_ns() when it was read
    threads: dict[int, tuple[int, int, int]]  # tid -> (cpu ns, voluntary, involuntary)
    user_ticks: int
    system_ticks: int


def _status_fields(path: Path, names: tuple[str, ...]) -> dict[str, int]:
    found = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(":")
        if key in names:
            found[key] = int(value.split()[0])
    return found


def _thread(task: Path) -> tuple[int, int, int] | None:
    try:
        cpu_ns = int((task / "schedstat").read_text().split()[0])
        switches = _status_fields(
            task / "status", ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")
        )
    except (OSError, ValueError, IndexError):
        return None  # it ended while being read
    return (
        cpu_ns,
        switches.get("voluntary_ctxt_switches", 0),
        switches.get("nonvoluntary_ctxt_switches", 0),
    )


def process_tree(pid: int) -> list[int]:
    """The process and every descendant now (a broker's launcher, its runtime, its
    helpers: a shell, a port mapper, a virtual machine), parents first."""
    children: dict[int, list[int]] = {}
    for stat in PROC.glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # it ended while we looked
        children.setdefault(ppid, []).append(int(stat.parent.name))
    tree, queue = [], [pid]
    while queue:
        current = queue.pop(0)
        tree.append(current)
        queue.extend(children.get(current, []))
    return tree


def snapshot(pid: int, tree: bool = False) -> Snapshot | None:
    """The process's threads and CPU ticks now, with every descendant's when tree (a
    service: what it started works for it); None when the process is gone or
    unreadable (a descendant that ends meanwhile is left out)."""
    if not tree:
        return _process_snapshot(pid)
    whole = None
    for member in process_tree(pid):
        part = _process_snapshot(member)
        if part is None:
            if member == pid:
                return None
            continue
        if whole is None:
            whole = part
        else:
            whole.threads.update(part.threads)
            whole.user_ticks += part.user_ticks
            whole.system_ticks += part.system_ticks
    return whole


def _process_snapshot(pid: int) -> Snapshot | None:
    base = PROC / str(pid)
    try:
        # comm may hold spaces and parentheses: the fields start after the last ')'.
        fields = (base / "stat").read_text().rpartition(")")[2].split()
        user, system = int(fields[11]), int(fields[12])
        tids = [int(t.name) for t in (base / "task").iterdir()]
    except (OSError, ValueError, IndexError):
        return None
    threads = {}
    for tid in tids:
        values = _thread(base / "task" / str(tid))
        if values is not None:
            threads[tid] = values
    return Snapshot(time.monotonic_ns(), threads, user, system)


def reset_peak(pid: int, tree: bool = False) -> bool:
    """Resets the peak RSS (VmHWM) of the process (and its descendants) to the current
    RSS; False if refused."""
    try:
        for member in process_tree(pid) if tree else [pid]:
            (PROC / str(member) / "clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_kb(pid: int, tree: bool = False) -> int | None:
    """VmHWM of the process, or the sum over it and its descendants (their peaks need not
    coincide: an upper bound of the tree's peak)."""
    total = None
    for member in process_tree(pid) if tree else [pid]:
        try:
            peak = _status_fields(PROC / str(member) / "status", ("VmHWM",)).get("VmHWM")
        except (OSError, ValueError):
            peak = None
        if peak is not None:
            total = (total or 0) + peak
        elif member == pid:
            return None
    return total


def difference(before: Snapshot | None, after: Snapshot) -> dict:
    """What the process used between two snapshots (before None: it started in between,
    so everything it used counts)."""
    old = before.threads if before else {}
    cpu = voluntary = involuntary = 0
    for tid, (c, v, i) in after.threads.items():
        c0, v0, i0 = old.get(tid, (0, 0, 0))
        cpu, voluntary, involuntary = cpu + c - c0, voluntary + v - v0, involuntary + i - i0
    tick_ns = 1_000_000_000 // CLOCK_TICKS
    return {
        "cpu_ns": cpu,
        "user_ns": (after.user_ticks - (before.user_ticks if before else 0)) * tick_ns,
        "system_ns": (after.system_ticks - (before.system_ticks if before else 0)) * tick_ns,
        "voluntary_switches": voluntary,
        "involuntary_switches": involuntary,
        "threads_ended": len(set(old) - set(after.threads)),
    }


def pids_named(name: str) -> list[int]:
    """The processes whose /proc/PID/comm is this program's name (cut to 15 bytes, as
    the kernel keeps it)."""
    found = []
    for comm in PROC.glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == name[:15]:
                found.append(int(comm.parent.name))
        except (OSError, ValueError):
            pass  # it ended while we looked
    return found


@dataclass
class Watched:
    name: str  # the node process's name (ping, sub-2, ...) or the service's
    kind: str  # "node" or "service"
    pid: int | None  # None: not known, `why` says why
    why: str | None = None
    foreign: bool = False  # someone else's: read, never reset


def service_to_watch(name: str, pid: int | None) -> Watched:
    """A service psbench started (its pid), or one already running on the host that the
    run uses (a per-host daemon someone else started): found by its program name when it is the
    only one."""
    if pid is not None:
        return Watched(name, "service", pid)
    found = pids_named(name)
    if len(found) == 1:
        return Watched(name, "service", found[0], foreign=True)
    return Watched(
        name,
        "service",
        None,
        f"not started by psbench and {len(found)} processes named {name} run"
        if found
        else "not started by psbench and not found running",
    )


@dataclass
class WindowSampler:
    """Reads every watched process at the first WINDOW begin and at the last WINDOW end.
    processes() lists what to watch at that moment (late joiners appear once started)."""

    processes: Callable[[], list["Watched"]]
    begun: dict[str, tuple[Watched, Snapshot | None, bool]] = field(default_factory=dict)
    ended: dict[str, tuple[Watched, Snapshot | None, int | None]] = field(default_factory=dict)
    begins: int = 0
    ends: int = 0

    def on_window(self, edge: str, ends_expected: int = 1) -> None:
        """The first "begin" reads every process (the senders wait meanwhile); the
        ends_expected-th "end" (the last process to end its measurement) again."""
        if edge == "begin":
            self.begins += 1
            if self.begins == 1:
                for w in self.processes():
                    if w.pid is not None:
                        tree = w.kind == "service"  # a broker's runtime may be a child
                        reset = tree and not w.foreign and reset_peak(w.pid, tree)
                        self.begun[w.name] = (w, snapshot(w.pid, tree), reset)
        elif edge == "end" and self.begins:
            self.ends += 1
            if self.ends >= ends_expected:
                for w in self.processes():
                    if w.pid is not None:
                        tree = w.kind == "service"
                        self.ended[w.name] = (
                            w,
                            snapshot(w.pid, tree),
                            peak_rss_kb(w.pid, tree),
                        )

    def result(self, messages: int | None, unit: str, node_window_ns: int | None) -> dict:
        """run.json's resources block; {"measured": False, "why": ...} when the window
        was not seen whole."""
        if not self.begins or not self.ended:
            return {
                "measured": False,
                "why": "the measurement window did not end (run stopped or failed)"
                if self.begins
                else "no sender announced its measurement window",
            }
        processes = []
        for w in self.processes():
            before = self.begun.get(w.name)
            after = self.ended.get(w.name)
            entry = {
                "name": w.name,
                "kind": w.kind,
                "pid": w.pid,
                "started_by_psbench": w.kind == "node" or not w.foreign,
            }
            if w.pid is None or after is None or after[1] is None:
                entry["measured"] = False
                entry["why"] = w.why if w.pid is None else "gone before the window ended"
                processes.append(entry)
                continue
            snap_before = before[1] if before else None
            entry.update(
                measured=True,
                **difference(snap_before, after[1]),
                peak_rss_kb=after[2],
                peak_rss_scope="window" if before and before[2] else "process lifetime",
            )
            processes.append(entry)
        starts = [snap.at_ns for _, snap, _ in self.begun.values() if snap]
        ends = [snap.at_ns for _, snap, _ in self.ended.values() if snap]
        window = max(ends) - min(starts) if starts and ends else None
        return {
            "measured": True,
            "messages": messages,
            "per": unit,
            "sampled_window_ns": window,
            "node_window_ns": node_window_ns,
            "processes": processes,
            **totals(processes, messages, window),
        }


def totals(processes: list[dict], messages: int | None, window_ns: int | None) -> dict:
    """CPU per message and utilisation of the nodes, of the services, and of all."""
    found = {}
    for scope, kinds in (
        ("nodes", ("node",)),
        ("services", ("service",)),
        ("all", ("node", "service")),
    ):
        measured = [p for p in processes if p.get("measured") and p["kind"] in kinds]
        cpu = sum(p["cpu_ns"] for p in measured) if measured else None
        switches = (
            sum(p["voluntary_switches"] + p["involuntary_switches"] for p in measured)
            if measured
            else None
        )
        found[scope] = {
            "cpu_ns": cpu,
            "cpu_ns_per_message": cpu / messages if cpu is not None and messages else None,
            "utilisation": cpu / window_ns if cpu is not None and window_ns else None,
            "switches_per_message": switches / messages
            if switches is not None and messages
            else None,
            "peak_rss_kb": max((p["peak_rss_kb"] or 0 for p in measured), default=None)
            if measured
            else None,
        }
    return found


def window_messages(kind: str, summaries: dict) -> tuple[int | None, str, int | None]:
    """The messages of the window and what one is: ping's round trips, or what the
    publishers wrote (every subscriber's delivery of it included); and the senders'
    window on their own clock (first start to last end)."""
    role = "ping" if kind == "ping" else "pub"
    senders = [s for s in summaries.values() if s.get("role") == role]
    if not senders:
        return None, role, None
    counts = [(s.get("counts") or {}).get("sent") for s in senders]
    timing = [s.get("timing") or {} for s in senders]
    starts = [t.get("measure_start_ns") for t in timing if t.get("measure_start_ns")]
    ends = [t.get("measure_end_ns") for t in timing if t.get("measure_end_ns")]
    window = max(ends) - min(starts) if starts and ends else None
    messages = sum(counts) if all(c is not None for c in counts) else None
    return messages, ("round trip" if kind == "ping" else "message published"), window
