"""Cross-vendor interop: a run with a driver per role (Cyclone DDS and Fast DDS talking
RTPS to each other), `psbench interop`'s matrix, and the wire instrument that tells at
which step a pair parts, checked against faults injected with a known answer: a QoS that
cannot match, a type that differs, participants that cannot discover each other."""

import json
import os
import signal
import subprocess

import pytest

from conftest import only_run, run_cli
from psbench.run.interop_steps import diagnose
from psbench.run.rtps_wire import WireWatch

PAIR = "ping=cyclonedds,pong=fastdds"
needs_both = pytest.mark.usefixtures("both_dds")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="reading the wire needs root")


@pytest.fixture
def both_dds(driver_libs):
    missing = [d for d in ("cyclonedds", "fastdds") if d not in driver_libs]
    if missing:
        pytest.skip(f"not built: {', '.join(missing)}")
    return driver_libs


@needs_both
@pytest.mark.parametrize("reliability", ["best_effort", "reliable"])
def test_ping_with_a_driver_per_role_delivers_every_sample(results, reliability, driver_libs):
    proc = run_cli(
        ["ping", "--driver", PAIR, "--count", "300", "--size", "65536",
         "--reliability", reliability, "--quiet"],
        results,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    counts = json.loads((record["_dir"] / "ping.json").read_text())["counts"]
    assert (counts["sent"], counts["received"], counts["lost"], counts["corrupted"]) == (
        300, 300, 0, 0,
    )  # fmt: skip
    assert record["spec"]["driver"] == PAIR
    assert {r: d["name"] for r, d in record["role_drivers"].items()} == {
        "ping": "cyclonedds",
        "pong": "fastdds",
    }
    # Each process loaded its own role's library, and only that one.
    loaded = {p["name"]: p["argv"][p["argv"].index("--driver") + 1] for p in record["processes"]}
    assert loaded == {"ping": str(driver_libs["cyclonedds"]), "pong": str(driver_libs["fastdds"])}
    assert record["driver"]["name"] == "cyclonedds"  # the measuring role's


@needs_both
def test_pubsub_with_a_driver_per_role_accounts_for_every_sample(results):
    # keep_all: a reliable writer that keeps every sample until acknowledged (keep_last
    # drops what it overwrote, across vendors as within one).
    proc = run_cli(
        ["pubsub", "--driver", "pub=cyclonedds,sub=fastdds", "--count", "2000", "--rate",
         "2000", "--reliability", "reliable", "--history", "keep_all", "--quiet"],
        results,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["accounting"]["sub"]["published"] == 2000
    assert record["accounting"]["sub"]["lost"] == 0
    assert {r: d["name"] for r, d in record["role_drivers"].items()} == {
        "pub": "cyclonedds",
        "sub": "fastdds",
    }
    # Each driver's cleanup command runs after the run: fastdds declares one, cyclonedds none.
    assert record["cleanup"]["exit_code"] == 0


@needs_both
@pytest.mark.parametrize(
    "args,expected",
    [
        (["--driver", "ping=cyclonedds"], "needs a driver for each of its roles ping and pong"),
        (["--driver", "ping=cyclonedds,pong=fastdds", "--placement", "intra"],
         "use placement inter"),
        (["--driver", "ping=cyclonedds,pong=nosuch"], "unknown driver 'nosuch'"),
        (["--driver", "ping=,pong=fastdds"], "give ROLE=DRIVER"),
        (["--driver", "ping=cyclonedds,ping=fastdds"], "role 'ping' is given twice"),
    ],
)  # fmt: skip
def test_a_bad_driver_per_role_is_refused_before_anything_runs(results, args, expected):
    proc = run_cli(["ping", *args, "--count", "10"], results)
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not results.exists() or not list(results.rglob("run.json"))


@needs_both
def test_an_experiment_maps_roles_to_drivers(results, tmp_path):
    good = tmp_path / "pair.yaml"
    good.write_text(
        "name: pair\ndefaults: {kind: ping, count: 100}\n"
        "matrix:\n  driver: [cyclonedds, {pong: fastdds, ping: cyclonedds}]\n"
    )
    proc = run_cli(["run", str(good), "-o", str(results)], results, timeout=300)
    assert proc.returncode == 0, proc.stderr
    labels = sorted(json.loads(p.read_text())["spec"]["driver"] for p in results.rglob("run.json"))
    assert labels == ["cyclonedds", PAIR]  # one label however the mapping is written
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\ndefaults: {kind: ping}\nruns:\n"
        "  - {driver: {ping: cyclonedds, pong: fastdds}, placement: intra}\n"
        "  - {driver: {pub: cyclonedds, sub: fastdds}}\n"
    )
    proc = run_cli(["run", str(bad), "--dry-run"], results)
    assert proc.returncode == 2
    assert "bad.yaml:4: runs[0].driver: a driver per role needs one process per role" in proc.stderr
    assert (
        "bad.yaml:5: runs[1].driver: a ping run needs a driver for each of its roles" in proc.stderr
    )


def _pair_on_the_wire(driver_libs, node, tmp_path, run_id, ping_args, pong_args):
    """A cyclonedds ping and a fastdds pong started by hand, each with its own settings
    (the fault), while the wire is read; what their participants announced. The match
    timeout leaves discovery time on a busy machine; pong is interrupted, not killed, so
    that Fast DDS removes its shared memory as it closes."""
    common = ["--out", str(tmp_path), "--run-id", run_id, "--match-timeout", "15",
              "--timeout", "30", "--count", "20", "--barrier", "none"]  # fmt: skip
    with WireWatch() as watch:
        pong = subprocess.Popen(
            [str(node), "--driver", str(driver_libs["fastdds"]), "--role", "pong", *common,
             *pong_args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            ping = subprocess.run(
                [str(node), "--driver", str(driver_libs["cyclonedds"]), "--role", "ping",
                 *common, *ping_args],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
        finally:
            pong.send_signal(signal.SIGINT)
            try:
                pong.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pong.kill()
                pong.wait()
    assert watch.available, watch.why
    return ping, watch.endpoints(run_id), watch.dropped


def _watched_pair(driver_libs, node, tmp_path, run_id, ping_args, pong_args):
    """_pair_on_the_wire until the wire reader missed nothing (a busy machine can
    overrun it; it counts what it missed): at most 3 tries."""
    for attempt in range(3):
        ping, endpoints, dropped = _pair_on_the_wire(
            driver_libs, node, tmp_path, f"{run_id}t{attempt}", ping_args, pong_args
        )
        if not dropped:
            return ping, endpoints
    pytest.fail(f"the wire reader missed packets in 3 tries ({dropped} in the last)")


@needs_root
@needs_both
@pytest.mark.parametrize(
    "ping_args,pong_args,step,detail",
    [
        # pong's reader of ping's topic asks for reliable; ping's writer offers best effort.
        ([], ["--reliability", "reliable"], "QoS match",
         "the reader (01.0f) requests reliability reliable, the writer (01.10) offers best_effort"),
        # ping writes the complex type, pong reads bytes.
        (["--option", "type=complex", "--option", "elements=2", "--size", "32"], ["--size", "32"],
         "type match", "announces type 'psbench::Complex', the reader (01.0f) 'psbench::Bytes'"),
        # Two domains: the participants never meet, so no endpoint is announced to the other.
        (["--option", "domain_id=201"], ["--option", "domain_id=202"], "discovery",
         "did not discover each other"),
    ],
)  # fmt: skip
def test_the_wire_tells_where_a_pair_parts(
    both_dds, node, tmp_path, ping_args, pong_args, step, detail
):
    run_id = f"wire{os.getpid()}{len(ping_args)}{len(pong_args)}"
    ping, endpoints = _watched_pair(both_dds, node, tmp_path, run_id, ping_args, pong_args)
    assert ping.returncode != 0 and "match timeout" in ping.stderr, ping.stderr
    found, why = diagnose(endpoints)
    assert found == step, why
    assert detail in why


@needs_root
@needs_both
def test_a_matching_pair_is_seen_whole_on_the_wire(both_dds, node, tmp_path):
    run_id = f"wireok{os.getpid()}"
    ping, endpoints = _watched_pair(both_dds, node, tmp_path, run_id, [], [])
    assert ping.returncode == 0, ping.stderr
    seen = {(e.kind, e.topic.rsplit("_", 1)[1], e.vendor) for e in endpoints}
    assert seen == {
        ("writer", "ping", "01.10"), ("reader", "pong", "01.10"),
        ("writer", "pong", "01.0f"), ("reader", "ping", "01.0f"),
    }  # fmt: skip
    assert {e.type_name for e in endpoints} == {"psbench::Bytes"}
    assert diagnose(endpoints)[0] == "data"  # nothing on the wire says they part


@needs_both
def test_interop_matrix_of_two_vendors(results):
    # 64 B: 64 KiB across vendors is test_ping_with_a_driver_per_role_delivers_every_sample's.
    proc = run_cli(
        ["interop", "--drivers", "cyclonedds,fastdds", "--sizes", "64", "--reliability",
         "best_effort,reliable", "--count", "50", "--results", str(results)],
        results,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (record_file,) = results.rglob("interop.json")
    record = json.loads(record_file.read_text())
    cells = {(c["ping"], c["pong"], c["reliability"]): c for c in record["cells"]}
    pairs = {(a, b) for a in ("cyclonedds", "fastdds") for b in ("cyclonedds", "fastdds")}
    assert set(cells) == {(a, b, r) for a, b in pairs for r in ("best_effort", "reliable")}
    for cell in cells.values():
        assert (cell["status"], cell["matched"], cell["sent"], cell["delivered"]) == (
            "ok", True, 50, 50,
        ), cell  # fmt: skip
        assert cell["step"] is None and os.path.isdir(cell["run_dir"])
    assert "8 of 8 cells delivered every sample" in proc.stdout
    assert "cyclonedds → fastdds" in proc.stdout


def test_opensplice_interoperates_with_cyclonedds_and_fastdds_over_rtps(results, driver_libs):
    # OpenSplice's DDSI2 (built from source) against the two registry vendors, each
    # driver's defaults: every ordered pair matches and delivers every sample, fragmented
    # 16 KiB samples included (OpenSplice's 6.9 standalone XML: unicast on 127.0.0.1).
    vendors = [d for d in ("cyclonedds", "fastdds", "opensplice") if d in driver_libs]
    if "opensplice" not in vendors or len(vendors) < 2:
        pytest.skip("needs opensplice (make driver-opensplice) and cyclonedds or fastdds built")
    proc = run_cli(
        ["interop", "--drivers", ",".join(vendors), "--sizes", "64,16KiB", "--reliability",
         "reliable", "--count", "30", "--results", str(results)],
        results,
        timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(next(results.rglob("interop.json")).read_text())
    cells = {(c["ping"], c["pong"], c["size"]): c for c in record["cells"]}
    assert set(cells) == {(a, b, s) for a in vendors for b in vendors for s in (64, 16384)}
    for cell in cells.values():
        assert (cell["status"], cell["matched"], cell["sent"], cell["delivered"]) == (
            "ok", True, 30, 30,
        ), cell  # fmt: skip
    n = 2 * len(vendors) ** 2
    assert f"{n} of {n} cells delivered every sample" in proc.stdout


@needs_root
@needs_both
def test_interop_says_where_vendors_part_on_their_own_shared_memory(results):
    # Each vendor's shared memory is its own: over it the two never discover each other,
    # while each with itself works. The failed cells are rerun with the wire watched.
    proc = run_cli(
        ["interop", "--drivers", "cyclonedds,fastdds", "--transport", "shm", "--sizes", "64",
         "--reliability", "reliable", "--count", "20", "--match-timeout", "4", "--results",
         str(results)],
        results,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    record = json.loads(next(results.rglob("interop.json")).read_text())
    outcome = {(c["ping"], c["pong"]): (c["matched"], c["step"]) for c in record["cells"]}
    assert outcome == {
        ("cyclonedds", "cyclonedds"): (True, None),
        ("fastdds", "fastdds"): (True, None),
        ("cyclonedds", "fastdds"): (False, "discovery"),
        ("fastdds", "cyclonedds"): (False, "discovery"),
    }
    assert "2 of 4 cells delivered every sample" in proc.stdout


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--drivers", "cyclonedds,udp"], "'udp' does not speak rtps"),
        (["--drivers", "cyclonedds"], "interop needs two drivers"),
        (["--wire", "carrier-pigeon"], "no driver's manifest says wire = 'carrier-pigeon'"),
        (["--reliability", "sometimes"], "argument --reliability"),
    ],
)
def test_interop_refuses_bad_arguments(results, args, expected):
    proc = run_cli(["interop", *args], results)
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_step_found_from_what_was_not_seen_is_unknown_when_the_reader_missed_packets():
    from psbench.run.rtps_wire import Endpoint

    def endpoint(kind, topic, type_name, vendor):
        return Endpoint(kind, f"psb_r_{topic}", type_name, "reliable", "volatile", vendor, vendor)

    # Nothing seen: with packets missed, nothing can be said.
    assert diagnose([], dropped=0)[0] == "discovery"
    assert diagnose([], dropped=3)[0] == "unknown"
    # A type that differs was seen: missing packets do not change that.
    seen = [
        endpoint("writer", "ping", "T1", "a"), endpoint("reader", "ping", "T2", "b"),
        endpoint("writer", "pong", "T2", "b"), endpoint("reader", "pong", "T1", "a"),
    ]  # fmt: skip
    assert diagnose(seen, dropped=3)[0] == "type match"
