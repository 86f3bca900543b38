"""Argument types: each reads one option's text (and an experiment file's value, the same
way) into its value. run/parameters.py says which option takes which.

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
