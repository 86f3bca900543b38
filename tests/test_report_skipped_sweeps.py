"""`psbench report DIR` of a folder with run folders and sweep folders says which sweeps
it skipped; a folder of sweeps only is refused naming them."""

import shutil

from conftest import run_cli
from experiment_files import run_experiment, write

SWEEP = """
    name: tiny
    defaults: {kind: ping, driver: udp, count: 200, warmup: 20, timeout: 60}
"""


def test_sweeps_inside_a_folder_are_named(driver_libs, results, tmp_path):
    folder = tmp_path / "all"
    path = write(tmp_path, SWEEP)
    assert run_experiment(path, results, "-o", str(folder / "sweep-a")).returncode == 0
    only_sweeps = run_cli(["report", str(folder), "--no-plots"], results)
    assert only_sweeps.returncode == 2, only_sweeps.stderr
    assert "sweep folders only (sweep-a)" in only_sweeps.stderr

    ping = run_cli(["ping", "--driver", "udp", "--count", "200"], results)
    assert ping.returncode == 0, ping.stderr
    run_dir = next(p.parent for p in results.rglob("run.json"))
    shutil.copytree(run_dir, folder / run_dir.name)
    mixed = run_cli(["report", str(folder), "--no-plots", "-o", str(tmp_path / "rep")], results)
    assert mixed.returncode == 0, mixed.stderr
    line = next(ln for ln in mixed.stdout.splitlines() if ln.startswith("skipped "))
    assert line.startswith("skipped 1 sweep folder inside it") and line.endswith(": sweep-a")
