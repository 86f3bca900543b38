"""Maximum throughput (samples/s) of every built driver at 64 B and 1 KiB, and psbench's
Cyclone DDS figure beside Cyclone's own `ddsperf pub` / `ddsperf sub`.

Each run is `psbench pubsub --rate 0`: the publisher writes back to back, reliable with a
keep_all history where the driver offers them (so the writer is flow-controlled by the
reader instead of overwriting), else best effort; the figure is the subscriber's: samples
received over the time between its first and last measured arrival, on its own clock.
Loss is printed beside it (best-effort drivers lose what the reader cannot keep up with).
Processes are pinned one per core (sub on the first CPU, pub on the second).

Cyclone against ddsperf: ddsperf always enables Cyclone's write batching
(dds_write_set_batch), so psbench runs Cyclone with `--option write_batch=true` for that
comparison (and also without it, in the per-driver table, which uses every driver's
defaults). Both use the same UDP-on-loopback configuration (the driver's transport udp,
drivers/cyclonedds/transports/udp.xml, handed to ddsperf as CYCLONEDDS_URI), reliable,
keep_all, a waitset in the subscriber (ddsperf `sub waitset`; psbench `--notify wait`),
and unkeyed topics of (nearly) the same size: psbench's message of S bytes is a CDR sample
of S + 4 bytes with no key; ddsperf runs its unkeyed fixed-size topics, UK1024 (1024
bytes) beside psbench's 1 KiB (1028 bytes) and UK16 (16 bytes, its smallest unkeyed one)
beside psbench's 64 B (68 bytes), where ddsperf carries less. ddsperf's default KS topic
is keyed: an instance lookup per sample on both sides made it 20-30% slower here, which
says more about keys than about either tool (`--ddsperf-topic KS` runs it, sized S + 4
to match psbench's bytes). ddsperf prints the received
rate once a second; its figure is the median of those per-second rates, the first second
(discovery, start-up) and the last (the publisher stopping) left out. psbench's figure is
computed the same way from its per-second series. The two tools run interleaved, round by
round, their order alternating. Goal: psbench's figure within 10% of ddsperf's.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ddsperf_compare import (
    pinned,
    run_main,
    stop,
    unwind_on_signals,
)  # bench/ is this script's folder: its sibling

from psbench.base import paths, table

REPO = paths.REPO_ROOT
LAUNCHER = REPO / "psbench"
UDP_XML = REPO / "drivers" / "cyclonedds" / "transports" / "udp.xml"
CDR_EXTRA = 4  # psbench's CDR form is S + 4 bytes; ddsperf's KS with size S' is S' bytes
# "[pid] 3.000  size 68 total 1504210 lost 0 delta 791258 lost 0 rate 791.24 kS/s ..."
DDSPERF_RATE = re.compile(
    r"^\[\d+\]\s+[0-9.]+\s+size (\d+) total (\d+) lost (\d+) delta \d+ "
    r"lost \d+ rate ([0-9.]+) kS/s"
)


def built_drivers() -> list[dict]:
    out = subprocess.run(
        [str(LAUNCHER), "drivers", "--json"], capture_output=True, text=True, check=True
    )
    return [d for d in json.loads(out.stdout) if d.get("describe")]


def qos_args(caps: dict) -> list[str]:
    """Reliable and keep_all where the driver has them: flow control, not overwriting."""
    args = []
    if "reliable" in caps.get("reliability", []):
        args += ["--reliability", "reliable"]
        if "keep_all" in caps.get("history", []):
            args += ["--history", "keep_all"]
    return args


def psbench_run(driver: str, size: int, seconds: float, extra: list[str], results: Path) -> dict:
    """One `psbench pubsub --rate 0` run; its subscriber's and publisher's throughput."""
    cpus = sorted(os.sched_getaffinity(0))
    argv = [
        str(LAUNCHER),
        "pubsub",
        "--driver",
        driver,
        "--size",
        str(size),
        "--rate",
        "0",
        "--duration",
        f"{seconds:g}",
        "--results",
        str(results),
        "--timeout",
        str(int(seconds * 4 + 60)),
        "--cpu",
        f"sub={cpus[0]}",
        "--cpu",
        f"pub={cpus[-1]}",
        *extra,
    ]
    proc = subprocess.run(argv, capture_output=True, text=True)
    runs = sorted(results.glob(f"*-pubsub-{driver}-{size}B-*"), key=lambda p: p.stat().st_mtime)
    if proc.returncode != 0 or not runs:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["failed"]}
    run_dir = runs[-1]
    sub = json.loads((run_dir / "sub.json").read_text())
    pub = json.loads((run_dir / "pub.json").read_text())
    got, sent = sub["throughput"], pub["throughput"]
    # What the publisher sent and the subscriber lost, reconciled from both sides' counts.
    counts = json.loads((run_dir / "run.json").read_text())["accounting"]["sub"]
    span = (got["last_arrival_ns"] or 0) - (got["first_arrival_ns"] or 0)
    pub_span = (sent["last_send_ns"] or 0) - (sent["first_send_ns"] or 0)
    return {
        "run_dir": str(run_dir),
        "samples_per_s": got["received"] / (span / 1e9) if span > 0 else None,
        "per_second_median": per_second_median(got["per_bin"], got["bin_ns"]),
        "loss_percent": (
            100.0 * counts["lost"] / counts["published"]
            if counts["published"] and counts["lost"] is not None
            else None
        ),
        "pub_rate": sent["sent"] / (pub_span / 1e9) if pub_span > 0 else None,
    }


def per_second_median(per_bin: list[int], bin_ns: int) -> float | None:
    """Median of the whole one-second bins, the first and the last left out (ddsperf's
    way of reading its own output)."""
    inner = per_bin[1:-1]
    return statistics.median(inner) * 1e9 / bin_ns if inner else None


def ddsperf_topic(size: int, topic: str) -> tuple[list[str], list[str], int]:
    """ddsperf's topic arguments, its `pub` size arguments and the size it will report:
    an unkeyed fixed-size topic (UK16 up to 64 B, UK1024 above), or KS sized like
    psbench's CDR sample."""
    if topic == "KS":
        return ["-T", "KS"], ["size", str(size + CDR_EXTRA)], size + CDR_EXTRA
    fixed = 16 if size <= 64 else 1024
    return ["-T", f"UK{fixed}"], [], fixed


def own_cpus() -> tuple[str, str]:
    """(publisher's, subscriber's) CPU as psbench_run places them: sub first, pub last."""
    cpus = sorted(os.sched_getaffinity(0))
    return str(cpus[-1]), str(cpus[0])


def ddsperf_rate(
    size: int, seconds: float, domain: int, topic: str, cpus: tuple[str | None, str | None]
) -> tuple[float, int]:
    """ddsperf pub -> ddsperf sub waitset, pub and sub pinned to cpus (taskset; None: not
    pinned); the median per-second rate, and the samples sub received in all."""
    env = dict(os.environ, CYCLONEDDS_URI=f"file://{UDP_XML}")
    topic_args, size_args, wire = ddsperf_topic(size, topic)
    duration = int(seconds + 2.999)  # the first and last seconds are dropped
    base = ["ddsperf", "-i", str(domain), "-k", "all", *topic_args]
    sub = subprocess.Popen(
        pinned([*base, "-D", str(duration + 2), "sub", "waitset"], cpus[1]),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    pub = None
    try:
        pub = subprocess.Popen(
            pinned([*base, "-D", str(duration), "pub", *size_args], cpus[0]),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        pub.wait(timeout=duration + 60)
        out, _ = sub.communicate(timeout=duration + 60)
    finally:
        for proc in (pub, sub):
            if proc is not None:
                stop(proc)
    lines = [m for m in map(DDSPERF_RATE.match, out.splitlines()) if m and int(m.group(1)) == wire]
    inner = [float(m.group(4)) * 1000 for m in lines[1:-1]]
    if not inner:
        sys.exit(f"ddsperf sub printed too few rate lines: {out[-800:]}")
    return statistics.median(inner), int(lines[-1].group(2))


def fmt(value, digits=0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def all_drivers(sizes, seconds, results) -> None:
    rows = []
    for d in built_drivers():
        caps = d["describe"]["capabilities"]
        variants = [("", qos_args(caps))]
        if d["name"] == "cyclonedds":
            variants.append((" write_batch", qos_args(caps) + ["--option", "write_batch=true"]))
        for suffix, extra in variants:
            for size in sizes:
                r = psbench_run(d["name"], size, seconds, extra, results)
                qos = "reliable" if "reliable" in extra else "best_effort"
                if "error" in r:
                    rows.append(
                        [
                            d["name"] + suffix,
                            size,
                            qos,
                            "failed: " + " ".join(r["error"]),
                            "",
                            "",
                            "",
                        ]
                    )
                    continue
                mbit = r["samples_per_s"] * size * 8 / 1e6 if r["samples_per_s"] else None
                rows.append(
                    [
                        d["name"] + suffix,
                        size,
                        qos,
                        fmt(r["samples_per_s"]),
                        fmt(mbit, 1),
                        fmt(r["loss_percent"], 2),
                        fmt(r["pub_rate"]),
                    ]
                )
                print(
                    f"  {d['name'] + suffix} {size} B: {fmt(r['samples_per_s'])} samples/s",
                    flush=True,
                )
    print(
        table.render(
            ["driver", "size B", "qos", "sub samples/s", "Mbit/s", "loss %", "pub sends/s"], rows
        )
    )


def versus_ddsperf(sizes, seconds, rounds, results, topic) -> None:
    if not shutil.which("ddsperf") or not shutil.which("taskset"):
        print(
            "ddsperf or taskset missing (make setup installs cyclonedds-tools, util-linux): "
            "comparison skipped"
        )
        return
    extra = [
        "--reliability",
        "reliable",
        "--history",
        "keep_all",
        "--notify",
        "wait",
        "--transport",
        "udp",
        "--option",
        "write_batch=true",
    ]
    found = {size: {"psbench": [], "ddsperf": []} for size in sizes}
    for r in range(rounds):
        for i, size in enumerate(sizes):
            for tool in ("psbench", "ddsperf") if r % 2 == 0 else ("ddsperf", "psbench"):
                if tool == "psbench":
                    run = psbench_run("cyclonedds", size, seconds + 2, extra, results)
                    if "error" in run:
                        sys.exit(f"psbench cyclonedds failed: {run['error']}")
                    value = run["per_second_median"]
                else:
                    value = ddsperf_rate(
                        size, seconds, 201 + (r * len(sizes) + i) % 30, topic, own_cpus()
                    )[0]
                found[size][tool].append(value)
            print(
                f"round {r + 1}/{rounds} {size:>5} B: psbench {found[size]['psbench'][-1]:,.0f}"
                f"  ddsperf {found[size]['ddsperf'][-1]:,.0f} samples/s",
                flush=True,
            )
    rows = []
    for size in sizes:
        ps, dp = (
            statistics.median(found[size]["psbench"]),
            statistics.median(found[size]["ddsperf"]),
        )
        ratio = ps / dp
        verdict = (
            "met"
            if 0.9 <= ratio <= 1.1
            else "NOT met: psbench lower"
            if ratio < 0.9
            else "NOT met: psbench higher"
        )
        rows.append([size, fmt(ps), fmt(dp), f"{ratio:.3f}", verdict])
    print(
        table.render(
            ["size B", "psbench samples/s", "ddsperf samples/s", "ratio", "goal 0.90-1.10"], rows
        )
    )
    print(
        "ddsperf topic: "
        + (
            "KS, keyed, sized like psbench's samples"
            if topic == "KS"
            else "unkeyed, UK16 (16 B) beside 64 B, UK1024 (1024 B) beside 1 KiB"
        )
    )


def main() -> int:
    unwind_on_signals()
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seconds", type=float, default=4.0, help="measuring time of each run")
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 1024])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds against ddsperf")
    ap.add_argument("--only", choices=("drivers", "ddsperf"), help="one of the two parts")
    ap.add_argument(
        "--ddsperf-topic",
        choices=("unkeyed", "KS"),
        default="unkeyed",
        help="ddsperf's topic: unkeyed fixed-size (default) or its keyed KS",
    )
    ap.add_argument("-o", "--output", help="results folder (default: a new temporary one)")
    args = ap.parse_args()
    if not paths.node_path().exists():
        sys.exit("psbench is not built: run 'make build'")
    results = Path(args.output or tempfile.mkdtemp(prefix="psbench-throughput-"))
    results.mkdir(parents=True, exist_ok=True)
    if args.only != "ddsperf":
        print(f"every driver, back to back, {args.seconds:g} s per run:", flush=True)
        all_drivers(args.sizes, args.seconds, results)
    if args.only != "drivers":
        print(
            f"\ncyclonedds (write_batch) against ddsperf, {args.rounds} interleaved rounds:",
            flush=True,
        )
        versus_ddsperf(args.sizes, args.seconds, args.rounds, results, args.ddsperf_topic)
    print(f"results: {results} (psbench report {results})")
    return 0


if __name__ == "__main__":
    run_main(main)
