"""The fastdds driver in real two-process runs through `./psbench ping|pubsub`: both
types, both reliabilities, both durabilities, small and large messages, every notify
mode and every transport, with counts, integrity and files checked. While runs are in
flight, the nodes' sockets and shared-memory mappings show which transport they use."""

import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, cli_in_background, live_processes, only_run, run_cli
from driver_checks import (
    check_accounted,
    check_samples_file,
    load,
    nodes_seen_running,
    ping_case,
    pubsub_case,
)
from proc_sockets import udp_sockets_of
from psbench.base import manifests

DRIVER = "fastdds"
MIB = 1 << 20
SHM_CLEAN = REPO / "drivers" / "fastdds" / "shm_clean.py"  # the manifest's cleanup

UDP_ONLY_PROFILE = """<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <transport_descriptors>
    <transport_descriptor>
      <transport_id>loopback_udp</transport_id>
      <type>UDPv4</type>
      <interfaceWhiteList><address>127.0.0.1</address></interfaceWhiteList>
    </transport_descriptor>
  </transport_descriptors>
  <participant profile_name="loopback_udp_only">
    <rtps>
      <userTransports><transport_id>loopback_udp</transport_id></userTransports>
      <useBuiltinTransports>false</useBuiltinTransports>
    </rtps>
  </participant>
</profiles>
"""


@pytest.fixture(scope="module")
def fastdds(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


def measured(results: Path, kind: str, *args: str):
    """One inter-process run through the CLI; returns the run record and its summaries."""
    proc = run_cli([kind, "--driver", DRIVER, *args], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    assert len(record["processes"]) == 2, "not an inter-process run"
    assert record["driver"]["name"] == DRIVER and "2.9" in record["driver"]["version"]
    # The driver's cleanup of killed processes' shared memory ran after the run.
    assert record["cleanup"]["argv"][1:] == [str(SHM_CLEAN)]
    assert record["cleanup"]["exit_code"] == 0, record["cleanup"]
    run_dir = record["_dir"]
    roles = ("ping", "pong") if kind == "ping" else ("pub", "sub")
    return record, {role: load(run_dir, role) for role in roles}


# Every transport, notify mode, reliability and type at least once, small and large.
# Each notify mode at 32 B, 1 KiB and up to 1 MiB on the default transport is the
# conformance suite's (DeliversInEveryNotifyMode, DeliversSamplesIntactAndInOrder, run by ctest);
# these cases are what is this driver's own: transports, loans, larger messages. Each
# case: its arguments, size, count.
# fmt: off
PING_CASES = {
    "udp-listener-reliable-1MiB":
        ("--transport udp --notify listener --reliability reliable", MIB, 30),
    "udp-poll-best_effort-4MiB":
        ("--transport udp --notify poll --reliability best_effort", 4 * MIB, 20),
    "multicast-poll-best_effort-64B": ("--transport multicast --notify poll", 64, 300),
    "multicast-wait-reliable-1MiB": ("--transport multicast --reliability reliable", MIB, 20),
    "shm-listener-best_effort-1MiB": ("--transport shm --notify listener", MIB, 30),
    "shm-wait-reliable-4MiB":
        ("--transport shm --reliability reliable --history keep_last:2", 4 * MIB, 20),
    "builtin-poll-reliable-4MiB":
        ("--transport builtin --notify poll --reliability reliable", 4 * MIB, 20),
}
# Complex types: no pattern to check.
COMPLEX_CASES = {
    "complex-udp-wait-best_effort": ("--transport udp --option type=complex", 32, 300),
    "complex-shm-listener-reliable-1000": (
        "--transport shm --notify listener --reliability reliable --option type=complex "
        "--option elements=1000", 32, 100),
}
# fmt: on


@pytest.mark.parametrize("case", [*PING_CASES, *COMPLEX_CASES])
def test_ping(fastdds, results, case):
    args, size, count = PING_CASES.get(case) or COMPLEX_CASES[case]
    args = args.split() + (["--check-pattern"] if case in PING_CASES else [])
    _, s = ping_case(measured, results, *args, size=size, count=count, lossless="reliable" in args)
    assert s["ping"]["config"]["transport"] == args[args.index("--transport") + 1]


def test_complex_elements_are_recorded(fastdds, results):
    _, s = measured(
        results, "ping", "--option", "type=complex", "--option", "elements=3", "--size", "32",
        "--count", "50", "--warmup", "5",
    )  # fmt: skip
    assert s["ping"]["config"]["options"] == {"type": "complex", "elements": "3"}
    check_accounted(s["ping"], 50, lossless=False)


def test_reliable_keep_all_pubsub_back_to_back_loses_nothing(fastdds, results):
    _, s = pubsub_case(measured, results, "--transport", "udp", "--reliability", "reliable",
                       "--history", "keep_all", "--size", "4096", "--rate", "0",
                       "--check-pattern", count=2000)  # fmt: skip
    assert s["sub"]["config"]["history"] == "keep_all"


def test_transient_local_pubsub_over_shm(fastdds, results):
    # keep_last deeper than Fast DDS's default limit of 400 samples per instance, and
    # deep enough that a reader descheduled on this busy 2-core machine loses nothing.
    # The warm-up covers the start: a writer sees the reader matched before the reader
    # has matched the writer, and keep_last lets the writer drop what was not yet
    # repaired by then.
    record, s = measured(
        results, "pubsub", "--transport", "shm", "--reliability", "reliable", "--durability",
        "transient_local", "--history", "keep_last:600", "--notify", "poll", "--size", "2048",
        "--count", "500", "--warmup", "200", "--rate", "2000", "--check-pattern",
    )  # fmt: skip
    assert s["sub"]["config"]["durability"] == "transient_local"
    check_accounted(s["sub"], 500, lossless=True)
    check_samples_file(record["_dir"], s["sub"], "one_way")


def test_best_effort_pubsub_with_listener(fastdds, results):
    # Warm-up first: a writer sees the reader matched before the reader has matched
    # the writer, and best-effort samples sent in between are dropped by the reader.
    record, s = measured(
        results, "pubsub", "--transport", "builtin", "--notify", "listener", "--size", "256",
        "--count", "500", "--warmup", "200", "--rate", "2000", "--check-pattern",
    )  # fmt: skip
    check_accounted(s["sub"], 500, lossless=False)
    check_samples_file(record["_dir"], s["sub"], "one_way")


def test_complex_pubsub_reliable_over_multicast(fastdds, results):
    _, s = measured(
        results, "pubsub", "--transport", "multicast", "--reliability", "reliable", "--history",
        "keep_all", "--option", "type=complex", "--size", "32", "--count", "500", "--rate", "0",
    )  # fmt: skip
    check_accounted(s["sub"], 500, lossless=True)


def test_vendor_xml_runs_as_transport_config(fastdds, results, tmp_path):
    profile = tmp_path / "loopback_udp.xml"
    profile.write_text(UDP_ONLY_PROFILE)
    record, s = measured(
        results, "ping", "--transport", "config", "--option", f"profiles_file={profile}",
        "--option", "participant_profile=loopback_udp_only", "--size", "512", "--count", "200",
        "--warmup", "10", "--check-pattern",
    )  # fmt: skip
    ping = s["ping"]
    assert ping["config"]["transport"] == "config"
    assert ping["config"]["options"]["profiles_file"] == str(profile)
    check_accounted(ping, 200, lossless=False)


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--option", "type=complex", "--size", "64"],
            "fastdds: type complex is sized by option elements=N; use --size 32",
        ),
        (["--option", "profiles_file=/nonexistent.xml"], "needs --transport config"),
        (["--transport", "config"], "--transport config needs --option profiles_file=PATH"),
        (["--durability", "transient_local"], "transient_local needs reliability reliable"),
        (["--option", "elements=8"], "option elements applies to type=complex only"),
    ],
)
def test_refused_settings_say_why(fastdds, results, args, message):
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr


# --- which transport a run really uses -------------------------------------------------


def inspect(pid: int) -> tuple[set[str], bool]:
    """The local addresses of a process's UDP sockets, and whether it maps Fast DDS
    shared memory."""
    addresses = {address for address, _ in udp_sockets_of(pid)}
    maps = Path(f"/proc/{pid}/maps").read_text()
    return addresses, "/dev/shm/fastrtps_" in maps


def nodes_writing_to(results: Path) -> list[int]:
    return live_processes("psbench-node", str(results))


EXPECTED_TRANSPORT = {
    # transport: (allowed local UDP addresses, must have UDP, maps shared memory)
    "builtin": ({"127.0.0.1", "239.255.0.1"}, True, True),
    "udp": ({"127.0.0.1"}, True, False),
    "multicast": ({"127.0.0.1", "239.255.0.1", "239.255.0.2"}, True, False),
    "shm": (set(), False, True),
}


@pytest.mark.parametrize("transport", EXPECTED_TRANSPORT)
def test_transport_is_the_one_asked_for(fastdds, results, transport):
    # Caught once it has a UDP socket or maps shared memory, then half a second more: its
    # endpoints and their receive channels are up by then.
    seen = nodes_seen_running(
        ["ping", "--driver", DRIVER, "--transport", transport, "--duration", "2",
         "--warmup", "10", "--size", "256"],
        results,
        inspect,
        ready=lambda seen: bool(seen[0] or seen[1]),
        settle_s=0.5,
    )  # fmt: skip
    allowed, needs_udp, maps_shm = EXPECTED_TRANSPORT[transport]
    for pid, (addresses, shm) in seen.items():
        assert addresses <= allowed, f"node {pid} bound UDP sockets on {addresses}"
        assert bool(addresses) == needs_udp, f"node {pid}: UDP sockets {addresses}"
        assert shm == maps_shm, f"node {pid}: maps Fast DDS shared memory: {shm}"
        if transport == "multicast":
            assert "239.255.0.2" in addresses, "no socket on the data multicast group"


# --- the cleanup command ---------------------------------------------------------------


def fastrtps_files() -> set[str]:
    return {p.name for p in Path("/dev/shm").glob("*fastrtps_*")}


def held_by(proc: Path, names: set[str]) -> set[str]:
    """Those of the /dev/shm names one process has mapped or open."""
    try:
        held = proc.joinpath("maps").read_text()
        held += " ".join(str(f.readlink()) for f in proc.joinpath("fd").iterdir())
    except OSError:
        return set()
    return {n for n in names if f"/dev/shm/{n}" in held}


def in_use_by_a_live_process(names: set[str]) -> set[str]:
    """Those of the /dev/shm names some running process has mapped or open: another
    test's Fast DDS run, not what the killed node left."""
    used = set()
    for proc in Path("/proc").glob("[0-9]*"):
        used |= held_by(proc, names)
    return used


def family(name: str) -> str:
    """A Fast DDS segment or port and its companions share one: fastrtps_port7411 for
    fastrtps_port7411_sl and sem.fastrtps_port7411_mutex."""
    return re.sub(r"_(el|sl|mutex)$", "", name.removeprefix("sem."))


def test_cleanup_is_the_drivers_script():
    assert manifests.cleanup_command(DRIVER) == [sys.executable, str(SHM_CLEAN)]


def test_cleanup_removes_only_fastdds_files_no_live_process_holds(tmp_path):
    # Injected leftovers, named like Fast DDS's with a random part no run uses: a dead
    # process's segment (with its _el lock), a port (its _sl lock, its semaphore), one
    # segment a live process holds open, and a name that is not Fast DDS's.
    tag = secrets.token_hex(4)
    shm = Path("/dev/shm")
    dead = {
        f"fastrtps_psbtest{tag}",
        f"fastrtps_psbtest{tag}_el",
        f"fastrtps_port_psbtest{tag}",
        f"fastrtps_port_psbtest{tag}_sl",
        f"sem.fastrtps_port_psbtest{tag}_mutex",
    }
    held = f"fastrtps_psbtestheld{tag}"
    unrelated = f"psbtest_unrelated_fastrtps{tag}"
    made = [shm / n for n in (*dead, held, unrelated)]
    holder = None
    try:
        for path in made:
            path.write_bytes(b"x")
        ready = tmp_path / "ready"
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, time\n"
                "f = open(sys.argv[1], 'rb')\n"
                "open(sys.argv[2], 'w').close()\n"
                "time.sleep(60)\n",
                str(shm / held),
                str(ready),
            ]
        )
        end = time.monotonic() + 20
        while not ready.exists():
            assert holder.poll() is None and time.monotonic() < end, "the holder did not start"
            time.sleep(0.02)
        out = subprocess.run(
            [sys.executable, str(SHM_CLEAN)], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        present = {n for n in (*dead, held, unrelated) if (shm / n).exists()}
        assert present == {held, unrelated}
        removed = set(re.findall(r"^removed /dev/shm/(\S+)$", out.stdout, re.M))
        # What it removed is dead's only. (Not necessarily all of dead: another test's
        # Fast DDS run, in parallel, cleans up after itself with the same script and
        # may have removed some first; that they are gone is checked above.)
        assert removed <= dead
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
        for path in made:
            path.unlink(missing_ok=True)


def test_cleanup_removes_what_killed_nodes_leave(fastdds, results):
    # A real pubsub over shared memory whose two nodes are SIGKILLed mid-run: the
    # orchestrator runs the manifest's cleanup as the run ends, and afterwards no
    # Fast DDS file stays that no live process holds (`fastdds shm clean` of
    # fastdds-tools 2.9.1 left the discovery port's fastrtps_port<N>, _sl and
    # sem.fastrtps_port<N>_mutex).
    args = ["pubsub", "--driver", DRIVER, "--transport", "shm", "--duration", "60"]
    with cli_in_background(args, results) as cli:
        mapped = set()
        end = time.monotonic() + 60
        while len(mapped) < 2:
            assert cli.poll() is None, cli.communicate()
            assert time.monotonic() < end, "did not see both nodes map shared memory"
            for pid in nodes_writing_to(results):
                try:
                    if inspect(pid)[1]:
                        mapped.add(pid)
                except OSError:
                    continue
            time.sleep(0.05)
        time.sleep(1)  # mid-run: both nodes are past their setup
        created = fastrtps_files()
        assert any(re.fullmatch(r"fastrtps_[0-9a-f]{16}", f) for f in created)
        assert any(re.fullmatch(r"fastrtps_port\d+_sl", f) for f in created)
        # Ours: the families of what the two nodes hold (other tests' Fast DDS runs may
        # hold others meanwhile, in other domains, so with other port numbers).
        ours = {family(n) for pid in mapped for n in held_by(Path(f"/proc/{pid}"), created)}
        assert any(n.startswith("fastrtps_port") for n in ours), ours
        for pid in mapped:
            os.kill(pid, signal.SIGKILL)
        cli.communicate(timeout=120)
    record = only_run(results)
    assert record["status"] != "ok"  # the killed nodes failed it
    assert record["cleanup"]["argv"][1:] == [str(SHM_CLEAN)]
    assert record["cleanup"]["exit_code"] == 0, record["cleanup"]
    left = {n for n in fastrtps_files() if family(n) in ours}
    live = {family(n) for n in in_use_by_a_live_process(left)}
    assert {n for n in left if family(n) not in live} == set()
