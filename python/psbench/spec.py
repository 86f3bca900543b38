"""One measurement as the user asked for it, and the node command lines that run it."""

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Roles per measurement kind, in the order their processes are started: the receiving
# side first, though the stdio barrier makes the order irrelevant for correctness.
ROLES = {"ping": ("pong", "ping"), "pubsub": ("sub", "pub")}


@dataclass
class MeasureSpec:
    kind: str                     # "ping" or "pubsub"
    driver: str
    driver_path: Path
    size: int
    count: int | None = None      # None with duration: the node's default count
    duration: float | None = None
    warmup: int | None = None     # None: the node's default
    rate: float | None = None     # None: the node's default (closed loop)
    placement: str = "inter"
    notify: str | None = None
    reliability: str | None = None
    durability: str | None = None
    history: str | None = None
    transport: str | None = None
    options: list[str] = field(default_factory=list)     # "KEY=VALUE"
    cpus: dict[str, int] = field(default_factory=dict)   # role -> CPU
    fifo: int | None = None
    mlockall: bool = False
    dma_latency: bool = False
    check_pattern: bool = False
    loan: bool = False
    spin_send: bool = False
    timeout: float = 600.0
    match_timeout: float | None = None
    sample_timeout: float | None = None
    idle_timeout: float | None = None

    @property
    def roles(self) -> tuple[str, ...]:
        return ROLES[self.kind]

    def process_roles(self) -> list[list[str]]:
        """inter: one process per role; intra: one process running all roles as threads."""
        if self.placement == "intra":
            # The node takes the roles in their natural order, e.g. ping,pong.
            return [list(reversed(self.roles))]
        return [[role] for role in self.roles]

    def to_json(self) -> dict:
        value = asdict(self)
        value["driver_path"] = str(self.driver_path)
        return value


def default_cpus(kind: str, placement: str = "inter") -> dict[str, int]:
    """One role per core, in role order over the CPUs this process may use (on two
    cores: the receiving role on the first, the sending role on the second), so that
    the two sides of a run never compete for one core. Recorded with every result."""
    del placement  # role threads of one process are pinned the same way
    allowed = sorted(os.sched_getaffinity(0))
    return {role: allowed[i % len(allowed)] for i, role in enumerate(ROLES[kind])}


def _seconds(value: float) -> str:
    return f"{value:g}"


def node_argv(node: Path, spec: MeasureSpec, roles: list[str], run_id: str,
              out_dir: Path, barrier: str) -> list[str]:
    """The argv list for one node process. Settings left at None are not passed, so the
    node's own defaults (docs/node.md) apply and the summary records them."""
    argv = [str(node), "--driver", str(spec.driver_path), "--role", ",".join(roles),
            "--out", str(out_dir), "--run-id", run_id, "--size", str(spec.size),
            "--barrier", barrier, "--timeout", _seconds(spec.timeout)]
    if spec.count is not None:
        argv += ["--count", str(spec.count)]
    if spec.duration is not None:
        argv += ["--duration", _seconds(spec.duration)]
    if spec.warmup is not None:
        argv += ["--warmup", str(spec.warmup)]
    if spec.rate is not None:
        argv += ["--rate", _seconds(spec.rate)]
    for flag, value in (("--notify", spec.notify), ("--reliability", spec.reliability),
                        ("--durability", spec.durability), ("--history", spec.history),
                        ("--transport", spec.transport)):
        if value is not None:
            argv += [flag, value]
    for option in spec.options:
        argv += ["--option", option]
    for role in roles:
        if role in spec.cpus:
            argv += ["--cpu", f"{role}={spec.cpus[role]}"]
    if spec.fifo is not None:
        argv += ["--fifo", str(spec.fifo)]
    for flag, on in (("--mlockall", spec.mlockall), ("--dma-latency", spec.dma_latency),
                     ("--check-pattern", spec.check_pattern), ("--loan", spec.loan),
                     ("--spin-send", spec.spin_send)):
        if on:
            argv.append(flag)
    for flag, value in (("--match-timeout", spec.match_timeout),
                        ("--sample-timeout", spec.sample_timeout),
                        ("--idle-timeout", spec.idle_timeout)):
        if value is not None:
            argv += [flag, _seconds(value)]
    return argv
