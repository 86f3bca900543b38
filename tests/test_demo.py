"""`psbench demo`: the baseline comparison, and its behaviour with a driver missing."""

import json

from conftest import run_cli


def demo_summary(results):
    found = list(results.glob("*-demo-*/summary.json"))
    assert len(found) == 1, found
    return found[0].parent, json.loads(found[0].read_text())


def test_demo_runs_all_four(driver_libs, results):
    proc = run_cli(["demo", "--count", "300"], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for i in range(1, 5):
        assert f"[{i}/4]" in proc.stdout
    demo_dir, summary = demo_summary(results)
    assert summary["state"] == "complete"
    rows = summary["rows"]
    assert [(r["driver"], r["size"]) for r in rows] == [
        ("udp", 64), ("udp", 16384), ("shm", 64), ("shm", 16384)]
    for row in rows:
        assert row["status"] == "ok", row["message"]
        assert row["samples"] + row["lost"] == 300
        assert row["rtt_half_ns"]["count"] == row["samples"]
        run = json.loads((demo_dir / row["run_dir"] / "run.json").read_text())
        assert run["status"] == "ok"
        assert run["spec"]["notify"] == "wait" and run["spec"]["placement"] == "inter"
    assert str(demo_dir) in proc.stdout


def test_demo_skips_a_missing_driver(node, driver_libs, results, tmp_path):
    # A build directory holding the real node and only the udp driver.
    build = tmp_path / "build"
    (build / "core").mkdir(parents=True)
    (build / "core" / "psbench-node").symlink_to(node)
    (build / "drivers" / "udp").mkdir(parents=True)
    (build / "drivers" / "udp" / "libpsbench-udp.so").symlink_to(driver_libs["udp"])
    proc = run_cli(["demo", "--count", "100"], results, PSBENCH_BUILD=str(build))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "skipped" in proc.stdout and "shm" in proc.stdout
    _, summary = demo_summary(results)
    statuses = {(r["driver"], r["size"]): r["status"] for r in summary["rows"]}
    assert statuses == {("udp", 64): "ok", ("udp", 16384): "ok",
                        ("shm", 64): "skipped", ("shm", 16384): "skipped"}
