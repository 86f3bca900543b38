"""The rabbitmq driver in real two-process runs through `./psbench ping|pubsub`: counts and
integrity for both QoS and every notify mode, a reader stopped with SIGSTOP that still gets
every message (keep_all), refusals with their messages, and the broker psbench starts:
started and stopped with nothing left (no beam.smp, no epmd, ports closed, its database
gone), also when the psbench CLI is killed with SIGKILL mid-run, and killed itself
mid-run (the run fails with the broker's log tail, and the next run works).

Starting a RabbitMQ broker takes about 10 s here, so the runs that are not about the
broker's life share one, started by psbench's own service machinery from the manifest
and given to them as option broker."""

import os
import re
import signal
import socket
import time
from pathlib import Path

import pytest

from conftest import cli_in_background, live_processes, only_run, run_cli, wait_for_running
from driver_checks import load
from psbench.base import paths
from psbench.results.samples import read_samples
from psbench.run import drivers
from psbench.run.service_definitions import free_port
from psbench.run.services import ServicePool

DRIVER = "rabbitmq"
MIB = 1 << 20
GONE_WITHIN_S = 10.0  # the keeper's SIGTERM, then its SIGKILL 3 s later, then removal


@pytest.fixture(scope="module")
def lib(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


@pytest.fixture(scope="module")
def broker(lib, tmp_path_factory):
    """A broker as psbench starts one (the manifest's launcher), shared by this module's
    runs that are not about the broker itself; its HOST:PORT."""
    folder = tmp_path_factory.mktemp("rabbitmq-broker")
    with ServicePool(largest_message=4 * MIB) as pool:
        [service] = pool.ensure(drivers.describe(paths.node_path(), lib), None, folder)
        yield service.address


def measured(results: Path, kind: str, *args: str, broker: str | None = None):
    """One run through the CLI; returns the run record and the summaries by role."""
    extra = ["--option", f"broker={broker}"] if broker else []
    proc = run_cli([kind, "--driver", DRIVER, *args, *extra], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert record["driver"]["version"].startswith("rabbitmq-c 0.")
    roles = ("ping", "pong") if kind == "ping" else ("pub", "sub")
    return record, {role: load(record["_dir"], role) for role in roles}


def check_all_arrived(run_dir: Path, summary: dict, sent: int, kind: str):
    counts = summary["counts"]
    assert counts["sent"] == sent
    assert counts["samples"] == sent, counts
    assert counts["lost"] == counts["late"] == counts["corrupted"] == counts["duplicated"] == 0
    assert summary["error"] is None
    samples = read_samples(run_dir / summary["samples_file"])
    assert samples.kind == kind and len(samples) == sent


PING_CASES = {
    "best_effort-wait-64B": (["--notify", "wait"], 64, 300),
    "reliable-poll-16KiB": (["--reliability", "reliable", "--notify", "poll"], 16384, 200),
    # Over RabbitMQ's default frame_max (128 KiB): psbench's broker holds it in one frame.
    "reliable-listener-1MiB": (
        ["--reliability", "reliable", "--notify", "listener", "--check-pattern"],
        MIB,
        40,
    ),
    "best_effort-intra-listener-4MiB": (
        ["--placement", "intra", "--notify", "listener", "--check-pattern"],
        4 * MIB,
        20,
    ),
}


@pytest.mark.parametrize("case", PING_CASES, ids=list(PING_CASES))
def test_ping(broker, results, case):
    args, size, count = PING_CASES[case]
    record, s = measured(
        results,
        "ping",
        *args,
        "--size",
        str(size),
        "--count",
        str(count),
        "--warmup",
        "10",
        broker=broker,
    )
    check_all_arrived(record["_dir"], s["ping"], count, "rtt")
    assert s["pong"]["counts"]["received"] >= count


@pytest.mark.parametrize("reliability", ["best_effort", "reliable"])
def test_pubsub_without_warmup_loses_nothing(broker, results, reliability):
    # No warm-up, and matched counts of -1: this passes only because the reader's queue
    # is bound before the sub reports ready, and the writer drains (confirms) at the end.
    record, s = measured(
        results,
        "pubsub",
        "--reliability",
        reliability,
        "--size",
        "256",
        "--count",
        "3000",
        "--rate",
        "3000",
        "--warmup",
        "0",
        "--check-pattern",
        broker=broker,
    )
    check_all_arrived(record["_dir"], s["sub"], 3000, "one_way")
    if reliability == "reliable":
        counters = s["pub"]["middleware_counters"]["writer"]
        assert counters["nacked"] == 0


def node_pid(run_id: str, role: str) -> int:
    [pid] = [
        pid
        for pid in live_processes("psbench-node", run_id)
        if f"\0--role\0{role}\0".encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    return pid


@pytest.mark.parametrize("reliability", ["best_effort", "reliable"])
def test_stalled_reader_gets_every_message(broker, results, reliability):
    """keep_all: a reader stopped for a while gets every message once it resumes, from its
    queue (reliable: at most prefetch of them were pushed to it before it acknowledged)."""
    count, rate = 4000, 1000
    with cli_in_background(
        [
            "pubsub",
            "--driver",
            DRIVER,
            "--reliability",
            reliability,
            "--size",
            "1024",
            "--count",
            str(count),
            "--rate",
            str(rate),
            "--warmup",
            "0",
            "--option",
            f"broker={broker}",
        ],
        results,
    ) as proc:
        record = wait_for_running(results, proc)
        end = time.monotonic() + 30
        while len(live_processes("psbench-node", record["run_id"])) < 2:
            assert time.monotonic() < end
            time.sleep(0.05)
        sub = node_pid(record["run_id"], "sub")
        time.sleep(1.0)  # publishing by now
        os.kill(sub, signal.SIGSTOP)
        try:
            time.sleep(2.0)  # about 2000 messages wait in the reader's queue meanwhile
        finally:
            os.kill(sub, signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    record = only_run(results)
    check_all_arrived(record["_dir"], load(record["_dir"], "sub"), count, "one_way")


def launcher_ports(service: dict) -> list[int]:
    """The broker's own ports: AMQP, its epmd's and its Erlang distribution's."""
    text = Path(service["argv"][1]).read_text()
    epmd = int(re.search(r"ERL_EPMD_PORT=(\d+)", text).group(1))
    dist = int(re.search(r"RABBITMQ_DIST_PORT=(\d+)", text).group(1))
    return [int(service["address"].rsplit(":", 1)[1]), epmd, dist]


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def what_remains(service: dict, results: Path) -> list[str]:
    folder = Path(service["argv"][1]).parent
    ports = launcher_ports(service)
    left = [f"beam.smp {pid}" for pid in live_processes("beam.smp", str(results))]
    left += [f"epmd {pid}" for pid in live_processes("epmd", f"-port\0{ports[1]}")]
    left += [f"sh {pid}" for pid in live_processes("sh", str(folder))]
    left += [f"port {p} accepts" for p in ports if accepts(p)]
    left += [str(folder / n) for n in ("data", ".erlang.cookie") if (folder / n).exists()]
    return left


def wait_until_nothing_remains(service: dict, results: Path) -> list[str]:
    end = time.monotonic() + GONE_WITHIN_S
    while (left := what_remains(service, results)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


def test_psbench_starts_and_stops_its_broker(lib, results):
    record, s = measured(results, "ping", "--size", "64", "--count", "200", "--warmup", "10")
    check_all_arrived(record["_dir"], s["ping"], 200, "rtt")
    [service] = record["services"]
    assert service["name"] == "rabbitmq-server" and service["started_by_psbench"]
    assert service["address"].startswith("127.0.0.1:")
    assert service["version"].startswith("rabbitmq-server 3.")
    for process in record["processes"]:
        assert f"broker={service['address']}" in process["argv"]
    folder = Path(service["argv"][1]).parent
    assert (folder / "rabbitmq.conf").is_file()
    assert "rabbitmq: stopped" in Path(service["log"]).read_text()
    assert what_remains(service, results) == []


def test_sigkill_of_psbench_leaves_no_broker_behind(lib, results):
    with cli_in_background(
        ["ping", "--driver", DRIVER, "--count", "2000000", "--timeout", "120", "--quiet"], results
    ) as proc:
        record = wait_for_running(results, proc)
        [service] = record["services"]
        assert live_processes("beam.smp", str(results)), "the broker does not run"
        time.sleep(0.5)  # into the measurement
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    assert wait_until_nothing_remains(service, results) == []


def test_broker_killed_mid_run_fails_the_run_and_the_next_run_works(lib, results, tmp_path):
    with cli_in_background(
        ["ping", "--driver", DRIVER, "--duration", "60", "--warmup", "10", "--rate", "500"],
        results,
    ) as proc:
        record = wait_for_running(results, proc)
        end = time.monotonic() + 30
        while not list(results.rglob("pong.stderr")):
            assert time.monotonic() < end and proc.poll() is None, "the run did not start"
            time.sleep(0.05)
        time.sleep(1.0)  # measuring by now
        [pid] = live_processes("beam.smp", str(results))
        os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    record = only_run(results)
    assert record["status"] != "ok"
    assert "rabbitmq-server" in record["message"] and "beam.smp) ended" in record["message"]
    stderr = "".join((record["_dir"] / f"{r}.stderr").read_text() for r in ("ping", "pong"))
    assert "the connection to the broker at" in stderr and "is gone" in stderr, stderr
    [service] = record["services"]
    assert wait_until_nothing_remains(service, results) == []
    # The next run gets a fresh broker and works.
    again = tmp_path / "again"
    record, s = measured(again, "ping", "--size", "64", "--count", "100", "--warmup", "10")
    check_all_arrived(record["_dir"], s["ping"], 100, "rtt")


def test_no_broker_at_the_given_address(lib, results):
    port = free_port()
    proc = run_cli(
        ["ping", "--driver", DRIVER, "--count", "5", "--option", f"broker=127.0.0.1:{port}"],
        results,
    )
    assert proc.returncode == 1, proc.stderr
    assert f"cannot connect the writer to the broker at 127.0.0.1:{port}" in proc.stderr or (
        f"cannot connect the reader to the broker at 127.0.0.1:{port}" in proc.stderr
    )


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--history", "keep_last:5"],
            "rabbitmq: history 'keep_last' is not supported; this driver supports keep_all",
        ),
        (["--history", "keep_last:5"], "x-max-length with x-overflow=drop-head bounds only"),
        (
            ["--durability", "transient_local"],
            "rabbitmq: durability 'transient_local' is not supported; this driver supports "
            "volatile",
        ),
        (["--durability", "transient_local"], "nothing keeps a topic's last messages"),
        (["--transport", "udp"], "rabbitmq: transport 'udp' is not supported"),
        (["--option", "prefetch=10"], "rabbitmq: option prefetch applies to reliability reliable"),
        (
            ["--reliability", "reliable", "--option", "prefetch=0"],
            "rabbitmq: option prefetch='0': use a whole number from 1 to 65535",
        ),
        (["--option", "broker=nowhere"], "rabbitmq: option broker='nowhere' is not HOST:PORT"),
    ],
)
def test_refused_settings_say_why(lib, results, args, message):
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert live_processes("beam.smp", str(results)) == []
