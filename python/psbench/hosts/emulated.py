"""Emulated hosts: one network namespace per host, each wired by a veth pair to a bridge
in a namespace of psbench's own (the switch), addresses 198.18.0.1, .2, ... /24 (the
benchmarking range, RFC 2544). Every link is made from inside psbench's namespaces, so
the machine's own interfaces, routes and firewall are never touched; deleting the
namespaces removes everything (links, qdiscs, iptables rules), and so does psbench's
keeper when psbench is killed.

Each host's link is shaped at both of its ends: the host's eth0 (what leaves the host)
and its port on the bridge (what reaches it). How each property is applied, and why:
  rate           tbf on both ends (no netem needed)
  loss, delay,   netem on both ends where the kernel has it; else loss by an iptables
  jitter         random drop and delay by psbench-netdelay on an NFQUEUE, both in the
                 host's own namespace (its OUTPUT and INPUT chains)
  mtu            both ends of the veth pair
The mechanism each property got is in `applied`, for the run's record."""

import json
import secrets
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from psbench.base import paths, programs
from psbench.base.errors import UserError
from psbench.hosts import netns
from psbench.hosts.links import LinkShape

SUBNET = "198.18.0"  # host i is address_of(i)
MAX_HOSTS = 250
TBF_LATENCY = "100ms"  # how long a packet may wait for tokens before tbf drops it
QUEUE_OUT, QUEUE_IN = 1, 2  # NFQUEUE numbers (each namespace has its own)


def address_of(index: int) -> str:
    """The address of the index-th host (in the order the hosts were given)."""
    return f"{SUBNET}.{index + 1}"


@dataclass
class EmulatedHost:
    name: str  # the experiment's
    namespace: str
    address: str
    shape: LinkShape
    interface: str = "eth0"
    applied: dict = field(default_factory=dict)  # property -> mechanism
    helpers: list = field(default_factory=list)  # psbench-netdelay processes


def netdelay_path() -> Path:
    return paths.build_dir() / "netem" / "psbench-netdelay"


class EmulatedNetwork:
    """A switch and its hosts, made on __enter__ and gone on __exit__ (also when making
    them failed half way). watch(namespace) / release(namespace): the keeper's, so that a
    killed psbench leaves no namespace."""

    def __init__(self, shapes: dict[str, LinkShape], watch=None, release=None):
        if not shapes:
            raise UserError("an emulated network needs at least one host", 2)
        if len(shapes) > MAX_HOSTS:
            raise UserError(f"at most {MAX_HOSTS} emulated hosts", 2)
        self.tag = "psb" + secrets.token_hex(4)
        self.switch = f"{self.tag}-sw"
        self.hosts = {
            name: EmulatedHost(name, f"{self.tag}-h{i}", address_of(i), shape)
            for i, (name, shape) in enumerate(shapes.items())
        }
        self._watch = watch or (lambda ns: None)
        self._release = release or (lambda ns: None)
        self._made: list[str] = []
        self.netem = False

    # -- life ---------------------------------------------------------------------------

    def __enter__(self) -> "EmulatedNetwork":
        require_privileges()
        try:
            self._make_namespace(self.switch)
            netns.ip(self.switch, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0")
            netns.ip(self.switch, "link", "set", "br0", "up")
            self.netem = _has_netem(self.switch)
            for i, host in enumerate(self.hosts.values()):
                self._make_host(i, host)
            self._separate_networks()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for host in self.hosts.values():
            for helper in host.helpers:
                helper.terminate()
            for helper in host.helpers:
                programs.finish(helper, 5)
            host.helpers.clear()
        for name in reversed(self._made):
            netns.delete(name)
            self._release(name)
        self._made.clear()

    # -- what runs on a host ------------------------------------------------------------

    def argv(self, host: str, argv: list[str]) -> list[str]:
        """argv run on the host (inside its namespace)."""
        return netns.exec_argv(self.hosts[host].namespace, argv)

    def describe(self) -> dict:
        """For run.json: each host's namespace, address, link and the mechanism of each
        property."""
        return {
            "kind": "emulated",
            "subnet": f"{SUBNET}.0/24",
            "clock": "shared (one machine)",
            "hosts": {
                h.name: {
                    "namespace": h.namespace,
                    "address": h.address,
                    "interface": h.interface,
                    "link": h.shape.shaped(),
                    "applied": dict(h.applied),
                }
                for h in self.hosts.values()
            },
        }

    def traffic(self) -> dict[str, dict[str, int]]:
        """Each host's link as its interface's counters say now: bytes and packets it
        sent (tx) and received (rx), headers and all (what the link carried)."""
        counted = {}
        for host in self.hosts.values():
            shown = json.loads(netns.ip(host.namespace, "-s", "-j", "link", "show", host.interface))
            stats = shown[0]["stats64"]
            counted[host.name] = {
                f"{way}_{unit}": stats[way][unit]
                for way in ("tx", "rx")
                for unit in ("bytes", "packets")
            }
        return counted

    # -- making -------------------------------------------------------------------------

    def _make_namespace(self, name: str) -> None:
        self._watch(name)  # first: a kill between the two must not leave it
        netns.add(name)
        self._made.append(name)
        netns.ip(name, "link", "set", "lo", "up")

    def _make_host(self, i: int, host: EmulatedHost) -> None:
        port = f"h{i}"
        self._make_namespace(host.namespace)
        netns.ip(
            host.namespace,
            "link", "add", host.interface, "type", "veth", "peer", "name", port, "netns", self.switch,
        )  # fmt: skip
        netns.ip(self.switch, "link", "set", port, "master", "br0")
        shape = host.shape
        if shape.mtu is not None:
            netns.ip(host.namespace, "link", "set", host.interface, "mtu", str(shape.mtu))
            netns.ip(self.switch, "link", "set", port, "mtu", str(shape.mtu))
            host.applied["mtu"] = "veth mtu (both ends)"
        # brd +: the subnet's broadcast address (198.18.0.255), as a real host's would be.
        netns.ip(
            host.namespace, "addr", "add", f"{host.address}/24", "brd", "+", "dev", host.interface
        )
        netns.ip(host.namespace, "link", "set", host.interface, "up")
        netns.ip(self.switch, "link", "set", port, "up")
        ends = ((host.namespace, host.interface), (self.switch, port))
        if self.netem:
            self._shape_with_netem(host, ends)
        else:
            self._shape_without_netem(host, ends)

    def _separate_networks(self) -> None:
        """Hosts on no common network (their links' `networks`) do not hear each other:
        each drops on arrival what the other sends (unicast, broadcast and multicast
        alike), so they talk only through a host on both networks. Dropped on the way in,
        never out: a send never fails, as on a real network it would not."""
        for host in self.hosts.values():
            strangers = [
                other
                for other in self.hosts.values()
                if other is not host and not host.shape.on() & other.shape.on()
            ]
            if not strangers:
                continue
            iptables = _iptables()
            for other in strangers:
                _in(host, [iptables, "-A", "INPUT", "-s", other.address, "-j", "DROP"])
            host.applied["networks"] = (
                f"iptables drop (INPUT) from {', '.join(o.name for o in strangers)}: no common network"
            )

    def _shape_with_netem(self, host: EmulatedHost, ends) -> None:
        s = host.shape
        args = []
        if s.delay_us is not None:
            args += ["delay", f"{s.delay_us}us"]
            if s.jitter_us:
                args += [f"{s.jitter_us}us"]
        if s.loss_pct is not None:
            args += ["loss", f"{s.loss_pct}%"]
        if s.rate_bps is not None:
            args += ["rate", f"{s.rate_bps}bit"]
        if not args:
            return
        for namespace, dev in ends:
            netns.tc(namespace, "qdisc", "add", "dev", dev, "root", "netem", *args)
        for prop, given in (("delay", s.delay_us), ("jitter", s.jitter_us)):
            if given is not None:
                host.applied[prop] = "netem (both ends)"
        if s.loss_pct is not None:
            host.applied["loss"] = "netem (both ends)"
        if s.rate_bps is not None:
            host.applied["rate"] = "netem rate (both ends)"

    def _shape_without_netem(self, host: EmulatedHost, ends) -> None:
        s = host.shape
        if s.rate_bps is not None:
            # Two full frames: a real link serializes every frame at its rate, and a deeper
            # bucket (1 ms of traffic, as first written) let a 16 KiB message cross a
            # 100 Mbit/s link after an idle moment at the veth's speed: 0.7 ms one way
            # instead of the 1.3 ms its bits take. The rate holds either way (hrtimers).
            burst = 2 * ((s.mtu or 1500) + 14)
            for namespace, dev in ends:
                netns.tc(
                    namespace, "qdisc", "add", "dev", dev, "root", "tbf",
                    "rate", f"{s.rate_bps}bit", "burst", str(burst), "latency", TBF_LATENCY,
                )  # fmt: skip
            host.applied["rate"] = f"tbf, burst {burst} B (both ends)"
        if s.loss_pct is None and s.delay_us is None:
            return
        iptables = _iptables()
        chains = (("OUTPUT", "-o", QUEUE_OUT), ("INPUT", "-i", QUEUE_IN))
        lossy = s.loss_pct is not None and s.loss_pct > 0
        if lossy:
            # The way in: dropped on arrival, before any delay. The way out: dropped by the
            # stage below, after the send has returned; an iptables DROP on OUTPUT would
            # fail the sender's send (EPERM), a write error instead of a loss on the wire.
            _in(host, [iptables, "-A", "INPUT", "-i", host.interface, "-m", "statistic",
                       "--mode", "random", "--probability", f"{s.loss_pct / 100:.6f}",
                       "-j", "DROP"])  # fmt: skip
            host.applied["loss"] = (
                "psbench-netdelay random drop (OUTPUT), iptables statistic random drop (INPUT)"
            )
        elif s.loss_pct is not None:
            host.applied["loss"] = "none needed (0%)"
        stages = chains if s.delay_us is not None else chains[:1] if lossy else ()
        if stages:
            helper = netdelay_path()
            if not helper.is_file():
                raise UserError(
                    f"link delay and loss need {helper} (this kernel has no netem): install "
                    f"libnetfilter-queue-dev (make setup) and run make build",
                    2,
                )
            for chain, way, queue in stages:
                seed = str(secrets.randbelow(1 << 31))
                loss_ppm = round(s.loss_pct * 10_000) if lossy and chain == "OUTPUT" else 0
                argv = [str(helper), "--queue", str(queue), "--delay-us", str(s.delay_us or 0),
                        "--jitter-us", str(s.jitter_us or 0), "--loss-ppm", str(loss_ppm),
                        "--seed", seed]  # fmt: skip
                host.helpers.append(
                    subprocess.Popen(
                        netns.exec_argv(host.namespace, argv),
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        stdin=subprocess.DEVNULL,
                        text=True,
                    )
                )
                _in(host, [iptables, "-A", chain, way, host.interface, "-j", "NFQUEUE",
                           "--queue-num", str(queue)])  # fmt: skip
        if s.delay_us is not None:
            host.applied["delay"] = "psbench-netdelay on NFQUEUE (OUTPUT and INPUT)"
            if s.jitter_us is not None:
                host.applied["jitter"] = "psbench-netdelay on NFQUEUE, order kept"


def _in(host: EmulatedHost, argv: list[str]) -> None:
    netns.run(netns.exec_argv(host.namespace, argv))


def _iptables() -> str:
    found = shutil.which("iptables") or shutil.which("iptables", path="/usr/sbin:/sbin")
    if found is None:
        raise UserError(
            "link loss and delay need iptables (this kernel has no netem): "
            "install the Debian package iptables (make setup)",
            2,
        )
    return found


def _has_netem(namespace: str) -> bool:
    """Whether this kernel has netem: tried on the switch's bridge, then removed."""
    probe = subprocess.run(
        ["tc", "-n", namespace, "qdisc", "add", "dev", "br0", "root", "netem", "delay", "0us"],
        capture_output=True,
        timeout=30,
    )
    if probe.returncode != 0:
        return False
    subprocess.run(["tc", "-n", namespace, "qdisc", "del", "dev", "br0", "root"], timeout=30)
    return True


def require_privileges() -> None:
    """Emulated hosts need CAP_NET_ADMIN and CAP_SYS_ADMIN (namespaces): refused with
    exit 2 saying so, before anything is made."""
    status = Path("/proc/self/status").read_text()
    effective = int(
        next(line.split()[1] for line in status.splitlines() if line.startswith("CapEff")), 16
    )
    missing = [
        name
        for name, bit in (("CAP_NET_ADMIN", 12), ("CAP_SYS_ADMIN", 21))
        if not effective >> bit & 1
    ]
    if missing:
        raise UserError(
            f"emulated hosts need {' and '.join(missing)} (network namespaces, links, "
            f"shaping): run psbench as root, or without emulated hosts",
            2,
        )
    if shutil.which("ip") is None and shutil.which("ip", path="/usr/sbin:/sbin") is None:
        raise UserError("emulated hosts need the ip command: install iproute2 (make setup)", 2)
