"""psbench against an independent instrument, per driver, interleaved in one invocation.

For each driver and size, rounds alternate a psbench closed-loop ping-pong and the same
ping-pong by an instrument that shares no code with psbench:
  udp         sockperf ping-pong against a sockperf server on 127.0.0.1 (its RTT percentiles)
  cyclonedds  Cyclone's ddsperf ping/pong, waitset wake-ups, same UDP-on-lo config
              (bench/ddsperf_compare.py holds the like-for-like details)
  nats        bench/probes/nats: bare cnats ping-pong (send_asap, sync subscription)
  zeromq      bench/probes/zeromq: bare libzmq XPUB/SUB ping-pong over tcp on 127.0.0.1,
              blocking receive (the driver's default transport and wait)
  mqtt        bench/probes/mqtt: bare libmosquitto ping-pong, QoS 0, TCP_NODELAY, no loop
              thread (mosquitto_loop with a timeout, as the driver's wait mode)
  redis       bench/probes/redis: bare hiredis ping-pong, a publishing and a subscribed
              connection per side, PUBLISH not waited for, blocking receive
  iceoryx     bench/probes/iceoryx: bare iceoryx 2.0 ping-pong, UntypedPublisher loan, copy,
              publish; UntypedSubscriber take with a WaitSet; the driver's default QoS
  fastdds     bench/probes/fastdds ping/pong: bare Fast DDS DataWriter/DataReader, the
              driver's type, builtin transports (shm + UDP on lo), best effort keep_last 1,
              take_next_sample then wait_for_unread_message
The probes are small CMake projects under bench/probes/, built on request into
build/probes/<driver> (a driver whose probe cannot be built is skipped, with the reason).
nats-server, mosquitto, redis-server and iox-roudi are psbench's own services
(python/psbench/services.py: generated configuration, 127.0.0.1 and a free port, RouDi
sized for the largest message; a RouDi already running is used and left alone), one per
driver for both tools, stopped at the end.
Every process of both tools is pinned the same way (--cpus, default 0,1: the pinging
process on CPU 0, the echoing one on CPU 1, with taskset; `none` leaves them to the
scheduler): on 2-vCPU VMs where the scheduler puts two threads that wake each other
moves a median by 2x from one run to the next, for either tool. Against ddsperf,
psbench's figures are computed as ddsperf computes its own: the median over one-second
windows of each window's p50 and p99.
Each round gives one p50 and one p99 of the round trip per tool. The table prints the
ratio psbench/instrument of the medians over rounds, with a 95% bootstrap interval
(rounds resampled in pairs), and "within 10%" when the whole interval lies in
[0.90, 1.10]; "not within 10%" when it lies wholly outside; otherwise, and always with
fewer than 3 rounds, "undecided".
Drivers without an instrument yet are listed as skipped, with the reason.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

import ddsperf_compare as dc
from psbench import paths
from psbench.drivers import describe
from psbench.errors import UserError
from psbench.samples import read_samples
from psbench.services import ServicePool, broker_options

INSTRUMENTS = {"udp": "sockperf", "cyclonedds": "ddsperf", "zeromq": "zeromq_probe", "nats": "nats_probe",
               "mqtt": "mqtt_probe", "redis": "redis_probe", "iceoryx": "iceoryx_probe",
               "fastdds": "fastdds_probe"}
REPO = Path(__file__).resolve().parents[1]
NO_CPUS = (None, None)   # (ping's, pong's) CPU: none, the scheduler places them
# Probes are their own small CMake projects, built on request into the worktree's build/.
PROBES_BUILD = REPO / "build" / "probes"


def build_probe(name: str) -> tuple[Path | None, str]:
    """The probe's binary, built now if needed; or None and why it cannot be built."""
    src, out = REPO / "bench" / "probes" / name, PROBES_BUILD / name
    binary = out / f"{name}_probe"
    if binary.exists():
        return binary, ""
    for step in (["cmake", "-S", str(src), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release"],
                 ["cmake", "--build", str(out)]):
        res = subprocess.run(step, capture_output=True, text=True, timeout=300)
        if res.returncode != 0:
            lines = [l for l in (res.stderr + res.stdout).splitlines() if l.strip()]
            return None, f"probe build failed: {lines[-1] if lines else step}"
    if not binary.exists():
        return None, f"probe build made no {binary.name}"
    return binary, ""


def free_tcp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def probe_rtt(name: str, binary: Path, args: list[str], seconds: float,
              cpus=NO_CPUS) -> tuple[float, float, int]:
    """A bare probe's own p50 and p99 of the round trip, in us, and its number of round
    trips: `binary pong ARGS` then `binary ping ARGS`, ping printing "p50 p99 n"; both
    stopped whatever happens. cpus: (ping's, pong's) CPU for taskset, or None each."""
    pong = subprocess.Popen(dc.pinned([str(binary), "pong", *args], cpus[1]), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    ping = None
    try:
        ping = subprocess.Popen(dc.pinned([str(binary), "ping", *args], cpus[0]), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        out, err = ping.communicate(timeout=seconds + 60)
        if ping.returncode != 0:
            raise RuntimeError(f"{name} failed: {err.strip()}")
    finally:
        for proc in (ping, pong):
            if proc is not None:
                dc.stop(proc)
    p50, p99, n = out.split()
    return float(p50), float(p99), int(n)


def probe_args(driver: str, broker: str, tag: str, size: int, seconds: float) -> list[str]:
    """The command line of a driver's bare probe after its role (see each probe.cpp)."""
    if driver == "zeromq":   # PORT_A PORT_B: ping's XPUB and pong's XPUB bind them
        return [str(free_tcp_port()), str(free_tcp_port()), str(size), str(seconds)]
    if driver == "iceoryx":  # no address: RouDi is found by its well-known socket
        return [tag, str(size), str(seconds)]
    if driver == "fastdds":  # the driver's defaults; a domain of the probe's own per run
        return ["--transport", "builtin", "--best-effort", "--keep-last", "1", "--size", str(size),
                "--domain", str(150 + zlib.crc32(tag.encode()) % 50), "--duration", str(seconds)]
    return [f"nats://{broker}" if driver == "nats" else broker, tag, str(size), str(seconds)]


TOLERANCE = 0.10


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def psbench_rtt(driver: str, size: int, seconds: float, run: str, extra: list[str],
                cpus=NO_CPUS) -> tuple[float, float]:
    """p50 and p99 of psbench's measured round trips, in us (driver defaults, notify wait).
    Against ddsperf (cyclonedds) as ddsperf computes its own: the median over the
    one-second windows of each window's p50 and p99; otherwise over all samples."""
    lib = paths.build_dir() / "drivers" / driver / f"libpsbench-{driver}.so"
    with tempfile.TemporaryDirectory(prefix="psbench-truth-") as out:
        common = [str(paths.node_path()), "--driver", str(lib), "--out", out, "--run-id", run,
                  "--size", str(size), *extra]
        if driver == "cyclonedds":
            common += ["--reliability", "reliable", "--notify", "wait", "--transport", "udp"]
        pong = subprocess.Popen(dc.pinned(common + ["--role", "pong"], cpus[1]), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        ping = None
        try:
            ping = subprocess.Popen(dc.pinned(common + ["--role", "ping", "--duration", str(seconds)], cpus[0]),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            _, err = ping.communicate(timeout=seconds + 60)
            if ping.returncode != 0:
                raise RuntimeError(f"psbench {driver} ping failed: {err.strip()}")
            pong.wait(timeout=30)
        finally:
            for proc in (ping, pong):
                if proc is not None:
                    dc.stop(proc)
        samples = read_samples(Path(out) / "ping.samples")
    rtt_ns = samples.latency_ns.astype(np.int64)
    if driver == "cyclonedds":
        sent_ns = samples.records["intended_ns"].astype(np.int64)
        windows = [dc.window_percentiles_us(rtt_ns, sent_ns, q) for q in (50, 99)]
        if not windows[0]:
            raise RuntimeError(f"psbench {driver} recorded less than one second of samples")
        return float(np.median(windows[0])), float(np.median(windows[1]))
    if len(rtt_ns) == 0:
        raise RuntimeError(f"psbench {driver} recorded no samples")
    rtt = rtt_ns / 1000.0
    return float(np.percentile(rtt, 50, method="inverted_cdf")), float(np.percentile(rtt, 99, method="inverted_cdf"))


def sockperf_rtt(size: int, seconds: float, cpus=NO_CPUS) -> tuple[float, float]:
    """sockperf's own p50 and p99 of the full round trip, in us (the client pings)."""
    port = str(free_udp_port())
    server = subprocess.Popen(dc.pinned(["sockperf", "server", "-i", "127.0.0.1", "-p", port], cpus[1]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(0.3)  # the server binds before the client's first message (as bench/overhead)
        client = subprocess.run(dc.pinned(["sockperf", "ping-pong", "-i", "127.0.0.1", "-p", port,
                                           "-m", str(size), "-t", str(max(1, round(seconds))),
                                           "--full-rtt"], cpus[0]),
                                capture_output=True, text=True, timeout=seconds + 60)
    finally:
        dc.stop(server)
    found = {}
    for line in client.stdout.splitlines() + client.stderr.splitlines():
        if "---> percentile" in line:
            pct, value = line.split("percentile", 1)[1].split("=")
            found[float(pct)] = float(value)
    if 50.0 not in found or 99.0 not in found:
        raise RuntimeError(f"sockperf printed no percentiles: {client.stdout[-400:]}{client.stderr[-400:]}")
    return found[50.0], found[99.0]


def ddsperf_rtt(size: int, seconds: float, domain: int, cpus=NO_CPUS) -> tuple[float, float]:
    """ddsperf prints per-second p50 and p99 of RTT/2; the medians of the seconds, doubled."""
    # ddsperf drops its first second (discovery), so it needs at least two.
    return dc.ddsperf_rtt_percentiles_us(size, max(seconds, 2.0), domain, cpus)


def bootstrap_ratio(ps: list[float], inst: list[float], reps: int = 2000, seed: int = 15) -> tuple[float, float, float]:
    """Ratio of the medians over rounds, and its 95% interval from resampling rounds."""
    a, b = np.asarray(ps), np.asarray(inst)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(reps, len(a)))
    boot = np.median(a[idx], axis=1) / np.median(b[idx], axis=1)
    return float(np.median(a) / np.median(b)), float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))


MIN_ROUNDS = 3   # fewer: a bootstrap over rounds cannot show how much they vary


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
            raise argparse.ArgumentTypeError(f"not a number: {text!r}")
        if not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be a positive finite number: {text!r}")
        return value
    return parse


def main() -> int:
    signal.signal(signal.SIGTERM, dc.interrupted)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drivers", default=",".join(INSTRUMENTS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--sizes", default="64,16384", help="comma-separated message sizes in bytes (>= 32)")
    ap.add_argument("--rounds", type=positive(int), default=5)
    ap.add_argument("--seconds", type=positive(float), default=3.0, help="measuring time of each run")
    ap.add_argument("--cpus", default="0,1",
                    help="PING_CPU,PONG_CPU: every process of both tools pinned there with taskset "
                         "(the pinging one, the echoing one), or 'none' (default: %(default)s)")
    args = ap.parse_args()
    cpus = NO_CPUS if args.cpus == "none" else tuple(args.cpus.split(","))
    if len(cpus) != 2 or (cpus[0] is not None and not all(c.isdigit() for c in cpus)):
        ap.error("--cpus: give PING_CPU,PONG_CPU (e.g. 0,1) or none")
    if cpus[0] is not None and not all(int(c) in os.sched_getaffinity(0) for c in cpus):
        ap.error(f"--cpus: CPUs {args.cpus} are not all available here; or use --cpus none")
    if cpus[0] is not None and not shutil.which("taskset"):
        ap.error("--cpus needs taskset (Debian package util-linux); or use --cpus none")
    args.cpus = cpus
    drivers = [d for d in args.drivers.split(",") if d]
    unknown = [d for d in drivers if d not in INSTRUMENTS]
    if unknown or not drivers:
        ap.error(f"--drivers: no instrument for {','.join(unknown) or '(none)'}; choose from {','.join(INSTRUMENTS)}")
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes: give comma-separated integers, got {args.sizes!r}")
    if not sizes or any(s < 32 or s > 65000 for s in sizes):
        ap.error("--sizes: each size must be between 32 (the psbench header) and 65000 bytes")
    if args.seconds > 60 or args.rounds > 100:
        ap.error("--seconds is at most 60 and --rounds at most 100 (bounded run time)")
    if not paths.node_path().exists():
        print("psbench is not built: run 'make build' (or set PSBENCH_BUILD)", file=sys.stderr)
        return 2
    runnable, probes = [], {}
    for d in drivers:
        tool = INSTRUMENTS[d]
        lib = paths.build_dir() / "drivers" / d / f"libpsbench-{d}.so"
        if tool.endswith("_probe"):
            binary, why = build_probe(d)
            if binary is None:
                print(f"skipped {d}: {why}", flush=True)
                continue
            probes[d] = binary
        if not tool.endswith("_probe") and not shutil.which(tool):
            print(f"skipped {d}: {tool} is not installed", flush=True)
        elif not lib.exists():
            print(f"skipped {d}: driver not built ({lib})", flush=True)
        else:
            runnable.append(d)

    rows, extra, brokers = {}, {}, {}
    tag = os.getpid() % 10000
    # Brokers and RouDi as psbench itself starts them (python/psbench/services.py: the
    # generated configuration on 127.0.0.1 and a free port, RouDi's pools sized for the
    # largest message; a RouDi someone else runs is used and left alone), one per driver
    # for both tools, stopped at the end whatever happens.
    with tempfile.TemporaryDirectory(prefix="psbench-truth-services-") as logs, \
            ServicePool(largest_message=max(sizes)) as pool:
        for d in runnable:
            lib = paths.build_dir() / "drivers" / d / f"libpsbench-{d}.so"
            used = pool.ensure(describe(paths.node_path(), lib), None, Path(logs))
            options = broker_options(used)
            if options:
                brokers[d] = options[0].partition("=")[2]
                extra[d] = [a for o in options for a in ("--option", o)]
        measure(args, sizes, runnable, probes, extra, rows, tag, brokers)
    print_table(rows, args.cpus)
    return 0


def measure(args, sizes, runnable, probes, extra, rows, tag, brokers) -> None:
    """Rounds over drivers and sizes, psbench and instrument in alternating order."""
    for r in range(args.rounds):
        for d in runnable:
            for i, size in enumerate(sizes):
                order = ["psbench", "instrument"] if r % 2 == 0 else ["instrument", "psbench"]
                got = {}
                for tool in order:
                    if tool == "psbench":
                        got[tool] = psbench_rtt(d, size, args.seconds, f"truth{tag}{d}r{r}s{size}",
                                                extra.get(d, []), args.cpus)
                    elif d in probes:
                        got[tool] = probe_rtt(INSTRUMENTS[d], probes[d], probe_args(
                            d, brokers.get(d, ""), f"truth{tag}r{r}s{size}", size, args.seconds),
                            args.seconds, args.cpus)[:2]
                    elif d == "udp":
                        got[tool] = sockperf_rtt(size, args.seconds, args.cpus)
                    else:
                        got[tool] = ddsperf_rtt(size, args.seconds, 201 + (r * len(sizes) + i) % 30,
                                                args.cpus)
                rows.setdefault((d, size), []).append((got["psbench"], got["instrument"]))
                print(f"round {r + 1}/{args.rounds} {d} {size} B: psbench p50/p99 "
                      f"{got['psbench'][0]:.2f}/{got['psbench'][1]:.2f} us, {INSTRUMENTS[d]} "
                      f"{got['instrument'][0]:.2f}/{got['instrument'][1]:.2f} us", flush=True)



def print_table(rows, cpus) -> None:
    print()
    placement = ("unpinned" if cpus[0] is None else
                 f"pinging processes on CPU {cpus[0]}, echoing ones on CPU {cpus[1]}")
    print(f"RTT, closed-loop ping-pong, psbench/instrument (medians over rounds, 95% bootstrap "
          f"interval), {placement}; machine load not controlled")
    header = f"{'driver':<11} {'instrument':<12} {'size B':>7} {'rounds':>6} {'metric':<6} {'psbench us':>10} {'instr us':>9} {'ratio':>6} {'interval':>17}  verdict"
    print(header)
    print("-" * len(header))
    for (d, size), pairs in rows.items():
        for k, metric in enumerate(("p50", "p99")):
            ps = [p[0][k] for p in pairs]
            inst = [p[1][k] for p in pairs]
            ratio, lo, hi = bootstrap_ratio(ps, inst)
            print(f"{d:<11} {INSTRUMENTS[d]:<12} {size:>7} {len(pairs):>6} {metric:<6} {np.median(ps):>10.2f} "
                  f"{np.median(inst):>9.2f} {ratio:>6.3f} {f'[{lo:.3f}, {hi:.3f}]':>17}  {verdict(lo, hi, len(inst))}")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit("interrupted: every process started was stopped")
    except (RuntimeError, UserError) as e:
        sys.exit(f"bench/truth: {e}")
