"""The iceoryx driver in real runs through `./psbench ping|pubsub`, as a user runs it: every
notify mode, both reliabilities, both placements, plain and loaned writes, 64 B to 4 MiB,
with counts and integrity checked, QoS refusals, and nothing left behind.

iceoryx needs its daemon, iox-roudi, and allows one per machine. The first tests run
without one (the node refuses; psbench's service pool starts one for a run and stops it);
one runs against a RouDi this module starts with a deliberately small configuration; the
rest share a RouDi this module starts with a generated configuration (mempools up to
4 MiB). A RouDi someone else runs is used as it is and never stopped; tests that need
RouDi absent, or a RouDi of their own, skip then."""

import getpass
import json
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import cli_in_background, only_run, run_cli
from psbench.results.samples import read_samples
from psbench.run import services
from roudi_helpers import iceoryx_shm_files, roudi_pids, stop_roudi, wait_for_no_roudi

DRIVER = "iceoryx"
MIB = 1 << 20

# iceoryx 2.0 RouDi configurations (size = chunk payload bytes).
ROUDI_CONFIG = """[general]
version = 1

[[segment]]
""" + "".join(
    f"""
[[segment.mempool]]
size = {size}
count = {count}
"""
    for size, count in [
        (128, 10000),
        (1024, 2000),
        (16384, 600),
        (131072, 60),
        (MIB, 32),
        (4 * MIB, 24),
    ]
)

SMALL_ROUDI_CONFIG = """[general]
version = 1

[[segment]]

[[segment.mempool]]
size = 128
count = 1000

[[segment.mempool]]
size = 65536
count = 8
"""


@pytest.fixture(scope="module")
def iceoryx(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


@contextmanager
def start_lock():
    """Held while this module may start a RouDi: the same abstract socket name the
    driver's GoogleTest binds, so the two never start RouDis at once (no file to leave)."""
    lock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    end = time.monotonic() + 300
    while True:
        try:
            lock.bind("\0psbench-iceoryx-driver-test")
            break
        except OSError:
            if time.monotonic() > end:
                lock.close()
                pytest.fail("another iceoryx driver test held the RouDi start lock for 5 minutes")
            time.sleep(0.1)
    try:
        yield
    finally:
        lock.close()


@contextmanager
def own_roudi(tmp_dir: Path, config: str):
    """iox-roudi with this configuration, stopped with SIGTERM at the end, after which
    neither a process nor its shared memory may remain."""
    if not shutil.which("iox-roudi"):
        pytest.fail("iox-roudi is missing: install the Debian package iceoryx (make setup)")
    tmp_dir.mkdir(parents=True, exist_ok=True)
    config_file = tmp_dir / "roudi.toml"
    config_file.write_text(config)
    log = tmp_dir / "roudi.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["iox-roudi", "-c", str(config_file)],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        end = time.monotonic() + 20
        while "RouDi is ready for clients" not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < end, (
                f"iox-roudi did not become ready: {log.read_text(errors='replace')}"
            )
            time.sleep(0.02)
        yield proc
    finally:
        try:
            stop_roudi(proc)
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {log.read_text()}") from None


@pytest.fixture(scope="module")
def roudi(iceoryx, tmp_path_factory):
    """The RouDi most tests share; someone else's if one runs (used, never stopped)."""
    wait_for_no_roudi()
    with start_lock():
        if roudi_pids():
            yield None
            return
        with own_roudi(tmp_path_factory.mktemp("roudi"), ROUDI_CONFIG) as proc:
            yield proc


def runtime_sockets(run_id: str) -> list[str]:
    # Each node's iceoryx runtime is named psbench_<run id>_<pid>: a socket and a lock
    # file in /tmp while it lives.
    return sorted(p.name for p in Path("/tmp").glob(f"psbench_{run_id}_*"))


def load(run_dir: Path, role: str) -> dict:
    return json.loads((run_dir / f"{role}.json").read_text())


def run_ok(results: Path, kind: str, *args: str):
    """One run of the driver; returns the record, the summaries by role and the measuring
    role's samples."""
    proc = run_cli([kind, "--driver", DRIVER, *args], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    assert record["driver"]["name"] == DRIVER and record["driver"]["version"].startswith("2.0.")
    run_dir = record["_dir"]
    roles = ("ping", "pong") if kind == "ping" else ("pub", "sub")
    summaries = {role: load(run_dir, role) for role in roles}
    measuring = summaries["ping" if kind == "ping" else "sub"]
    samples = read_samples(run_dir / measuring["samples_file"])
    assert len(samples) == measuring["counts"]["samples"]
    assert measuring["config"]["transport"] == "shm"
    for role in roles:  # iceoryx says nothing on a good run
        stderr = run_dir / f"{role}.stderr"
        assert not stderr.exists() or stderr.read_text().strip() == "", stderr.read_text()
    assert runtime_sockets(record["run_id"]) == [], (
        "a node's iceoryx runtime socket was left in /tmp"
    )
    return record, summaries, samples


def assert_all_in(counts: dict, sent: int):
    assert counts["sent"] == sent
    assert counts["samples"] == sent, counts
    assert counts["lost"] == counts["late"] == counts["corrupted"] == counts["duplicated"] == 0, (
        counts
    )


def assert_accounted(counts: dict, sent: int):
    assert counts["sent"] == sent
    assert counts["samples"] + counts["lost"] + counts["late"] + counts["corrupted"] == sent
    assert counts["corrupted"] == counts["duplicated"] == 0


def refused(results: Path, *args: str) -> str:
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert only_run(results)["status"] == "refused"
    return proc.stderr


# --- without a RouDi of this module (these run first: pytest keeps the file's order)


def test_without_roudi_the_node_refuses(node, iceoryx, tmp_path):
    # The node run by hand, without psbench's service pool.
    if roudi_pids():
        pytest.skip("an iox-roudi is running on this host")
    proc = subprocess.run(
        [str(node), "--driver", str(iceoryx), "--role", "ping,pong", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Not a refused setting (2) but a failure to open (1): a missing daemon is the
    # machine's, which check() does not judge (docs/node.md, "Checking a configuration").
    assert proc.returncode == 1, proc.stderr
    assert "iceoryx: iox-roudi is not running" in proc.stderr
    assert "psbench starts it for runs of this driver" in proc.stderr


def test_the_cli_starts_roudi_for_the_run_and_stops_it(iceoryx, results):
    assert services.definition("iox-roudi") is not None
    if roudi_pids():
        pytest.skip("an iox-roudi is running on this host")
    record, s, _ = run_ok(results, "ping", "--count", "300", "--warmup", "20", "--check-pattern")
    assert_all_in(s["ping"]["counts"], 300)
    [service] = record["services"]
    assert service["name"] == "iox-roudi" and service["started_by_psbench"]
    assert roudi_pids() == [], "psbench left iox-roudi running"
    assert iceoryx_shm_files() == [], "iox-roudi's shared memory was left in /dev/shm"


def test_a_roudi_without_room_for_the_message_fails_the_run_saying_so(iceoryx, results, tmp_path):
    with start_lock():
        if roudi_pids():
            pytest.skip("an iox-roudi is running on this host; this test needs its own")
        with own_roudi(tmp_path / "small-roudi", SMALL_ROUDI_CONFIG):
            proc = run_cli(
                ["ping", "--driver", DRIVER, "--size", str(MIB), "--count", "10"], results
            )
    assert proc.returncode == 1, proc.stderr
    record = only_run(results)
    assert record["status"] != "ok"
    assert (
        "iceoryx: no RouDi mempool holds 1048576-byte chunks (the largest holds 65536-byte payloads"
    ) in proc.stderr
    assert (
        "psbench sizes RouDi for the experiment's largest message, a RouDi started by "
        "someone else may not" in proc.stderr
    )


# --- runs against the module's RouDi

# Each notify mode at 32 B, 1 KiB and up to 1 MiB on the default transport is the
# conformance suite's (DeliversInEveryNotifyMode, DeliversSamplesIntactAndInOrder; with
# RouDi: tests/test_conformance_services.py);
# these cases are what is this driver's own: transports, loans, larger messages.
PING_RUNS = {
    # name: (args, size, count)
    "poll-reliable-4MiB-loan": (
        ["--notify", "poll", "--reliability", "reliable", "--loan"],
        4 * MIB,
        40,
    ),
    "wait-best_effort-1MiB-intra": (["--notify", "wait", "--placement", "intra"], MIB, 60),
    "listener-reliable-16KiB-intra-loan": (
        ["--notify", "listener", "--reliability", "reliable", "--placement", "intra", "--loan"],
        16384,
        500,
    ),
    "wait-keep_last1-transient_local-4KiB": (
        ["--notify", "wait", "--history", "keep_last:1", "--durability", "transient_local"],
        4096,
        500,
    ),
}


@pytest.mark.parametrize("name", PING_RUNS, ids=list(PING_RUNS))
def test_ping(iceoryx, roudi, results, name):
    args, size, count = PING_RUNS[name]
    record, s, samples = run_ok(
        results, "ping", *args, "--size", str(size), "--count", str(count), "--warmup", "20",
        "--check-pattern",
    )  # fmt: skip
    ping = s["ping"]
    assert ping["config"]["size"] == size
    assert ping["config"]["notify"] == args[args.index("--notify") + 1]
    assert ping["config"]["loan"] == ("--loan" in args)
    assert len(record["processes"]) == (1 if "intra" in args else 2)
    # Closed loop, one message in flight: nothing is lost, whatever the reliability.
    assert_all_in(ping["counts"], count)
    assert s["pong"]["counts"]["write_errors"] == 0
    assert (samples.latency_ns > 0).all()


def test_reliable_pubsub_back_to_back_loses_nothing(iceoryx, roudi, results):
    # keep_all: a writer that waits for room in the queue, so no sample may be lost.
    # (reliable keep_last:N keeps the newest N, as in DDS: a slow reader loses samples.)
    _, s, _ = run_ok(
        results, "pubsub", "--reliability", "reliable", "--history", "keep_all", "--notify", "wait",
        "--size", "4096", "--count", "5000", "--rate", "0", "--check-pattern",
    )  # fmt: skip
    assert_all_in(s["sub"]["counts"], 5000)
    assert s["pub"]["counts"]["write_errors"] == 0


def test_reliable_keep_all_pubsub_intra_poll_loses_nothing(iceoryx, roudi, results):
    _, s, _ = run_ok(
        results, "pubsub", "--reliability", "reliable", "--history", "keep_all", "--notify", "poll",
        "--placement", "intra", "--size", "64", "--count", "20000", "--rate", "0",
        "--check-pattern",
    )  # fmt: skip
    assert s["sub"]["config"]["history"] == "keep_all"
    assert_all_in(s["sub"]["counts"], 20000)


def test_best_effort_pubsub_listener_loaned(iceoryx, roudi, results):
    _, s, samples = run_ok(
        results, "pubsub", "--notify", "listener", "--loan", "--size", "256", "--count", "2000",
        "--rate", "5000", "--check-pattern",
    )  # fmt: skip
    assert_accounted(s["sub"]["counts"], 2000)
    assert len(samples) > 0


def test_four_mib_pubsub_reliable(iceoryx, roudi, results):
    _, s, _ = run_ok(
        results, "pubsub", "--reliability", "reliable", "--history", "keep_all", "--size",
        str(4 * MIB), "--count", "40", "--rate", "0", "--check-pattern",
    )  # fmt: skip
    assert_all_in(s["sub"]["counts"], 40)


def test_nodes_map_roudis_shared_memory(iceoryx, roudi, results):
    """While a run is in flight its nodes map RouDi's data segment: the data path is
    iceoryx shared memory, not a socket."""
    with cli_in_background(
        ["ping", "--driver", DRIVER, "--notify", "poll", "--duration", "3", "--size", "1024"],
        results,
    ) as proc:
        end = time.monotonic() + 30
        mapped = {}
        while time.monotonic() < end and len(mapped) < 2 and proc.poll() is None:
            for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
                try:
                    argv = cmdline.read_bytes().split(b"\0")
                    if not (
                        argv[0].endswith(b"psbench-node")
                        and any(str(results).encode() in a for a in argv)
                    ):
                        continue
                    maps = (cmdline.parent / "maps").read_text()
                except OSError:
                    continue
                if f"/dev/shm/{getpass.getuser()}" in maps and "/dev/shm/iceoryx_mgmt" in maps:
                    mapped[cmdline.parent.name] = True
            time.sleep(0.05)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert len(mapped) == 2, "the two nodes did not both map RouDi's shared memory"


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--reliability", "best_effort", "--history", "keep_all"],
            "iceoryx: history keep_all needs reliability reliable",
        ),
        (
            ["--history", "keep_last:300"],
            "iceoryx: history keep_last:300 is not supported; an iceoryx subscriber queue holds 1 to 256",
        ),
        (
            ["--durability", "transient_local", "--history", "keep_last:17"],
            "iceoryx: durability transient_local with history keep_last:17 is not supported",
        ),
        (
            [
                "--durability",
                "transient_local",
                "--reliability",
                "reliable",
                "--history",
                "keep_all",
            ],
            "iceoryx: durability transient_local with history keep_all is not supported",
        ),
        (["--option", "broker=127.0.0.1:1"], "iceoryx: option 'broker' is not known"),
        (["--transport", "udp"], "iceoryx: transport 'udp' is not supported"),
    ],
)
def test_refused_settings_say_why(iceoryx, roudi, results, args, message):
    assert message in refused(results, *args)
