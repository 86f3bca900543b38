"""Which host (emulated, or a real machine) each node process of a run is on (the spec's
`hosts` and `place`), what its node is told of the run's network (--address, --peer),
and what cannot be run so. docs/network.md."""

from psbench.hosts.emulated import address_of
from psbench.hosts.links import LinkShape, parse_shape, real_hosts, share_a_network

BROKER = "broker"  # place.broker: the host of the run's broker (when its driver has one)
# Roles of one kind or another: placing one a run does not have is no mistake in a sweep
# whose runs are of several kinds (a name that is no role at all still is).
OTHER_KINDS_ROLES = {"ping", "pong", "pub", "sub", "relay"}


def host_of(spec, plan) -> str | None:
    """The host of a node process: placed by its name (sub-2), else by its role; a list
    spreads a role's processes over its hosts in turn (sub-1 on the first, ...). None
    without hosts."""
    if not spec.hosts:
        return None
    where = spec.place.get(plan.name, spec.place.get(plan.roles[0]))
    if isinstance(where, list):
        number = plan.name.rsplit("-", 1)[-1]
        index = int(number) - 1 if number.isdigit() else 0
        return where[index % len(where)]
    return where


def broker_host(spec) -> str | None:
    """The host a run's broker runs on: place.broker, else the first host."""
    if not spec.hosts:
        return None
    return spec.place.get(BROKER, next(iter(spec.hosts)))


def calibration_pairs(spec, with_broker: bool) -> list[tuple[str, str]]:
    """The host pairs whose link a run's calibration measures: from the host of its
    first writer (ping or pub) to every other host the run uses (its broker's too)."""
    if not spec.hosts:
        return []
    plans = spec.processes()
    used = {host_of(spec, p) for p in plans} | ({broker_host(spec)} if with_broker else set())
    start = first_writer_host(spec)
    # Hosts on no common network cannot reach each other directly: nothing to measure.
    return [
        (start, host)
        for host in spec.hosts
        if host in used and host != start and share_a_network(spec.hosts[start], spec.hosts[host])
    ]


def first_writer_host(spec) -> str | None:
    """The host of the run's first writer (ping or pub): what links are calibrated from
    and clocks compared with."""
    plans = spec.processes()
    first = next((p for p in plans if p.roles[0] in ("ping", "pub")), plans[0])
    return host_of(spec, first)


def writer_hosts(spec, plan) -> dict[int, str]:
    """A subscriber's writers by writer id, each with its host: whose clock stamped its
    samples (behind a relay, the publisher's: the relay forwards the stamps)."""
    if plan.roles[0] != "sub":
        return {}
    plans = spec.processes()
    relayed = any(p.roles[0] == "relay" for p in plans)
    return {
        p.writer_id or 0: host_of(spec, p)
        for p in plans
        if p.roles[0] == "pub" and (relayed or p.topic == plan.topic)
    }


def addresses(spec) -> dict[str, str]:
    """Each host's address: a real machine's own (`address:`, filled in from its SSH
    connection when a run reaches it), else the emulated one, in the order the hosts
    were given (as EmulatedNetwork makes them)."""
    return {
        name: (link or {}).get("address") or address_of(i)
        for i, (name, link) in enumerate(spec.hosts.items())
    }


def flows(plan) -> tuple[set[str], set[str]]:
    """What a node process reads and writes (topics by their meaning, not the node's
    wire names): ping and pong; a subscriber its topic (and the echo when it echoes), a
    publisher the reverse; the relay between them."""
    role, data = plan.roles[0], plan.topic or "data"
    if role == "module":
        return set(plan.reads), set(plan.writes)
    echo = {"echo:" + data} if plan.echo else set()
    return {
        "ping": ({"pong"}, {"ping"}),
        "pong": ({"ping"}, {"pong"}),
        "relay": ({"data"}, {"data_relay"}),
        "sub": ({data}, echo),
        "pub": (echo, {data}),
    }[role]


def talks_to(a, b) -> bool:
    """Whether one of the processes writes what the other reads."""
    (a_reads, a_writes), (b_reads, b_writes) = flows(a), flows(b)
    return bool(a_writes & b_reads or b_writes & a_reads)


def node_args(spec, plan) -> list[str]:
    """--address (the process's host) and --peer for each host of a process it talks to,
    its own host included when one is there (a subscriber beside its publisher); nothing
    without hosts. Only those: a unicast writer sends each message to every peer, and a
    reader looks for its writer at every peer."""
    own = host_of(spec, plan)
    where = addresses(spec)
    if own not in where:
        return []  # no hosts, or a place problem() reports
    used = {host_of(spec, p) for p in spec.processes() if p.name != plan.name and talks_to(plan, p)}
    args = ["--address", where[own]]
    for host in spec.hosts:
        if host in used:
            args += ["--peer", where[host]]
    return args


def real(spec) -> bool:
    """Whether the run's hosts are real machines, reached over SSH (docs/network.md)."""
    return real_hosts(spec.hosts)


def shapes(spec) -> dict[str, LinkShape]:
    return {name: parse_shape(f"hosts.{name}", link or {}) for name, link in spec.hosts.items()}


def problem(spec) -> tuple[str, str] | None:
    """Why the run cannot be placed as asked: (the setting to blame, the message), or None."""
    if not spec.hosts:
        if spec.place:
            return "place", "place needs hosts: declare them, e.g. hosts: {a: {}, b: {}}"
        return None
    if spec.placement == "intra":
        return "placement", "one process is on one host: use placement: inter with hosts"
    names = {role for plan in spec.processes() for role in plan.roles}
    names |= {plan.name for plan in spec.processes()} | {BROKER}
    for role, where in spec.place.items():
        if role in OTHER_KINDS_ROLES - names:
            continue  # a sweep over kinds places ping and pub alike: each run takes its own
        if role not in names:
            return "place", f"place.{role}: not a role of this run; use {', '.join(sorted(names))}"
        if role == BROKER and isinstance(where, list):
            return "place", "place.broker: a run has one broker; give one host, e.g. broker: a"
        for host in where if isinstance(where, list) else [where]:
            if host not in spec.hosts:
                return "place", (
                    f"place.{role}: {host!r} is not one of the hosts ({', '.join(spec.hosts)})"
                )
    for plan in spec.processes():
        if host_of(spec, plan) is None:
            return "place", (
                f"place every role on a host: {plan.roles[0]} has none, e.g. "
                f"place: {{{plan.roles[0]}: {next(iter(spec.hosts))}}}"
            )
    return None
