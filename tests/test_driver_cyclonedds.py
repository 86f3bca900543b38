"""The cyclonedds driver in real two-process runs through `./psbench ping|pubsub`: both
types, both reliabilities, small and large messages, every notify mode and every
transport (shm with an iox-roudi this module starts and stops), with counts, integrity
and files checked. A fresh network namespace shows which transport carried the data."""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import LAUNCHER, REPO, cli_env, only_run, run_cli
from driver_checks import check_accounted, load
from driver_suite import Expect
from psbench.results.samples import read_samples
from roudi_helpers import iceoryx_shm_files, roudi_pids, stop_roudi, wait_for_no_roudi

DRIVER = "cyclonedds"
SUITE = Expect(late_join=("tl-keep5",))  # make test's late joiner (tests/test_late_join.py)
UDP_XML = REPO / "drivers" / "cyclonedds" / "transports" / "udp.xml"


@pytest.fixture(scope="module")
def cyclonedds(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")


@pytest.fixture(scope="module")
def roudi():
    """iox-roudi for the shm runs: started here and stopped with SIGTERM, after which
    neither a process nor its shared memory may remain. A RouDi someone else runs is
    used as it is and left alone."""
    if not shutil.which("iox-roudi"):
        pytest.fail("iox-roudi is missing: install the Debian package iceoryx (make setup)")
    proc, output = None, []
    for _attempt in range(3):
        # A RouDi still running is someone else's; one that starts meanwhile makes ours
        # exit at once, so try again.
        if not wait_for_no_roudi():
            yield None
            return
        proc = subprocess.Popen(
            ["iox-roudi"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        ready, output = False, []
        end = time.monotonic() + 20
        while not ready and time.monotonic() < end and proc.poll() is None:
            output.append(proc.stdout.readline())
            ready = "RouDi is ready for clients" in output[-1]
        if ready:
            break
        proc.kill()
        proc.wait()
        proc.stdout.close()
    try:
        assert ready, "iox-roudi did not become ready: " + "".join(output[-5:])
        yield proc
    finally:
        stop_roudi(proc)
    assert roudi_pids() == [], "an iox-roudi process remains"


def run_ok(results, *args):
    """One inter-process run of the driver (unless args say otherwise); returns the
    record, the summaries by role and the measuring role's samples."""
    proc = run_cli([*args[:1], "--driver", DRIVER, *args[1:]], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    run_dir = record["_dir"]
    roles = ("ping", "pong") if args[0] == "ping" else ("pub", "sub")
    summaries = {role: load(run_dir, role) for role in roles}
    measuring = summaries[roles[0] if args[0] == "ping" else "sub"]
    samples = read_samples(run_dir / measuring["samples_file"])
    assert len(samples) == measuring["counts"]["samples"]
    assert record["driver"]["name"] == DRIVER and record["driver"]["version"].startswith("0.10")
    return record, summaries, samples


# Every value of every dimension at least once: type, reliability, small and large
# sizes, notify mode, transport (udp, multicast, config here; shm below).
PING_RUNS = [
    # transport, type args, size, reliability, notify, count
    ("udp", [], 64, "best_effort", "wait", 500),
    ("udp", [], 1 << 20, "reliable", "listener", 40),
    ("udp", ["--option", "type=complex", "--option", "elements=16"], 32, "reliable", "poll", 300),
    ("multicast", [], 16384, "reliable", "wait", 300),
    ("multicast", ["--option", "type=complex"], 32, "best_effort", "listener", 300),
]


@pytest.mark.parametrize("transport,type_args,size,reliability,notify,count", PING_RUNS)
def test_ping(cyclonedds, results, transport, type_args, size, reliability, notify, count):
    pattern = [] if type_args else ["--check-pattern"]
    _, s, samples = run_ok(
        results, "ping", "--transport", transport, *type_args, "--size", str(size), "--reliability",
        reliability, "--notify", notify, "--count", str(count), "--warmup", "20", *pattern,
    )  # fmt: skip
    ping = s["ping"]
    assert ping["config"]["transport"] == transport and ping["config"]["notify"] == notify
    check_accounted(ping, count, lossless=reliability == "reliable")
    assert s["pong"]["counts"]["write_errors"] == 0
    assert len(samples) > 0


def test_write_batch_still_answers_every_ping(cyclonedds, results):
    # WriteBatch holds writes back until the packet fills or the node flushes; the node
    # flushes after every ping and echo, so a closed loop sees every echo in time
    # (unflushed, each ping would wait out the sample timeout and count as lost).
    _, s, samples = run_ok(
        results, "ping", "--option", "write_batch=true", "--count", "300", "--warmup", "10",
        "--sample-timeout", "0.5", "--check-pattern",
    )  # fmt: skip
    assert s["ping"]["config"]["options"] == {"write_batch": "true"}
    check_accounted(s["ping"], 300, lossless=True)
    assert len(samples) == 300


def test_write_batch_back_to_back_delivers_everything(cyclonedds, results):
    _, s, samples = run_ok(
        results, "pubsub", "--option", "write_batch=true", "--rate", "0", "--count", "20000",
        "--reliability", "reliable", "--history", "keep_all", "--check-pattern",
    )  # fmt: skip
    check_accounted(s["sub"], 20000, lossless=True)
    assert s["pub"]["counts"]["write_errors"] == 0


# 7 to 22 s on 2 cores: make test-long (CI runs it too).
@pytest.mark.long
def test_pubsub_four_mib_reliable_loses_nothing(cyclonedds, results):
    _, s, _ = run_ok(
        results, "pubsub", "--size", str(4 << 20), "--count", "30", "--rate", "0", "--reliability",
        "reliable", "--history", "keep_all", "--check-pattern",
    )  # fmt: skip
    check_accounted(s["sub"], 30, lossless=True)


def test_pubsub_best_effort_listener(cyclonedds, results):
    _, s, _ = run_ok(
        results, "pubsub", "--size", "256", "--count", "500", "--rate", "2000", "--notify",
        "listener", "--check-pattern",
    )  # fmt: skip
    check_accounted(s["sub"], 500, lossless=False)


def test_pubsub_transient_local_keep_last(cyclonedds, results):
    _, s, _ = run_ok(
        results, "pubsub", "--option", "type=complex", "--option", "elements=4", "--size", "32",
        "--count", "300", "--rate", "0", "--reliability", "reliable", "--durability",
        "transient_local", "--history", "keep_last:8",
    )  # fmt: skip
    sub = s["sub"]
    assert sub["config"]["durability"] == "transient_local"
    check_accounted(sub, 300, lossless=False)  # keep_last may drop when outrun


def test_intra_process_ping_listener(cyclonedds, results):
    record, s, _ = run_ok(
        results, "ping", "--placement", "intra", "--notify", "listener", "--reliability",
        "reliable", "--count", "500", "--warmup", "20", "--check-pattern",
    )  # fmt: skip
    assert len(record["processes"]) == 1
    check_accounted(s["ping"], 500, lossless=True)


@pytest.mark.parametrize("how", ["file", "inline"])
def test_vendor_configuration_runs_as_transport_config(cyclonedds, results, how):
    uri = f"file://{UDP_XML}" if how == "file" else UDP_XML.read_text()
    _, s, _ = run_ok(
        results, "ping", "--transport", "config", "--option", f"cyclonedds_uri={uri}", "--count",
        "300", "--warmup", "20", "--check-pattern",
    )  # fmt: skip
    ping = s["ping"]
    assert ping["config"]["transport"] == "config"
    assert ping["config"]["options"]["cyclonedds_uri"] == uri
    check_accounted(ping, 300, lossless=False)


# --- shm: Cyclone's iceoryx path


def test_listener_errors_become_the_runs_warning(node, driver_libs, cyclonedds, tmp_path):
    # Injected fault: a sub sized for 256 bytes listening to a pub writing 1024. Each
    # message fails in Cyclone's listener thread, where no call can return the error: the
    # SDK counts them (listener_errors) and the node says so in the run's warning.
    def start(*args):
        common = ["--driver", str(driver_libs[DRIVER]), "--out", str(tmp_path)]
        common += ["--run-id", f"lerr{os.getpid()}", "--barrier", "none"]
        return subprocess.Popen(
            [str(node), *common, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    # The sub sees no valid message, so no end marker either: its --timeout ends it (exit 3).
    sub = start("--role", "sub", "--size", "256", "--notify", "listener", "--timeout", "5")
    pub = start(
        "--role", "pub", "--size", "1024", "--count", "50", "--rate", "100", "--timeout", "30"
    )
    try:
        pub_err = pub.communicate(timeout=60)[1]
        sub_err = sub.communicate(timeout=60)[1]
    finally:
        for proc in (pub, sub):
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert pub.returncode == 0, pub_err
    assert sub.returncode == 3, sub_err
    summary = load(tmp_path, "sub")
    errors = summary["middleware_counters"]["reader"]["listener_errors"]
    assert errors >= 50, summary["middleware_counters"]  # every measured message, at least
    assert summary["counts"]["received"] == 0
    assert f"the driver's listener met {errors} error(s)" in summary["warning"]
    said = [line for line in sub_err.splitlines() if "larger than this run" in line]
    assert len(said) == 1, sub_err  # the first error only, not one line per message


def test_shm_without_roudi_says_start_it(node, driver_libs, cyclonedds, tmp_path):
    # The node run by hand, without psbench's service pool. Runs before the tests below
    # start iox-roudi (pytest keeps the file's order).
    if roudi_pids():
        pytest.skip("an iox-roudi is running on this host")
    proc = subprocess.run(
        [
            str(node),
            "--driver",
            str(driver_libs[DRIVER]),
            "--role",
            "ping,pong",
            "--out",
            str(tmp_path),
            "--transport",
            "shm",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "start iox-roudi first" in proc.stderr


def test_the_cli_starts_roudi_for_shm_and_stops_it(cyclonedds, results):
    # Runs before the module's own RouDi: psbench's service pool starts one.
    if roudi_pids():
        pytest.skip("an iox-roudi is running on this host")
    record, _, samples = run_ok(
        results, "ping", "--transport", "shm", "--count", "200", "--warmup", "20"
    )
    assert len(samples) > 0
    [service] = record["services"]
    assert service["name"] == "iox-roudi" and service["started_by_psbench"]
    assert (record["_dir"] / "service-iox-roudi.log").exists()
    assert roudi_pids() == [], "psbench left iox-roudi running"
    assert iceoryx_shm_files() == [], "iox-roudi's shared memory was left in /dev/shm"


SHM_RUNS = [
    ("ping", [], 64, "best_effort", "wait", ["--check-pattern"]),
    ("ping", [], 1 << 20, "reliable", "poll", ["--check-pattern"]),
    (
        "ping",
        ["--option", "type=complex", "--option", "elements=16"],
        32,
        "reliable",
        "listener",
        [],
    ),
    (
        "pubsub",
        [],
        4096,
        "reliable",
        "wait",
        ["--history", "keep_last:16", "--rate", "5000", "--check-pattern"],
    ),
]


@pytest.mark.parametrize("kind,type_args,size,reliability,notify,extra", SHM_RUNS)
def test_shm(cyclonedds, roudi, results, kind, type_args, size, reliability, notify, extra):
    count = 300 if size < (1 << 20) else 40
    warmup = ["--warmup", "20"] if kind == "ping" else []
    _, s, _ = run_ok(
        results, kind, "--transport", "shm", *type_args, "--size", str(size), "--reliability",
        reliability, "--notify", notify, "--count", str(count), *warmup, *extra,
    )  # fmt: skip
    measuring = s["ping" if kind == "ping" else "sub"]
    assert measuring["config"]["transport"] == "shm"
    # pubsub: a reliable keep_last reader may be outrun (iceoryx drops the oldest).
    check_accounted(measuring, count, lossless=reliability == "reliable" and kind == "ping")


# --- which transport carried the data: a fresh network namespace has only our traffic

NETNS_HELPER = r"""
import json, subprocess, sys
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
def counters():
    def table(path, prefix):
        rows = [l.split() for l in open(path) if l.startswith(prefix + ":")]
        return dict(zip(rows[0][1:], map(int, rows[1][1:])))
    return {"udp_out": table("/proc/net/snmp", "Udp")["OutDatagrams"],
            "mcast_out": table("/proc/net/netstat", "IpExt")["OutMcastPkts"]}
before = counters()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
after = counters()
print(json.dumps({"returncode": proc.returncode, "stderr": proc.stderr,
                  **{k: after[k] - before[k] for k in after}}))
"""


def run_in_fresh_netns(results, args):
    if not shutil.which("unshare") or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) for a private network namespace")
    proc = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", NETNS_HELPER, str(LAUNCHER), *args],
        capture_output=True, text=True, cwd=REPO, env=cli_env(results), timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["returncode"] == 0, out["stderr"]
    return out


@pytest.mark.parametrize("transport", ["udp", "multicast", "shm"])
def test_the_transport_named_is_the_one_used(cyclonedds, roudi, results, transport):
    # shm: enough messages that the discovery datagrams (SPDP goes to each of the 100
    # participant ports MaxAutoParticipantIndex opens, a few hundred in all) are few
    # beside them
    count, warmup = (2000 if transport == "shm" else 400), 20
    messages = 2 * (count + warmup)  # pings and echoes, each at least one datagram on UDP
    traffic = run_in_fresh_netns(
        results,
        [
            "ping",
            "--driver",
            DRIVER,
            "--transport",
            transport,
            "--option",
            "type=complex",
            "--size",
            "32",
            "--count",
            str(count),
            "--warmup",
            str(warmup),
        ],
    )
    ping = load(only_run(results)["_dir"], "ping")
    assert ping["counts"]["samples"] > 0
    if transport == "udp":
        assert traffic["udp_out"] >= messages and traffic["mcast_out"] == 0, traffic
    elif transport == "multicast":
        assert traffic["mcast_out"] >= messages, traffic
    else:  # shm: the sequences of type complex travel through iceoryx; UDP only discovers
        assert traffic["udp_out"] < messages / 4 and traffic["mcast_out"] == 0, traffic


# --- refusals reach the user with the driver's words


def refused(results, *args):
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert only_run(results)["status"] == "refused"
    return proc.stderr


def test_complex_is_sized_by_elements(cyclonedds, results):
    assert "cyclonedds: type complex is sized by option elements=N; use --size 32" in refused(
        results, "--option", "type=complex", "--size", "64"
    )


def test_vendor_configuration_needs_transport_config(cyclonedds, results):
    assert "needs --transport config" in refused(
        results, "--option", f"cyclonedds_uri=file://{UDP_XML}"
    )


def test_transport_config_needs_a_vendor_configuration(cyclonedds, results):
    assert "transport config needs option cyclonedds_uri" in refused(
        results, "--transport", "config"
    )
