"""What a run costs (issue 15, section 3): every process's CPU time, context switches and
peak memory over the measurement window, broker included. The readings of /proc are
checked against the kernel's own accounting of a child process (getrusage, which it
reports itself) and against known allocations; whole runs against what they must
contain: each node process, the broker psbench started, the window's messages."""

import json
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import REPO, only_run, run_cli

sys.path.insert(0, str(REPO / "python"))
from psbench.run import resources  # noqa: E402

# A child that does what it is told on stdin, one command per line, and answers each
# with its own getrusage (user + system, ns) and its peak RSS (ru_maxrss, KiB).
CHILD = textwrap.dedent("""
    import resource, sys, threading, time
    held = []
    def burn(seconds):
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass
    threads = {}
    for line in sys.stdin:
        word, _, arg = line.strip().partition(" ")
        if word == "burn":
            burn(float(arg))
        elif word == "start":          # a thread that burns until told to stop
            stop = threading.Event()
            t = threading.Thread(target=lambda s=stop: [burn(0.01) for _ in iter(lambda: s.is_set(), True)])
            t.start()
            threads[arg] = (t, stop)
        elif word == "stop":
            t, stop = threads.pop(arg)
            stop.set()
            t.join()
        elif word == "hold":
            held.append(bytearray(int(arg) << 20))
            for i in range(0, len(held[-1]), 4096):
                held[-1][i] = 1            # touch every page: resident
        elif word == "free":
            held.clear()
        ru = resource.getrusage(resource.RUSAGE_SELF)
        used = round((ru.ru_utime + ru.ru_stime) * 1e9)
        print(used, ru.ru_maxrss, flush=True)
""")


@pytest.fixture
def child():
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )

    def tell(command: str) -> tuple[int, int]:
        proc.stdin.write(command + "\n")
        proc.stdin.flush()
        used, peak = proc.stdout.readline().split()
        return int(used), int(peak)

    yield proc, tell
    proc.stdin.close()
    proc.wait(timeout=10)


def test_cpu_time_is_the_kernels_own_account_of_the_process(child):
    proc, tell = child
    used_before, _ = tell("burn 0")
    before = resources.snapshot(proc.pid)
    used_after, _ = tell("burn 0.3")
    after = resources.snapshot(proc.pid)
    found = resources.difference(before, after)
    expected = used_after - used_before
    assert expected >= 300_000_000
    # The same kernel counter read two ways; what separates them is the child's own
    # reading and printing between the snapshots (well under 10 ms).
    assert abs(found["cpu_ns"] - expected) < 10_000_000, (found, expected)
    assert found["threads_ended"] == 0


def test_a_thread_started_inside_counts_whole_and_one_that_ended_is_reported(child):
    proc, tell = child
    used_before, _ = tell("start early")
    before = resources.snapshot(proc.pid)
    tell("stop early")  # ended inside the window
    tell("start late")  # started inside the window
    tell("burn 0.2")
    used_after, _ = tell("stop late")
    after = resources.snapshot(proc.pid)
    found = resources.difference(before, after)
    assert found["threads_ended"] == 1
    # The late thread and the main thread are all there; what the ended thread did
    # inside the window is missing, never counted twice.
    assert found["cpu_ns"] >= 200_000_000
    assert found["cpu_ns"] <= used_after - used_before + 10_000_000


def test_peak_memory_is_the_windows_once_reset(child):
    proc, tell = child
    tell("hold 200")
    _, lifetime_peak = tell("free")
    assert lifetime_peak >= 200 << 10
    assert resources.reset_peak(proc.pid)
    tell("hold 20")
    peak = resources.peak_rss_kb(proc.pid)
    assert 20 << 10 <= peak < 100 << 10, peak


def test_a_process_that_is_gone_reads_as_none():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert resources.snapshot(proc.pid) is None
    assert resources.peak_rss_kb(proc.pid) is None


def test_the_brokers_cost_is_in_the_run(driver_libs, results):
    if "nats" not in driver_libs:
        pytest.skip("nats is not built")
    proc = run_cli(
        ["pubsub", "--driver", "nats", "--count", "3000", "--rate", "2000", "--quiet", "--json"],
        results,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    found = record["resources"]
    assert found == json.loads(proc.stdout)["resources"]
    assert found["measured"] and found["messages"] == 3000
    assert found["per"] == "message published"
    by_name = {p["name"]: p for p in found["processes"]}
    broker_pid = next(s["pid"] for s in record["services"] if s["name"] == "nats-server")
    assert by_name["nats-server"]["kind"] == "service"
    assert by_name["nats-server"]["pid"] == broker_pid
    assert {p["pid"] for p in record["processes"]} == {
        p["pid"] for p in found["processes"] if p["kind"] == "node"
    }
    # Every message passes through the broker: it worked during the window.
    assert by_name["nats-server"]["measured"] and by_name["nats-server"]["cpu_ns"] > 0
    assert found["services"]["cpu_ns"] == by_name["nats-server"]["cpu_ns"]
    assert "resources:" in proc.stderr and "services" in proc.stderr


def test_a_run_that_crashes_inside_the_window_has_no_resources(driver_libs, results):
    proc = run_cli(
        [
            "ping",
            "--driver",
            "udp",
            "--count",
            "5000",
            "--option",
            "fault=crash",
            "--option",
            "fault_after=3000",
            "--quiet",
        ],
        results,
    )
    assert proc.returncode != 0
    found = only_run(results)["resources"]
    assert found == {
        "measured": False,
        "why": "the measurement window did not end (run stopped or failed)",
    }
    assert "resources: not measured (the measurement window did not end" in proc.stdout


def test_report_and_compare_show_resources_and_start_up(driver_libs, results, tmp_path):
    for _ in range(2):
        proc = run_cli(["ping", "--driver", "udp", "--count", "2000", "--quiet"], results)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    report = tmp_path / "report"
    proc = run_cli(["report", str(results), "-o", str(report)], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = json.loads((report / "resources.json").read_text())
    (row,) = table["rows"]
    assert row["reps"] == 2 and row["per"] == "round trip"
    assert row["all_cpu_ns_per_message"] > 0 and row["services_cpu_ns_per_message"] is None
    assert (report / "resources.csv").read_text().startswith("configuration,reps,per,")
    startup = json.loads((report / "startup.json").read_text())
    (row,) = startup["rows"]
    assert row["reps"] == 2
    assert 0 < row["open_to_matched_ms"] <= row["start_to_matched_ms"]
    assert "Resources per message" in (report / "report.html").read_text()
    proc = run_cli(["compare", str(results), str(results)], results)
    assert "Resources per message" in proc.stdout, proc.stdout


def node_argv(node, lib, out, run_id: str, *args: str) -> list[str]:
    """A node's command line, its roles to add: driver lib, files in out, run run_id."""
    return [str(node), "--driver", str(lib), "--out", str(out), "--run-id", run_id, *args]


def test_start_up_times_carry_a_known_delay(node, driver_libs, tmp_path):
    # The sub starts alone; the pub 1 s later: the sub cannot match, nor get a first
    # message, before the pub's process exists, and its open-to-matched holds the wait.
    # The reference is this test's CLOCK_MONOTONIC at the pub's launch, not the sub's
    # started_ns: the sub's own start comes some ms after its Popen (more under load).
    if "cyclonedds" not in driver_libs:
        pytest.skip("cyclonedds is not built")
    common = node_argv(node, driver_libs["cyclonedds"], tmp_path, "startup1", "--count", "200",
                       "--warmup", "10", "--rate", "1000", "--reliability", "reliable",
                       "--timeout", "30")  # fmt: skip
    sub = subprocess.Popen(common + ["--role", "sub"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        pub_launched_ns = time.monotonic_ns()  # CLOCK_MONOTONIC, as the node's timing
        pub = subprocess.run(
            common + ["--role", "pub", "--window-lines"], capture_output=True, text=True, timeout=60
        )
        assert sub.wait(timeout=60) == 0
    finally:
        sub.kill()
    assert pub.returncode == 0, pub.stderr
    # The window lines bracket the measurement, nothing between them.
    assert pub.stdout.splitlines() == ["WINDOW begin", "WINDOW end"]
    timing = json.loads((tmp_path / "sub.json").read_text())["timing"]
    assert timing["matched_ns"] >= pub_launched_ns
    assert (
        timing["first_receive_ns"]
        >= timing["matched_ns"]
        > timing["opened_ns"]
        > timing["started_ns"]
    )
    assert timing["discovery_ns"] == timing["matched_ns"] - timing["opened_ns"]


def named(pid: int, name: str, limit_s: float = 10.0) -> None:
    """Waits until the child has exec'd the program (until then its comm is ours)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            if open(f"/proc/{pid}/comm").read().strip() == name:
                return
        except OSError:
            pass
        time.sleep(0.01)
    pytest.fail(f"process {pid} never became {name}")


def test_a_service_someone_else_started_is_found_by_name_and_never_reset(tmp_path):
    program = tmp_path / "psbsvc-test"
    program.write_bytes(open("/bin/sleep", "rb").read())
    program.chmod(0o755)
    assert (
        resources.service_to_watch("psbsvc-test", None).why
        == "not started by psbench and not found running"
    )
    first = subprocess.Popen([str(program), "30"])
    try:
        named(first.pid, "psbsvc-test")
        found = resources.service_to_watch("psbsvc-test", None)
        assert (found.pid, found.foreign) == (first.pid, True)
        sampler = resources.WindowSampler(lambda: [found])
        sampler.on_window("begin")
        sampler.on_window("end")
        (entry,) = sampler.result(10, "round trip", 1)["processes"]
        assert entry["started_by_psbench"] is False
        assert entry["peak_rss_scope"] == "process lifetime"
        second = subprocess.Popen([str(program), "30"])
        try:
            named(second.pid, "psbsvc-test")
            assert (
                resources.service_to_watch("psbsvc-test", None).why
                == "not started by psbench and 2 processes named psbsvc-test run"
            )
        finally:
            second.kill()
            second.wait()
    finally:
        first.kill()
        first.wait()


def test_a_sender_measures_only_once_the_reading_is_done(node, driver_libs, tmp_path):
    # Injected: the orchestrator takes 1 s to read /proc before it answers SAMPLED. The
    # pub must neither measure during that second nor make up for it afterwards: its
    # open-loop schedule starts when the answer comes (known answer: no message behind).
    common = node_argv(node, driver_libs["udp"], tmp_path, "window1", "--rate", "100", "--count",
                       "100", "--warmup", "10", "--window-lines", "--timeout", "30")  # fmt: skip
    sub = subprocess.Popen(common + ["--role", "sub"], stdout=subprocess.PIPE, text=True)
    pub = subprocess.Popen(
        common + ["--role", "pub"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert pub.stdout.readline() == "WINDOW begin\n"
        said = time.monotonic_ns()
        time.sleep(1.0)
        pub.stdin.write("SAMPLED\n")
        pub.stdin.flush()
        assert pub.stdout.readline() == "WINDOW end\n"
        assert pub.wait(timeout=30) == 0 and sub.wait(timeout=30) == 0
        assert sub.stdout.read() == "WINDOW end\n"
    finally:
        for proc in (pub, sub):
            proc.kill()
            proc.wait()
    summary = json.loads((tmp_path / "pub.json").read_text())
    assert summary["timing"]["measure_start_ns"] - said >= 1_000_000_000
    # Had it scheduled from before the wait, its first messages would be a second late;
    # a loaded machine may make one a few ms late, which is not what this is about.
    assert summary["schedule"]["max_lateness_ns"] < 500_000_000, summary["schedule"]
    sub_counts = json.loads((tmp_path / "sub.json").read_text())["counts"]
    assert sub_counts["samples"] == 100 and sub_counts["lost"] == 0


def test_a_services_cost_counts_what_its_launcher_started(tmp_path):
    # A broker whose launcher stays its parent (rabbitmq: sh -> epmd, beam.smp): psbench
    # knows the launcher's pid; the CPU is its child's. The child's own getrusage is the
    # reference.
    script = tmp_path / "burner.py"
    script.write_text(
        "import resource, sys, time\n"
        "sys.stdin.readline()\n"
        "end = time.process_time() + 0.3\n"
        "while time.process_time() < end: pass\n"
        "ru = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print(round((ru.ru_utime + ru.ru_stime) * 1e9), flush=True)\n"
        "sys.stdin.readline()\n"
    )
    launcher = subprocess.Popen(
        ["sh", "-c", f"{sys.executable} {script}; true"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while len(resources.process_tree(launcher.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        before_tree = resources.snapshot(launcher.pid, tree=True)
        before_own = resources.snapshot(launcher.pid)
        launcher.stdin.write("go\n")
        launcher.stdin.flush()
        used = int(launcher.stdout.readline())  # the child's whole life, start-up included
        after_tree = resources.snapshot(launcher.pid, tree=True)
        after_own = resources.snapshot(launcher.pid)
        tree_cpu = resources.difference(before_tree, after_tree)["cpu_ns"]
        own_cpu = resources.difference(before_own, after_own)["cpu_ns"]
        assert used >= 300_000_000
        # The window holds the burn, not the child's start-up: at least the burn, at most
        # what the child used in all.
        assert 290_000_000 <= tree_cpu <= used + 10_000_000, (tree_cpu, used)
        assert own_cpu < 10_000_000  # the launcher alone did nothing
        assert resources.peak_rss_kb(launcher.pid, tree=True) > resources.peak_rss_kb(launcher.pid)
    finally:
        launcher.stdin.close()
        launcher.wait(timeout=10)
