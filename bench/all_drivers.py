"""Every built driver side by side, with the baselines, in one interleaved sweep.

Ping-pong (RTT/2) at 64 B and 16 KiB, best effort, each driver with a blocking wake-up
(notify wait) and busy-polling (notify poll) where it supports them, pinned one role per
core. The sweep repeats round by round (`repetitions`), so a slow spell of the machine
spreads over every configuration. Prints the p50 of each (median over repetitions) and
its ratio to the shm baseline with the same notify mode; the results folder keeps
everything for `psbench report`.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from psbench.base import paths, table
from psbench.results.configs import build_configs
from psbench.results.load import load_results

SIZES = (64, 16384)
NOTIFY = ("wait", "poll")
LAUNCHER = paths.REPO_ROOT / "psbench"


def built_drivers() -> list[dict]:
    out = subprocess.run(
        [str(LAUNCHER), "drivers", "--json"], capture_output=True, text=True, check=True
    )
    return [d for d in json.loads(out.stdout) if d.get("describe")]


def experiment(drivers: list[dict], count: int, repetitions: int) -> dict:
    """Explicit runs: each driver with each notify mode of NOTIFY it supports, each size."""
    runs = [
        {"driver": d["name"], "notify": mode, "size": size}
        for d in drivers
        for mode in NOTIFY
        if mode in d["describe"]["capabilities"]["notify"]
        for size in SIZES
    ]
    return {
        "name": "all-drivers",
        "description": "every built driver, ping-pong, blocking and busy-poll",
        "defaults": {"kind": "ping", "count": count, "warmup": count // 10, "timeout": 120},
        "runs": runs,
        "repetitions": repetitions,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000, help="samples per run")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("-o", "--output", help="results folder (default: a new temporary one)")
    args = parser.parse_args()
    out = (
        Path(args.output)
        if args.output
        else Path(tempfile.mkdtemp(prefix="psbench-all-")) / "sweep"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    file = out.parent / "all-drivers.yaml"
    file.write_text(
        yaml.safe_dump(experiment(built_drivers(), args.count, args.repetitions), sort_keys=False)
    )
    proc = subprocess.run([str(LAUNCHER), "run", str(file), "-o", str(out)])
    if proc.returncode not in (0, 1):
        return proc.returncode
    configs = [c for c in build_configs(load_results(out)) if c.ok_runs]
    p50 = {(c.driver, c.params.get("notify"), c.size): c.stats["p50"] for c in configs}
    rows = []
    for driver, mode in dict.fromkeys((c.driver, c.params.get("notify")) for c in configs):
        row = [driver, mode]
        for size in SIZES:
            value, floor = p50.get((driver, mode, size)), p50.get(("shm", mode, size))
            row += [
                f"{value / 1000:.2f}" if value else "-",
                f"{value / floor:.2f}" if value and floor else "-",
            ]
        rows.append(row)
    print(
        table.render(["driver", "notify", "64 B p50 µs", "x shm", "16 KiB p50 µs", "x shm"], rows)
    )
    print(
        f"RTT/2 medians over {args.repetitions} interleaved repetitions of {args.count} "
        f"samples; x shm = ratio to the shm baseline with the same notify mode"
    )
    print(f"results: {out} (psbench report {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
