"""One measurement as the user asked for it, and the node command lines that run it."""

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from psbench.run import placement
from psbench.run.graph.plans import graph_of, graph_plans, largest_message
from psbench.run.node_plan import NodePlan
from psbench.run.security.session import secured, session

# Roles per measurement kind, in the order their processes are started: the receiving
# side first, though the stdio barrier makes the order irrelevant for correctness.
ROLES = {"ping": ("pong", "ping"), "pubsub": ("sub", "pub"), "graph": ("module",)}


LATE_JOINER = "late-sub"


def process_names(role: str, count: int) -> list[str]:
    """One subscriber keeps the plain role name (its files stay sub.json, sub.samples,
    as before fan-out); several are sub-1 ... sub-N."""
    return [role] if count == 1 else [f"{role}-{i}" for i in range(1, count + 1)]


def inter_plans(
    kind: str,
    subscribers: int = 1,
    publishers: int = 1,
    topics: int = 1,
    echo: bool = False,
    relays: int = 0,
    late_join: float | None = None,
) -> list[NodePlan]:
    """The processes of an inter-process run, in start order: per topic its subscribers
    (sub, or sub-1..sub-N), then its publishers (pub, or pub-1..pub-M); with several
    topics each name gets the prefix t1-, t2-, ... and the topic data1, data2, ....
    pub-K writes as writer K-1; the echo (latency under load) is pub-1's and the first
    subscriber's of each topic. relays=1 (one topic, one pub, one sub): sub on
    data_relay, relay (data -> data_relay), pub on data: the three-process echo."""
    if kind != "pubsub":
        return [NodePlan(role, [role]) for role in ROLES[kind]]
    if relays:
        return [
            NodePlan("sub", ["sub"], "data_relay"),
            NodePlan("relay", ["relay"]),
            NodePlan("pub", ["pub"]),
        ]
    plans = []
    for t in range(1, topics + 1):
        prefix, topic = (f"t{t}-", f"data{t}") if topics > 1 else ("", None)
        for i, name in enumerate(process_names("sub", subscribers)):
            plans.append(NodePlan(prefix + name, ["sub"], topic, None, echo and i == 0))
        for i, name in enumerate(process_names("pub", publishers)):
            plans.append(
                NodePlan(
                    prefix + name, ["pub"], topic, i if publishers > 1 else None, echo and i == 0
                )
            )
    if late_join is not None:
        plans.append(NodePlan(LATE_JOINER, ["sub"], start_after=late_join))
    return plans


@dataclass
class MeasureSpec:
    kind: str  # "ping", "pubsub" or "graph"
    driver: str  # its name, or with a driver per role their label (run/role_drivers.py)
    driver_path: Path  # the library; with a driver per role, the measuring role's
    size: int | None  # a graph: None keeps each topic's own
    count: int | None = None  # None with duration: the node's default count
    duration: float | None = None
    warmup: int | None = None  # None: the node's default
    rate: float | None = None  # None: the node's default (closed loop)
    placement: str = "inter"
    notify: str | None = None
    reliability: str | None = None
    durability: str | None = None
    history: str | None = None
    transport: str | None = None
    options: list[str] = field(default_factory=list)  # "KEY=VALUE"
    cpus: dict[str, int] = field(default_factory=dict)  # role -> CPU
    fifo: int | None = None
    pin: str | None = None  # role (node default), process or none
    mlockall: bool = False
    dma_latency: bool = False
    check_pattern: bool = False
    loan: bool | str = False  # True, False or "auto" (measure.loan_mode resolves it)
    spin_send: bool = False  # the same as send_wait "spin" (kept for older files)
    send_wait: str | None = None  # open loop: hybrid (node default), sleep or spin
    send_spin_us: float | None = None  # hybrid: spin this long before each due time
    drain_timeout: float | None = None  # pub: wait for the driver to drain (node default 10)
    inject: list[str] = field(default_factory=list)  # pub: test faults, e.g. "drop=5"
    security: str | None = None  # a mode of the driver's manifest; None: none
    security_fault: str | None = None  # test hook: bad credentials for the receivers
    timeout: float = 600.0
    match_timeout: float | None = None
    sample_timeout: float | None = None
    idle_timeout: float | None = None
    subscribers: int = 1  # pubsub: sub processes per topic, each its own reader
    publishers: int = 1  # pubsub: pub processes per topic, each its own writer
    topics: int = 1  # pubsub: topics, each with its own subs and pubs
    echo_every: int | None = None  # pubsub: echo every Nth sample (latency under load)
    reply_size: int | None = None  # ping: pong echoes only the first N bytes (an ack)
    latency_from: str | None = None  # pubsub: "intended" (node default) or "send"
    relays: int | None = None  # pubsub: 1 = pub -> relay -> sub (None/0: pub -> sub)
    max_samples: int | None = None  # duration runs: samples kept (None: node default)
    late_join: float | None = None  # pubsub: one more subscriber, S s after the start
    restart_broker: str | None = None  # pubsub: "AT:DOWN", the broker killed and restarted
    graph: str | None = None  # graph: the graph file (docs/graphs.md)
    mapping: str | None = None  # graph: which of its mappings
    # Emulated hosts (docs/network.md): host -> its link in the experiment's words, and
    # role or process name -> host (a list spreads that role's processes over hosts).
    hosts: dict[str, dict] = field(default_factory=dict)
    place: dict[str, str | list[str]] = field(default_factory=dict)
    # A driver per role (cross-vendor interop): role -> its library; empty: every
    # process loads driver_path.
    role_drivers: dict[str, str] = field(default_factory=dict)
    # Settings psbench chose for the run where the user left them unset, and why
    # (e.g. history keep_all for a reliable run as fast as possible).
    auto: dict[str, str] = field(default_factory=dict)

    @property
    def roles(self) -> tuple[str, ...]:
        return ROLES[self.kind]

    def processes(self) -> list[NodePlan]:
        """inter: one process per role, N of them for sub; intra: one process running all
        roles as threads; a graph: one process per module."""
        if self.kind == "graph":
            return graph_plans(self)
        if self.placement == "intra":
            # The node takes the roles in their natural order, e.g. ping,pong.
            roles = list(reversed(self.roles))
            return [NodePlan("+".join(roles), roles, echo=self.echo_every is not None)]
        return inter_plans(
            self.kind,
            self.subscribers,
            self.publishers,
            self.topics,
            self.echo_every is not None,
            self.relays or 0,
            self.late_join,
        )

    def driver_of(self, plan: NodePlan) -> str:
        """The library the process loads: its role's with a driver per role."""
        return str(self.role_drivers.get(plan.roles[0], self.driver_path))

    def libraries(self) -> list[str]:
        """Every driver library the run loads, the measuring role's first."""
        return list(dict.fromkeys([str(self.driver_path), *self.role_drivers.values()]))

    def to_json(self) -> dict:
        """The settings as run; auto (why psbench chose some) goes beside it in run.json,
        so that a run's settings hold settings only."""
        value = asdict(self)
        value["driver_path"] = str(self.driver_path)
        del value["auto"]
        return value


def default_cpus(
    kind: str,
    placement: str = "inter",
    subscribers: int = 1,
    publishers: int = 1,
    topics: int = 1,
    relays: int = 0,
) -> dict[str, int]:
    """One process per core, in start order over the CPUs this process may use (on two
    cores: the receiving role on the first, the sending role on the second), so that
    the two sides of a run never compete for one core. With more processes than CPUs
    (fan-out) they go round-robin: the run is oversubscribed, and run.json says so
    (cpu_sharing). Several topics: topic by topic, its subscribers then its publishers.
    Recorded with every result."""
    del placement  # role threads of one process are pinned the same way
    allowed = sorted(os.sched_getaffinity(0))
    names = [
        plan.name for plan in inter_plans(kind, subscribers, publishers, topics, relays=relays or 0)
    ]
    return {name: allowed[i % len(allowed)] for i, name in enumerate(names)}


def cpu_of(spec: MeasureSpec, name: str, role: str) -> int | None:
    """A process's CPU: pinned by its own name (sub-2, t2-pub) or by its role (sub: all
    subs)."""
    return spec.cpus.get(name, spec.cpus.get(role))


def cpu_sharing(spec: MeasureSpec) -> dict:
    """How many roles (each a process, or a thread of an intra node) share the CPUs:
    pinned, the busiest pinned CPU counts; unpinned, roles over the CPUs psbench may
    use. oversubscribed is the roles per CPU when above 1 (fan-out on few cores measures
    contention too), else null. spinning_per_cpu: the same count for the roles that keep
    their CPU busy while they wait (busy_waits), when above 1: each waits for the other's
    time slice to end, so the figures are the scheduler's quantum, not the middleware."""
    units = [
        (cpu_of(spec, plan.name, role), busy_waits(spec, plan, role))
        for plan in spec.processes()
        for role in plan.roles
    ]
    per_cpu, cpus, pinned = _per_cpu([cpu for cpu, _ in units])
    spinning = [cpu for cpu, spins in units if spins]
    spinning_per_cpu = _per_cpu(spinning)[0] if spinning else 0
    return {
        "roles": len(units),
        "cpus": cpus,
        "pinned": pinned,
        "oversubscribed": per_cpu if per_cpu > 1 else None,
        "spinning_per_cpu": spinning_per_cpu if spinning_per_cpu > 1 else None,
    }


def _per_cpu(units: list[int | None]) -> tuple[float, int, bool]:
    """(units on the busiest CPU, or per CPU when not all pinned; CPUs; all pinned)."""
    if all(cpu is not None for cpu in units):
        return max(units.count(cpu) for cpu in set(units)), len(set(units)), True
    cpus = len(os.sched_getaffinity(0))
    return len(units) / cpus, cpus, False


# Roles that wait for a message from another role (a publisher only for its echoes).
_RECEIVERS = ("ping", "pong", "sub", "relay")


def busy_waits(spec: MeasureSpec, plan: NodePlan, role: str) -> bool:
    """Whether a role keeps its CPU busy while it waits: a receiver (any graph module)
    with notify poll, an open-loop publisher that spins to its due times."""
    receives = spec.kind == "graph" or role in _RECEIVERS or (role == "pub" and plan.echo)
    spins_to_send = (
        role == "pub" and bool(spec.rate) and (spec.send_wait == "spin" or spec.spin_send)
    )
    return (spec.notify == "poll" and receives) or spins_to_send


def _seconds(value: float) -> str:
    return f"{value:g}"


def run_topics(spec: MeasureSpec) -> list[str]:
    """Every topic of a run with topics of its own naming, in one order for every process
    (the node's --run-topics): a driver gives each its own port by its place in the list,
    where hashed names could share one. A graph's topics in file order; several pubsub
    topics data1..dataT, then their echoes. Empty for the node's fixed topics (ping, pong,
    data and its echo or relay), which drivers tell apart without a list."""
    if spec.kind == "graph":
        return list(graph_of(spec).topics)
    if spec.kind != "pubsub" or spec.topics <= 1:
        return []
    data = [f"data{t}" for t in range(1, spec.topics + 1)]
    return data + ([f"{t}_echo" for t in data] if spec.echo_every is not None else [])


def node_argv(
    node: Path,
    spec: MeasureSpec,
    plan: NodePlan,
    run_id: str,
    out_dir: Path,
    barrier: str,
    security_dir: str | None = None,
) -> list[str]:
    """The argv list for one node process. Settings left at None are not passed, so the
    node's own defaults (docs/node.md) apply and the summary records them. security_dir:
    where its credentials are, when not in this psbench's own folder (a real machine)."""
    # A late joiner starts after GO: it takes no part in the barrier.
    argv = [
        str(node),
        "--driver",
        spec.driver_of(plan),
        "--role",
        ",".join(plan.roles),
        "--out",
        str(out_dir),
        "--run-id",
        run_id,
        # A graph's modules: its largest message (each output has its own size).
        "--size",
        str(largest_message(spec)),
        "--barrier",
        "none" if plan.start_after is not None else barrier,
        "--timeout",
        _seconds(spec.timeout),
    ]
    argv += _process_args(spec, plan)
    argv += _traffic_args(spec, plan.roles)
    argv += _middleware_args(spec, plan, run_id, security_dir)
    argv += _scheduling_args(spec, plan)
    for flag, value in (
        ("--match-timeout", spec.match_timeout),
        ("--sample-timeout", spec.sample_timeout),
        ("--idle-timeout", spec.idle_timeout),
    ):
        if value is not None:
            argv += [flag, _seconds(value)]
    return argv


def _process_args(spec: MeasureSpec, plan: NodePlan) -> list[str]:
    """The process's place among the run's: its name, how many readers and writers it
    waits for, its writer id, its topic, the echo it answers."""
    roles = plan.roles
    argv = []
    if plan.start_after is not None:
        argv.append("--late-join")
    if len(roles) == 1 and plan.name != roles[0] and roles != ["module"]:
        argv += ["--name", plan.name]  # a module's files are named by its --module
    if spec.subscribers > 1:
        # Every process: pub waits for N readers, and each one refuses a driver that
        # cannot have N readers of a topic (before a second reader fails to bind).
        argv += ["--subscribers", str(spec.subscribers)]
    if spec.publishers > 1:
        # Every process: sub waits for M writers and accounts per writer.
        argv += ["--publishers", str(spec.publishers)]
    if plan.writer_id is not None:
        argv += ["--writer-id", str(plan.writer_id)]
    if plan.topic is not None:
        argv += ["--topic", plan.topic]
    if topics := run_topics(spec):
        argv += ["--run-topics", ",".join(topics)]
    if plan.echo and spec.echo_every is not None:
        argv += ["--echo-every", str(spec.echo_every)]
    return argv


def _traffic_args(spec: MeasureSpec, roles: list[str]) -> list[str]:
    """What is sent and recorded: how much, how fast, how the sender waits, what the
    publisher does at the end or to itself (test faults)."""
    argv = []
    if spec.reply_size is not None:
        argv += ["--reply-size", str(spec.reply_size)]
    if spec.latency_from is not None and "sub" in roles:
        argv += ["--latency-from", spec.latency_from]
    for flag, value, text in (
        ("--count", spec.count, str),
        ("--duration", spec.duration, _seconds),
        ("--warmup", spec.warmup, str),
        ("--rate", spec.rate, _seconds),
        ("--max-samples", spec.max_samples, str),
    ):
        if value is not None:
            argv += [flag, text(value)]
    if spec.send_wait is not None:
        argv += ["--send-wait", spec.send_wait]
    if spec.send_spin_us is not None:
        argv += ["--send-spin-us", _seconds(spec.send_spin_us)]
    if "pub" in roles:
        if spec.drain_timeout is not None:
            argv += ["--drain-timeout", _seconds(spec.drain_timeout)]
        for fault in spec.inject:
            argv += ["--inject", fault]
    return argv


def _middleware_args(
    spec: MeasureSpec, plan: NodePlan, run_id: str, security_dir: str | None
) -> list[str]:
    """What the driver is given: QoS, transport, its options, the run's security."""
    argv = []
    for flag, value in (
        ("--notify", spec.notify),
        ("--reliability", spec.reliability),
        ("--durability", spec.durability),
        ("--history", spec.history),
        ("--transport", spec.transport),
    ):
        if value is not None:
            argv += [flag, value]
    for option in spec.options:
        argv += ["--option", option]
    if secured(spec.security):
        folder = security_dir or session().node_dir(run_id, plan.name)
        argv += ["--option", f"security={spec.security}", "--option", f"security_dir={folder}"]
    return argv


def _scheduling_args(spec: MeasureSpec, plan: NodePlan) -> list[str]:
    """Where and how the process runs: a module's own arguments, its host, CPUs,
    priority and pinning, memory, and the node's switches."""
    argv = list(plan.extra)
    argv += placement.node_args(spec, plan)
    for role in plan.roles:
        cpu = cpu_of(spec, plan.name, role)
        if cpu is not None:
            argv += ["--cpu", f"{role}={cpu}"]
    if spec.fifo is not None and "--fifo" not in plan.extra:  # a module may have its own
        argv += ["--fifo", str(spec.fifo)]
    if spec.pin is not None:
        argv += ["--pin", spec.pin]
    for flag, on in (
        ("--mlockall", spec.mlockall),
        ("--dma-latency", spec.dma_latency),
        ("--check-pattern", spec.check_pattern),
        ("--loan", spec.loan is True),
        ("--spin-send", spec.spin_send),
    ):
        if on:
            argv.append(flag)
    return argv
