"""What psbench-netdelay adds to one direction of a link (docs/netdelay.md).

Two private namespaces joined by a veth pair (bench/netns_pair.py); a UDP client in one
pings an echo server in the other, one datagram at a time. For each delay D the same
pings run without the NFQUEUE rule (baseline) and then through psbench-netdelay (only the
client -> server direction passes it), and the table shows the added one-way latency:
median(RTT with) - median(RTT without), and the same for p99 (nearest rank). At D = 0 that
is the cost of the stage itself. Prints figures only; nothing is asserted.
"""

import argparse
import math
import os
import statistics
import sys

from netns_pair import HELPER, NetnsPair

WARMUP = 50  # the first pings carry ARP and cold caches


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(0.99 * len(ordered)) - 1]


def rtts_us(pair: NetnsPair, count: int) -> list[float]:
    out = pair.client("ping", count + WARMUP, wait=5)
    if len(out["got"]) != count + WARMUP:
        sys.exit(f"netdelay bench: {count + WARMUP - len(out['got'])} pings were lost")
    return [ns / 1000 for ns in out["rtts_ns"][WARMUP:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pings", type=int, default=1000)
    parser.add_argument("--delays-us", default="0,100,1000,10000")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("netdelay bench: needs root (network namespaces, iptables)")
    if not os.access(HELPER, os.X_OK):
        sys.exit(
            f"netdelay bench: {HELPER} is missing (cmake --build build --target psbench-netdelay)"
        )
    print(f"{args.pings} pings per row after {WARMUP} warm-up; one-way added latency in µs")
    print("| D (µs) | median added | p99 added | baseline RTT median / p99 | helper max_hold_us |")
    print("|---|---|---|---|---|")
    with NetnsPair() as pair:
        for delay in (int(d) for d in args.delays_us.split(",")):
            base = rtts_us(pair, args.pings)
            pair.add_queue_rule()
            pair.start_helper("--delay-us", str(delay))
            held = rtts_us(pair, args.pings)
            summary = pair.stop_helper()
            pair.delete_queue_rule()
            median_added = statistics.median(held) - statistics.median(base)
            p99_added = p99(held) - p99(base)
            print(
                f"| {delay} | {median_added:.1f} | {p99_added:.1f} | "
                f"{statistics.median(base):.1f} / {p99(base):.1f} | {summary['max_hold_us']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
