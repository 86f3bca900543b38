"""The iceoryx2 driver: real two-process ping-pong and pub/sub through `./psbench`, in every
notify mode, copied and loaned, with counts and integrity checked; a stalled reader and a
late reader with a history depth, through the ABI, with exactly which samples arrive; what
it refuses, in its words; and nothing left in /dev/shm or the temporary directory, also
after a node is SIGKILLed mid-run (the manifest's cleanup command, clean.py)."""

import ctypes as C
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import iceoryx2_abi as abi
from conftest import (
    REPO,
    cli_in_background,
    node_processes_with,
    only_run,
    run_cli,
    wait_for_running,
)
from driver_suite import Expect

DRIVER = "iceoryx2"
CLEAN = REPO / "drivers" / DRIVER / "clean.py"
# The driver suite's late joiner (tests/test_late_join.py) resumes the publisher with a
# burst, which overwrites the history iceoryx2 hands a late subscriber at the next send
# (README.md, transient_local); test_a_late_reader_gets_exactly_the_transient_local_history
# shows what it keeps.
SUITE = Expect(late_join_unframed="the publisher's burst after the pause overwrites the "
               "history handed over at its next send (README.md)")  # fmt: skip


@pytest.fixture(scope="module")
def lib(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


def leftovers(run_id: str) -> list[str]:
    """What the run left: its shared memory, sockets and directories."""
    stem = f"psbench_iox2_{run_id}"
    return [
        str(p)
        for folder in (Path("/dev/shm"), Path(tempfile.gettempdir()))
        for p in folder.glob(f"{stem}*")
    ]


def run_ok(results: Path, kind: str, *args: str) -> dict:
    proc = run_cli([kind, "--driver", DRIVER, *args], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert record["driver"]["version"] == "0.10.0"
    assert leftovers(record["run_id"]) == []
    return record


def summary(record: dict, role: str) -> dict:
    return json.loads((record["_dir"] / f"{role}.json").read_text())


@pytest.mark.parametrize(
    "args",
    [
        ["--notify", "wait"],
        ["--notify", "poll"],
        ["--notify", "listener"],
        ["--notify", "wait", "--loan"],
    ],
    ids=["wait", "poll", "listener", "wait-loan"],
)
def test_two_process_ping_pong_delivers_every_round_trip(lib, results, args):
    record = run_ok(
        results, "ping", *args, "--size", "1024", "--count", "2000", "--warmup", "100",
        "--check-pattern",
    )  # fmt: skip
    assert len(record["processes"]) == 2
    ping = summary(record, "ping")
    assert ping["config"]["loan"] == ("--loan" in args)
    counts = ping["counts"]
    assert counts["sent"] == counts["samples"] == 2000, counts
    assert counts["lost"] == counts["corrupted"] == counts["duplicated"] == 0, counts
    assert summary(record, "pong")["counts"]["write_errors"] == 0


def test_loaned_pubsub_of_large_messages_arrives_intact(lib, results):
    record = run_ok(
        results, "pubsub", "--loan", "--notify", "listener", "--history", "keep_last:64",
        "--size", "1048576", "--count", "300", "--rate", "200", "--check-pattern",
    )  # fmt: skip
    counts = summary(record, "sub")["counts"]
    assert counts["sent"] == 300
    assert counts["corrupted"] == counts["duplicated"] == 0
    # 200 Hz, a buffer of 64 and a reader on its own thread: nothing may be lost.
    assert counts["samples"] == 300, counts


def test_fifty_subscriber_processes_each_get_every_sample(lib, results):
    # A node per process: iceoryx2's default limit of nodes per service (20) refused the
    # 21st ("ExceedsMaxNumberOfNodes") before the driver sized it for the run.
    record = run_ok(
        results, "pubsub", "--subscribers", "50", "--reliability", "reliable",
        "--count", "200", "--rate", "500",
    )  # fmt: skip
    for i in range(1, 51):
        assert summary(record, f"sub-{i}")["counts"]["samples"] == 200, i


def matched_reader_and_writer(t, run: str, qos: tuple) -> tuple:
    """A context for run with qos, and on its data topic a reader then a writer, matched
    to each other; (context, reader, writer, the error to pass on)."""
    cfg = abi.config(run, qos=qos)
    err = abi.Error()
    ctx = abi.ok(t.open(C.byref(cfg), C.byref(err)), err)
    topic = f"psb_{run}_data".encode()
    r = abi.ok(t.create_reader(ctx, topic, None, None, C.byref(err)), err)
    w = abi.ok(t.create_writer(ctx, topic, C.byref(err)), err)
    assert t.matched_readers(w) == 1 and t.matched_writers(r) == 1
    return ctx, r, w, err


def stalled_reader(lib, name: str, qos: tuple, written: int, digits: int) -> tuple:
    """A reader and a writer of run NAME<pid> matched with qos, and samples 0..written-1
    (their numbers, so many digits) written while the reader takes none; (functions,
    run, context, reader, writer, the error to pass on)."""
    t = abi.load(lib)
    run = f"{name}{os.getpid()}"
    ctx, r, w, err = matched_reader_and_writer(t, run, qos)
    for seq in range(written):
        assert t.write(w, b"%0*d" % (digits, seq), digits, C.byref(err)) == 0, err.message
    return t, run, ctx, r, w, err


def close_and_check_nothing_left(t, ctx, reader, writer, run: str) -> None:
    """Destroys the reader and the writer, closes the context: nothing of run is left."""
    t.destroy_reader(reader)
    t.destroy_writer(writer)
    t.close(ctx)
    assert leftovers(run) == []


def test_a_stalled_reader_keeps_exactly_the_newest_n(lib):
    """keep_last:5, a reader that does not take while 50 are written: it then takes
    exactly samples 45..49 (iceoryx2's safe overflow drops the oldest)."""
    qos = (abi.PSB_BEST_EFFORT, abi.PSB_VOLATILE, abi.PSB_KEEP_LAST, 5)
    t, run, ctx, r, w, err = stalled_reader(lib, "stall", qos, written=50, digits=8)
    assert abi.take_all(t, r) == [b"%08d" % s for s in range(45, 50)]
    assert t.write(w, b"%08d" % 50, 8, C.byref(err)) == 0
    assert abi.take_all(t, r) == [b"%08d" % 50]
    close_and_check_nothing_left(t, ctx, r, w, run)


def test_a_late_reader_gets_exactly_the_transient_local_history(lib):
    """transient_local keep_last:3: a reader created after samples 0..9 were written gets
    exactly 7, 8, 9 once the writer connects to it (its matched(), the node's barrier),
    then what comes next."""
    t = abi.load(lib)
    run = f"late{os.getpid()}"
    qos = (abi.PSB_BEST_EFFORT, abi.PSB_TRANSIENT_LOCAL, abi.PSB_KEEP_LAST, 3)
    cfg = abi.config(run, qos=qos)
    err = abi.Error()
    ctx = abi.ok(t.open(C.byref(cfg), C.byref(err)), err)
    topic = f"psb_{run}_data".encode()
    w = abi.ok(t.create_writer(ctx, topic, C.byref(err)), err)
    for seq in range(10):
        assert t.write(w, b"%04d" % seq, 4, C.byref(err)) == 0, err.message
    r = abi.ok(t.create_reader(ctx, topic, None, None, C.byref(err)), err)
    assert t.matched_readers(w) == 1 and t.matched_writers(r) == 1
    assert abi.take_all(t, r) == [b"0007", b"0008", b"0009"]
    assert t.write(w, b"0010", 4, C.byref(err)) == 0, err.message
    assert abi.take_all(t, r) == [b"0010"]
    close_and_check_nothing_left(t, ctx, r, w, run)


@pytest.mark.parametrize(
    "qos, setting, words",
    [
        ((abi.PSB_BEST_EFFORT, abi.PSB_VOLATILE, abi.PSB_KEEP_ALL, 0), "history", "needs reliab"),
        ((abi.PSB_BEST_EFFORT, abi.PSB_TRANSIENT_LOCAL, 0, 0), "durability", "keep_last:N"),
        ((abi.PSB_BEST_EFFORT, abi.PSB_VOLATILE, abi.PSB_KEEP_LAST, 2000), "history", "1024"),
    ],
)
def test_check_refuses_what_iceoryx2_cannot_honour(lib, qos, setting, words):
    t = abi.load(lib)
    found = abi.check(t, abi.config("refuse1", qos=qos))
    assert [s for s, _ in found] == [setting], found
    assert found[0][1].startswith("iceoryx2: ") and words in found[0][1], found


def test_check_refuses_a_run_id_too_long_for_its_socket_paths(lib):
    found = abi.check(abi.load(lib), abi.config("r" * 41))
    assert found == [
        (
            "driver",
            f"iceoryx2: run id '{'r' * 41}' is longer than 40 characters: it names iceoryx2's "
            "event sockets, whose paths must fit in 108 bytes",
        )
    ]


def test_the_cli_refuses_best_effort_keep_all_with_exit_2(lib, results):
    proc = run_cli(["ping", "--driver", DRIVER, "--history", "keep_all"], results)
    assert proc.returncode == 2, proc.stderr
    assert "iceoryx2: history keep_all needs reliability reliable" in proc.stderr
    assert only_run(results)["status"] == "refused"


def test_option_namespace_names_the_runs_files_and_they_go(lib, results):
    """namespace=NAME (psbench criteria's monitoring: iox2 must know the names before the
    run): while the run goes on its files are psbench_iox2_NAME_..., none named by its run
    id; afterwards none is left."""
    args = ["pubsub", "--driver", DRIVER, "--count", "3000", "--rate", "1000",
            "--option", "namespace=nstest1"]  # fmt: skip
    with cli_in_background(args, results) as proc:
        record = wait_for_running(results, proc)
        end = time.monotonic() + 30
        services = str(Path(tempfile.gettempdir()) / "psbench_iox2_nstest1_services")
        while services not in leftovers("nstest1"):
            assert time.monotonic() < end, "the run's service directory never appeared"
            time.sleep(0.05)
        assert leftovers(record["run_id"]) == []
        proc.communicate(timeout=120)
    done = only_run(results)
    assert done["status"] == "ok", done.get("message")
    assert leftovers("nstest1") == []


@pytest.mark.parametrize("bad", ["a-b", "n" * 41])
def test_the_cli_refuses_a_namespace_that_cannot_name_files(lib, results, bad):
    proc = run_cli(["ping", "--driver", DRIVER, "--option", f"namespace={bad}"], results)
    assert proc.returncode == 2, proc.stderr
    assert f"iceoryx2: option namespace='{bad}': use 1 to 40 letters and digits" in proc.stderr


@pytest.mark.parametrize("notify", ["wait", "poll", "listener"])
def test_reliable_keep_all_back_to_back_loses_nothing(lib, results, notify):
    """A writer that waits for room in the reader's buffer of 2: every one of 20,000
    back-to-back samples arrives, in every notify mode."""
    record = run_ok(
        results, "pubsub", "--reliability", "reliable", "--history", "keep_all",
        "--notify", notify, "--count", "20000", "--rate", "0", "--check-pattern",
    )  # fmt: skip
    counts = summary(record, "sub")["counts"]
    assert counts["sent"] == counts["samples"] == 20000, counts
    assert counts["lost"] == counts["corrupted"] == counts["duplicated"] == 0, counts
    assert summary(record, "pub")["counts"]["write_errors"] == 0


def test_a_stalled_reliable_reader_keeps_every_sample_until_its_buffer_is_full(lib):
    """reliable keep_all: a reader that does not take holds 2 (its buffer); the third
    write waits RELIABLE_WAIT (10 s) and then fails, saying so; the reader then takes
    exactly 0 and 1."""
    qos = (abi.PSB_RELIABLE, abi.PSB_VOLATILE, abi.PSB_KEEP_ALL, 0)
    t, run, ctx, r, w, err = stalled_reader(lib, "rstall", qos, written=2, digits=4)
    started = time.monotonic()
    assert t.write(w, b"0002", 4, C.byref(err)) == -1
    assert time.monotonic() - started >= 9.5
    assert err.message.decode().startswith("iceoryx2: send failed"), err.message
    assert abi.take_all(t, r) == [b"0000", b"0001"]
    close_and_check_nothing_left(t, ctx, r, w, run)


def test_a_node_killed_mid_run_leaves_nothing(lib, results):
    """SIGKILL the sub of a running pub/sub: psbench fails the run, and its leftovers (the
    killed node's shared memory, sockets, node files) are gone afterwards."""
    args = ["pubsub", "--driver", DRIVER, "--duration", "20", "--rate", "1000"]
    with cli_in_background(args, results) as proc:
        record = wait_for_running(results, proc)
        run_id = record["run_id"]
        end = time.monotonic() + 30
        while not (pids := node_processes_with(run_id)) or not leftovers(run_id):
            assert time.monotonic() < end, "the run's nodes never started"
            time.sleep(0.05)
        time.sleep(1.0)
        sub = [p for p in pids if b"sub" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert sub, pids
        os.kill(sub[0], signal.SIGKILL)
        proc.communicate(timeout=120)
    assert only_run(results)["status"] != "ok"
    assert leftovers(run_id) == []


def test_clean_py_removes_a_killed_nodes_leftovers_and_spares_a_live_one(lib, node, tmp_path):
    """A node started alone (no psbench run around it) and SIGKILLed leaves its run's files;
    the manifest's cleanup command removes them, but not those of a run still alive."""
    dead, live = f"cleand{os.getpid()}", f"cleanl{os.getpid()}"
    procs = {}
    for run in (dead, live):
        procs[run] = subprocess.Popen(
            [str(node), "--driver", str(lib), "--role", "pong", "--run-id", run,
             "--out", str(tmp_path / run)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    try:
        end = time.monotonic() + 30
        while not all(leftovers(r) for r in procs):
            assert time.monotonic() < end, "the nodes made no files"
            time.sleep(0.05)
        time.sleep(2.5)  # older than clean.py's guard for a run being created
        procs[dead].kill()
        procs[dead].wait()
        assert leftovers(dead), "a killed node leaves its files"
        out = subprocess.run([sys.executable, str(CLEAN)], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert leftovers(dead) == []
        assert leftovers(live), "clean.py removed a live run's files"
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
    subprocess.run([sys.executable, str(CLEAN)], check=True, capture_output=True)
    time.sleep(2.5)
    subprocess.run([sys.executable, str(CLEAN)], check=True, capture_output=True)
    assert leftovers(live) == []
