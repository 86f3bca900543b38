"""psbench against independent instruments, per driver, interleaved in one invocation.

For each driver and size, each round runs a psbench closed-loop ping-pong and the same
ping-pong by each instrument of the driver, tools that share no code with psbench, in an
order rotated from round to round:
  udp         sockperf ping-pong against a sockperf server on 127.0.0.1 (its RTT percentiles)
  cyclonedds  Cyclone's ddsperf ping/pong, waitset wake-ups, same UDP-on-lo config
              (bench/ddsperf_compare.py holds the like-for-like details); and
              bench/probes/cyclonedds: a bare Cyclone C-API ping-pong doing exactly what
              the driver does (idl/psbench.idl through idlc, the driver's QoS and udp.xml,
              take into a preallocated buffer, a take tried before a waitset on a read
              condition, dds_write then dds_write_flush; its flags select variants,
              bench/cyclonedds_paths runs them), 1000 unmeasured round trips first
  nats        bench/probes/nats: bare cnats ping-pong (send_asap, sync subscription), 1000
              unmeasured round trips first as psbench's ping
  zeromq      bench/probes/zeromq: bare libzmq XPUB/SUB ping-pong over tcp on 127.0.0.1,
              blocking receive (the driver's default transport and wait)
  mqtt        bench/probes/mqtt: bare libmosquitto ping-pong, QoS 0, TCP_NODELAY, no loop
              thread (mosquitto_loop with a timeout, as the driver's wait mode), 1000
              unmeasured round trips first as psbench's ping
  redis       bench/probes/redis: bare hiredis ping-pong, a publishing and a subscribed
              connection per side, PUBLISH not waited for, blocking receive
  iceoryx     bench/probes/iceoryx: bare iceoryx 2.0 ping-pong, UntypedPublisher loan, copy,
              publish; UntypedSubscriber take with a WaitSet; the driver's default QoS
  fastdds     bench/probes/fastdds ping/pong: bare Fast DDS DataWriter/DataReader, the
              driver's type, builtin transports (shm + UDP on lo), best effort keep_last 1,
              take_next_sample then wait_for_unread_message
  rabbitmq    bench/probes/rabbitmq: bare rabbitmq-c ping-pong, fanout exchanges, no-ack
              consumer, amqp_consume_message wait, through the one broker of both tools
  kafka       bench/probes/kafka: bare librdkafka ping-pong, acks=0, linger.ms=0, a
              consumer assigned partition 0 at its end, through the one broker of both
  iceoryx2    bench/probes/iceoryx2 (a Cargo project): bare iceoryx2 0.10 ping-pong, the
              driver's defaults: [u8] publish-subscribe, safe overflow, buffer 2; loan,
              copy, send, notify an event service; receive, else wait on the event listener
  zenoh       bench/probes/zenoh (a Cargo project): bare zenoh (the crate alone) ping-pong,
              the driver's defaults: peer mode over TCP on 127.0.0.1 (pong listens, ping
              connects), multicast scouting and shared memory off, best effort with
              congestion control Drop (psbench's default), a FIFO channel's recv_timeout
  opendds     bench/probes/opendds: bare OpenDDS 3.12 DCPS ping-pong against the OpenDDS
              that make driver-opendds built, the driver's defaults: RTPS discovery and an
              rtps_udp instance on 127.0.0.1 (8 MiB buffers), best effort, volatile,
              keep_last 1, a zero-copy take copied into a buffer, a take tried before a
              WaitSet on a read condition; a DDS domain of its own (201-230)
  opensplice  bench/probes/opensplice: bare OpenSplice CE 6.9 C-API ping-pong, the driver's
              defaults: idl/psbench.idl through idlpp, the single-process deployment on
              the driver's XML (DDSI2 unicast on 127.0.0.1), best effort, volatile, keep_last
              1, take into a preallocated buffer, a take tried before a waitset on a read
              condition; its own domain (201-230) per round, 1000 unmeasured round trips
  orte        bench/probes/orte: bare ORTE 0.3.4 ping-pong through the one ortemanager of
              both tools, the driver's defaults: an application on a loopback address of
              its own, one registered type (a CDR length, then the bytes), best-effort
              IMMEDIATE subscriptions whose callback queues a copy, taken with a wait on
              the queue; 1000 unmeasured round trips
The probes are small CMake (or Cargo) projects under bench/probes/, built on request into
build/probes/<driver> (a driver whose probe cannot be built is skipped, with the reason).
nats-server, mosquitto, redis-server and iox-roudi are psbench's own services
(python/psbench/run/services.py: generated configuration, 127.0.0.1 and a free port, RouDi
sized for the largest message; a RouDi already running is used and left alone), one per
driver for both tools, stopped at the end.
Every process of both tools is pinned the same way (--cpus, default 0,1: the pinging
process on CPU 0, the echoing one on CPU 1, with taskset; `none` leaves them to the
scheduler): on 2-vCPU VMs where the scheduler puts two threads that wake each other
moves a median by 2x from one run to the next, for either tool. --fifo PRIO also runs
every process of both tools, and the broker or RouDi they share, under SCHED_FIFO PRIO
(chrt): on a machine busy with other work (compilers), that work then waits for the
measured processes instead of delaying them by its 4 ms time slices. Against ddsperf,
psbench's figures are computed as ddsperf computes its own: the median over one-second
windows of each window's p50 and p99; against the probes, over all its measured round
trips (nearest rank), as the probes compute theirs.
Each round gives one p50 and one p99 of the round trip per tool. The table prints, per
driver, instrument and size, the ratio psbench/instrument of the medians over rounds,
with a 95% bootstrap interval (rounds resampled in pairs), and "within 10%" when the
whole interval lies in [0.90, 1.10]; "not within 10%" when it lies wholly outside;
otherwise, and always with fewer than 3 rounds, "undecided"; its title gives the 1-min
load average before and after the rounds. --until-decided goes on after --rounds with
rounds of the drivers and sizes whose verdict is still undecided (ping-pong: any p50 row
of the driver's instruments; throughput: its row) until none is, --max-rounds rounds are
done or --max-minutes have passed, and says which ended it.
Drivers without an instrument yet are listed as skipped, with the reason. A round in
which either tool fails is printed with the reason and left out (both tools' figures of
it); the rounds go on, and the table counts the rounds it holds.

Maximum throughput (--what, default rtt,throughput; rtt alone runs only the ping-pong):
where an instrument has a publish/subscribe mode, each round also holds a pair of
back-to-back runs, printed after the RTT table as "maximum throughput, messages/s". The
psbench side is psbench-node's sub, then its pub (no --rate: as fast as the writer goes),
reliable with a keep_all history (the writer flow-controlled by the reader) where the
instrument is reliable, pub on the first --cpus CPU and sub on the second:
  cyclonedds  ddsperf sub waitset / ddsperf pub (no rate: as fast as it can), reliable,
              -k all, topic KS sized S + 4 (psbench's CDR size; KS is keyed, psbench's
              type is not), the same UDP-on-lo XML; psbench with --notify wait
              --transport udp --option write_batch=true (ddsperf's pub always batches).
              Both figures as ddsperf computes its own: the median of the per-second
              rates, the first and last second left out (each run 2 s longer for them).
  fastdds     bench/probes/fastdds sub / pub: bare DataWriter/DataReader, the driver's
              type and builtin transports, reliable keep_all (Fast DDS's resource
              limits), synchronous publish, take_next_sample then wait_for_unread_message;
              pub writes for --seconds, then an end marker on which sub stops.
  zeromq      bench/probes/zeromq sub / pub: bare XPUB (bind, ZMQ_SNDHWM 1000) and SUB
              (connect, ZMQ_RCVHWM 1000) over tcp on 127.0.0.1, the driver's defaults,
              best effort (psbench too): what does not fit under the high-water mark is
              dropped by either writer; pub sends for --seconds, then end markers.
  nats        bench/probes/nats sub / pub through the one nats-server of both tools: core
              NATS (best effort, psbench too), send_asap as the driver's default, a sync
              subscription; pub repeats a hello until sub answers (NATS tells a publisher
              nothing of subscribers), then publishes for --seconds, then end markers.
  mqtt        bench/probes/mqtt sub / pub through the one mosquitto of both tools: QoS 0
              (psbench too), no loop thread; pub runs mosquitto_loop(0) after a publish
              when bytes wait to go out or every 100 ms, as the driver's writer; a hello
              answered before publishing, then end markers.
  For fastdds, zeromq, nats and mqtt both figures are the sub's (received - 1) / (last - first
  arrival), on its own clock (psbench: python/psbench/run/measure.py's throughput()).
The table gives the medians over rounds of both rates, the messages each tool's
subscribers received over all rounds, and the ratio psbench/instrument with the same
bootstrap interval and verdict as the RTT rows.
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import NamedTuple

import ddsperf_compare as dc
import numpy as np
import throughput as tput

from psbench.base import paths
from psbench.base.errors import UserError
from psbench.results.samples import read_samples
from psbench.run.drivers import describe
from psbench.run.measure import span_rate
from psbench.run.services import ServicePool, broker_options

# Each driver's instruments (a round runs psbench once and each of them).
INSTRUMENTS = {
    "udp": ("sockperf",),
    "cyclonedds": ("ddsperf", "cyclonedds_probe"),
    "zeromq": ("zeromq_probe",),
    "nats": ("nats_probe",),
    "mqtt": ("mqtt_probe",),
    "redis": ("redis_probe",),
    "iceoryx": ("iceoryx_probe",),
    "fastdds": ("fastdds_probe",),
    "rabbitmq": ("rabbitmq_probe",),
    "kafka": ("kafka_probe",),
    "iceoryx2": ("iceoryx2_probe",),
    "zenoh": ("zenoh_probe",),
    "opendds": ("opendds_probe",),
    "opensplice": ("opensplice_probe",),
    "orte": ("orte_probe",),
}
# Maximum throughput: the instruments that have a publish/subscribe mode.
TPUT_INSTRUMENTS = {
    "cyclonedds": "ddsperf",
    "fastdds": "fastdds_probe",
    "zeromq": "zeromq_probe",
    "nats": "nats_probe",
    "mqtt": "mqtt_probe",
}
WHAT = ("rtt", "throughput")
REPO = Path(__file__).resolve().parents[1]
NO_CPUS = (None, None)  # (ping's, pong's) CPU: none, the scheduler places them
# Probes are their own small CMake projects, built on request into the worktree's build/.
PROBES_BUILD = REPO / "build" / "probes"


def build_probe(name: str) -> tuple[Path | None, str]:
    """The probe's binary, built now or brought up to date with its source (an incremental
    build: nothing to do when nothing changed); or None and why it cannot be built."""
    src, out = REPO / "bench" / "probes" / name, PROBES_BUILD / name
    binary = out / f"{name}_probe"
    if (src / "Cargo.toml").exists():
        return build_cargo_probe(src, binary)
    configure = (
        []
        if (out / "CMakeCache.txt").exists()
        else [["cmake", "-S", str(src), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release"]]
    )
    for step in (*configure, ["cmake", "--build", str(out)]):
        res = subprocess.run(step, capture_output=True, text=True, timeout=300)
        if res.returncode != 0:
            lines = [ln.strip() for ln in (res.stderr + res.stdout).splitlines() if ln.strip()]
            # The probe's own message (its CMakeLists says what is missing and the command
            # that builds it) rather than CMake's closing "See also ..." line.
            lines = [ln for ln in lines if f"{name}_probe:" in ln] or lines
            return None, f"probe build failed: {lines[-1] if lines else step}"
    if not binary.exists():
        return None, f"probe build made no {binary.name}"
    return binary, ""


def build_cargo_probe(src: Path, binary: Path) -> tuple[Path | None, str]:
    """A probe that is a Cargo project: cargo build --release --locked in the target
    directory Rust drivers use (outside the checkout, incremental), its binary copied to
    `binary`; or None and why it cannot be built."""
    target = Path(os.environ.get("HOME", "/root")) / ".cache" / "psbench" / "cargo-target"
    env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
    step = ["cargo", "build", "--release", "--locked", "--manifest-path", str(src / "Cargo.toml")]
    res = subprocess.run(step, capture_output=True, text=True, timeout=1800, env=env)
    if res.returncode != 0:
        lines = [ln for ln in (res.stderr + res.stdout).splitlines() if ln.strip()]
        return None, f"probe build failed: {lines[-1] if lines else step}"
    built = target / "release" / binary.name
    if not built.exists():
        return None, f"probe build made no {binary.name}"
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, binary)
    return binary, ""


def free_tcp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def probe_rtt(
    name: str, binary: Path, args: list[str], seconds: float, cpus=NO_CPUS
) -> tuple[float, float, int]:
    """A bare probe's own p50 and p99 of the round trip, in us, and its number of round
    trips: `binary pong ARGS` then `binary ping ARGS`, ping printing "p50 p99 n"; both
    stopped whatever happens. cpus: (ping's, pong's) CPU for taskset, or None each."""
    out, _ = dc.run_pair(
        name,
        dc.pinned([str(binary), "pong", *args], cpus[1]),
        dc.pinned([str(binary), "ping", *args], cpus[0]),
        seconds,
    )
    p50, p99, n = out.splitlines()[0].split()  # a probe may print more lines after it
    return float(p50), float(p99), int(n)


# A probe sub's last line: "sub: received N, ..., R samples/s" (R on its own clock,
# (N - 1) / (last arrival - first arrival), as psbench's sub).
PROBE_SUB_LINE = re.compile(r"^sub: received (\d+),.* ([0-9.]+) samples/s$", re.M)


def probe_tput(
    name: str, binary: Path, args: list[str], seconds: float, cpus=NO_CPUS
) -> tuple[float, int]:
    """A bare probe's own maximum throughput, messages/s on the subscriber's clock, and the
    messages it received: `binary sub ARGS` then `binary pub ARGS` (pub writing back to
    back; sub ending on pub's end marker, else after 5 s without a message).
    cpus: (pub's, sub's) CPU for taskset, or None each."""
    _, out = dc.run_pair(
        name,
        dc.pinned([str(binary), "sub", *args], cpus[1]),
        dc.pinned([str(binary), "pub", *args], cpus[0]),
        seconds,
        first_ends=30,
    )
    m = PROBE_SUB_LINE.search(out)
    if m is None:
        raise RuntimeError(f"{name} sub printed no rate: {out[-400:]}")
    return float(m.group(2)), int(m.group(1))


def probe_args(
    driver: str, broker: str, tag: str, size: int, seconds: float, domain: int = 230
) -> list[str]:
    """The command line of a driver's bare probe after its role (see each probe.cpp).
    domain: cyclonedds's, opendds's and opensplice's DDS domain (psbench's own are 1-200;
    OpenSplice's ids stop at 230)."""
    if driver == "cyclonedds":  # the driver's path, on the XML the driver compiles in
        return [
            *("--config", str(dc.UDP_XML), "--domain", str(domain), "--topic", tag),
            *("--size", str(size), "--seconds", str(seconds)),
        ]
    if driver == "opendds":  # the driver's defaults, in a domain of the probe's own
        return [
            *("--domain", str(domain), "--topic", tag),
            *("--size", str(size), "--seconds", str(seconds)),
        ]
    if driver == "zeromq":  # PORT_A PORT_B: ping's XPUB and pong's XPUB bind them
        return [str(free_tcp_port()), str(free_tcp_port()), str(size), str(seconds)]
    if driver in ("iceoryx", "iceoryx2"):  # no address: shared memory named after the tag
        return [tag, str(size), str(seconds)]
    if driver == "zenoh":  # pong listens on the endpoint, ping connects to it
        return [tag, str(size), str(seconds), f"tcp/127.0.0.1:{free_tcp_port()}"]
    if driver == "opensplice":  # the driver's defaults; the round's domain (201-230)
        return [
            *("--domain", str(domain), "--topic", tag),
            *("--size", str(size), "--seconds", str(seconds)),
        ]
    if driver == "fastdds":  # the driver's defaults; a domain of the probe's own per run
        return [
            "--best-effort",
            "--keep-last",
            "1",
            *probe_tput_args(driver, "", tag, size, seconds),
        ]
    # rabbitmq: the broker's HOST:PORT, the exchanges' prefix (as mqtt's and redis's).
    # orte: the ortemanager's 127.0.0.1:PORT (its domain follows from the port), as mqtt.
    # kafka: BROKER TAG SIZE SECONDS, as mqtt and redis (TAG names its two topics)
    return [f"nats://{broker}" if driver == "nats" else broker, tag, str(size), str(seconds)]


def probe_tput_args(driver: str, broker: str, tag: str, size: int, seconds: float) -> list[str]:
    """The command line of a probe's pub and sub after the role: for fastdds the driver's
    default transport, reliable keep_all (the probe's defaults; Fast DDS's resource limits);
    for zeromq the port pub's XPUB binds; for nats and mqtt as their ping-pong."""
    if driver == "zeromq":
        return [str(free_tcp_port()), str(size), str(seconds)]
    if driver in ("nats", "mqtt"):
        return probe_args(driver, broker, tag, size, seconds)
    assert driver == "fastdds", driver
    return [
        "--transport",
        "builtin",
        "--size",
        str(size),
        "--domain",
        str(150 + zlib.crc32(tag.encode()) % 50),
        "--duration",
        str(seconds),
    ]


TOLERANCE = 0.10


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# psbench's cyclonedds as ddsperf runs: reliable, a waitset, UDP on lo (ddsperf_compare.py).
DDSPERF_LIKE = ["--reliability", "reliable", "--notify", "wait", "--transport", "udp"]
# Maximum throughput, psbench's options per driver as its instrument runs: reliable,
# keep_all where the instrument is (the writer flow-controlled by the reader); against
# ddsperf also a waitset, UDP on lo and Cyclone's write batching, which ddsperf's pub
# always enables (bench/throughput.py); zeromq best effort, the driver's defaults.
RELIABLE_ALL = ["--reliability", "reliable", "--history", "keep_all"]
TPUT_OPTIONS = {
    "cyclonedds": RELIABLE_ALL
    + ["--notify", "wait", "--transport", "udp", "--option", "write_batch=true"],
    "fastdds": RELIABLE_ALL,
    "zeromq": [],
    "nats": [],
    "mqtt": [],
}


def node_pair(
    driver: str,
    out: str,
    run: str,
    size: int,
    extra: list[str],
    roles: tuple[str, str],
    seconds: float,
    cpus,
    node_pin: str | None = None,
) -> None:
    """Runs psbench-node's two roles (the waiting one, then the driving one for `seconds`)
    as two processes pinned to cpus (driving's, waiting's), writing into out; both must
    end by themselves. Pinned with taskset (every thread), or with node_pin ("role",
    "process") by the node's own --cpu ROLE=CPU --pin node_pin, as the psbench CLI pins."""
    lib = paths.driver_library(driver)
    common = [*dc.node_command(paths.node_path(), lib, out, run, size), *extra]
    timed = ["--duration", f"{seconds:g}"]
    # A sub is told the duration too, as the launcher does: it then ends on the pub's end
    # marker only (not after --count's default 10000) and sizes its store for a duration.
    waiting = common + ["--role", roles[0], *(timed if roles[0] == "sub" else [])]
    driving = common + ["--role", roles[1], *timed]
    if node_pin is not None and cpus[0] is not None:
        waiting += ["--cpu", f"{roles[0]}={cpus[1]}", "--pin", node_pin]
        driving += ["--cpu", f"{roles[1]}={cpus[0]}", "--pin", node_pin]
        cpus = NO_CPUS
    dc.run_pair(
        f"psbench {driver} {'/'.join(roles)}",
        dc.pinned(waiting, cpus[1]),
        dc.pinned(driving, cpus[0]),
        seconds,
        first_ends=30,
    )


def psbench_rtt(
    driver: str,
    size: int,
    seconds: float,
    run: str,
    extra: list[str],
    cpus=NO_CPUS,
    node_pin: str | None = None,
) -> dict[str, tuple[float, float]]:
    """p50 and p99 of psbench's measured round trips, in us (driver defaults, notify wait;
    cyclonedds as ddsperf runs: DDSPERF_LIKE), computed two ways from the same run:
    "samples", over all measured round trips (nearest rank, as the bare probes compute
    theirs), and for cyclonedds also "per_second", as ddsperf computes its own: the median
    over the one-second windows of each window's p50 and p99."""
    with tempfile.TemporaryDirectory(prefix="psbench-truth-") as out:
        node_pair(
            driver,
            out,
            run,
            size,
            extra + (DDSPERF_LIKE if driver == "cyclonedds" else []),
            ("pong", "ping"),
            seconds,
            cpus,
            node_pin,
        )
        samples = read_samples(Path(out) / "ping.samples")
        # Each process's whole CPU time and voluntary context switches (start-up included).
        usage = {
            role: json.loads((Path(out) / f"{role}.json").read_text())["usage"]["process"]
            for role in ("ping", "pong")
        }
    rtt_ns = samples.latency_ns.astype(np.int64)
    if len(rtt_ns) == 0:
        raise RuntimeError(f"psbench {driver} recorded no samples")
    rtt = rtt_ns / 1000.0
    got = {
        "samples": (
            float(np.percentile(rtt, 50, method="inverted_cdf")),
            float(np.percentile(rtt, 99, method="inverted_cdf")),
        )
    }
    got["usage"], got["round_trips"] = usage, len(rtt_ns)  # measured, after the warm-up
    if driver == "cyclonedds":
        sent_ns = samples.records["intended_ns"].astype(np.int64)
        windows = [dc.window_percentiles_us(rtt_ns, sent_ns, q) for q in (50, 99)]
        if windows[0]:  # else less than one second of samples: no per-second figure
            got["per_second"] = (float(np.median(windows[0])), float(np.median(windows[1])))
    return got


def psbench_tput(
    driver: str, size: int, seconds: float, run: str, extra: list[str], cpus=NO_CPUS
) -> tuple[float, int]:
    """psbench's maximum throughput, messages/s on the sub's clock, and the messages the sub
    received: pub back to back (no --rate) to sub, options as TPUT_OPTIONS. Against ddsperf as
    ddsperf computes its own (the median of the whole one-second bins, the first and last
    left out; the run two seconds longer for them); otherwise (received - 1) / (last
    arrival - first arrival), as psbench's reports (measure.throughput)."""
    against_ddsperf = driver == "cyclonedds"
    with tempfile.TemporaryDirectory(prefix="psbench-truth-") as out:
        node_pair(
            driver,
            out,
            run,
            size,
            extra + TPUT_OPTIONS[driver],
            ("sub", "pub"),
            seconds + 2 if against_ddsperf else seconds,
            cpus,
        )
        got = json.loads((Path(out) / "sub.json").read_text())["throughput"]
    if against_ddsperf:
        rate = tput.per_second_median(got["per_bin"], got["bin_ns"])
    else:
        rate = span_rate(got["received"], got["first_arrival_ns"], got["last_arrival_ns"])
    if not rate:
        raise RuntimeError(
            f"psbench {driver} sub received too little for a rate ({got['received']})"
        )
    return rate, got["received"]


def ddsperf_tput(size: int, seconds: float, domain: int, cpus=NO_CPUS) -> tuple[float, int]:
    """ddsperf pub (as fast as it can, reliable, keep_all, KS sized as psbench's CDR sample)
    to ddsperf sub waitset: the median of its per-second rates, the first and last left
    out, and the samples it received."""
    return tput.ddsperf_rate(size, max(seconds, 1.0), domain, "KS", cpus)


def sockperf_rtt(size: int, seconds: float, cpus=NO_CPUS) -> tuple[float, float]:
    """sockperf's own p50 and p99 of the full round trip, in us (the client pings)."""
    port = str(free_udp_port())
    server = subprocess.Popen(
        dc.pinned(["sockperf", "server", "-i", "127.0.0.1", "-p", port], cpus[1]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        time.sleep(0.3)  # the server binds before the client's first message (as bench/overhead)
        client = subprocess.run(
            dc.pinned(
                [
                    "sockperf",
                    "ping-pong",
                    "-i",
                    "127.0.0.1",
                    "-p",
                    port,
                    "-m",
                    str(size),
                    "-t",
                    str(max(1, round(seconds))),
                    "--full-rtt",
                ],
                cpus[0],
            ),
            capture_output=True,
            text=True,
            timeout=seconds + 60,
        )
    finally:
        dc.stop(server)
    found = {}
    for line in client.stdout.splitlines() + client.stderr.splitlines():
        if "---> percentile" in line:
            pct, value = line.split("percentile", 1)[1].split("=")
            found[float(pct)] = float(value)
    if 50.0 not in found or 99.0 not in found:
        raise RuntimeError(
            f"sockperf printed no percentiles: {client.stdout[-400:]}{client.stderr[-400:]}"
        )
    return found[50.0], found[99.0]


def ddsperf_rtt(size: int, seconds: float, domain: int, cpus=NO_CPUS) -> tuple[float, float]:
    """ddsperf prints per-second p50 and p99 of RTT/2; the medians of the seconds, doubled."""
    # ddsperf drops its first second (discovery), so it needs at least two.
    return dc.ddsperf_rtt_percentiles_us(size, max(seconds, 2.0), domain, cpus)


def bootstrap_ratio(
    ps: list[float], inst: list[float], reps: int = 2000, seed: int = 15
) -> tuple[float, float, float]:
    """Ratio of the medians over rounds, and its 95% interval from resampling rounds."""
    a, b = np.asarray(ps), np.asarray(inst)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(reps, len(a)))
    boot = np.median(a[idx], axis=1) / np.median(b[idx], axis=1)
    return (
        float(np.median(a) / np.median(b)),
        float(np.quantile(boot, 0.025)),
        float(np.quantile(boot, 0.975)),
    )


MIN_ROUNDS = 3  # fewer: a bootstrap over rounds cannot show how much they vary


def verdict(lo: float, hi: float, rounds: int = MIN_ROUNDS) -> str:
    if rounds < MIN_ROUNDS:
        return "undecided"
    if lo >= 1 - TOLERANCE and hi <= 1 + TOLERANCE:
        return "within 10%"
    if hi < 1 - TOLERANCE or lo > 1 + TOLERANCE:
        return "not within 10%"
    return "undecided"


def positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be a positive finite number: {text!r}")
        return value

    return parse


def main() -> int:
    dc.unwind_on_signals()
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--drivers", default=",".join(INSTRUMENTS), help="comma-separated (default: %(default)s)"
    )
    ap.add_argument(
        "--sizes", default="64,16384", help="comma-separated message sizes in bytes (>= 32)"
    )
    ap.add_argument(
        "--rounds",
        type=positive(int),
        default=5,
        help="rounds (with --until-decided: at least this many) (default: %(default)s)",
    )
    ap.add_argument(
        "--until-decided",
        action="store_true",
        help="after --rounds, go on with rounds of each driver and size whose verdict is "
        "still undecided (ping-pong: its p50 rows) until every one is decided, or "
        "--max-rounds or --max-minutes is reached",
    )
    ap.add_argument(
        "--max-rounds",
        type=positive(int),
        default=40,
        help="with --until-decided: at most this many rounds (default: %(default)s)",
    )
    ap.add_argument(
        "--max-minutes",
        type=positive(float),
        default=45.0,
        help="with --until-decided: no new round after this long (default: %(default)s)",
    )
    ap.add_argument(
        "--seconds", type=positive(float), default=3.0, help="measuring time of each run"
    )
    ap.add_argument(
        "--cpus",
        default="0,1",
        help="PING_CPU,PONG_CPU: every process of both tools pinned there with taskset "
        "(the pinging one, the echoing one; for throughput the publishing one, "
        "the subscribing one), or 'none' (default: %(default)s)",
    )
    ap.add_argument(
        "--fifo",
        type=int,
        metavar="PRIO",
        help="every process of both tools, and the broker or RouDi they share, under "
        "SCHED_FIFO PRIO (chrt -f; every thread): on a machine busy with other work, that "
        "work waits for the measured processes instead of delaying them (default: the "
        "normal policy)",
    )
    ap.add_argument(
        "--what",
        default=",".join(WHAT),
        help="comma-separated: rtt (ping-pong), throughput (maximum, where an instrument "
        f"exists: {','.join(TPUT_INSTRUMENTS)}) (default: %(default)s)",
    )
    args = ap.parse_args()
    args.what = [w for w in args.what.split(",") if w]
    if not args.what or any(w not in WHAT for w in args.what):
        ap.error(
            f"--what: give rtt, throughput or both (comma-separated), got {','.join(args.what) or '(none)'}"
        )
    cpus = NO_CPUS if args.cpus == "none" else tuple(args.cpus.split(","))
    if len(cpus) != 2 or (cpus[0] is not None and not all(c.isdigit() for c in cpus)):
        ap.error("--cpus: give PING_CPU,PONG_CPU (e.g. 0,1) or none")
    if cpus[0] is not None and not all(int(c) in os.sched_getaffinity(0) for c in cpus):
        ap.error(f"--cpus: CPUs {args.cpus} are not all available here; or use --cpus none")
    if cpus[0] is not None and not shutil.which("taskset"):
        ap.error("--cpus needs taskset (Debian package util-linux); or use --cpus none")
    args.cpus = cpus
    if args.fifo is not None:
        if not 1 <= args.fifo <= 99:
            ap.error("--fifo: a SCHED_FIFO priority is 1 to 99")
        if not shutil.which("chrt"):
            ap.error("--fifo needs chrt (Debian package util-linux)")
        dc.SCHED[:] = ["chrt", "-f", str(args.fifo)]
    drivers = [d for d in args.drivers.split(",") if d]
    unknown = [d for d in drivers if d not in INSTRUMENTS]
    if unknown or not drivers:
        ap.error(
            f"--drivers: no instrument for {','.join(unknown) or '(none)'}; choose from {','.join(INSTRUMENTS)}"
        )
    if args.what == ["throughput"] and not any(d in TPUT_INSTRUMENTS for d in drivers):
        ap.error(
            f"--what throughput: no throughput instrument for {','.join(drivers)}; "
            f"choose from {','.join(TPUT_INSTRUMENTS)}"
        )
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes: give comma-separated integers, got {args.sizes!r}")
    if not sizes or any(s < 32 or s > 65000 for s in sizes):
        ap.error("--sizes: each size must be between 32 (the psbench header) and 65000 bytes")
    if args.seconds > 60 or args.rounds > 100 or args.max_rounds > 200:
        ap.error(
            "--seconds is at most 60, --rounds at most 100 and --max-rounds at most 200 "
            "(bounded run time)"
        )
    if args.until_decided and args.max_rounds < args.rounds:
        ap.error("--max-rounds is less than --rounds")
    if not paths.node_path().exists():
        print("psbench is not built: run 'make build' (or set PSBENCH_BUILD)", file=sys.stderr)
        return 2
    if "throughput" in args.what:
        for d in drivers:
            if d not in TPUT_INSTRUMENTS:
                print(
                    f"throughput skipped {d}: no instrument with a publish/subscribe mode yet",
                    flush=True,
                )
    if "rtt" not in args.what:  # nothing to build or start for the others
        drivers = [d for d in drivers if d in TPUT_INSTRUMENTS]
    runnable, probes = [], {}
    for d in drivers:
        tools = INSTRUMENTS[d]
        lib = paths.driver_library(d)
        missing = [t for t in tools if not t.endswith("_probe") and not shutil.which(t)]
        if any(t.endswith("_probe") for t in tools):
            binary, why = build_probe(d)
            if binary is None:
                print(f"skipped {d}: {why}", flush=True)
                continue
            probes[d] = binary
        if missing:
            print(f"skipped {d}: {', '.join(missing)} is not installed", flush=True)
        elif not lib.exists():
            print(f"skipped {d}: driver not built ({lib})", flush=True)
        else:
            runnable.append(d)

    rows, extra, brokers = {"rtt": {}, "throughput": {}}, {}, {}
    tag = os.getpid() % 10000
    # Brokers and RouDi as psbench itself starts them (python/psbench/run/services.py: the
    # generated configuration on 127.0.0.1 and a free port, RouDi's pools sized for the
    # largest message; a RouDi someone else runs is used and left alone), one per driver
    # for both tools, stopped at the end whatever happens.
    with (
        tempfile.TemporaryDirectory(prefix="psbench-truth-services-") as logs,
        ServicePool(largest_message=max(sizes)) as pool,
    ):
        for d in runnable:
            lib = paths.driver_library(d)
            used = pool.ensure(describe(paths.node_path(), lib), None, Path(logs))
            if dc.SCHED:  # --fifo: the broker both tools go through too (every thread)
                for service in used:
                    if service.proc is not None:
                        subprocess.run(
                            ["chrt", "-a", "-f", "-p", dc.SCHED[-1], str(service.proc.pid)],
                            check=True,
                            capture_output=True,
                        )
            options = broker_options(used)
            if options:
                brokers[d] = options[0].partition("=")[2]
                extra[d] = [a for o in options for a in ("--option", o)]
        load_before = os.getloadavg()
        failed = measure(args, sizes, runnable, Setup(probes, extra, brokers, tag), rows)
        args.load = (load_before, os.getloadavg())
    if failed:
        print(f"{failed} round(s) failed (above) and are not in the tables", flush=True)
    if "rtt" in args.what:
        print_table(rows["rtt"], args.cpus, args.load)
    if rows["throughput"]:
        print_tput_table(rows["throughput"], args.cpus, args.load)
    return 0


class Setup(NamedTuple):
    """What the runs of one invocation share: built probes, psbench's extra node options
    (--option broker=...), brokers' addresses, and a tag for run ids and topics."""

    probes: dict
    extra: dict
    brokers: dict
    tag: int


def in_order(r: int, run_psbench, run_instrument) -> tuple:
    """Both tools' results of round r: psbench first in even rounds, the instrument in odd."""
    if r % 2 == 0:
        ps = run_psbench()
        return ps, run_instrument()
    inst = run_instrument()
    return run_psbench(), inst


def round_label(args, r: int) -> str:
    cap = args.max_rounds if args.until_decided else args.rounds
    return f"round {r + 1}/{cap}{' (at most)' if args.until_decided else ''}"


def undecided(rows, what: str, d: str, size: int) -> bool:
    """Whether a driver and size still has an undecided verdict: for the ping-pong its p50
    rows (one per instrument; p99 rows are printed with their verdict but hold nothing up),
    for the maximum throughput its row."""
    if what == "rtt":
        keys = [(d, tool, size) for tool in INSTRUMENTS[d]]
        series = [[(p[0][0], p[1][0]) for p in rows["rtt"].get(k, [])] for k in keys]
    else:
        series = [[(p[0][0], p[1][0]) for p in rows["throughput"].get((d, size), [])]]
    for pairs in series:
        if not pairs:
            return True
        _, lo, hi = bootstrap_ratio([a for a, _ in pairs], [b for _, b in pairs])
        if verdict(lo, hi, len(pairs)) == "undecided":
            return True
    return False


def measure(args, sizes, runnable, setup: Setup, rows) -> int:
    """Rounds over drivers and sizes, psbench and instruments in rotated order; the
    ping-pong, then the maximum throughput where an instrument exists. A round in which
    either tool fails is printed with the reason and left out of the table (both tools'
    figures of that round: the pairs stay paired); the others go on. With --until-decided,
    after --rounds the rounds go on for the driver, size and kind of run whose verdict is
    still undecided, until none is, --max-rounds rounds are done, or --max-minutes have
    passed (a round is not cut short). Returns how many rounds were left out."""
    failed = 0
    began = time.monotonic()
    r = 0
    while True:
        if r >= args.rounds and not args.until_decided:
            break
        todo = [
            (what, d, i, size)
            for d in runnable
            for i, size in enumerate(sizes)
            for what in ("rtt", "throughput")
            if what in args.what and (what == "rtt" or d in TPUT_INSTRUMENTS)
            and (r < args.rounds or undecided(rows, what, d, size))
        ]  # fmt: skip
        if not todo:
            print(f"until-decided: every verdict decided after {r} round(s)", flush=True)
            break
        if r >= args.max_rounds or time.monotonic() - began >= 60 * args.max_minutes:
            limit = f"{r} rounds" if r >= args.max_rounds else f"{args.max_minutes:g} minutes"
            left = ", ".join(sorted({f"{d} {size} B {what}" for what, d, _, size in todo}))
            busy = os.getloadavg()[0] > (os.cpu_count() or 1)
            hint = (
                f" (the machine is busy: 1-min load average {os.getloadavg()[0]:.1f}; "
                "--fifo 80 keeps other work from delaying the measured processes)"
                if busy and not dc.SCHED
                else ""
            )
            print(f"until-decided: stopped at {limit}; still undecided: {left}{hint}", flush=True)
            break
        for what, d, i, size in todo:
            domain = 201 + (r * len(sizes) + i) % 30  # ddsperf's; psbench's own are 1-200
            one_round = rtt_round if what == "rtt" else tput_round
            try:
                one_round(args, r, d, size, domain, setup, rows[what])
            except RuntimeError as exc:
                failed += 1
                print(f"{round_label(args, r)} {d} {size} B {what}: left out, {exc}", flush=True)
            finally:
                remove_probe_leftovers(f"truth{setup.tag}")
        r += 1
    return failed


def remove_probe_leftovers(tag: str, shm: Path = Path("/dev/shm")) -> list[str]:
    """What a failed iceoryx2 probe of this invocation leaves in shared memory (between
    rounds none runs): its files, named after its tag, and iceoryx2's node records of its
    configuration, named by the configuration's hash that its files carry."""
    own = list(shm.glob(f"iceoryx2_probe_{tag}*"))
    hashes = {p.name.split("_")[3] for p in own if len(p.name.split("_")) > 4}
    found = own + [p for h in hashes for p in shm.glob(f"iox2_{h}_*")]
    for path in found:
        path.unlink(missing_ok=True)
    return [p.name for p in found]


def rotated(names: list[str], r: int) -> list[str]:
    """The order of the tools in round r: each round starts one tool later, so that every
    tool runs first, second, ... alike (two tools: psbench first in even rounds)."""
    k = r % len(names)
    return names[k:] + names[:k]


def rtt_round(args, r, d, size, domain, setup: Setup, rows) -> None:
    """One round of the ping-pong: psbench once and each of the driver's instruments, in
    rotated order; each instrument's row gets the pair (psbench's figures computed as that
    instrument computes its own, the instrument's)."""

    def instrument(tool: str):
        if tool.endswith("_probe"):
            return probe_rtt(
                tool,
                setup.probes[d],
                probe_args(
                    d,
                    setup.brokers.get(d, ""),
                    f"truth{setup.tag}r{r}s{size}",
                    size,
                    args.seconds,
                    domain,
                ),
                args.seconds,
                args.cpus,
            )[:2]
        if tool == "sockperf":
            return sockperf_rtt(size, args.seconds, args.cpus)
        return ddsperf_rtt(size, args.seconds, domain, args.cpus)

    def psbench():
        return psbench_rtt(
            d,
            size,
            args.seconds,
            f"truth{setup.tag}{d}r{r}s{size}",
            setup.extra.get(d, []),
            args.cpus,
        )

    tools = INSTRUMENTS[d]
    got = {}
    for name in rotated(["psbench", *tools], r):
        got[name] = psbench() if name == "psbench" else instrument(name)
    parts = []
    for tool in tools:
        ps = got["psbench"].get("per_second" if tool == "ddsperf" else "samples")
        if ps is None:
            raise RuntimeError(f"psbench {d} recorded less than one second of samples")
        rows.setdefault((d, tool, size), []).append((ps, got[tool]))
        parts.append(
            f"psbench p50/p99 {ps[0]:.2f}/{ps[1]:.2f} us, {tool} {got[tool][0]:.2f}/{got[tool][1]:.2f} us"
        )
    print(f"{round_label(args, r)} {d} {size} B: {'; '.join(parts)}", flush=True)


def tput_round(args, r, d, size, domain, setup: Setup, rows) -> None:
    def instrument():
        if d == "cyclonedds":
            return ddsperf_tput(size, args.seconds, domain, args.cpus)
        return probe_tput(
            TPUT_INSTRUMENTS[d],
            setup.probes[d],
            probe_tput_args(
                d, setup.brokers.get(d, ""), f"truth{setup.tag}t{r}s{size}", size, args.seconds
            ),
            args.seconds,
            args.cpus,
        )

    got = in_order(
        r,
        lambda: psbench_tput(
            d,
            size,
            args.seconds,
            f"truth{setup.tag}{d}t{r}s{size}",
            setup.extra.get(d, []),
            args.cpus,
        ),
        instrument,
    )
    rows.setdefault((d, size), []).append(got)
    print(
        f"{round_label(args, r)} {d} {size} B throughput: psbench {got[0][0]:,.0f} msg/s "
        f"({got[0][1]} received), {TPUT_INSTRUMENTS[d]} {got[1][0]:,.0f} msg/s ({got[1][1]} received)",
        flush=True,
    )


def placement(cpus, sender: str, receiver: str) -> str:
    where = (
        "unpinned" if cpus[0] is None else f"{sender} on CPU {cpus[0]}, {receiver} on CPU {cpus[1]}"
    )
    return where + (f", SCHED_FIFO {dc.SCHED[-1]}" if dc.SCHED else "")


def ratio_cells(ps: list[float], inst: list[float]) -> str:
    """ratio of the medians over rounds, its 95% bootstrap interval, and the verdict."""
    ratio, lo, hi = bootstrap_ratio(ps, inst)
    return f"{ratio:>6.3f} {f'[{lo:.3f}, {hi:.3f}]':>17}  {verdict(lo, hi, len(inst))}"


def load_note(load) -> str:
    """The machine's 1-minute load average before and after the rounds (not controlled)."""
    if not load:
        return "machine load not controlled"
    return f"1-min load average {load[0][0]:.2f} before, {load[1][0]:.2f} after (not controlled)"


def print_table(rows, cpus, load=None) -> None:
    print()
    print(
        f"RTT, closed-loop ping-pong, psbench/instrument (medians over rounds, 95% bootstrap "
        f"interval), {placement(cpus, 'pinging processes', 'echoing ones')}; {load_note(load)}"
    )
    header = f"{'driver':<11} {'instrument':<16} {'size B':>7} {'rounds':>6} {'metric':<6} {'psbench us':>10} {'instr us':>9} {'ratio':>6} {'interval':>17}  verdict"
    print(header)
    print("-" * len(header))
    for (d, tool, size), pairs in rows.items():
        for k, metric in enumerate(("p50", "p99")):
            ps = [p[0][k] for p in pairs]
            inst = [p[1][k] for p in pairs]
            print(
                f"{d:<11} {tool:<16} {size:>7} {len(pairs):>6} {metric:<6} {np.median(ps):>10.2f} "
                f"{np.median(inst):>9.2f} {ratio_cells(ps, inst)}"
            )


def print_tput_table(rows, cpus, load=None) -> None:
    """The maximum throughput, messages/s on the subscriber's clock, and the messages each
    tool's subscribers received over all rounds."""
    print()
    print(
        f"maximum throughput, messages/s, psbench/instrument (medians over rounds, 95% bootstrap "
        f"interval), {placement(cpus, 'publishers', 'subscribers')}; {load_note(load)}"
    )
    header = (
        f"{'driver':<11} {'instrument':<14} {'size B':>7} {'rounds':>6} {'psbench msg/s':>13} "
        f"{'instr msg/s':>12} {'psbench n':>10} {'instr n':>10} {'ratio':>6} {'interval':>17}  verdict"
    )
    print(header)
    print("-" * len(header))
    for (d, size), pairs in rows.items():
        ps, inst = [p[0][0] for p in pairs], [p[1][0] for p in pairs]
        print(
            f"{d:<11} {TPUT_INSTRUMENTS[d]:<14} {size:>7} {len(pairs):>6} {np.median(ps):>13.0f} "
            f"{np.median(inst):>12.0f} {sum(p[0][1] for p in pairs):>10} {sum(p[1][1] for p in pairs):>10} "
            f"{ratio_cells(ps, inst)}"
        )


if __name__ == "__main__":
    try:
        dc.run_main(main)
    except (RuntimeError, UserError) as e:
        sys.exit(f"bench/truth: {e}")
