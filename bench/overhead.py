"""How much the harness adds: psbench's udp ping-pong against sockperf's, on loopback.

Both are closed-loop UDP ping-pong between two processes with blocking receives, same
message size, same duration, run in interleaved rounds (the order alternates each round)
so that drift of this noisy machine hits both alike. Prints the median round-trip time
of each tool (the median over rounds of each run's median) and their ratio.
Goal: psbench no more than 5% above sockperf.
"""

import argparse
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ddsperf_compare import (  # bench/ is this script's folder: its sibling
    alternating_rounds,
    built,
    node_command,
    psbench_ping_pong,
)

from psbench.results.samples import read_samples

SOCKPERF_P50 = re.compile(r"percentile 50\.000 =\s+([0-9.]+)")


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def psbench_median_rtt_us(node: Path, driver: Path, size: int, seconds: float, run: str) -> float:
    with tempfile.TemporaryDirectory(prefix="psbench-overhead-") as out:
        common = node_command(node, driver, out, run, size)
        psbench_ping_pong(common, seconds)
        samples = read_samples(Path(out) / "ping.samples")
        return statistics.median(samples.latency_ns.tolist()) / 1000.0


def sockperf_median_rtt_us(port: int, size: int, seconds: float) -> float:
    out = subprocess.run(
        [
            "sockperf",
            "ping-pong",
            "-i",
            "127.0.0.1",
            "-p",
            str(port),
            "-m",
            str(size),
            "-t",
            str(seconds),
            "--full-rtt",
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )
    match = SOCKPERF_P50.search(out.stdout)
    if out.returncode != 0 or not match:
        sys.exit(f"sockperf failed: {out.stdout[-500:]}{out.stderr[-500:]}")
    return float(match.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0, help="length of each run")
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 16384])
    args = ap.parse_args()
    node, driver = built("udp", "sockperf", "sockperf")

    port = free_udp_port()
    server = subprocess.Popen(
        ["sockperf", "server", "-i", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)

        def measure(tool: str, r: int, _index: int, size: int) -> float:
            if tool == "psbench":
                return psbench_median_rtt_us(node, driver, size, args.seconds, f"ovh{r}s{size}")
            return sockperf_median_rtt_us(port, size, args.seconds)

        results = alternating_rounds(args.rounds, args.sizes, "sockperf", measure)
    finally:
        server.terminate()
        server.wait()

    print()
    print(
        f"{'size (B)':>9} {'psbench RTT p50 (us)':>21} {'sockperf RTT p50 (us)':>22} {'ratio':>7}  goal <= 1.05"
    )
    for size in args.sizes:
        ps = statistics.median(results[size]["psbench"])
        sp = statistics.median(results[size]["sockperf"])
        verdict = "met" if ps / sp <= 1.05 else "NOT met"
        print(f"{size:>9} {ps:>21.2f} {sp:>22.2f} {ps / sp:>7.3f}  {verdict}")


if __name__ == "__main__":
    main()
