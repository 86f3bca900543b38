"""Where every sample went, per driver, under the loads where figures used to go wrong.

1. Back to back (`psbench pubsub --rate 0 --duration S`), best effort and reliable where
   the driver offers it (keep_all then, as psbench chooses for flow control), pinned sub
   on the first CPU and pub on the last: the publisher's own count of what it sent, the
   subscriber's distinct arrivals, and the reconciled lost and unaccounted
   (run.json `accounting`), with the run's status.
2. The open-loop sender offered 100 kHz for S seconds over udp and shm: what was due,
   what it wrote, the rate over the window, what was never sent, and the one-way p50.

Prints figures; asserts nothing (tests/test_accounting*.py hold the known answers).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from psbench.base import paths, table

LAUNCHER = paths.REPO_ROOT / "psbench"


def built_drivers() -> list[dict]:
    out = subprocess.run(
        [str(LAUNCHER), "drivers", "--json"], capture_output=True, text=True, check=True
    )
    return [d for d in json.loads(out.stdout) if d.get("describe")]


def run(results: Path, args: list[str]) -> Path | None:
    """One pubsub run, pinned; its run directory (None when none was written)."""
    cpus = sorted(os.sched_getaffinity(0))
    before = set(results.glob("*"))
    subprocess.run(
        [
            str(LAUNCHER),
            "pubsub",
            *args,
            "--cpu",
            f"sub={cpus[0]}",
            "--cpu",
            f"pub={cpus[-1]}",
            "--results",
            str(results),
        ],
        capture_output=True,
        text=True,
    )
    new = sorted(set(results.glob("*")) - before)
    return new[-1] if new else None


def load(run_dir: Path, name: str) -> dict:
    return json.loads((run_dir / f"{name}.json").read_text())


def back_to_back(results: Path, seconds: float) -> None:
    rows = []
    for driver in built_drivers():
        name = driver["name"]
        modes = ["best_effort"] + (
            ["reliable"] if "reliable" in driver["describe"]["capabilities"]["reliability"] else []
        )
        for mode in modes:
            run_dir = run(
                results,
                [
                    "--driver",
                    name,
                    "--rate",
                    "0",
                    "--duration",
                    f"{seconds:g}",
                    "--reliability",
                    mode,
                ],
            )
            if run_dir is None:
                rows.append([name, mode, "-", "-", "-", "-", "no run"])
                continue
            record = load(run_dir, "run")
            a = (record.get("accounting") or {}).get("sub") or {}
            rows.append(
                [
                    name,
                    mode,
                    a.get("published", "-"),
                    a.get("received", "-"),
                    a.get("lost", "-"),
                    a.get("unaccounted", "-"),
                    record["status"],
                ]
            )
    print(
        f"Back to back for {seconds:g} s (./psbench pubsub --driver D --rate 0 --duration "
        f"{seconds:g} --reliability R, sub and pub pinned)"
    )
    print(
        table.render(
            ["driver", "reliability", "pub sent", "sub received", "lost", "unaccounted", "status"],
            rows,
        )
    )


def open_loop(results: Path, seconds: float, rate: float) -> None:
    rows = []
    for name in ("udp", "shm"):
        run_dir = run(
            results, ["--driver", name, "--rate", f"{rate:g}", "--duration", f"{seconds:g}"]
        )
        if run_dir is None:
            rows.append([name, f"{rate:,.0f}", "-", "-", "-", "-"])
            continue
        record, pub = load(run_dir, "run"), load(run_dir, "pub")
        s, t = pub["schedule"], pub["timing"]
        window = (t["measure_end_ns"] - t["measure_start_ns"]) / 1e9
        p50 = ((record.get("stats") or {}).get("sub") or {}).get("one_way", {}).get("p50")
        rows.append(
            [
                name,
                f"{rate:,.0f}",
                f"{s['attempted'] / window:,.0f}",
                s["due"],
                s["not_sent"],
                "-" if p50 is None else f"{p50 / 1e3:.2f}",
            ]
        )
    print(
        f"\nOpen loop at {rate:,.0f} Hz for {seconds:g} s (./psbench pubsub --driver D "
        f"--rate {rate:g} --duration {seconds:g}, sub and pub pinned)"
    )
    print(
        table.render(
            ["driver", "offered Hz", "written Hz (window)", "due", "not sent", "one-way p50 µs"],
            rows,
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rate", type=float, default=100_000.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="psbench-accounting-") as folder:
        results = Path(folder)
        back_to_back(results, args.seconds)
        open_loop(results, args.seconds, args.rate)
    return 0


if __name__ == "__main__":
    sys.exit(main())
