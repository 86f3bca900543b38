"""The opensplice driver (Vortex OpenSplice Community Edition 6.9, built from source by
`make driver-opensplice`) in real runs through `./psbench ping|pubsub`: a ping and a
1->3 pubsub of the standalone deployment (and the vendor configuration), QoS with known
answers (a late joiner gets exactly the history its durability and history keep), the
settings OpenSplice cannot honour refused with the reason, nothing of a run left behind,
also when psbench is killed, and a ping across two emulated hosts. Every test skips when
the driver is not built."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, cli_in_background, processes_of_run, run_cli, wait_for_running
from driver_checks import (
    check_counts,
    check_samples_file,
    fan_out_case,
    load,
    require_fixup,
    skip_unless_built,
)
from driver_suite import Expect, ok_run
from psbench.base import paths
from test_cross_hosts_dds import COUNT, SIZE, net, node_argv, ping_across  # noqa: F401 (net: a fixture)

DRIVER = "opensplice"
# make test's late joiners (tests/test_late_join.py, from what --describe offers)
SUITE = Expect(late_join=("tl-keep5", "tl-keep1", "volatile"))

built = skip_unless_built(DRIVER)
run_ok = ok_run(DRIVER, "6.9.210323OSS")


def refused(results, *args) -> str:
    proc = run_cli([args[0], "--driver", DRIVER, *args[1:]], results)
    assert proc.returncode != 0, proc.stdout
    return proc.stderr


def no_ospl_files_left(run_dir: Path, run_id: str):
    """OpenSplice's reports went to the nodes' stderr (no ospl-info.log / ospl-error.log
    in the run's or psbench's folder) and its configuration file is gone."""
    for folder in (run_dir, REPO):
        assert not list(folder.glob("ospl-*.log")), folder
    assert not list(Path("/tmp").glob(f"psbench_{run_id}_ospl*"))


PINGS = [
    # type args, size, reliability, notify, count
    ([], 64, "best_effort", "wait", 500),
    ([], 1 << 20, "reliable", "listener", 40),
    (["--option", "type=complex", "--option", "elements=16"], 32, "reliable", "poll", 300),
]


@pytest.mark.parametrize("type_args,size,reliability,notify,count", PINGS)
def test_ping(results, type_args, size, reliability, notify, count):
    record = run_ok(
        results, "ping", *type_args, "--size", str(size), "--count", str(count),
        "--reliability", reliability, "--notify", notify, "--check-pattern",
    )  # fmt: skip
    ping = load(record["_dir"], "ping")
    assert ping["config"]["transport"] == "standalone"
    check_counts(ping, count)
    check_samples_file(record["_dir"], ping, "rtt")
    no_ospl_files_left(record["_dir"], record["run_id"])


def test_pubsub_one_to_three_reliable_loses_nothing(results):
    record = fan_out_case(run_ok, results, size=1024)
    no_ospl_files_left(record["_dir"], record["run_id"])


def test_pubsub_four_mib_reliable_back_to_back_loses_nothing(results):
    record = run_ok(
        results, "pubsub", "--size", str(4 << 20), "--count", "30", "--warmup", "10", "--rate", "0",
        "--reliability", "reliable", "--history", "keep_all", "--check-pattern",
    )  # fmt: skip
    check_counts(load(record["_dir"], "sub"), 30)


def test_intra_process_ping_listener(results):
    record = run_ok(
        results, "ping", "--placement", "intra", "--notify", "listener", "--count", "300",
    )  # fmt: skip
    check_counts(load(record["_dir"], "ping"), 300)


def test_vendor_configuration_runs_as_transport_config(results, tmp_path):
    # A user's own XML: the single-process deployment with DDSI2 on loopback.
    xml = tmp_path / "ospl.xml"
    xml.write_text(
        "<OpenSplice><Domain><Name>mine</Name><Id>77</Id><SingleProcess>true</SingleProcess>"
        '<Service name="ddsi2"><Command>ddsi2</Command></Service></Domain>'
        '<DDSI2Service name="ddsi2"><General><NetworkInterfaceAddress>127.0.0.1'
        "</NetworkInterfaceAddress><AllowMulticast>false</AllowMulticast></General>"
        '<Discovery><Peers><Peer Address="127.0.0.1"/></Peers></Discovery>'
        "</DDSI2Service></OpenSplice>"
    )
    record = run_ok(
        results, "ping", "--transport", "config", "--option", f"ospl_uri=file://{xml}",
        "--count", "300",
    )  # fmt: skip
    ping = load(record["_dir"], "ping")
    assert ping["config"]["transport"] == "config"
    check_counts(ping, 300)


# Each: its arguments, the setting refused, the words of its reason.
# fmt: off
REFUSED = {
    "tl-best-effort": ("--durability transient_local --reliability best_effort", "durability",
                       "needs --reliability reliable"),
    "tl-keep-all": ("--durability transient_local --reliability reliable --history keep_all",
                    "history", "use --history keep_last:N"),
    "shm": ("--transport shm", "transport", "not in OpenSplice Community Edition"),
    "uri-without-config": ("--option ospl_uri=file:///nonexistent.xml", "ospl_uri",
                           "--transport config"),
    "config-without-uri": ("--transport config", "ospl_uri", "is missing"),
}
# fmt: on


@pytest.mark.parametrize("case", REFUSED)
def test_what_opensplice_cannot_honour_is_refused_with_why(results, case):
    args, setting, words = REFUSED[case]
    err = refused(results, "ping", "--count", "10", *args.split())
    assert "opensplice: " in err and setting in err and words in err, err


def test_sigkill_of_psbench_leaves_nothing_of_the_run(results):
    with cli_in_background(
        ["ping", "--driver", DRIVER, "--count", "2000000", "--timeout", "120", "--quiet"], results
    ) as proc:
        record = wait_for_running(results, proc)
        time.sleep(1.5)  # into the measurement: the nodes joined their domain
        assert list(Path("/tmp").glob(f"psbench_{record['run_id']}_ospl*.xml"))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    end = time.monotonic() + 5
    left = None
    while time.monotonic() < end:
        left = processes_of_run(record["run_id"]) + [
            str(p) for p in Path("/tmp").glob(f"*psbench*{record['run_id']}*")
        ]
        if not left:
            break
        time.sleep(0.1)
    assert not left, left


# OpenSplice's in-process spliced thread held 300 ms each time it closes a domain, after
# it left the participant list (close_delay.c, preloaded), in the driver test that opens
# and closes three domains in one process. Without the driver's fix-up
# fixups/close-waits-for-spliced.patch the application took the user layer's global mutex
# first and waited for spliced, spliced waited for the mutex, and OpenSplice's threads
# watchdog aborted the process after 10 s (3 of 3 runs; once in CI without the fault).
def test_a_domain_closes_when_spliced_is_slow_to_close_it(node):
    require_fixup(DRIVER, "close-waits-for-spliced.patch")
    folder = paths.build_dir() / "drivers" / DRIVER
    fault = folder / "ospl_close_delay.so"
    assert fault.is_file(), f"{fault} is built with the driver: run make build"
    proc = subprocess.run(
        [str(folder / "opensplice_driver_test"),
         "--gtest_filter=OpenspliceDriver.OneDomainAfterAnotherInOneProcess"],
        env=dict(os.environ, LD_PRELOAD=str(fault)), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert output.count("close_delay: spliced held 300 ms in u_domainClose") >= 3, output
    assert "Thread deadlocked" not in output and "not-responding" not in output, output
    assert proc.returncode == 0 and "[  PASSED  ] 1 test." in proc.stdout, output[-3000:]


# Across emulated hosts (ABI 6): ping in host a, pong in host b, as tests/
# test_cross_hosts_dds.py runs the other DDS drivers (its helpers and network fixture).
@pytest.mark.skipif(os.geteuid() != 0, reason="emulated hosts need root (CI is)")
def test_ping_in_one_host_pong_in_another(node, driver_libs, net, tmp_path):  # noqa: F811
    ping, pong, sent = ping_across(node, driver_libs[DRIVER], net, tmp_path / "out", "standalone")
    assert ping["config"]["transport"] == "standalone"
    # The pings went over eth0 (ping_across checks), none over host a's loopback: lo
    # carries discovery to this host's own address only (it is a peer), in small packets
    # (measured: 1393 packets, 474 KB, 340 B each; a ping is 16 KiB).
    assert sent["lo", "tx_bytes"] < COUNT * SIZE // 4, sent
    assert sent["lo", "tx_bytes"] < 1500 * sent["lo", "tx_packets"], sent
    assert sent["multicast"] < 10, sent
