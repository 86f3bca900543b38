"""Argument types and the options shared by `ping` and `pubsub`.

Each type function raises argparse.ArgumentTypeError with what was expected, so that
argparse prints "argument --size: ..." and exits 2.
"""

import argparse
import re

# K and M are binary (1K = 1024 bytes); "KB" is refused because it is ambiguous.
UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "m": 1024**2, "mib": 1024**2}


def size_bytes(text: str) -> int:
    """64, 16K, 16KiB, 1M."""
    match = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).lower() not in UNITS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size in bytes; use e.g. 64, 16K or 16KiB"
        )
    value = int(match.group(1)) * UNITS[match.group(2).lower()]
    if value <= 0:
        raise argparse.ArgumentTypeError("must be at least 1 byte (the node needs 32)")
    return value


# The node's message sizes: its 32-byte header up to 4 MiB (docs/node.md).
NODE_SIZE_RANGE = (32, 4 << 20)


def message_size(text: str) -> int:
    """--size: a size the node accepts, refused here before anything is created."""
    value = size_bytes(text)
    low, high = NODE_SIZE_RANGE
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(
            f"size {value} is out of range; use {low} (header only) to {high} bytes"
        )
    return value


def reply_size(text: str) -> int:
    """pong's acknowledgement length: a size of at least 32 bytes (psbench's header)."""
    value = size_bytes(text)
    if value < 32:
        raise argparse.ArgumentTypeError(
            f"{value} is below psbench's 32-byte header; use 32 or more"
        )
    return value


# The node reads whole numbers as 64-bit and multiplies rates by durations in 64 bits;
# a billion (per second, or seconds: 31 years) is past any real run.
MAX_WHOLE = 2**63 - 1
MAX_REAL = 1e9


def _number(kind, allow_zero: bool):
    """An argparse type: a finite number of kind (int or float), > 0 or >= 0, at most
    MAX_WHOLE or MAX_REAL."""
    noun = "whole number" if kind is int else "number"
    top = MAX_WHOLE if kind is int else MAX_REAL

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {noun}") from None
        if not (value >= 0 if allow_zero else value > 0) or value == float("inf"):
            bound = "0 or more" if allow_zero else "greater than 0"
            raise argparse.ArgumentTypeError(f"must be a finite {noun}, {bound}, got {text}")
        if value > top:
            raise argparse.ArgumentTypeError(f"must be at most {int(top):,}, got {text}")
        return value

    return parse


positive_int = _number(int, allow_zero=False)
non_negative_int = _number(int, allow_zero=True)
positive_float = _number(float, allow_zero=False)
non_negative_float = _number(float, allow_zero=True)


FAULT_KINDS = ("drop", "dup", "reorder", "delay")


def fault(text: str) -> str:
    """--inject: drop=SEQ, dup=SEQ, reorder=SEQ or delay=SEQ:US (the node's syntax)."""
    kind, _, where = text.partition("=")
    seq, _, delay = where.partition(":")
    ok = (
        kind in FAULT_KINDS
        and seq.isdigit()
        and len(seq) < 19
        and (delay.isdigit() and len(delay) < 12 if kind == "delay" else ":" not in where)
    )
    if not ok:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a fault; use drop=SEQ, dup=SEQ, reorder=SEQ or "
            f"delay=SEQ:MICROSECONDS (e.g. drop=17)"
        )
    return text


def restart_times(text: str) -> tuple[float, float]:
    """--restart-broker AT:DOWN: (AT, DOWN) in seconds, AT > 0, DOWN >= 0."""
    at, sep, down = text.partition(":")
    try:
        values = (positive_float(at), non_negative_float(down)) if sep else None
    except argparse.ArgumentTypeError:
        values = None
    if values is None:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give AT:DOWN in seconds, e.g. 2:1 (the broker killed 2 s after the "
            f"measurement begins, started again 1 s later)"
        )
    return values


def restart(text: str) -> str:
    """An argparse type: AT:DOWN, checked (restart_times), kept as written."""
    restart_times(text)
    return text


def _fraction(allow_zero: bool, example: str):
    """An argparse type: a fraction below 1, above 0 (or from 0)."""
    parse_number = non_negative_float if allow_zero else positive_float

    def parse(text: str) -> float:
        value = parse_number(text)
        if value >= 1:
            raise argparse.ArgumentTypeError(f"is a fraction below 1 ({example}), got {text}")
        return value

    return parse


noise_fraction = _fraction(True, "0.05 = changes under 5% are noise")
probability = _fraction(False, "e.g. 0.05 or 0.95")

# --resamples (report, compare) is still checked as it was, so that a command line that
# was refused before is refused now; its value no longer changes anything.
MIN_RESAMPLES = 100


def resamples(text: str) -> int:
    value = positive_int(text)
    if value < MIN_RESAMPLES:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_RESAMPLES}, got {value}")
    return value


def relay_count(text: str) -> int:
    """--relays: 0 (pub -> sub) or 1 (pub -> relay -> sub, the three-process echo)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value not in (0, 1):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not 0 or 1; 1 puts one relay process between pub and sub"
        )
    return value


def history(text: str) -> str:
    if text == "keep_all" or re.fullmatch(r"keep_last:[1-9]\d*", text):
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: use keep_last:N (N >= 1) or keep_all")


def key_value(text: str) -> str:
    key, sep, _ = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: use KEY=VALUE")
    return text


def fifo_priority(text: str) -> int:
    value = positive_int(text)
    if value > 99:
        raise argparse.ArgumentTypeError(f"SCHED_FIFO priorities are 1..99, got {value}")
    return value


def cpu_assignment(text: str) -> tuple[str, int]:
    role, sep, cpu = text.partition("=")
    if not sep or not role or not cpu.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: use ROLE=CPU, e.g. ping=0")
    return role, int(cpu)


def host_declaration(text: str) -> tuple[str, dict]:
    """NAME or NAME:PROP=VALUE,... (an emulated host and its link, or a real machine's
    ssh target and address), e.g. b:rate=100mbit,delay=1ms or b:ssh=robot1."""
    name, _, props = text.partition(":")
    link = {}
    for item in filter(None, props.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise argparse.ArgumentTypeError(
                f"{text!r}: use NAME or NAME:PROP=VALUE,..., e.g. b:rate=100mbit,delay=1ms"
            )
        link[key] = int(value) if key == "mtu" and value.isdigit() else value
    if not name:
        raise argparse.ArgumentTypeError(f"{text!r}: name the host first, e.g. b:rate=100mbit")
    return name, link


def role_on_host(text: str) -> tuple[str, str]:
    role, sep, host = text.partition("=")
    if not sep or not role or not host:
        raise argparse.ArgumentTypeError(f"{text!r}: use ROLE=HOST, e.g. pong=b")
    return role, host


DURATION_UNITS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


def duration_ns(text: str) -> float:
    """500us, 1ms, 0.5ms, 2s -> ns. A unit is required."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration; give a number and a "
            f"unit: ns, us, ms or s, e.g. 1ms or 500us"
        )
    value = float(match.group(1)) * DURATION_UNITS[match.group(2)]
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def precision(text: str) -> float:
    value = positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(
            f"is a fraction below 1 (0.05 = stop when the bracket is within 5%), got {text}"
        )
    return value


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-loss",
        type=non_negative_float,
        default=0.0,
        metavar="PERCENT",
        help="a step passes with loss at most PERCENT %% (default 0)",
    )
    parser.add_argument(
        "--max-p99",
        type=duration_ns,
        default=1e6,
        metavar="DURATION",
        help="... and p99 one-way latency at most DURATION (e.g. 500us, 2ms; default 1ms)",
    )
    parser.add_argument(
        "--start-rate",
        type=positive_float,
        default=1000.0,
        metavar="HZ",
        help="first rate tried (default 1000)",
    )
    parser.add_argument(
        "--max-rate",
        type=positive_float,
        metavar="HZ",
        help="highest rate tried (default: no limit)",
    )
    parser.add_argument(
        "--precision",
        type=precision,
        default=0.05,
        metavar="FRACTION",
        help="stop when lowest fail / highest pass <= 1 + FRACTION (default 0.05)",
    )
    parser.add_argument(
        "--max-steps",
        type=positive_int,
        default=12,
        metavar="N",
        help="at most N rates tried (default 12); each passing rate also runs its confirmations",
    )
    parser.add_argument(
        "--confirm",
        type=positive_int,
        default=3,
        metavar="K",
        help="a rate passes only when it passes K runs (default 3): a "
        "passing step is rerun until it passed K times, and one "
        "failure fails it",
    )


def loan_mode(text: str):
    """--loan's optional value: only `auto` (a bare --loan means on)."""
    if text == "auto":
        return "auto"
    raise argparse.ArgumentTypeError(
        f"{text!r} is not auto; write --loan (on), --loan auto, or leave it off"
    )


def add_ssh_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ssh-config",
        metavar="FILE",
        help="the ssh config file for hosts reached over SSH (ssh -F FILE; default "
        "$PSBENCH_SSH_CONFIG, else ssh's own: ~/.ssh/config)",
    )
    parser.add_argument(
        "--hosts",
        dest="inventory",
        metavar="INVENTORY",
        help="an Ansible inventory (INI or YAML): a host declared without settings whose "
        "name it lists is that real machine (its ansible_host, _user, _port)",
    )


GRAPH_DURATION_S = 10.0  # a graph run without --count or --duration


def add_measure_arguments(parser: argparse.ArgumentParser, kind: str, rate: bool = True) -> None:
    """The options of one run; `kind` is "ping", "pubsub" or "graph". rate=False leaves
    out --rate (`psbench ratesearch` chooses the rate of each step)."""
    roles = {"ping": "ping, pong", "pubsub": "pub, sub", "graph": "a module"}[kind]
    parser.add_argument(
        "--driver",
        required=True,
        metavar="NAME",
        help="driver name (see `psbench drivers`) or path to a .so",
    )
    if kind == "graph":
        _add_graph_arguments(parser)
    else:
        parser.add_argument(
            "--size",
            type=message_size,
            default=64,
            metavar="BYTES",
            help="message size in bytes incl. the 32-byte header (64, 16K, 16KiB; default 64)",
        )
    graph = kind == "graph"
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument(
        "--count",
        type=positive_int,
        metavar="N",
        help="activations of each source module"
        if graph
        else "measured samples (node default 10000)",
    )
    amount.add_argument(
        "--duration",
        type=positive_float,
        default=GRAPH_DURATION_S if graph else None,
        metavar="S",
        help=f"measure for S seconds{f' (default {GRAPH_DURATION_S:g})' if graph else ''}",
    )
    parser.add_argument(
        "--warmup",
        type=non_negative_int,
        metavar="N",
        help="first activations of each source whose data is not recorded"
        if graph
        else "warm-up messages, not recorded (node default for ping "
        "and pub: 1000, at most one second's worth of --rate)",
    )
    if graph:
        _add_common_arguments(parser, roles, graph=True)
        return
    if kind == "ping":
        parser.add_argument(
            "--rate",
            type=non_negative_float,
            metavar="HZ",
            help="open loop at HZ pings/s; 0 = closed loop (default)",
        )
        parser.add_argument(
            "--sample-timeout",
            type=positive_float,
            metavar="S",
            help="closed loop: seconds to wait for one echo (node default 1)",
        )
        parser.add_argument(
            "--reply-size",
            type=reply_size,
            metavar="BYTES",
            help="pong echoes only the first BYTES (>= 32, header intact) "
            "of each message, an acknowledgement (default: the whole "
            "message)",
        )
    else:
        if rate:
            parser.add_argument(
                "--rate",
                type=non_negative_float,
                default=1000.0,
                metavar="HZ",
                help="messages/s each publisher sends (default 1000); 0 = "
                "back to back, as fast as the writer accepts them",
            )
        parser.add_argument(
            "--idle-timeout",
            type=positive_float,
            metavar="S",
            help="sub ends after S s without data (node default 5)",
        )
        parser.add_argument(
            "--subscribers",
            type=positive_int,
            default=1,
            metavar="N",
            help="N subscriber processes per topic, each its own reader "
            "(default 1); inter-process placement only",
        )
        # Unset (not 1) by default: a run's parameters, labels and identity (--resume)
        # stay what they were before these settings existed.
        parser.add_argument(
            "--publishers",
            type=positive_int,
            metavar="M",
            help="M publisher processes per topic, each its own writer "
            "(default 1); inter-process placement only",
        )
        parser.add_argument(
            "--topics",
            type=positive_int,
            metavar="T",
            help="T topics at once, each with its own subscribers and "
            "publishers (default 1); inter-process placement only",
        )
        parser.add_argument(
            "--relays",
            type=relay_count,
            metavar="0|1",
            help="1: a relay process between pub and sub (pub -> relay -> "
            "sub, the three-process echo); sub records the one-way "
            "latency over both hops (default 0); one topic, one "
            "publisher, one subscriber, inter-process placement, "
            "no --echo-every",
        )
        parser.add_argument(
            "--latency-from",
            choices=("intended", "send"),
            help="one-way latency from the publisher's intended send time "
            "(its schedule: a late send counts as late; node "
            "default) or from the moment its write began (send), as "
            "a timestamp taken at write measures it",
        )
        parser.add_argument(
            "--restart-broker",
            type=restart,
            metavar="AT:DOWN",
            help="kill the run's broker (SIGKILL) AT seconds after the measurement "
            "begins and start it again DOWN seconds later on its port, configuration "
            "and data; the run says what arrived, what was lost and when deliveries "
            "came back (with --durability persistent: what the broker kept)",
        )
        parser.add_argument(
            "--late-join",
            type=positive_float,
            metavar="S",
            help="one more subscriber (late-sub), started S seconds after "
            "the start while publishing goes on (needs --duration "
            "longer than S): it reports which samples written before "
            "it joined it received, the history its durability "
            "(transient_local, keep_last:N) kept for it",
        )
        parser.add_argument(
            "--drain-timeout",
            type=non_negative_float,
            metavar="S",
            help="after its last message, a publisher waits up to S seconds "
            "for the middleware to deliver what it still queues, "
            "before its end marker (node default 10)",
        )
        parser.add_argument(
            "--inject",
            action="append",
            default=[],
            type=fault,
            metavar="FAULT",
            help="test hook: the publisher drops, duplicates, reorders or "
            "delays one of its own messages (drop=SEQ, dup=SEQ, "
            "reorder=SEQ, delay=SEQ:US), repeatable; for checking "
            "psbench's accounting against known answers",
        )
        parser.add_argument(
            "--echo-every",
            type=positive_int,
            metavar="N",
            help="latency under load: the first subscriber echoes every Nth "
            "sample of the first publisher, which records the round "
            "trip (pub.samples)",
        )
    _add_common_arguments(parser, roles, graph=False)


def _add_graph_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--graph",
        required=True,
        metavar="GRAPH.yaml",
        help="the application graph (docs/graphs.md), e.g. graphs/cwalker.yaml",
    )
    parser.add_argument(
        "--mapping",
        metavar="NAME",
        help="which of the graph's mappings places its modules (default: its first)",
    )
    parser.add_argument(
        "--size",
        type=message_size,
        metavar="BYTES",
        help="every topic's message size (default: each topic's own, from the graph)",
    )


def _add_common_arguments(parser: argparse.ArgumentParser, roles: str, graph: bool) -> None:
    parser.add_argument(
        "--max-samples",
        type=positive_int,
        metavar="N",
        help="records kept per stream of each module (node default: 2000000)"
        if graph
        else "samples kept per receiver (node default: --count, or "
        "2000000 for duration runs); it keeps the first N arrivals "
        "and counts the rest, and the report says which part of the "
        "run the percentiles describe",
    )
    if not graph:
        _add_sender_arguments(parser)
    _add_qos_arguments(parser, graph)
    _add_placement_arguments(parser, roles, graph)


def _add_sender_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spin-send", action="store_true", help="open loop: the same as --send-wait spin"
    )
    parser.add_argument(
        "--send-wait",
        choices=("hybrid", "sleep", "spin"),
        help="open loop: how the sender waits for each due time: sleep "
        "until --send-spin-us before it, then spin (hybrid, node "
        "default), sleep only, or spin only; a sender that is behind "
        "never waits",
    )
    parser.add_argument(
        "--send-spin-us",
        type=non_negative_float,
        metavar="US",
        help="hybrid send wait: spin this long before each due time (node default 100)",
    )
    parser.add_argument(
        "--placement",
        choices=("inter", "intra"),
        default="inter",
        help="inter: one process per role (default); intra: one process, roles as threads",
    )


def _add_qos_arguments(parser: argparse.ArgumentParser, graph: bool) -> None:
    parser.add_argument(
        "--notify",
        choices=("listener", "wait", "poll"),
        help="how the reader learns of data (node default wait)",
    )
    parser.add_argument(
        "--reliability", choices=("best_effort", "reliable"), help="node default best_effort"
    )
    parser.add_argument(
        "--durability",
        choices=("volatile", "transient_local", "persistent"),
        help="node default volatile",
    )
    parser.add_argument(
        "--history",
        type=history,
        metavar="keep_last:N|keep_all",
        help="history QoS (node default: the driver's own)",
    )
    parser.add_argument("--transport", metavar="NAME", help="one of the driver's transports")
    parser.add_argument(
        "--option",
        type=key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="driver option, repeatable",
    )
    if graph:
        return
    parser.add_argument(
        "--loan",
        nargs="?",
        const=True,
        default=False,
        type=loan_mode,
        metavar="auto",
        help="use the driver's loaned (zero-copy) write; `--loan auto`: "
        "where the driver has one, else copy (recorded per run)",
    )
    parser.add_argument("--check-pattern", action="store_true", help="fill and verify the payload")
    parser.add_argument(
        "--security",
        metavar="MODE",
        help="secure the run: tls (brokers), or auth, access, encrypt, encrypt-payload, "
        "encrypt-submessage (DDS Security): the modes the driver's manifest lists; "
        "psbench makes a CA and every credential for it (default none; docs/security.md)",
    )
    parser.add_argument(
        "--security-fault",
        choices=("wrong-ca", "expired", "deny"),
        help="test hook: the receiving processes get bad credentials (another CA's "
        "certificate, an expired one, or permissions that deny the topics): the run "
        "must fail and they must receive nothing",
    )


def _add_placement_arguments(parser: argparse.ArgumentParser, roles: str, graph: bool) -> None:
    parser.add_argument(
        "--cpu",
        type=cpu_assignment,
        action="append",
        default=[],
        metavar="MODULE=CPU" if graph else "ROLE=CPU",
        help="pin a module's process to a CPU (beyond its mapping's), repeatable"
        if graph
        else f"pin a role ({roles}) to a CPU, repeatable",
    )
    parser.add_argument(
        "--host",
        dest="host_declarations",
        type=host_declaration,
        action="append",
        default=[],
        metavar="NAME[:PROP=VALUE,...]",
        help="an emulated host and its link (rate, delay, jitter, loss, mtu), e.g. "
        "b:rate=100mbit,delay=1ms (needs root), or a real machine over SSH, e.g. "
        "b:ssh=user@10.0.0.7[,address=10.0.0.7]; repeatable (docs/network.md)",
    )
    if not graph:  # a graph's mapping places its modules
        _add_place_argument(parser)
    _add_run_arguments(parser)


def _add_place_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--place",
        dest="role_hosts",
        type=role_on_host,
        action="append",
        default=[],
        metavar="ROLE=HOST",
        help="put a role on a --host, e.g. pong=b; repeatable (a role given twice spreads "
        "its processes over both); broker=HOST places the broker (default: the first host)",
    )


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    add_ssh_config_argument(parser)
    parser.add_argument(
        "--pin",
        choices=("role", "process", "none"),
        help="what --cpu and --fifo apply to: role (node default) = the role "
        "thread, once its endpoints are open, the middleware's own "
        "threads keeping every CPU and SCHED_OTHER; process = also every "
        "thread of the node confined to its roles' CPUs; none = no "
        "pinning at all",
    )
    parser.add_argument(
        "--fifo",
        type=fifo_priority,
        metavar="PRIO",
        help="run the roles under SCHED_FIFO at PRIO (1..99)",
    )
    parser.add_argument("--mlockall", action="store_true", help="lock the nodes' memory")
    parser.add_argument(
        "--dma-latency", action="store_true", help="hold /dev/cpu_dma_latency at 0 during the run"
    )
    parser.add_argument(
        "--match-timeout",
        type=positive_float,
        metavar="S",
        help="seconds to wait for the peer (node default 30)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=600.0,
        metavar="S",
        help="the whole run, in seconds (default 600)",
    )
    parser.add_argument(
        "--results", metavar="DIR", help="results directory (default results/ or $PSBENCH_RESULTS)"
    )
