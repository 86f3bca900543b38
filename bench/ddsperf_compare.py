"""How psbench's cyclonedds ping-pong compares with Cyclone's own ddsperf ping-pong.

Both are closed-loop ping-pong between two processes over the same Cyclone DDS library,
with the same configuration (UDP on the loopback interface: the very file the driver
compiles in as transport udp, drivers/cyclonedds/transports/udp.xml, handed to ddsperf
as CYCLONEDDS_URI), the same reliability (reliable: ddsperf's default; -u would make it
best effort), keep_last 1 history (ddsperf's ping-pong history; psbench's driver default),
and the same wake-up path: a waitset on the reader in both processes (psbench --notify
wait; ddsperf "ping waitset" and "pong waitset"), so that every message wakes one
application thread that takes the sample and writes the next one.

Bytes on the wire: psbench's message of S bytes (32-byte header included) is a
psbench::Bytes sample whose CDR form is header 32 + sequence length 4 + S - 32 = S + 4
bytes. ddsperf's default topic KS (seq, keyval, sequence<octet>) with "size S'" has a CDR
form of exactly S' bytes (4 + 4 + 4 + S' - 12), so ddsperf runs with size S + 4. KS is a
keyed topic, psbench's is not; key handling is a little extra work on ddsperf's side.

ddsperf prints, once a second, statistics of that second's samples with the "50%" value
being half of the round-trip time (it records (t_now - t_sent) / 2, in microseconds). The
figure taken from it is twice the median over the measuring seconds of those per-second
medians (the first second, which holds discovery and start-up, is dropped). psbench's
figure is computed the same way from its raw samples: medians of one-second windows of
the measured round trips (after its warm-up), then the median of those.

Runs are interleaved in rounds, the order alternating each round, so that drift of this
noisy machine hits both alike. By default every process of both tools is pinned the same
way with taskset (ping process on CPU 0, pong process on CPU 1; --cpus none leaves the
placement to the scheduler): on these 2-vCPU VMs where the scheduler puts the threads that
wake each other moves a median between about 33 and 80 us from one run to the next, for
either tool, which would otherwise swamp the few percent being compared.
Goal: psbench no more than 5% above ddsperf.
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from psbench.base import paths
from psbench.results.samples import read_samples

REPO = Path(__file__).resolve().parents[1]
UDP_XML = REPO / "drivers" / "cyclonedds" / "transports" / "udp.xml"
CDR_EXTRA = 4  # psbench's CDR form is S + 4 bytes; ddsperf's KS is S' bytes
# "[pid] 3.000  host:pid size 68 mean 36.384us min 8.582us 50% 39.323us 90% ... cnt 13693"
DDSPERF_LINE = re.compile(
    r"^\[\d+\]\s+([0-9.]+)\s+\S+ size (\d+) mean [0-9.]+us min [0-9.]+us "
    r"50% ([0-9.]+)us 90% [0-9.]+us 99% ([0-9.]+)us max [0-9.]+us cnt (\d+)"
)


def stop(proc: subprocess.Popen) -> None:
    """Ends a process we started (its whole session), and reaps it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def window_percentiles_us(
    rtt_ns: np.ndarray, t_ns: np.ndarray, q: float, window_ns: int = 1_000_000_000
) -> list[float]:
    """The q-th percentile of the round trips falling in each full one-second window."""
    if len(t_ns) == 0:
        return []
    windows = (t_ns - t_ns[0]) // window_ns
    out = []
    for w in range(int(windows.max())):  # the last, partial window is left out
        sel = rtt_ns[windows == w]
        if len(sel):
            out.append(float(np.percentile(sel, q)) / 1000.0)
    return out


def window_medians_us(
    rtt_ns: np.ndarray, t_ns: np.ndarray, window_ns: int = 1_000_000_000
) -> list[float]:
    """Medians of the round trips falling in each full one-second window."""
    return window_percentiles_us(rtt_ns, t_ns, 50, window_ns)


# A scheduling policy for every process started through pinned(), e.g. ["chrt", "-f", "80"]
# (bench/truth --fifo): every thread of the process inherits it. Empty: the default.
SCHED: list[str] = []


def pinned(argv: list[str], cpu: str | None) -> list[str]:
    """argv with every thread of the process on one CPU, or as it is (under SCHED)."""
    return [*SCHED, *(["taskset", "-c", cpu] if cpu is not None else []), *argv]


def run_pair(
    name: str,
    first: list[str],
    second: list[str],
    seconds: float,
    first_ends: float = 0.0,
    env: dict | None = None,
) -> tuple[str, str]:
    """Starts `first` (the side that waits: pong, sub), then runs `second` (ping, pub) to
    its end (bounded); then gives `first` up to first_ends seconds to end by itself (0: it
    is stopped at once); env: both's environment. Both stopped whatever happens. Returns
    (second's stdout, first's stdout and stderr); RuntimeError when one that had to end by
    itself failed."""
    with tempfile.TemporaryFile("w+") as first_out:
        a = subprocess.Popen(
            first,
            stdout=first_out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env=env,
        )
        b = None
        try:
            b = subprocess.Popen(
                second,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
                env=env,
            )
            out, err = b.communicate(timeout=seconds + 60)
            if b.returncode != 0:
                raise RuntimeError(
                    f"{name}: the driving side exited {b.returncode}: {err.strip()[-400:]}"
                )
            if first_ends and a.wait(timeout=first_ends) != 0:
                first_out.seek(0)
                raise RuntimeError(
                    f"{name}: the waiting side exited {a.returncode}: "
                    f"{first_out.read().strip()[-400:]}"
                )
        except subprocess.TimeoutExpired as e:
            raise RuntimeError(
                f"{name}: {' '.join(e.cmd[-4:])} did not end within {e.timeout:g} s"
            ) from None
        finally:
            for proc in (b, a):
                if proc is not None:
                    stop(proc)
        first_out.seek(0)
        return out, first_out.read()


def psbench_ping_pong(common: list[str], seconds: float, cpus=(None, None)) -> None:
    """psbench-node's pong, then its ping for `seconds`, each pinned to its CPU in cpus
    (ping's, pong's; None: not pinned); common: node_command and the run's options. Both
    must end by themselves; a failure ends the script with its reason."""
    try:
        run_pair(
            "psbench ping",
            pinned(common + ["--role", "pong"], cpus[1]),
            pinned(common + ["--role", "ping", "--duration", str(seconds)], cpus[0]),
            seconds,
            first_ends=30,
        )
    except RuntimeError as e:
        sys.exit(str(e))


def psbench_rtt_us(node: Path, driver: Path, size: int, seconds: float, run: str, cpus) -> float:
    with tempfile.TemporaryDirectory(prefix="psbench-ddsperf-") as out:
        common = [
            *node_command(node, driver, out, run, size),
            "--reliability",
            "reliable",
            "--notify",
            "wait",
            "--transport",
            "udp",
        ]
        psbench_ping_pong(common, seconds, cpus)
        samples = read_samples(Path(out) / "ping.samples")
        medians = window_medians_us(
            samples.latency_ns.astype(np.int64), samples.records["intended_ns"].astype(np.int64)
        )
        if not medians:
            sys.exit(f"psbench ping recorded less than one second of samples ({len(samples)})")
        return statistics.median(medians)


def ddsperf_rtt_us(size: int, seconds: float, domain: int, cpus) -> float:
    return ddsperf_rtt_percentiles_us(size, seconds, domain, cpus)[0]


def ddsperf_rtt_percentiles_us(size: int, seconds: float, domain: int, cpus) -> tuple[float, float]:
    """Median over the measuring seconds of ddsperf's per-second RTT p50 and p99, in us."""
    env = dict(os.environ, CYCLONEDDS_URI=f"file://{UDP_XML}")
    wire = size + CDR_EXTRA
    # One second more for discovery and the dropped first second.
    duration = str(int(seconds + 1.999))
    base = ["ddsperf", "-i", str(domain)]
    try:
        out, _ = run_pair(
            "ddsperf ping",
            pinned(base + ["-D", str(int(duration) + 3), "pong", "waitset"], cpus[1]),
            pinned(base + ["-D", duration, "ping", "size", str(wire), "waitset"], cpus[0]),
            seconds,
            env=env,
        )
    except RuntimeError as e:
        sys.exit(str(e))
    lines = [m for m in map(DDSPERF_LINE.match, out.splitlines()) if m]
    if any(int(m.group(2)) != wire for m in lines):
        sys.exit(f"ddsperf reported another size than {wire}: {out[-800:]}")
    # Drop the first reported second (discovery, start-up); each "50%" is RTT/2 in us.
    medians = [2.0 * float(m.group(3)) for m in lines[1:]]
    p99s = [2.0 * float(m.group(4)) for m in lines[1:]]
    if not medians:
        sys.exit(f"ddsperf printed no latency statistics: {out[-800:]}")
    return statistics.median(medians), statistics.median(p99s)


def interrupted(signum, frame):
    raise KeyboardInterrupt


def unwind_on_signals() -> None:
    """SIGTERM, and SIGINT even where a shell started us with it ignored, unwind through
    the finally blocks that stop every process started (then run_main says so)."""
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_main(main) -> None:
    """A bench script's end: main's return value is the exit status; an interruption
    (unwind_on_signals) says that every process started was stopped."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit("interrupted: every process started was stopped")


def alternating_rounds(rounds: int, sizes: list[int], other: str, measure,
                       size_note=lambda size: "") -> dict[int, dict[str, list[float]]]:  # fmt: skip
    """results[size][tool]: each round measures psbench and the other tool at every
    size with measure(tool, round, size's index, size), one right after the other in an
    order swapped each round (what drifts falls on both alike); a line per round and size."""
    results = {size: {"psbench": [], other: []} for size in sizes}
    for r in range(rounds):
        for i, size in enumerate(sizes):
            for tool in ["psbench", other] if r % 2 == 0 else [other, "psbench"]:
                results[size][tool].append(measure(tool, r, i, size))
            print(
                f"round {r + 1}/{rounds} size {size:>6} B{size_note(size)}: "
                f"psbench {results[size]['psbench'][-1]:8.2f} us  "
                f"{other} {results[size][other][-1]:8.2f} us",
                flush=True,
            )
    return results


def built(driver: str, tool: str, package: str) -> tuple[Path, Path]:
    """The node and driver's library, once both are built and the tool they are
    compared with is installed; otherwise exits saying what to run."""
    if not shutil.which(tool):
        sys.exit(f"{tool} is not installed: run 'make setup' (Debian package {package})")
    node, library = paths.node_path(), paths.driver_library(driver)
    if not node.exists() or not library.exists():
        sys.exit(f"psbench or its {driver} driver is not built: run 'make build'")
    return node, library


def node_command(node: Path, driver: Path, out: str, run: str, size: int) -> list[str]:
    """psbench-node's arguments that both roles of one run share."""
    return [str(node), "--driver", str(driver), "--out", out, "--run-id", run, "--size", str(size)]


def main() -> None:
    unwind_on_signals()
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0, help="measuring time of each run")
    ap.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[64, 16384],
        help="psbench message sizes in bytes, header included (ddsperf gets size + 4)",
    )
    ap.add_argument(
        "--cpus",
        default="0,1",
        help="PING_CPU,PONG_CPU for the processes of both tools (taskset), or 'none'",
    )
    args = ap.parse_args()
    cpus = (None, None) if args.cpus == "none" else tuple(args.cpus.split(","))
    if len(cpus) != 2 or (cpus[0] is not None and not all(c.isdigit() for c in cpus)):
        sys.exit("--cpus: give PING_CPU,PONG_CPU (e.g. 0,1) or none")
    if cpus[0] is not None and not shutil.which("taskset"):
        sys.exit("--cpus needs taskset (Debian package util-linux); or use --cpus none")
    node, driver = built("cyclonedds", "ddsperf", "cyclonedds-tools")
    if any(size < 32 for size in args.sizes):
        sys.exit("--sizes: a psbench message holds at least its 32-byte header")

    placement = (
        "unpinned"
        if cpus[0] is None
        else f"ping process on CPU {cpus[0]}, pong process on CPU {cpus[1]}"
    )
    print(
        f"both: reliable, keep_last 1, waitset wake-ups, UDP on lo ({UDP_XML.relative_to(REPO)}), "
        f"{placement}, {args.seconds:g} s per run; RTT medians in us",
        flush=True,
    )
    tag = os.getpid() % 10000

    def measure(tool: str, r: int, i: int, size: int) -> float:
        if tool == "psbench":
            return psbench_rtt_us(node, driver, size, args.seconds, f"ddsc{tag}r{r}s{size}", cpus)
        # Domain ids 201-230, unused by psbench's own (1-200).
        return ddsperf_rtt_us(size, args.seconds, 201 + (r * len(args.sizes) + i) % 30, cpus)

    results = alternating_rounds(args.rounds, args.sizes, "ddsperf", measure,
                                 lambda size: f" (ddsperf size {size + CDR_EXTRA})")  # fmt: skip

    print()
    # ratio: of the two medians; paired: the median of each round's own ratio (the two
    # runs of a round are next to each other in time, so drift cancels in it).
    print(
        f"{'size (B)':>9} {'psbench RTT p50 (us)':>21} {'ddsperf RTT p50 (us)':>21} {'ratio':>7} {'paired':>7}"
        f"  goal <= 1.05"
    )
    for size in args.sizes:
        ps, dp = results[size]["psbench"], results[size]["ddsperf"]
        ratio = statistics.median(ps) / statistics.median(dp)
        paired = statistics.median(p / d for p, d in zip(ps, dp))
        verdict = "met" if ratio <= 1.05 else "NOT met"
        print(
            f"{size:>9} {statistics.median(ps):>21.2f} {statistics.median(dp):>21.2f} {ratio:>7.3f} {paired:>7.3f}"
            f"  {verdict}"
        )


if __name__ == "__main__":
    run_main(main)
