"""Where the time of psbench's cyclonedds ping-pong goes: psbench against a bare probe doing
exactly what its driver does, and against variants of that probe that differ in one thing
each, interleaved in rounds (bench/truth's method; docs/dds.md has the findings).

Tools, every process pinned as bench/truth pins them (--cpus, default 0,1):
  psbench    psbench-node ping/pong with the cyclonedds driver, --reliability reliable
             --notify wait --transport udp (bench/truth's DDSPERF_LIKE), under taskset
  psbench --pin MODE   the same, pinned by the node itself as the psbench CLI pins
             (--cpu ROLE=CPU --pin MODE; --node-pin role,process): with role, psbench's
             default, Cyclone's own threads keep both CPUs
  probe      bench/probes/cyclonedds with no flag: the driver's path (its type, QoS, XML,
             take into a preallocated buffer, waitset on a read condition, dds_write and
             dds_write_flush; probe.cpp lists every step)
  probe ARGS the probe with one or more variant flags (--variants, ';'-separated), e.g.
             "--take loan", "--wait status", "--type ks"
  ddsperf    ddsperf ping/pong waitset, size S + 4 (with --ddsperf; its own statistic: the
             median of its per-second p50s; the others' p50 is over all round trips)
Each round runs every tool once per size, in an order rotated from round to round
(--fifo PRIO: every process under SCHED_FIFO PRIO, as bench/truth --fifo). The table
gives each tool's median over rounds of its RTT p50 and p99 (us), its ratio to the probe
without flags (the driver's path) with a 95% bootstrap interval over rounds (resampled in
pairs), and the CPU time of both processes and their voluntary context switches per
round trip (psbench: each process's whole life over all its round trips, warm-up
included; the probe: CPU likewise, switches over the measured round trips), and the
1-min load average before and after.

  bench/cyclonedds_paths --sizes 64,16384 --rounds 10 --seconds 3 \\
      --variants "--take loan;--take alloc;--wait status;--type ks" --ddsperf
"""

import argparse
import os
import re
import shlex
import sys

import ddsperf_compare as dc
import numpy as np
import truth

from psbench.base import paths

WARMUP = 1000  # round trips before the measured ones, psbench's and the probe's


def psbench(size: int, seconds: float, run: str, cpus, node_pin: str | None = None) -> tuple:
    """psbench's (p50, p99, CPU us per round trip of both processes, voluntary context
    switches per round trip): whole-process usage over every round trip, warm-up included
    (start-up and discovery too: a small bias upwards)."""
    got = truth.psbench_rtt("cyclonedds", size, seconds, run, [], cpus, node_pin)
    n = got["round_trips"] + WARMUP
    use = got["usage"].values()
    cpu = sum(u["user_s"] + u["sys_s"] for u in use) * 1e6 / n
    vcsw = sum(u["voluntary_ctx_switches"] for u in use) / n
    return (*got["samples"], cpu, vcsw)


USAGE = re.compile(
    r"^usage (\w+) messages (\d+) cpu_us \S+ vcsw (\S+) .* process_cpu_s (\S+)$", re.M
)


def probe(binary, args: list[str], seconds: float, cpus) -> tuple:
    """The probe's (p50, p99, CPU us per round trip, voluntary context switches per round
    trip), its usage counted as psbench's (whole processes, over every round trip)."""
    out, pong_out = dc.run_pair(
        "cyclonedds_probe",
        dc.pinned([str(binary), "pong", *args], cpus[1]),
        dc.pinned([str(binary), "ping", *args], cpus[0]),
        seconds,
        first_ends=10,
    )
    p50, p99, _ = out.splitlines()[0].split()
    lines = {m.group(1): m for m in USAGE.finditer(out + pong_out)}
    if set(lines) != {"ping", "pong"}:
        raise RuntimeError(f"the probe printed no usage: {out[-300:]} {pong_out[-300:]}")
    n = int(lines["ping"].group(2)) + WARMUP
    cpu = sum(float(m.group(4)) for m in lines.values()) * 1e6 / n
    # Voluntary switches: over the measured round trips only (per message already).
    vcsw = sum(float(m.group(3)) for m in lines.values())
    return float(p50), float(p99), cpu, vcsw


def main() -> int:
    dc.unwind_on_signals()
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="64,16384", help="comma-separated (default: %(default)s)")
    ap.add_argument("--rounds", type=truth.positive(int), default=8)
    ap.add_argument("--seconds", type=truth.positive(float), default=3.0)
    ap.add_argument("--cpus", default="0,1", help="PING_CPU,PONG_CPU or none (default: 0,1)")
    ap.add_argument(
        "--variants",
        default="--take loan;--take alloc;--take cdr;--wait status;--order wait;--type ks",
        help="';'-separated probe flag sets, each one tool (default: %(default)s)",
    )
    ap.add_argument("--fifo", type=int, metavar="PRIO", help="as bench/truth --fifo")
    ap.add_argument("--no-psbench", action="store_true", help="probes (and ddsperf) only")
    ap.add_argument("--ddsperf", action="store_true", help="ddsperf ping/pong too")
    ap.add_argument(
        "--node-pin",
        default="",
        help="comma-separated psbench-node --pin modes (role, process) to run as tools of "
        "their own: psbench pinned by the node's --cpu ROLE=CPU --pin MODE, as the psbench "
        "CLI pins, instead of taskset",
    )
    args = ap.parse_args()
    cpus = truth.NO_CPUS if args.cpus == "none" else tuple(args.cpus.split(","))
    if len(cpus) != 2:
        ap.error("--cpus: give PING_CPU,PONG_CPU (e.g. 0,1) or none")
    if args.fifo is not None:
        dc.SCHED[:] = ["chrt", "-f", str(args.fifo)]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    variants = [v.strip() for v in args.variants.split(";") if v.strip()]
    binary, why = truth.build_probe("cyclonedds")
    if binary is None:
        print(f"bench/cyclonedds_paths: {why}", file=sys.stderr)
        return 2
    if not args.no_psbench and not paths.node_path().exists():
        print("psbench is not built: run 'make build'", file=sys.stderr)
        return 2
    tools = (
        ([] if args.no_psbench else ["psbench"])
        + [f"psbench --pin {m}" for m in args.node_pin.split(",") if m]
        + ["probe"]
        + [f"probe {v}" for v in variants]
        + (["ddsperf"] if args.ddsperf else [])
    )
    tag = os.getpid() % 10000
    results = {(t, s): [] for t in tools for s in sizes}
    load_before = os.getloadavg()
    print(
        f"1-min load average at start {load_before[0]:.2f}; {' '.join(dc.SCHED) or 'SCHED_OTHER'}; "
        f"tools: {', '.join(tools)}",
        flush=True,
    )
    for r in range(args.rounds):
        for i, size in enumerate(sizes):
            domain = 201 + (r * len(sizes) + i) % 30
            figures = {}
            for t in truth.rotated(tools, r):
                if t.startswith("psbench"):  # "psbench --pin MODE": the node pins itself
                    pin = t.split()[-1] if t != "psbench" else None
                    got = psbench(size, args.seconds, f"paths{tag}r{r}s{size}", cpus, pin)
                elif t == "ddsperf":
                    got = (*truth.ddsperf_rtt(size, args.seconds, domain, cpus), None, None)
                else:
                    flags = shlex.split(t[len("probe") :])
                    probe_args = truth.probe_args(
                        "cyclonedds", "", f"paths{tag}r{r}s{size}", size, args.seconds, domain
                    )
                    got = probe(binary, probe_args + flags, args.seconds, cpus)
                results[(t, size)].append(got)
                figures[t] = got
            print(
                f"round {r + 1}/{args.rounds} {size} B p50 (cpu us/rt): "
                + ", ".join(
                    f"{t} {v[0]:.2f}" + (f" ({v[2]:.1f})" if v[2] is not None else "")
                    for t, v in figures.items()
                ),
                flush=True,
            )
    load_after = os.getloadavg()
    print()
    print(
        f"RTT us, medians over rounds; ratio to the probe without flags (the driver's path), "
        f"95% bootstrap interval; 1-min load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after"
    )
    header = (
        f"{'tool':<36} {'size B':>7} {'p50':>8} {'p99':>9} {'p50 ratio':>9} {'interval':>17} "
        f"{'cpu us/rt':>9} {'vcsw/rt':>7}"
    )
    print(header)
    print("-" * len(header))
    for size in sizes:
        base = [v[0] for v in results[("probe", size)]]
        for t in tools:
            got = results[(t, size)]
            p50 = [v[0] for v in got]
            ratio, lo, hi = truth.bootstrap_ratio(p50, base)
            cpu = "-" if got[0][2] is None else f"{np.median([v[2] for v in got]):.1f}"
            vcsw = "-" if got[0][3] is None else f"{np.median([v[3] for v in got]):.2f}"
            print(
                f"{t:<36} {size:>7} {np.median(p50):>8.2f} {np.median([v[1] for v in got]):>9.2f} "
                f"{ratio:>9.3f} {f'[{lo:.3f}, {hi:.3f}]':>17} {cpu:>9} {vcsw:>7}"
            )
    return 0


if __name__ == "__main__":
    try:
        dc.run_main(main)
    except RuntimeError as e:
        sys.exit(f"bench/cyclonedds_paths: {e}")
