"""Bad experiment files through the CLI: every problem is reported as FILE:LINE: where:
problem; fix, all of them at once, with exit code 2, and nothing runs."""

import os

import pytest

from conftest import REPO
from driver_checks import only_versions_not_built
from experiment_files import run_experiment, write
from psbench.base import paths

BASE = "defaults: {kind: ping, driver: udp, count: 50}\n"

# (file text, expected line, words of the message); one case per kind of problem.
CASES = {
    "yaml syntax": ("defaults: {kind: ping\nmatrix: [\n", 2, ["not valid YAML"]),
    "empty file": ("# nothing\n", 1, ["the file is empty"]),
    "not a mapping": ("- udp\n- shm\n", 1, ["must be a mapping"]),
    "duplicate key": (
        BASE + "matrix: {size: [64]}\nmatrix: {size: [128]}\n",
        3,
        ["matrix: given twice (first at line 2); keep one"],
    ),
    "unknown top-level key": (
        BASE + "matrx:\n  size: [64]\n",
        2,
        ["matrx: unknown key; did you mean 'matrix'?"],
    ),
    "run setting at top level": (
        BASE + "size: 64\n",
        2,
        ["size: unknown key (run settings go under defaults"],
    ),
    "unknown run key": (
        BASE + "matrix:\n  sizes: [64, 128]\n",
        3,
        ["matrix.sizes: unknown key; did you mean 'size'?"],
    ),
    "bad size": (
        BASE + "matrix:\n  size: [64, huge]\n",
        3,
        ["matrix.size: 'huge' is not a size in bytes; use e.g. 64, 16K or 16KiB"],
    ),
    "bad choice": (
        "defaults:\n  kind: ping\n  driver: udp\n  notify: sometimes\n",
        4,
        ["defaults.notify: 'sometimes' is not one of listener, wait, poll"],
    ),
    "bad number": (
        BASE + "runs:\n  - {count: 0}\n",
        3,
        ["runs[0].count: must be a finite whole number, greater than 0, got 0"],
    ),
    "security the driver does not take": (
        BASE + "runs:\n  - security: tls\n",
        3,
        ["runs[0].security: udp takes no security mode (its manifest declares none)"],
    ),
    "flag not boolean": (
        BASE + "runs:\n  - check_pattern: 1\n",
        3,
        ["runs[0].check_pattern: 1 is not true or false"],
    ),
    "list outside the matrix": (
        "defaults:\n  kind: ping\n  driver: [udp, shm]\n",
        3,
        ["defaults.driver: one value expected; lists of values belong in the matrix"],
    ),
    "empty matrix list": (
        BASE + "matrix:\n  size: []\n",
        3,
        ["matrix.size: an empty list gives no runs"],
    ),
    "value listed twice": (
        BASE + "matrix:\n  size: [16384, 16KiB]\n",
        3,
        ["matrix.size: value listed twice", "use repetitions"],
    ),
    "count and duration": (
        "defaults: {kind: ping, driver: udp}\nruns:\n  - {count: 10,\n     duration: 2}\n",
        4,
        ["runs[0].duration: a run has a count or a duration, not both"],
    ),
    "duration over timeout": (
        BASE + "runs:\n  - {duration: 30, timeout: 10}\n",
        3,
        ["runs[0].timeout: timeout 10 s would end a 30 s run early"],
    ),
    "no kind": (
        "defaults: {driver: udp}\nmatrix:\n  size: [64]\n",
        2,
        ["matrix: no kind for this run; set kind (e.g. kind: ping)"],
    ),
    "kind-specific key": (
        "defaults: {driver: shm}\nruns:\n  - kind: pubsub\n    sample_timeout: 2\n",
        4,
        ["runs[0].sample_timeout: applies to ping runs only"],
    ),
    "cpus role": (
        BASE + "runs:\n  - cpus: {pub: 0}\n",
        3,
        ["runs[0].cpus: unknown role 'pub' for ping; use pong, ping"],
    ),
    "cpus not available": (
        BASE + "runs:\n  - cpus: {ping: 4096}\n",
        3,
        ["runs[0].cpus: ping: CPU 4096 is not available here; use one of"],
    ),
    "repetitions": (
        BASE + "repetitions: 0\n",
        2,
        ["repetitions: expected a whole number of at least 1, got 0"],
    ),
    "exclude key": (
        BASE + "matrix: {size: [64]}\nexclude:\n  - {colour: red}\n",
        4,
        ["exclude[0].colour: unknown key"],
    ),
    "same run twice": (
        BASE + "matrix: {size: [64]}\nruns:\n  - {size: 64}\n",
        4,
        ["runs[0]: the same run as a matrix run"],
    ),
    "unknown driver": (
        "defaults: {kind: ping}\nmatrix:\n  driver: [udp, cyclone]\n",
        3,
        [
            "matrix.driver: unknown driver 'cyclone'; built drivers: "
            + ", ".join(sorted(paths.driver_libraries()))
        ],
    ),
    "driver refuses a QoS": (
        "defaults: {kind: ping}\nmatrix:\n  driver: [udp, shm]\n"
        "  reliability: [best_effort, reliable]\n",
        4,
        [
            "matrix.reliability: udp: reliability 'reliable' is not "
            "supported; this driver supports best_effort (reliability must "
            "be best_effort: the kernel neither acknowledges nor resends); "
            "to leave these runs out: exclude: [{driver: udp, reliability: "
            "reliable}]"
        ],
    ),
    "driver refuses history": (
        BASE + "runs:\n  - history: keep_last:4\n",
        3,
        ["runs[0].history: udp: history 'keep_last' is not supported; this driver supports (none)"],
    ),
    "unsupported transport": (
        BASE + "runs:\n  - transport: shm\n",
        3,
        [
            "runs[0].transport: udp: transport 'shm' is not supported; "
            "this driver supports loopback|unicast"
        ],
    ),
    "unknown driver option": (
        BASE + "matrix:\n  options.type: [bytes]\n",
        3,
        [
            "matrix.options.type: udp: option 'type' is not known; this "
            "driver takes port_base|peer|bind"
        ],
    ),
    "loan unsupported": (
        BASE + "runs:\n  - loan: true\n",
        3,
        ["runs[0].loan: udp: --loan is not supported (no zero-copy write)"],
    ),
    "size out of range": (
        BASE + "runs:\n  - size: 8MiB\n",
        3,
        ["runs[0].size: size 8388608 is out of range; use 32 (header only) to 4194304 bytes"],
    ),
}


def assert_rejected(proc, results):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert "nothing was run" in proc.stderr
    assert not results.exists() or not list(results.rglob("run.json"))


@pytest.mark.parametrize("name", list(CASES))
def test_problem_is_reported_with_file_and_line(driver_libs, results, tmp_path, name):
    text, line, words = CASES[name]
    path = write(tmp_path, text, "bad.yaml")
    proc = run_experiment(path, results)
    assert_rejected(proc, results)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith(f"{path}:{line}:")]
    assert lines, f"no problem at {path}:{line} in:\n{proc.stderr}"
    for word in words:
        assert any(word in ln for ln in lines), f"{word!r} not in:\n{proc.stderr}"


def test_every_problem_is_reported_at_once_in_file_order(driver_libs, results, tmp_path):
    path = write(
        tmp_path,
        """
        defaults: {kind: ping, notify: sometimes}
        matrix:
          driver: [udp, cyclone]
          sizes: [64]
          reliability: [best_effort, reliable]
    """,
        "many.yaml",
    )
    proc = run_experiment(path, results)
    assert_rejected(proc, results)
    problems = [ln for ln in proc.stderr.splitlines() if ln.startswith(f"{path}:")]
    assert [int(ln.split(":")[1]) for ln in problems] == [1, 3, 4, 5]
    assert "4 problems in" in proc.stderr


def test_missing_file(driver_libs, results, tmp_path):
    proc = run_experiment(tmp_path / "nowhere.yaml", results)
    assert_rejected(proc, results)
    assert "cannot read the experiment file" in proc.stderr


@pytest.mark.parametrize(
    "args,words",
    [
        (["--filter", "colour=red"], ["argument --filter", "unknown key 'colour'"]),
        (["--filter", "driver=shm"], ["argument --filter", "selects none of the 1 runs"]),
        (["--resume"], ["argument --resume", "-o DIR"]),
    ],
)
def test_bad_arguments(driver_libs, results, tmp_path, args, words):
    path = write(tmp_path, BASE)
    proc = run_experiment(path, results, *args)
    assert proc.returncode == 2, proc.stderr
    for word in words:
        assert word in proc.stderr
    assert not results.exists()


def test_output_directory_in_use_is_refused(driver_libs, results, tmp_path):
    path = write(tmp_path, BASE)
    used = tmp_path / "used"
    used.mkdir()
    (used / "something").write_text("")
    proc = run_experiment(path, results, "-o", str(used))
    assert proc.returncode == 2
    assert f"argument -o: {used} already exists and is not empty" in proc.stderr
    assert os.listdir(used) == ["something"]


def test_shipped_experiments_are_valid(driver_libs, results):
    for path in sorted((REPO / "experiments").glob("*.yaml")):
        proc = run_experiment(path, results, "--dry-run")
        if only_versions_not_built(proc):
            continue  # experiments/upgrade.yaml where the versions were not built
        assert proc.returncode == 0, f"{path}: {proc.stderr}"
        assert proc.stderr == "", proc.stderr  # no notes either
