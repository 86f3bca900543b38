"""bench/truth runs end to end for a tiny configuration and refuses bad arguments.

No timing or ratio is asserted: only the table's structure and the exit codes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from psbench.base import paths

# Rounds of bench/truth: each runs psbench and an independent instrument end to end.
pytestmark = pytest.mark.long

REPO = Path(__file__).resolve().parents[1]
TRUTH = REPO / "bench" / "truth"


def run(*args, timeout=120):
    return subprocess.run(
        [str(TRUTH), *args], capture_output=True, text=True, timeout=timeout, env=dict(os.environ)
    )


@pytest.mark.skipif(shutil.which("sockperf") is None, reason="sockperf is not installed")
@pytest.mark.skipif(
    not paths.node_path().exists(), reason="psbench is not built (make build or PSBENCH_BUILD)"
)
def test_udp_one_round_prints_one_row_per_size_and_metric():
    res = run("--drivers", "udp", "--rounds", "1", "--seconds", "1", "--sizes", "64,1024")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("driver "))
    assert lines[head].split()[:4] == ["driver", "instrument", "size", "B"]
    rows = [line.split() for line in lines[head + 2 :] if line.strip()]
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("udp", "sockperf", "64", "1", "p50"),
        ("udp", "sockperf", "64", "1", "p99"),
        ("udp", "sockperf", "1024", "1", "p50"),
        ("udp", "sockperf", "1024", "1", "p99"),
    ]
    for r in rows:
        float(r[5]), float(r[6]), float(r[7])  # psbench, instrument, ratio are numbers
        assert r[8].startswith("[") and r[9].endswith("]")
        assert " ".join(r[10:]) in ("within 10%", "not within 10%", "undecided")


@pytest.mark.parametrize(
    "args",
    [
        ["--rounds", "0"],
        ["--rounds", "x"],
        ["--seconds", "-1"],
        ["--seconds", "nan"],
        ["--sizes", "10"],
        ["--sizes", "abc"],
        ["--drivers", "nosuch"],
        ["--bogus"],
        ["--what", "bogus"],
        ["--what", ""],
        ["--what", "rtt,latency"],
        ["--what", "throughput", "--drivers", "udp,redis"],
    ],
)
def test_bad_arguments_exit_2_without_traceback(args):
    res = run(*args, timeout=30)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.strip()


sys.path.insert(0, str(REPO / "bench"))
import truth  # noqa: E402  (bench/ is not a package; bench/truth puts it on the path too)

from psbench.run.service_definitions import find_executable  # noqa: E402
from psbench.run.services import ServicePool, broker_options  # noqa: E402

# The bare probes of the drivers that need a broker or RouDi, and which one.
PROBE_SERVICES = {
    "nats": "nats-server",
    "mqtt": "mosquitto",
    "redis": "redis-server",
    "iceoryx": "iox-roudi",
    "zeromq": None,
    "fastdds": None,
    "zenoh": None,  # peer mode: pong listens on the endpoint, ping connects
    "cyclonedds": None,
    "opendds": None,  # built from source: skipped, with the command, where it is not
    "opensplice": None,  # built from source: skipped (the probe's build says so) without it
    "orte": None,  # built from source, as opensplice; its manager is the driver's service
}


def built_probe(driver: str):
    """The driver's probe, built; skips when its service is not installed or the probe
    cannot be built here (saying why)."""
    service = PROBE_SERVICES[driver]
    if service and find_executable(service) is None:
        pytest.skip(f"{service} is not installed")
    binary, why = truth.build_probe(driver)
    if binary is None:
        pytest.skip(why)
    return binary


@pytest.mark.parametrize("driver", list(PROBE_SERVICES))
def test_probe_builds_and_a_short_ping_pong_reports_its_round_trips(driver, tmp_path):
    binary = built_probe(driver)
    assert binary.name in truth.INSTRUMENTS[driver]
    with ServicePool(largest_message=1024) as pool:
        # As the node describes the driver: its manifest names the service.
        used = pool.ensure({"name": driver, "capabilities": {}}, None, tmp_path)
        options = broker_options(used)
        broker = options[0].partition("=")[2] if options else ""
        args = truth.probe_args(driver, broker, f"test{os.getpid()}", 1024, 0.5)
        pong = subprocess.Popen(
            [str(binary), "pong", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            ping = subprocess.run(
                [str(binary), "ping", *args], capture_output=True, text=True, timeout=60
            )
            assert ping.returncode == 0, ping.stderr
            # Known answers: a first line "p50 p99 n" of the measured round trips, and
            # pong ends by itself (exit 0) on ping's end marker.
            p50, p99, n = ping.stdout.splitlines()[0].split()
            assert int(n) >= 1
            assert 0 < float(p50) <= float(p99)
            assert pong.wait(timeout=20) == 0, pong.stderr.read()
        finally:
            truth.dc.stop(pong)


@pytest.mark.parametrize(
    "driver", ["mqtt", "redis", "iceoryx", "fastdds", "zenoh", "opendds", "opensplice", "orte"]
)
@pytest.mark.skipif(
    not paths.node_path().exists(), reason="psbench is not built (make build or PSBENCH_BUILD)"
)
def test_driver_with_a_new_probe_runs_one_round(driver):
    if not (paths.build_dir() / "drivers" / driver / f"libpsbench-{driver}.so").exists():
        pytest.skip(f"the {driver} driver is not built")
    service = PROBE_SERVICES[driver]
    if service and find_executable(service) is None:
        pytest.skip(f"{service} is not installed")
    res = run(
        "--drivers",
        driver,
        "--rounds",
        "1",
        "--seconds",
        "0.5",
        "--sizes",
        "64",
        "--what",
        "rtt",
        timeout=240,
    )
    assert res.returncode == 0, res.stderr
    if res.stdout.startswith(f"skipped {driver}"):
        pytest.skip(res.stdout.strip())
    rows = [line.split() for line in res.stdout.splitlines() if line.startswith(f"{driver} ")]
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [
        (truth.INSTRUMENTS[driver][0], "64", "1", "p50"),
        (truth.INSTRUMENTS[driver][0], "64", "1", "p99"),
    ]
    assert all(" ".join(r[10:]) == "undecided" for r in rows)  # one round never decides
    assert "maximum throughput" not in res.stdout  # --what rtt: the ping-pong only


def tput_rows(stdout: str) -> list[list[str]]:
    """The rows of the throughput table, split."""
    lines = stdout.splitlines()
    title = next(
        i for i, line in enumerate(lines) if line.startswith("maximum throughput, messages/s")
    )
    assert lines[title + 1].split()[:4] == ["driver", "instrument", "size", "B"]
    return [line.split() for line in lines[title + 3 :] if line.strip()]


def needs_ddsperf_and_node(test):
    """Skips a cyclonedds round's test without ddsperf on PATH or without the node."""
    test = pytest.mark.skipif(
        not paths.node_path().exists(), reason="psbench is not built (make build or PSBENCH_BUILD)"
    )(test)
    return pytest.mark.skipif(shutil.which("ddsperf") is None, reason="ddsperf is not installed")(
        test
    )


def require_cyclonedds_driver() -> None:
    if not (paths.build_dir() / "drivers" / "cyclonedds" / "libpsbench-cyclonedds.so").exists():
        pytest.skip("the cyclonedds driver is not built")


@needs_ddsperf_and_node
def test_cyclonedds_throughput_round_gives_a_row_with_rates_and_counts():
    require_cyclonedds_driver()
    res = run(
        "--drivers",
        "cyclonedds",
        "--what",
        "throughput",
        "--rounds",
        "1",
        "--seconds",
        "1",
        "--sizes",
        "64",
        timeout=240,
    )
    assert res.returncode == 0, res.stderr
    assert not res.stdout.startswith("RTT") and "\nRTT, " not in res.stdout  # throughput only
    rows = tput_rows(res.stdout)
    assert [r[:4] for r in rows] == [["cyclonedds", "ddsperf", "64", "1"]]
    ps_rate, inst_rate, ps_n, inst_n = (
        float(rows[0][4]),
        float(rows[0][5]),
        int(rows[0][6]),
        int(rows[0][7]),
    )
    assert ps_rate > 0 and inst_rate > 0
    assert ps_n > 0 and inst_n > 0  # messages each tool's subscriber received
    float(rows[0][8])
    assert rows[0][9].startswith("[") and rows[0][10].endswith("]")
    assert " ".join(rows[0][11:]) == "undecided"  # one round never decides


@pytest.mark.parametrize("driver", [d for d in truth.TPUT_INSTRUMENTS if d != "cyclonedds"])
def test_probe_pub_sub_reports_its_rate_and_count(driver, tmp_path):
    binary = built_probe(driver)
    with ServicePool(largest_message=1024) as pool:
        # As the node describes the driver: its manifest names the service.
        used = pool.ensure({"name": driver, "capabilities": {}}, None, tmp_path)
        options = broker_options(used)
        broker = options[0].partition("=")[2] if options else ""
        args = truth.probe_tput_args(driver, broker, f"test{os.getpid()}", 1024, 0.5)
        rate, received = truth.probe_tput(truth.TPUT_INSTRUMENTS[driver], binary, args, 0.5)
    # Known answers: sub ends by itself (exit 0; on pub's end marker, else when idle) and
    # reports what it received and a rate.
    assert received > 1 and rate > 0


def test_a_failed_iceoryx2_probes_shared_memory_is_removed_and_nothing_else(tmp_path):
    # Names as a probe killed mid-round left them (2026-11-26), beside others' files.
    ours = [
        "iceoryx2_probe_truth7885r10s16384_112437a1_1584563386.dynamic",
        "iceoryx2_probe_truth7885r10s16384_9204dd18_node.0_10_0.global_mgmt",
        "iox2_9204dd18_node.0_10_0.global_mgmt",
    ]
    others = ["iceoryx2_probe_truth9999r1s64_5a5a5a5a_1.dynamic", "iox2_77777777_node.x", "psb_x"]
    for name in ours + others:
        (tmp_path / name).write_text("")
    assert sorted(truth.remove_probe_leftovers("truth7885", tmp_path)) == sorted(ours)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(others)


@needs_ddsperf_and_node
def test_cyclonedds_round_gives_a_ddsperf_row_and_a_probe_row_and_until_decided_stops_at_its_cap():
    require_cyclonedds_driver()
    res = run(
        *("--drivers", "cyclonedds", "--what", "rtt", "--sizes", "64", "--seconds", "1.5"),
        *("--rounds", "1", "--until-decided", "--max-rounds", "1"),
        timeout=240,
    )
    assert res.returncode == 0, res.stderr
    # Known answers: one round cannot decide, and the cap of one round stops it there.
    assert "until-decided: stopped at 1 rounds; still undecided: cyclonedds 64 B rtt" in res.stdout
    rows = [line.split() for line in res.stdout.splitlines() if line.startswith("cyclonedds ")]
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [
        ("ddsperf", "64", "1", "p50"),
        ("ddsperf", "64", "1", "p99"),
        ("cyclonedds_probe", "64", "1", "p50"),
        ("cyclonedds_probe", "64", "1", "p99"),
    ]
    assert all(" ".join(r[10:]) == "undecided" for r in rows)


def test_the_opendds_probe_without_opendds_built_says_what_builds_it(tmp_path, monkeypatch):
    # OpenDDS is in no registry: where make driver-opendds has not built it, the probe is
    # skipped (bench/truth, the tests above) with its own reason and the command.
    monkeypatch.setenv("PSBENCH_SOURCE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(truth, "PROBES_BUILD", tmp_path / "probes")
    binary, why = truth.build_probe("opendds")
    assert binary is None
    assert why == (
        "probe build failed: opendds_probe: OpenDDS is not built from source yet: "
        "make driver-opendds"
    )
