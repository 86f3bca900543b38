"""Real sweeps through `psbench run`: dry run, the results store and its index, --filter
and --resume."""

import json

from experiment_files import index_lines, run_experiment, write

SWEEP = """
    name: tiny
    defaults: {kind: ping, count: 200, warmup: 20, timeout: 60}
    matrix:
      driver: [udp, shm]
      size: [64, 256]
"""


def the_store(results):
    found = list(results.glob("*-tiny"))
    assert len(found) == 1, found
    return found[0]


def filtered_run(results, tmp_path, selection: str):
    """The sweep, written and run with --filter selection, which must end ok: (its file,
    the finished process, its store)."""
    path = write(tmp_path, SWEEP)
    proc = run_experiment(path, results, "--filter", selection)
    assert proc.returncode == 0, proc.stderr
    return path, proc, the_store(results)


def test_dry_run_lists_the_runs_and_runs_nothing(driver_libs, results, tmp_path):
    path = write(tmp_path, SWEEP)
    proc = run_experiment(path, results, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    for number, label in enumerate(["udp-64B", "udp-256B", "shm-64B", "shm-256B"], 1):
        assert any(line.split()[:2] == [str(number), label] for line in proc.stdout.splitlines()), (
            proc.stdout
        )
    assert "4 runs" in proc.stdout and "count 200" in proc.stdout
    assert not results.exists()


def check_store(store, path, numbers):
    """The store holds the file as run, the plan, the environment, and an index line per
    run, each naming a run directory whose run.json agrees with it."""
    assert (store / "experiment.yaml").read_bytes() == path.read_bytes()
    expanded = json.loads((store / "experiment.expanded.json").read_text())
    assert expanded["format"] == "psbench-experiment/1" and len(expanded["runs"]) == 4
    assert json.loads((store / "env.json").read_text())["format"] == "psbench-env/1"
    entries = index_lines(store)
    assert sorted(e["run"] for e in entries) == numbers
    plan = {run["run"]: run for run in expanded["runs"]}
    for entry in entries:
        assert entry["format"] == "psbench-index/1"
        assert entry["status"] == "ok", entry["message"]
        assert entry["identity"] == plan[entry["run"]]["identity"]
        assert entry["params"] == plan[entry["run"]]["params"]
        run_dir = store / entry["run_dir"]
        assert run_dir.parent.name == f"{entry['run']:04d}-{entry['label']}"
        record = json.loads((run_dir / "run.json").read_text())
        assert record["status"] == entry["status"] and record["run_id"] == entry["run_id"]
        assert record["spec"]["driver"] == entry["params"]["driver"]
        assert record["spec"]["size"] == entry["params"]["size"]
        assert entry["latency"]["series"] == "rtt_half"
        assert entry["latency"]["n"] == entry["counts"]["samples"] > 0
    return entries


def test_sweep_filter_and_resume(driver_libs, results, tmp_path):
    path, first, store = filtered_run(results, tmp_path, "driver=udp")
    check_store(store, path, [1, 2])
    assert "[2/2] udp-256B: ok" in first.stderr  # one plain progress line per run
    assert "2 runs: 2 ok" in first.stdout

    # --resume alone continues the recorded selection (driver=udp): nothing is left.
    same = run_experiment(path, results, "-o", str(store), "--resume", "--dry-run")
    assert same.returncode == 0, same.stderr
    rows = {
        line.split()[0]: line.split()[-1]
        for line in same.stdout.splitlines()
        if line.split() and line.split()[0].isdigit()
    }
    assert rows == {"1": "(ok)", "2": "(ok)"}, same.stdout

    # A filter given with --resume widens it: the udp runs are already done.
    every = ("--filter", "driver=udp", "--filter", "driver=shm")
    dry = run_experiment(path, results, "-o", str(store), "--resume", "--dry-run", *every)
    assert dry.returncode == 0, dry.stderr
    rows = {
        line.split()[0]: line.split()[-1]
        for line in dry.stdout.splitlines()
        if line.split() and line.split()[0].isdigit()
    }
    assert rows == {"1": "(ok)", "2": "(ok)", "3": "run", "4": "run"}, dry.stdout
    rest = run_experiment(path, results, "-o", str(store), "--resume", *every)
    assert rest.returncode == 0, rest.stderr
    assert "(2 done earlier, kept)" in rest.stdout
    entries = check_store(store, path, [1, 2, 3, 4])

    # A lost line (kill -9 in flight), an interrupted run and a torn last line are run
    # again; the others are not.
    kept = [e for e in entries if e["run"] != 2]
    for entry in kept:
        if entry["run"] == 3:
            entry["status"] = "interrupted"
    lines = [json.dumps(e) for e in kept]
    (store / "index.jsonl").write_text("\n".join(lines) + '\n{"run": 4, "stat')
    again = run_experiment(path, results, "-o", str(store), "--resume", *every)
    assert again.returncode == 0, again.stderr
    new = [e for e in index_lines_tolerant(store) if e not in kept]
    assert sorted(e["run"] for e in new) == [2, 3]
    assert "(2 done earlier, kept)" in again.stdout
    assert len(list((store / "runs").glob("0002-*/*/run.json"))) == 2  # both attempts kept

    nothing = run_experiment(path, results, "-o", str(store), "--resume", *every)
    assert nothing.returncode == 0 and "(4 done earlier, kept)" in nothing.stdout
    assert len(index_lines_tolerant(store)) == len(kept) + 2


def index_lines_tolerant(store):
    found = []
    for line in (store / "index.jsonl").read_text().splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            pass
    return found


def test_resume_refuses_a_changed_file(driver_libs, results, tmp_path):
    path, _, store = filtered_run(results, tmp_path, "run=1")
    path.write_text(path.read_text().replace("count: 200", "count: 300"))
    proc = run_experiment(path, results, "-o", str(store), "--resume")
    assert proc.returncode == 2
    assert str(path) in proc.stderr and str(store / "experiment.yaml") in proc.stderr
    assert len(index_lines(store)) == 1
