"""Shared fixtures: the built node and drivers, a private results directory per test,
and a check after every test that no node process or shared-memory file of its runs
is left behind."""

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from psbench.base import manifests, paths  # noqa: E402
from psbench.base.errors import UserError  # noqa: E402
from run_json_valid import Checker  # noqa: E402
from scheduling import group_tests  # noqa: E402

LAUNCHER = REPO / "psbench"
BASELINE_DRIVERS = manifests.baseline_drivers()


# First: pytest-xdist's own hook (in each worker) reads the xdist_group marks to send a
# group's tests to one worker; registered after this file, it would run before it.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    group_tests(items)


@pytest.fixture(scope="session")
def node() -> Path:
    path = paths.node_path()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"{path} is missing: run `make build` in {REPO} before the tests")
    return path


@pytest.fixture(scope="session")
def driver_libs(node) -> dict[str, Path]:
    libs = paths.driver_libraries()
    missing = [d for d in BASELINE_DRIVERS if d not in libs]
    if missing:
        pytest.fail(
            f"drivers {missing} are not built under {paths.build_dir()}/drivers: "
            f"run `make build` in {REPO}"
        )
    return libs


@pytest.fixture
def results(tmp_path) -> Path:
    return tmp_path / "results"


def cli_env(results: Path, **extra) -> dict:
    env = dict(os.environ, PSBENCH_RESULTS=str(results))
    env.update(extra)
    return env


def python_env() -> dict:
    """This environment with psbench's python/ on the import path: for a child Python
    that imports psbench."""
    return dict(os.environ, PYTHONPATH=str(REPO / "python"))


@contextmanager
def cli_in_background(args: list[str], results: Path, **extra_env):
    """The CLI as a user runs it (through the launcher), in its own process group; if
    the test leaves it running, the whole group is killed on the way out."""
    proc = subprocess.Popen(
        [str(LAUNCHER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=cli_env(results, **extra_env),
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def run_cli(args: list[str], results: Path, timeout: float = 120, **extra_env):
    """The CLI run to its end, as a user runs it."""
    with cli_in_background(args, results, **extra_env) as proc:
        out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def run_records(results: Path) -> list[dict]:
    """Every run.json under a results directory (demo runs are nested one deeper)."""
    return [
        dict(json.loads(p.read_text()), _dir=p.parent) for p in sorted(results.rglob("run.json"))
    ]


def wait_for_running(results: Path, proc, limit: float = 60) -> dict:
    """The run.json of a CLI run once its node processes have started."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        assert proc.poll() is None, proc.communicate()
        records = run_records(results) if results.exists() else []
        if records and records[0]["status"] == "running":
            return records[0]
        time.sleep(0.05)
    pytest.fail("the run never reached status 'running'")


def stall_sub_for(results: Path, proc, seconds: float, settle_s: float) -> None:
    """SIGSTOP the run's sub node settle_s after the run reaches 'running' (its
    measurement under way), SIGCONT it `seconds` later."""
    record = wait_for_running(results, proc)
    [sub] = [p for p in record["processes"] if "sub" in p["roles"]]
    time.sleep(settle_s)
    os.kill(sub["pid"], signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        os.kill(sub["pid"], signal.SIGCONT)


def only_run(results: Path) -> dict:
    records = run_records(results)
    assert len(records) == 1, f"expected one run under {results}, found {len(records)}"
    return records[0]


def live_processes(program: str, marker: str) -> list[int]:
    """pids of live (not zombie) processes of program (argv[0]'s name starts with it: a
    server that retitles itself, "NAME 127.0.0.1:PORT", still counts) whose
    command line contains marker (a run id, a results directory, an address): other
    engineers' processes on this machine are not ours."""
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
            state = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if (
            state != "Z"
            and argv
            and os.path.basename(argv[0]).startswith(program.encode())
            and marker.encode() in b" ".join(argv)
        ):
            pids.append(int(cmdline.parent.name))
    return pids


def node_processes_with(marker: str) -> list[int]:
    """pids of live psbench-node processes whose command line contains marker."""
    return live_processes("psbench-node", marker)


def processes_of_run(run_id: str) -> list[int]:
    return node_processes_with(run_id)


def shm_files_of_run(run_id: str) -> list[str]:
    return sorted(p.name for p in Path("/dev/shm").glob(f"*{run_id}*"))


def assert_nothing_left(run_id: str) -> None:
    # The launcher has already reaped its children; allow the kernel a moment to
    # finish tearing down (this is not a timing assertion: it only bounds the wait).
    end = time.monotonic() + 5
    while processes_of_run(run_id) and time.monotonic() < end:
        time.sleep(0.05)
    assert processes_of_run(run_id) == [], f"node processes of run {run_id} still alive"
    assert shm_files_of_run(run_id) == [], f"/dev/shm files of run {run_id} left behind"


@pytest.fixture
def drivers_dir(tmp_path, monkeypatch):
    """psbench reads its drivers' manifests from tmp_path (empty) instead of drivers/."""
    monkeypatch.setattr(manifests, "DRIVERS_DIR", tmp_path)
    manifests.load.cache_clear()
    yield tmp_path
    manifests.load.cache_clear()


@pytest.fixture
def mw_drivers_dir(drivers_dir):
    """The same with one driver folder, mw, for a manifest a test writes."""
    (drivers_dir / "mw").mkdir()
    (drivers_dir / "mw" / "CMakeLists.txt").write_text("")
    return drivers_dir


def refused_manifest(drivers_dir: Path, text: str) -> str:
    """Writes text as mw's manifest, which psbench must refuse: exit 2, and a message that
    starts with the file's path. Returns the message."""
    path = drivers_dir / "mw" / "manifest.toml"
    path.write_text(text)
    with pytest.raises(UserError) as refused:
        manifests.load("mw")
    assert str(refused.value).startswith(str(path)) and refused.value.exit_code == 2
    return str(refused.value)


@pytest.fixture(autouse=True)
def nothing_left_behind(results):
    yield
    if results.exists():
        for record in run_records(results):
            assert_nothing_left(record["run_id"])


class SharedBrokers:
    """Brokers the tests' own process starts with psbench's ServicePool (as a run would,
    from the driver's manifest), one per driver, for the runs that are not about a
    broker's life: a run given one with --option broker=ADDRESS:PORT starts none."""

    def __init__(self, pool, folder: Path):
        self.pool, self.folder = pool, folder

    def service(self, driver: str):
        from psbench.run import drivers

        if driver not in paths.driver_libraries():
            pytest.fail(f"the {driver} driver is not built: run `make build`")
        describe = drivers.describe(paths.node_path(), paths.driver_libraries()[driver])
        spec = next(s for s in manifests.load(driver).services if s.broker)
        [service] = [
            s
            for s in self.pool.ensure(describe, spec.transport, self.folder)
            if s.definition.name == spec.name
        ]
        return service

    def address(self, driver: str) -> str:
        return self.service(driver).address


@pytest.fixture(scope="session")
def shared_brokers(tmp_path_factory):
    """SharedBrokers for the session: the tests using it join one xdist group
    (tests/scheduling.py), so each broker starts once and is stopped at the end."""
    from psbench.run.services import ServicePool

    with ServicePool() as pool:
        yield SharedBrokers(pool, tmp_path_factory.mktemp("shared-brokers"))


RUN_JSON = Checker()


@pytest.fixture(autouse=True)
def run_json_valid(request, tmp_path):
    """Every run.json this test made matches run.json's schema (tests/run_json_valid.py)."""
    yield
    by_hand = request.node.get_closest_marker("run_json_by_hand") is not None
    refused = RUN_JSON.test_folder(tmp_path, by_hand)
    if refused:
        pytest.fail("run.json refused by docs/run.schema.json:\n" + "\n".join(refused))


@pytest.fixture(scope="module", autouse=True)
def fixtures_run_json_valid(tmp_path_factory):
    """The same for the run.json files the module's fixtures made (a sweep run once)."""
    yield
    refused = RUN_JSON.fixture_folders(tmp_path_factory.getbasetemp())
    if refused:
        pytest.fail("run.json refused by docs/run.schema.json:\n" + "\n".join(refused))


# One real sweep for the report tests: tests/report-sweep.yaml.
REPORT_SWEEP = Path(__file__).with_name("report-sweep.yaml")


@pytest.fixture(scope="session")
def report_sweep(driver_libs, tmp_path_factory) -> Path:
    """The folder of REPORT_SWEEP, run once per test session through the CLI."""
    folder = tmp_path_factory.mktemp("report-sweep")
    experiment = folder / "report-sweep.yaml"
    experiment.write_text(REPORT_SWEEP.read_text())
    store = folder / "sweep"
    proc = run_cli(["run", str(experiment), "-o", str(store)], folder / "results")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the crashing runs
    for record in run_records(store):
        assert_nothing_left(record["run_id"])
    return store
