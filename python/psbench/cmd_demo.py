"""`psbench demo`: the default comparison of the baseline drivers.

udp and shm, inter-process ping-pong, 64 B and 16 KiB, notify wait, closed loop. A
missing driver is skipped with a note, a failed run is recorded and the sweep goes on.
"""

import sys
import time

from psbench import envinfo, measure, paths, rundir, table
from psbench.options import positive_float, positive_int
from psbench.report import micros
from psbench.spec import MeasureSpec

DEMO_DRIVERS = ("udp", "shm")
DEMO_SIZES = (64, 16 * 1024)
SUMMARY_FORMAT = "psbench-demo/1"


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo", help="compare the baseline drivers (udp, shm) at 64 B and 16 KiB")
    parser.add_argument("--count", type=positive_int, default=10000,
                        help="measured samples per run (default 10000, after 1000 warm-up)")
    parser.add_argument("--timeout", type=positive_float, default=300.0,
                        help="seconds per run (default 300)")
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default results/ or $PSBENCH_RESULTS)")
    parser.set_defaults(handler=run_command)


def size_label(size: int) -> str:
    return f"{size // 1024} KiB" if size >= 1024 and size % 1024 == 0 else f"{size} B"


def _row(driver: str, size: int, outcome: measure.MeasureOutcome | None,
         demo_dir, status: str, message: str | None) -> dict:
    row = {"driver": driver, "size": size, "status": status, "message": message,
           "run_dir": None, "samples": None, "lost": None, "rtt_half_ns": None}
    if outcome is None:
        return row
    row["run_dir"] = str(outcome.run_dir.relative_to(demo_dir))
    counts = (outcome.summaries.get("ping") or {}).get("counts") or {}
    row["samples"], row["lost"] = counts.get("samples"), counts.get("lost")
    half = (outcome.stats.get("ping") or {}).get("rtt_half")
    if half:
        row["rtt_half_ns"] = {k: half[k] for k in ("count", "min", "p50", "p90", "p99",
                                                   "max", "mean")}
    return row


def _table(rows: list[dict]) -> str:
    body = []
    for row in rows:
        half = row["rtt_half_ns"] or {}
        body.append([row["driver"], size_label(row["size"]), row["samples"],
                     *(micros(half.get(k)) if half else "-" for k in ("p50", "p90", "p99",
                                                                        "max")),
                     row["lost"], row["status"]])
    return table.render(["driver", "size", "samples", "RTT/2 p50 µs", "p90 µs", "p99 µs",
                         "max µs", "lost", "status"], body)


def _write_summary(demo_dir, env: dict, count: int, rows: list[dict], state: str) -> None:
    rundir.write_json(demo_dir / "summary.json", {
        "format": SUMMARY_FORMAT, "state": state, "written_utc": rundir.utc_now(),
        "plan": {"drivers": list(DEMO_DRIVERS), "sizes": list(DEMO_SIZES),
                 "placement": "inter", "notify": "wait", "mode": "closed_loop",
                 "count": count},
        "latency": "rtt_half_ns = one-way estimate RTT/2 in ns",
        "rows": rows, "env": env})


def run_command(args) -> int:
    paths.require_node()
    env = envinfo.collect()
    libraries = paths.driver_libraries()
    root = paths.results_dir(args.results)
    demo_dir = rundir.create(root, f"{rundir.utc_stamp()}-demo-{rundir.new_run_id()}")
    plan = [(d, s) for d in DEMO_DRIVERS for s in DEMO_SIZES]
    rows: list[dict] = []
    state = "complete"
    try:
        for i, (driver, size) in enumerate(plan, 1):
            label = f"[{i}/{len(plan)}] {driver} {size_label(size)}"
            if driver not in libraries:
                reason = (f"driver {driver!r} is not built (no {paths.build_dir()}/drivers/"
                          f"{driver}/libpsbench-{driver}.so); run `make build`")
                print(f"{label}: skipped: {reason}", flush=True)
                rows.append(_row(driver, size, None, demo_dir, "skipped", reason))
                continue
            print(f"{label} ...", end=" ", flush=True)
            started = time.monotonic()
            spec = MeasureSpec(kind="ping", driver=driver, driver_path=libraries[driver],
                               size=size, count=args.count, notify="wait",
                               placement="inter", timeout=args.timeout)
            outcome = measure.run(spec, demo_dir, env, ["psbench", *sys.argv[1:]])
            print(f"{outcome.status} ({time.monotonic() - started:.1f} s)", flush=True)
            rows.append(_row(driver, size, outcome, demo_dir, outcome.status,
                             outcome.message))
            _write_summary(demo_dir, env, args.count, rows, "running")
            if outcome.status == "interrupted":
                state = "interrupted"
                break
    except KeyboardInterrupt:
        state = "interrupted"
    _write_summary(demo_dir, env, args.count, rows, state)
    print()
    print(_table(rows) if rows else "no runs")
    print("RTT/2 = one-way estimate, half the round trip; inter-process ping-pong, "
          "notify wait, closed loop")
    for row in rows:
        if row["status"] != "ok":
            print(f"{row['driver']} {size_label(row['size'])} {row['status']}: "
                  f"{row['message']}")
    print(f"results: {demo_dir} (summary.json, one directory per run)")
    if state == "interrupted":
        print("demo interrupted", file=sys.stderr)
        return 130
    return 0 if all(r["status"] == "ok" for r in rows) else 1


