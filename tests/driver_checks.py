"""Checks shared by the driver tests that run through the CLI."""

import json
from pathlib import Path

from psbench.results.samples import read_samples


def check_counts(summary: dict, sent: int):
    """A run over a connection that stays up: nothing lost, late, damaged or doubled."""
    counts = summary["counts"]
    assert counts["sent"] == sent
    assert counts["samples"] == sent, counts
    assert counts["lost"] == counts["late"] == counts["corrupted"] == 0, counts
    assert counts["duplicated"] == 0, counts
    assert summary["error"] is None


def check_all_arrived(run_dir: Path, summary: dict, sent: int, kind: str):
    """check_counts and check_samples_file: every message arrived, and is in the file."""
    check_counts(summary, sent)
    check_samples_file(run_dir, summary, kind)


def check_accounted(summary: dict, sent: int, lossless: bool = False):
    """Every message sent is a sample or counted lost, late or corrupted; none damaged or
    doubled (lossless: none lost or late either)."""
    counts = summary["counts"]
    assert counts["sent"] == sent
    assert counts["samples"] + counts["lost"] + counts["late"] + counts["corrupted"] == sent
    assert counts["corrupted"] == counts["duplicated"] == 0, counts
    if lossless:
        assert counts["samples"] == sent and counts["lost"] == counts["late"] == 0, counts
    assert summary["error"] is None


def check_samples_file(run_dir: Path, summary: dict, kind: str):
    """The raw samples file agrees with the summary, every latency positive."""
    samples = read_samples(run_dir / summary["samples_file"])
    assert samples.kind == kind == summary["sample_kind"]
    assert len(samples) == summary["counts"]["samples"] > 0
    assert (samples.latency_ns > 0).all()


def alive(pid: int) -> bool:
    """The process runs (a zombie, ended and not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def listening(address: str) -> bool:
    """Something accepts TCP connections at HOST:PORT."""
    import socket

    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=0.2):
            return True
    except OSError:
        return False


def load(run_dir: Path, role: str) -> dict:
    """A node's summary (<role>.json) in a run directory."""
    return json.loads((run_dir / f"{role}.json").read_text())


def only_versions_not_built(proc) -> bool:
    """A dry run refused only because drivers NAME@VERSION it names are not built (an
    experiment of versions side by side, on a machine that built only the defaults)."""
    problems = [line for line in proc.stderr.splitlines() if ": " in line and ".yaml:" in line]
    return (
        proc.returncode == 2
        and bool(problems)
        and all("@" in line and "is not built; `make driver-" in line for line in problems)
    )


def only_on_request_drivers_not_built(proc) -> bool:
    """A dry run refused only because drivers built on request or from source that it
    names are not built here (`make driver-NAME`: a seed study's own systems, ORTE,
    OpenSplice, OpenDDS, on a machine that did not build them)."""
    problems = [line for line in proc.stderr.splitlines() if ": " in line and ".yaml:" in line]
    return (
        proc.returncode == 2
        and bool(problems)
        and all("is not built; `make driver-" in line for line in problems)
    )


def require_built(name: str) -> None:
    """Skips the test unless drivers/NAME is built, saying why and what builds it (a
    driver built from source is missing on most machines; make test stays green)."""
    import pytest

    from psbench.base import paths
    from psbench.run.drivers import build_hint

    if name not in paths.driver_libraries():
        pytest.skip(f"{name} is not built: {build_hint(name)}")


def require_fixup(name: str, patch: str) -> None:
    """Skips the test unless the middleware drivers/NAME was built with the fix-up whose
    file name is patch (its build's recorded flag `patch`): a middleware built before the
    fix-up was added still has the fault it fixes, until make driver-NAME applies it."""
    import pytest

    from psbench.base import paths
    from psbench.run.drivers import build_record

    record = build_record(paths.driver_library(name)) or {}
    applied = record.get("sdk", {}).get("flags", {}).get("patch", "")
    if patch not in applied:
        pytest.skip(
            f"the {name} middleware built here predates {patch} (its patches: "
            f"{applied or 'none'}): make driver-{name} applies it"
        )


def skip_unless_built(name: str):
    """An autouse fixture for a test file of a driver built from source: each test skips
    unless it is built (require_built). Assign it to a module name."""
    import pytest

    @pytest.fixture(autouse=True, name=f"{name}_built")
    def built() -> None:
        require_built(name)

    return built


def driver_fixture(name: str):
    """A module fixture (named after the driver) giving a driver's library, failing the
    test when a driver make test builds is missing."""
    import pytest

    @pytest.fixture(scope="module", name=name)
    def library(driver_libs) -> Path:
        if name not in driver_libs:
            pytest.fail(f"the {name} driver is not built: run `make build`")
        return driver_libs[name]

    return library


def drivers_fixture(name: str, drivers: list[str]):
    """A module fixture (named name) giving driver_libs, failing the test when any of
    drivers (ones make test builds) is missing."""
    import pytest

    @pytest.fixture(scope="module", name=name)
    def libraries(driver_libs) -> dict:
        missing = [d for d in drivers if d not in driver_libs]
        if missing:
            pytest.fail(f"drivers {missing} are not built: run `make build`")
        return driver_libs

    return libraries


def check_bad_credentials_failed(proc, results: Path, fault: str, cause: str) -> dict:
    """A run given bad credentials (--security-fault fault) failed for that fault, its
    error naming cause, and did not report the credentials as accepted; its record."""
    from conftest import only_run

    assert proc.returncode != 0
    record = only_run(results)
    assert record["status"] == "failed", record.get("message")
    assert record["security"]["fault"] == fault
    assert cause in proc.stderr, proc.stderr
    assert "were not refused" not in proc.stderr
    return record


def ping_case(measure, results: Path, *args: str, size: int, count: int, warmup: int = 10,
              lossless: bool = True):  # fmt: skip
    """A closed-loop ping of count messages of size through measure(results, "ping",
    *args) (a driver's run helper, returning the record and the summaries by role): it
    ended on its count, every echo is accounted for (lossless: every one came back), the
    samples file agrees, and pong echoed every ping it got (handshakes and warm-up
    included). Returns what measure returned."""
    record, s = measure(results, "ping", *args, "--size", str(size), "--count", str(count),
                        "--warmup", str(warmup))  # fmt: skip
    ping = s["ping"]
    assert ping["config"]["size"] == size and ping["ended_by"] == "count", ping["ended_by"]
    for flag in ("--notify", "--transport"):  # what the run was asked for reached the node
        if flag in args:
            assert ping["config"][flag[2:]] == args[args.index(flag) + 1], ping["config"]
    (check_counts if lossless else check_accounted)(ping, count)
    check_samples_file(run_dir(record), ping, "rtt")
    assert s["pong"]["counts"]["received"] >= ping["counts"]["samples"]
    return record, s


def pubsub_case(measure, results: Path, *args: str, count: int, lossless: bool = True):
    """A pubsub run of count messages through measure(results, "pubsub", *args): the
    subscriber ended on its count or the end marker, every message is accounted for
    (lossless: every one arrived), the samples file agrees. Returns what measure did."""
    record, s = measure(results, "pubsub", *args, "--count", str(count))
    sub = s["sub"]
    assert sub["ended_by"] in ("count", "end_marker"), sub["ended_by"]
    (check_counts if lossless else check_accounted)(sub, count)
    check_samples_file(run_dir(record), sub, "one_way")
    return record, s


def fan_out_case(run, results: Path, size: int, subscribers: int = 3, count: int = 2000) -> dict:
    """A reliable keep_all 1 -> subscribers pubsub of count messages of size through
    run(results, "pubsub", *args) (a driver's helper returning the record): each
    subscriber got every one, intact. Returns the record."""
    record = run(results, "pubsub", "--subscribers", str(subscribers), "--size", str(size),
                 "--count", str(count), "--rate", "2000", "--reliability", "reliable",
                 "--history", "keep_all", "--check-pattern")  # fmt: skip
    subs = sorted(p.stem for p in run_dir(record).glob("sub*.json"))
    assert len(subs) == subscribers, subs
    for sub in subs:
        check_counts(load(run_dir(record), sub), count)
    return record


def run_dir(record: dict) -> Path:
    return record["_dir"]


def nodes_seen_running(args: list[str], results: Path, inspect, ready=bool, settle_s=0.0):
    """Runs the CLI (args, to its end) and, while it runs, looks at each of its two node
    processes: inspect(pid) once ready(what inspect saw) says the node is far enough
    (then again settle_s later). Returns pid -> what inspect saw; the run ended ok."""
    import threading
    import time

    from conftest import node_processes_with, run_cli

    outcome = {}
    runner = threading.Thread(target=lambda: outcome.update(proc=run_cli(args, results)))
    runner.start()
    seen = {}
    end = time.monotonic() + 30
    while runner.is_alive() and time.monotonic() < end and len(seen) < 2:
        for pid in node_processes_with(str(results)):
            try:
                if pid not in seen and ready(inspect(pid)):
                    time.sleep(settle_s)
                    seen[pid] = inspect(pid)
            except OSError:  # it ended meanwhile
                continue
        time.sleep(0.05)
    runner.join()
    assert outcome["proc"].returncode == 0, outcome["proc"].stderr
    assert len(seen) == 2, "did not catch both nodes while they ran"
    return seen


def ping_cases(cases: dict, measure, *args: str, driver: str):
    """The test of a driver's table of ping cases (name -> (argv, size, count)): each
    through ping_case with measure, and args after the case's own. The test uses the
    driver's fixture (named after it: driver_fixture)."""
    import pytest

    @pytest.mark.usefixtures(driver)
    @pytest.mark.parametrize("case", cases, ids=list(cases))
    def test_ping(results, case):
        argv, size, count = cases[case]
        ping_case(measure, results, *argv, *args, size=size, count=count)

    return test_ping
