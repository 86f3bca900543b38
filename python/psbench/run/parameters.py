"""Every parameter of a run, defined once.

A row names a MeasureSpec field, which is also the experiment file's key and, spelt
--with-dashes, the command line's option; it says which kinds of run take it, how a value
is read (base/options.py's type functions, which say what was expected), psbench's
default and its help. From this table cli/run_options.py builds the options of `psbench
ping|pubsub|ratesearch|graph run` and the MeasureSpec they ask for, and
run/experiment/params.py the keys of experiment files, so that a value is valid in a
file exactly when it is valid as an argument, with the same message.
"""

from collections.abc import Callable
from dataclasses import dataclass

from psbench.base import options as types
from psbench.run.spec import ROLES

KINDS = tuple(ROLES)  # ping, pubsub, graph
SENDING = ("ping", "pubsub")  # runs of psbench's own roles, not of a graph's modules
GRAPH_DURATION_S = 10.0  # a graph run without --count or --duration


class ByKind(dict):
    """A default, help or metavar that differs by kind of run: kind -> value; `other`
    for the kinds not named."""

    def of(self, kind: str):
        return self[kind] if kind in self else self.get("other")


def _of(value, kind: str):
    return value.of(kind) if isinstance(value, ByKind) else value


@dataclass(frozen=True)
class Param:
    name: str  # MeasureSpec's field, the file's key; --name-with-dashes unless flag says
    kinds: tuple[str, ...]  # the kinds of run that take it
    help: str | ByKind
    parse: Callable[[str], object] | None = None  # text -> value; ArgumentTypeError if bad
    choices: tuple[str, ...] | None = None
    default: object = None  # psbench's default; None: the node's own (or unset)
    metavar: str | ByKind | None = None
    # value: one value; flag: on when given; optional: on, or the one value parse takes
    # (--loan, --loan auto); repeat: a list on the command line (--option K=V --option
    # ...), a mapping in files (options, cpus, hosts, place), None unless given.
    shape: str = "value"
    flag: str | None = None  # the option when not --name-with-dashes
    dest: str | None = None  # the command line's attribute when not name
    group: str | None = None  # options of one group exclude each other
    required: bool = False  # on the command line
    cli: bool = True  # an option of the command line
    file: bool = True  # a key of experiment files (False: a test hook of the CLI)
    file_help: str | None = None  # what a file writes, where it differs from the option

    @property
    def option(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def attribute(self) -> str:
        return self.dest or self.name

    def default_for(self, kind: str):
        if self.shape == "repeat":
            return None
        if self.shape in ("flag", "optional"):
            return False
        return _of(self.default, kind)

    def help_for(self, kind: str) -> str:
        return _of(self.help, kind)

    def metavar_for(self, kind: str) -> str | None:
        return _of(self.metavar, kind)


TABLE: tuple[Param, ...] = (
    Param(
        "kind", KINDS, "ping (round trip), pubsub (one way) or graph (an application graph)",
        choices=KINDS, cli=False,
    ),
    Param(
        "driver", KINDS, "driver name (see `psbench drivers`) or path to a .so",
        metavar="NAME", required=True,
    ),
    Param(
        "graph", ("graph",), "the application graph (docs/graphs.md), e.g. graphs/cwalker.yaml",
        metavar="GRAPH.yaml", required=True,
    ),
    Param(
        "mapping", ("graph",),
        "which of the graph's mappings places its modules (default: its first)", metavar="NAME",
    ),
    Param(
        "size", KINDS,
        ByKind(
            graph="every topic's message size (default: each topic's own, from the graph)",
            other="message size in bytes incl. the 32-byte header (64, 16K, 16KiB; default 64)",
        ),
        types.message_size, default=ByKind(graph=None, other=64), metavar="BYTES",
    ),
    Param(
        "count", KINDS,
        ByKind(graph="activations of each source module",
               other="measured samples (node default 10000)"),
        types.positive_int, metavar="N", group="amount",
    ),
    Param(
        "duration", KINDS,
        ByKind(graph=f"measure for S seconds (default {GRAPH_DURATION_S:g})",
               other="measure for S seconds"),
        types.positive_float, default=ByKind(graph=GRAPH_DURATION_S), metavar="S",
        group="amount",
    ),
    Param(
        "warmup", KINDS,
        ByKind(
            graph="first activations of each source whose data is not recorded",
            other="warm-up messages, not recorded (node default for ping and pub: 1000, at "
            "most one second's worth of --rate)",
        ),
        types.non_negative_int, metavar="N",
    ),
    Param(
        "rate", SENDING,
        ByKind(
            ping="open loop at HZ pings/s; 0 = closed loop (default)",
            pubsub="messages/s each publisher sends (default 1000); 0 = back to back, as "
            "fast as the writer accepts them",
        ),
        types.non_negative_float, default=ByKind(pubsub=1000.0), metavar="HZ",
    ),
    Param(
        "sample_timeout", ("ping",), "closed loop: seconds to wait for one echo (node default 1)",
        types.positive_float, metavar="S",
    ),
    Param(
        "reply_size", ("ping",),
        "pong echoes only the first BYTES (>= 32, header intact) of each message, an "
        "acknowledgement (default: the whole message)",
        types.reply_size, metavar="BYTES",
    ),
    Param(
        "idle_timeout", ("pubsub",), "sub ends after S s without data (node default 5)",
        types.positive_float, metavar="S",
    ),
    Param(
        "subscribers", ("pubsub",),
        "N subscriber processes per topic, each its own reader (default 1); inter-process "
        "placement only",
        types.positive_int, default=1, metavar="N",
    ),
    # Unset (not 1) by default: a run's parameters, labels and identity (--resume) stay
    # what they were before these settings existed.
    Param(
        "publishers", ("pubsub",),
        "M publisher processes per topic, each its own writer (default 1); inter-process "
        "placement only",
        types.positive_int, metavar="M",
    ),
    Param(
        "topics", ("pubsub",),
        "T topics at once, each with its own subscribers and publishers (default 1); "
        "inter-process placement only",
        types.positive_int, metavar="T",
    ),
    Param(
        "relays", ("pubsub",),
        "1: a relay process between pub and sub (pub -> relay -> sub, the three-process "
        "echo); sub records the one-way latency over both hops (default 0); one topic, one "
        "publisher, one subscriber, inter-process placement, no --echo-every",
        types.relay_count, metavar="0|1",
    ),
    Param(
        "latency_from", ("pubsub",),
        "one-way latency from the publisher's intended send time (its schedule: a late send "
        "counts as late; node default) or from the moment its write began (send), as a "
        "timestamp taken at write measures it",
        choices=("intended", "send"),
    ),
    Param(
        "restart_broker", ("pubsub",),
        "kill the run's broker (SIGKILL) AT seconds after the measurement begins and start "
        "it again DOWN seconds later on its port, configuration and data; the run says what "
        "arrived, what was lost and when deliveries came back (with --durability "
        "persistent: what the broker kept)",
        types.restart, metavar="AT:DOWN",
    ),
    Param(
        "late_join", ("pubsub",),
        "one more subscriber (late-sub), started S seconds after the start while publishing "
        "goes on (needs --duration longer than S): it reports which samples written before "
        "it joined it received, the history its durability (transient_local, keep_last:N) "
        "kept for it",
        types.positive_float, metavar="S",
    ),
    Param(
        "drain_timeout", ("pubsub",),
        "after its last message, a publisher waits up to S seconds for the middleware to "
        "deliver what it still queues, before its end marker (node default 10)",
        types.non_negative_float, metavar="S",
    ),
    Param(
        "inject", ("pubsub",),
        "test hook: the publisher drops, duplicates, reorders or delays one of its own "
        "messages (drop=SEQ, dup=SEQ, reorder=SEQ, delay=SEQ:US), repeatable; for checking "
        "psbench's accounting against known answers",
        types.fault, metavar="FAULT", shape="repeat", file=False,
    ),
    Param(
        "echo_every", ("pubsub",),
        "latency under load: the first subscriber echoes every Nth sample of the first "
        "publisher, which records the round trip (pub.samples)",
        types.positive_int, metavar="N",
    ),
    Param(
        "max_samples", KINDS,
        ByKind(
            graph="records kept per stream of each module (node default: 2000000)",
            other="samples kept per receiver (node default: --count, or 2000000 for "
            "duration runs); it keeps the first N arrivals and counts the rest, and the "
            "report says which part of the run the percentiles describe",
        ),
        types.positive_int, metavar="N",
    ),
    Param("spin_send", SENDING, "open loop: the same as --send-wait spin", shape="flag"),
    Param(
        "send_wait", SENDING,
        "open loop: how the sender waits for each due time: sleep until --send-spin-us "
        "before it, then spin (hybrid, node default), sleep only, or spin only; a sender "
        "that is behind never waits",
        choices=("hybrid", "sleep", "spin"),
    ),
    Param(
        "send_spin_us", SENDING,
        "hybrid send wait: spin this long before each due time (node default 100)",
        types.non_negative_float, metavar="US",
    ),
    Param(
        "placement", SENDING,
        "inter: one process per role (default); intra: one process, roles as threads",
        choices=("inter", "intra"), default="inter",
    ),
    Param(
        "notify", KINDS, "how the reader learns of data (node default wait)",
        choices=("listener", "wait", "poll"),
    ),
    Param(
        "reliability", KINDS, "node default best_effort", choices=("best_effort", "reliable")
    ),
    Param(
        "durability", KINDS, "node default volatile",
        choices=("volatile", "transient_local", "persistent"),
    ),
    Param(
        "history", KINDS, "history QoS (node default: the driver's own)", types.history,
        metavar="keep_last:N|keep_all",
    ),
    Param("transport", KINDS, "one of the driver's transports", metavar="NAME"),
    Param(
        "options", KINDS, "driver option, repeatable", types.key_value, metavar="KEY=VALUE",
        shape="repeat", flag="--option", dest="option",
        file_help="driver options KEY: VALUE, passed through untouched",
    ),
    Param(
        "loan", SENDING,
        "use the driver's loaned (zero-copy) write; `--loan auto`: where the driver has "
        "one, else copy (recorded per run)",
        types.loan_mode, metavar="auto", shape="optional",
    ),
    Param("check_pattern", SENDING, "fill and verify the payload", shape="flag"),
    Param(
        "security", SENDING,
        "secure the run: tls (brokers), or auth, access, encrypt, encrypt-payload, "
        "encrypt-submessage (DDS Security): the modes the driver's manifest lists; psbench "
        "makes a CA and every credential for it (default none; docs/security.md)",
        metavar="MODE",
    ),
    Param(
        "security_fault", SENDING,
        "test hook: the receiving processes get bad credentials (another CA's certificate, "
        "an expired one, or permissions that deny the topics): the run must fail and they "
        "must receive nothing",
        choices=("wrong-ca", "expired", "deny"), file=False,
    ),
    Param(
        "cpus", KINDS,
        ByKind(
            graph="pin a module's process to a CPU (beyond its mapping's), repeatable",
            ping="pin a role (ping, pong) to a CPU, repeatable",
            pubsub="pin a role (pub, sub) to a CPU, repeatable",
        ),
        types.cpu_assignment, metavar=ByKind(graph="MODULE=CPU", other="ROLE=CPU"),
        shape="repeat", flag="--cpu", dest="cpu", file_help="ROLE: CPU pinning, or none",
    ),
    Param(
        "hosts", KINDS,
        "an emulated host and its link (rate, delay, jitter, loss, mtu), e.g. "
        "b:rate=100mbit,delay=1ms (needs root), or a real machine over SSH, e.g. "
        "b:ssh=user@10.0.0.7[,address=10.0.0.7]; repeatable (docs/network.md)",
        types.host_declaration, metavar="NAME[:PROP=VALUE,...]", shape="repeat",
        flag="--host", dest="host_declarations",
        file_help="hosts HOST: {rate, delay, jitter, loss, mtu} (emulated), or HOST: {ssh: "
        "TARGET, address: ADDRESS} (a real machine; docs/network.md)",
    ),
    # A graph's mapping places its modules.
    Param(
        "place", SENDING,
        "put a role on a --host, e.g. pong=b; repeatable (a role given twice spreads its "
        "processes over both); broker=HOST places the broker (default: the first host)",
        types.role_on_host, metavar="ROLE=HOST", shape="repeat", dest="role_hosts",
        file_help="ROLE: HOST, or ROLE: [HOST, ...]",
    ),
    Param(
        "pin", KINDS,
        "what --cpu and --fifo apply to: role (node default) = the role thread, once its "
        "endpoints are open, the middleware's own threads keeping every CPU and "
        "SCHED_OTHER; process = also every thread of the node confined to its roles' CPUs; "
        "none = no pinning at all",
        choices=("role", "process", "none"),
    ),
    Param(
        "fifo", KINDS, "run the roles under SCHED_FIFO at PRIO (1..99)", types.fifo_priority,
        metavar="PRIO",
    ),
    Param("mlockall", KINDS, "lock the nodes' memory", shape="flag"),
    Param(
        "dma_latency", KINDS, "hold /dev/cpu_dma_latency at 0 during the run", shape="flag"
    ),
    Param(
        "match_timeout", KINDS, "seconds to wait for the peer (node default 30)",
        types.positive_float, metavar="S",
    ),
    Param(
        "timeout", KINDS, "the whole run, in seconds (default 600)", types.positive_float,
        default=600.0, metavar="S",
    ),
)  # fmt: skip

BY_NAME = {param.name: param for param in TABLE}


def of_kind(kind: str) -> list[Param]:
    return [param for param in TABLE if kind in param.kinds]


@dataclass(frozen=True)
class Criterion:
    """One criterion of a rate search: an option of `psbench ratesearch` and a key of an
    experiment's `search`."""

    name: str
    help: str
    parse: Callable[[str], object]
    default: object
    metavar: str
    example: str  # a value, for a file's message

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")


SEARCH: tuple[Criterion, ...] = (
    Criterion(
        "max_loss", "a step passes with loss at most PERCENT %% (default 0)",
        types.non_negative_float, 0.0, "PERCENT", "0.1",
    ),
    Criterion(
        "max_p99", "... and p99 one-way latency at most DURATION (e.g. 500us, 2ms; default 1ms)",
        types.duration_ns, 1e6, "DURATION", "1ms",
    ),
    Criterion(
        "start_rate", "first rate tried (default 1000)", types.positive_float, 1000.0, "HZ",
        "1000",
    ),
    Criterion(
        "max_rate", "highest rate tried (default: no limit)", types.positive_float, None, "HZ",
        "100000",
    ),
    Criterion(
        "precision", "stop when lowest fail / highest pass <= 1 + FRACTION (default 0.05)",
        types.precision, 0.05, "FRACTION", "0.05",
    ),
    Criterion(
        "max_steps",
        "at most N rates tried (default 12); each passing rate also runs its confirmations",
        types.positive_int, 12, "N", "12",
    ),
    Criterion(
        "confirm",
        "a rate passes only when it passes K runs (default 3): a passing step is rerun until "
        "it passed K times, and one failure fails it",
        types.positive_int, 3, "K", "3",
    ),
)  # fmt: skip

_UNSET = object()


def _value_text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def file_term(key: str, value=_UNSET) -> str:
    """A setting as an experiment file writes it: `placement`, `placement: inter`."""
    return key if value is _UNSET else f"{key}: {_value_text(value)}"


def cli_term(key: str, value=_UNSET) -> str:
    """A setting as the command line writes it: `--placement`, `--placement inter`."""
    param = BY_NAME.get(key)
    option = param.option if param is not None else "--" + key.replace("_", "-")
    return option if value is _UNSET else f"{option} {_value_text(value)}"
