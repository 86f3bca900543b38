"""Where the time of one psbench run goes, from the shell prompt back to it.

    .venv/bin/python bench/run_cost.py [--drivers udp,cyclonedds,mqtt] [--rounds 5]

Prints, per driver, the whole process as a user runs it (`./psbench ping --driver D
--count 100`, median of the rounds) against a bare `python -c 'import numpy'`, then one
run taken apart: the interpreter, psbench's imports, the driver's description, services,
the node processes (start, discovery, warm-up, measuring, teardown: from the nodes' own
CLOCK_MONOTONIC stamps), the summaries, the files written and the text. The parts are
timed inside a run of the real CLI (this script wraps psbench's functions with clocks;
nothing else changes); "other" is what is left of the whole.
The goal (issue "Truth and speed"): udp at most 0.3 s and 3.5 x the bare numpy import.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = REPO / ".venv" / "bin" / "python"
GOAL_S, GOAL_RATIO = 0.3, 3.5


def wall(argv: list[str], env: dict | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   cwd=REPO, env=env)  # fmt: skip
    return time.perf_counter() - started


def median_of(rounds: int, argv: list[str], env: dict | None = None) -> float:
    wall(argv, env)  # a first one fills the OS's and Python's caches
    return statistics.median(wall(argv, env) for _ in range(rounds))


def child(driver: str, out: Path) -> None:
    """One run of the CLI in this process, its parts timed (--child)."""
    started = time.perf_counter()
    sys.path.insert(0, str(REPO / "python"))
    parts: dict[str, float] = {}

    def timed(owner, name: str, part: str):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                parts[part] = parts.get(part, 0.0) + time.perf_counter() - t

        setattr(owner, name, wrapper)

    import numpy  # noqa: F401

    from psbench.cli import cmd_measure, main  # noqa: F401
    from psbench.report import run_text
    from psbench.results import rundir
    from psbench.run import drivers, envinfo, measure, services

    parts["imports"] = time.perf_counter() - started
    timed(drivers, "describe", "driver description")
    timed(services.ServicePool, "ensure", "services")
    timed(measure, "_launch", "node processes")
    timed(measure, "_analyse", "summaries")
    timed(rundir, "write_json", "files (json)")
    timed(run_text, "render", "text")
    timed(envinfo, "collect", "environment snapshot")
    results = out / "results"
    os.environ["PSBENCH_RESULTS"] = str(results)
    sys.argv = ["psbench", "ping", "--driver", driver, "--count", "100", "--quiet"]
    with open(os.devnull, "w") as devnull:
        stdout, sys.stdout = sys.stdout, devnull
        try:
            main.main()
        finally:
            sys.stdout = stdout
    parts["main() total"] = time.perf_counter() - started
    run_dir = next(results.rglob("run.json")).parent
    timing = {role: json.loads((run_dir / f"{role}.json").read_text())["timing"]
              for role in ("ping", "pong")}  # fmt: skip
    ping = timing["ping"]
    first_start = min(t["started_ns"] for t in timing.values())
    last_open = max(t["opened_ns"] for t in timing.values())
    parts["  node start (exec to driver open)"] = (last_open - first_start) / 1e9
    parts["  discovery (open to matched)"] = (ping["matched_ns"] - last_open) / 1e9
    parts["  warm-up (matched to measuring)"] = (
        ping["measure_start_ns"] - ping["matched_ns"]
    ) / 1e9
    parts["  measuring (100 round trips)"] = (
        ping["measure_end_ns"] - ping["measure_start_ns"]
    ) / 1e9
    (out / "parts.json").write_text(json.dumps(parts))


def breakdown(driver: str, rounds: int, tmp: Path) -> dict[str, float]:
    """Median of each part over the rounds."""
    found: dict[str, list[float]] = {}
    for i in range(rounds + 1):
        out = tmp / f"{driver}-{i}"
        out.mkdir(parents=True)
        subprocess.run([str(PYTHON), __file__, "--child", driver, str(out)], check=True,
                       cwd=REPO)  # fmt: skip
        if i == 0:
            continue  # warm caches
        for part, seconds in json.loads((out / "parts.json").read_text()).items():
            found.setdefault(part, []).append(seconds)
    return {part: statistics.median(values) for part, values in found.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", default="udp,cyclonedds,mqtt")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0
    import tempfile

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user runs it: cached bytecode
    bare = median_of(args.rounds, [str(PYTHON), "-c", "pass"], env)
    numpy = median_of(args.rounds, [str(PYTHON), "-c", "import numpy"], env)
    print(f"python -c pass            {bare * 1000:7.1f} ms")
    print(f"python -c 'import numpy'  {numpy * 1000:7.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        env["PSBENCH_RESULTS"] = tmp
        for driver in args.drivers.split(","):
            whole = median_of(args.rounds, [str(REPO / "psbench"), "ping", "--driver", driver,
                                            "--count", "100"], env)  # fmt: skip
            verdict = "meets" if whole <= GOAL_S and whole <= GOAL_RATIO * numpy else "misses"
            print(f"\n./psbench ping --driver {driver} --count 100: {whole * 1000:.1f} ms, "
                  f"{whole / numpy:.2f} x the numpy import ({verdict} the goal: <= "
                  f"{GOAL_S * 1000:.0f} ms and <= {GOAL_RATIO:g} x)")  # fmt: skip
            parts = breakdown(driver, args.rounds, Path(tmp) / "parts")
            total = parts.pop("main() total")
            print(f"  {'interpreter start':38} {bare * 1000:7.1f} ms")
            for part, seconds in parts.items():
                print(f"  {part:38} {seconds * 1000:7.1f} ms")
            inside = sum(v for k, v in parts.items() if not k.startswith("  "))
            print(f"  {'other (in main, not above)':38} {(total - inside) * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
