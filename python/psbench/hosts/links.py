"""What a link is given (rate, delay, jitter, loss, MTU), read from an experiment's or the
CLI's words, and the mechanisms that apply each property on this machine: netem where the
kernel has it; else a token bucket (tbf) for rate, an iptables random drop for loss and
psbench-netdelay on an NFQUEUE for delay and jitter (docs/netdelay.md). A real machine
(hosts.NAME.ssh) has no link psbench shapes: its ssh target and address instead."""

import re
from dataclasses import dataclass

from psbench.base.errors import UserError
from psbench.hosts import inventory

_RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
_TIME_UNITS = {"us": 1, "ms": 1e3, "s": 1e6}
PROPERTIES = ("rate", "delay", "jitter", "loss", "mtu", "networks")
HOST_NAME = re.compile(r"[a-z][a-z0-9_-]{0,15}")
NETWORK_NAME = re.compile(r"[a-z][a-z0-9_-]{0,15}")
DEFAULT_NETWORK = "lan"  # a host given no networks is on this one


@dataclass(frozen=True)
class LinkShape:
    """One host's link to the switch, the same both ways. None: not shaped."""

    rate_bps: int | None = None
    delay_us: int | None = None  # each way: a packet from a to b waits a's and b's
    jitter_us: int | None = None  # uniform in [-jitter, +jitter] around the delay
    loss_pct: float | None = None  # each crossing of this link, either way
    mtu: int | None = None
    # The networks it is on: hosts that share none reach each other only through a host
    # on both (a router, a bridge); None: the one default network.
    networks: tuple[str, ...] | None = None

    def shaped(self) -> dict:
        """The properties set, in the experiment's words (for run.json)."""
        out = {}
        if self.rate_bps is not None:
            out["rate_bps"] = self.rate_bps
        if self.delay_us is not None:
            out["delay_us"] = self.delay_us
        if self.jitter_us is not None:
            out["jitter_us"] = self.jitter_us
        if self.loss_pct is not None:
            out["loss_pct"] = self.loss_pct
        if self.mtu is not None:
            out["mtu"] = self.mtu
        if self.networks is not None:
            out["networks"] = list(self.networks)
        return out

    def on(self) -> set[str]:
        """The networks it is on."""
        return set(self.networks or (DEFAULT_NETWORK,))


def _number_with_unit(where: str, text, units: dict, example: str) -> float:
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*", str(text).lower())
    if not match or match.group(2) not in units:
        raise UserError(f"{where}: {text!r} is not a value; write it like {example}", 2)
    return float(match.group(1)) * units[match.group(2)]


def parse_shape(where: str, spec: dict) -> LinkShape:
    """A link from {rate: 100mbit, delay: 1ms, jitter: 100us, loss: 0.5%, mtu: 1500};
    where: the place for messages, e.g. "lab.yaml: hosts.b"."""
    if not isinstance(spec, dict):
        raise UserError(f"{where}: give the link as a mapping, e.g. {{rate: 100mbit}}", 2)
    unknown = sorted(set(spec) - set(PROPERTIES))
    if unknown:
        raise UserError(
            f"{where}.{unknown[0]}: unknown link property; the properties are "
            f"{', '.join(PROPERTIES)}",
            2,
        )
    rate = delay = jitter = loss = mtu = networks = None
    if "rate" in spec:
        rate = int(_number_with_unit(f"{where}.rate", spec["rate"], _RATE_UNITS, "100mbit"))
        if rate < 8000:
            raise UserError(f"{where}.rate: at least 8kbit", 2)
    if "delay" in spec:
        delay = int(_number_with_unit(f"{where}.delay", spec["delay"], _TIME_UNITS, "2ms"))
    if "jitter" in spec:
        jitter = int(_number_with_unit(f"{where}.jitter", spec["jitter"], _TIME_UNITS, "100us"))
        if delay is None:
            raise UserError(f"{where}.jitter: give a delay too (jitter varies the delay)", 2)
    if "loss" in spec:
        text = str(spec["loss"]).strip()
        match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*%", text)
        if not match or not 0 <= float(match.group(1)) < 100:
            raise UserError(f"{where}.loss: {text!r}: write a percentage below 100, like 0.5%", 2)
        loss = float(match.group(1))
    if "mtu" in spec:
        mtu = spec["mtu"]
        if not isinstance(mtu, int) or isinstance(mtu, bool) or not 576 <= mtu <= 9000:
            raise UserError(f"{where}.mtu: {mtu!r}: give bytes from 576 to 9000", 2)
    if "networks" in spec:
        networks = _networks(f"{where}.networks", spec["networks"])
    return LinkShape(rate, delay, jitter, loss, mtu, networks)


def _networks(where: str, value) -> tuple[str, ...]:
    """[left, right], or the CLI's left+right."""
    names = value.split("+") if isinstance(value, str) else value
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and NETWORK_NAME.fullmatch(n) for n in names)
    ):
        raise UserError(
            f"{where}: {value!r}: give network names (lower case, e.g. left), a list or "
            f"joined with +: networks: [left, right], or networks=left+right on the command line",
            2,
        )
    return tuple(dict.fromkeys(names))


def share_a_network(a: dict, b: dict) -> bool:
    """Whether two hosts, given by their links in the experiment's words, reach each
    other directly (a real machine's network is not psbench's to know: yes)."""
    if is_real(a) or is_real(b):
        return True
    return bool(_on(a) & _on(b))


def _on(link: dict) -> set[str]:
    value = (link or {}).get("networks")
    if value is None:
        return {DEFAULT_NETWORK}
    return set(value.split("+") if isinstance(value, str) else value)


REAL_KEYS = ("ssh", "address")  # a real machine: how to reach it, and its address


def is_real(link) -> bool:
    """Whether a host is a real machine (reached over SSH), not an emulated one."""
    return isinstance(link, dict) and "ssh" in link


def real_hosts(hosts: dict) -> bool:
    """Whether a run's hosts are real machines (parse_hosts allows all or none)."""
    return any(is_real(link) for link in hosts.values())


def _check_real(where: str, spec: dict) -> None:
    shaped = sorted(set(spec) & set(PROPERTIES))
    if shaped:
        raise UserError(
            f"{where}.{shaped[0]}: a real machine's link is not shaped (psbench shapes only "
            f"emulated links); remove {', '.join(shaped)}, or use an emulated host",
            2,
        )
    unknown = sorted(set(spec) - set(REAL_KEYS))
    if unknown:
        raise UserError(
            f"{where}.{unknown[0]}: unknown key of a real machine; the keys are "
            f"{', '.join(REAL_KEYS)}",
            2,
        )
    target = spec["ssh"]
    if (
        not isinstance(target, str)
        or not target
        or target.startswith("-")
        or any(c.isspace() or not c.isprintable() for c in target)
    ):
        raise UserError(
            f"{where}.ssh: {target!r}: give an ssh destination, e.g. robot1 or user@10.0.0.7",
            2,
        )
    address = spec.get("address")
    if address is not None and not re.fullmatch(r"[0-9A-Za-z.:%_-]{1,255}", str(address)):
        raise UserError(
            f"{where}.address: {address!r}: give the address its peers reach it at, e.g. 10.0.0.7",
            2,
        )


def parse_hosts(value) -> dict[str, dict]:
    """{host name: its link in the experiment's words (or empty)}, each checked. A host
    with `ssh:` is a real machine ({ssh: TARGET, address: ADDRESS}); a run's hosts are
    all real or all emulated."""
    if not isinstance(value, dict) or not value:
        raise UserError(
            f"expected a mapping HOST: LINK, e.g. {{a: {{}}, b: {{rate: 100mbit}}}}, got {value!r}",
            2,
        )
    hosts = {}
    for name, link in value.items():
        link = inventory.resolve(str(name), link) or link  # --hosts FILE names it
        if not HOST_NAME.fullmatch(str(name)):
            raise UserError(
                f"{name!r}: a host name is a-z, digits, '-' and '_', e.g. a or robot1", 2
            )
        if is_real(link):
            _check_real(str(name), link)
        elif isinstance(link, dict) and "address" in link:
            raise UserError(
                f"{name}.address: only a real machine has an address of its own; add "
                f"ssh: TARGET, or leave the address out (emulated host i is 198.18.0.i)",
                2,
            )
        else:
            parse_shape(str(name), link or {})
        hosts[str(name)] = dict(link or {})
    real = [name for name, link in hosts.items() if is_real(link)]
    if real and len(real) != len(hosts):
        emulated = [name for name in hosts if name not in real]
        raise UserError(
            f"{emulated[0]}: hosts are all real machines (ssh:) or all emulated; "
            f"{', '.join(real)} {'is' if len(real) == 1 else 'are'} real, "
            f"{', '.join(emulated)} emulated: give every host ssh: TARGET, or none",
            2,
        )
    return hosts
