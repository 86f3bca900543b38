"""The rabbitmq driver in real two-process runs through `./psbench ping|pubsub`: counts and
integrity for both QoS and every notify mode, a reader stopped with SIGSTOP that still gets
every message (keep_all), its own refusals, and the broker psbench starts: started and
stopped with nothing left (no beam.smp, no epmd, ports closed, its database gone), also
when the psbench CLI is killed with SIGKILL mid-run; the launcher keeps data/ only for
durable runs. What every broker driver gets (a broker given by option, none at the given
address, the broker killed mid-run, durability persistent across a broker restart, the
refusals of what --describe leaves out) is the driver suite's (tests/driver_suite.py),
with what rabbitmq says and counts declared in SUITE.

Starting a RabbitMQ broker takes about 10 s here, so the runs that are not about the
broker's life share one (shared_brokers: started by psbench's own service machinery from
the manifest, given to them as option broker)."""

import os
import re
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from conftest import REPO, cli_in_background, live_processes, only_run, run_cli, wait_for_running
from driver_checks import (
    check_all_arrived,
    driver_fixture,
    listening,
    load,
    ping_case,
    pubsub_case,
)
from driver_suite import Expect, Restart, check_broker_used, measured
from psbench.base import manifests

DRIVER = "rabbitmq"
MIB = 1 << 20
GONE_WITHIN_S = 10.0  # the keeper's SIGTERM, then its SIGKILL 3 s later, then removal
BROKER_LAUNCH = REPO / "drivers" / "rabbitmq" / "broker_launch.py"


def confirmed_once_each(record: dict, s: dict) -> None:
    """Every message confirmed by the broker, each published again once at most after the
    reconnection."""
    pub = s["pub"]["middleware_counters"]["writer"]
    sent, rate = s["pub"]["counts"]["sent"], 200
    assert sent <= pub["confirmed"] - s["pub"]["counts"]["warmup"] <= sent + rate, pub
    assert pub["republished"] <= pub["confirmed"], pub


rabbitmq = driver_fixture(DRIVER)
SUITE = Expect(
    no_broker=(
        "cannot connect the writer to the broker at {address}",
        "cannot connect the reader to the broker at {address}",
    ),
    broker_program="beam.smp",  # psbench starts its launcher (sh), which runs the broker
    broker_gone=("the connection to the broker at", "is gone"),
    broker_gone_message=("rabbitmq-server", "beam.smp) ended"),
    refusals={
        "history keep_last": "x-max-length with x-overflow=drop-head bounds only",
        "durability transient_local": "nothing keeps a topic's last messages",
    },
    tls_faults={
        "wrong-ca": "SSL peer cert verification failed",
        "expired": "refuses this client's certificate",
    },
    # The broker serves again 7 to 8 s after the kill here (up to 20 s on a busy machine):
    # the window goes on after that, and the reader waits for it without ending on idle.
    # What the broker had confirmed from its disk arrives; the writes while it is down
    # fail (counted, the run goes on) and the writer publishes again what was not
    # confirmed (duplicates allowed); reader and writer each connect again once.
    restart=Restart(
        duration_s=30,
        idle_timeout_s=60,
        write_errors="some",
        all_written=False,
        duplicates=True,
        sent_fraction=1 / 6,
        counters={("pub", "writer"): {"reconnections": 1}, ("sub", "reader"): {"reconnections": 1}},
        check=confirmed_once_each,
    ),
)


def measured_rabbitmq(results: Path, kind: str, *args: str, broker: str | None = None):
    """One run through the CLI (given a broker, or with the one psbench starts)."""
    record, s = measured(DRIVER, results, kind, *args, broker=broker)
    assert record["driver"]["version"].startswith("rabbitmq-c 0.")
    if not broker:
        check_broker_used(DRIVER, record)
    return record, s


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
def test_ping(shared_brokers, results, case):
    args, size, count = PING_CASES[case]
    measure = partial(measured_rabbitmq, broker=shared_brokers.address(DRIVER))
    ping_case(measure, results, *args, size=size, count=count)


@pytest.mark.parametrize("reliability", ["best_effort", "reliable"])
def test_pubsub_without_warmup_loses_nothing(shared_brokers, results, reliability):
    # No warm-up, and matched counts of -1: this passes only because the reader's queue
    # is bound before the sub reports ready, and the writer drains (confirms) at the end.
    measure = partial(measured_rabbitmq, broker=shared_brokers.address(DRIVER))
    _, s = pubsub_case(measure, results, "--reliability", reliability, "--size", "256",
                       "--rate", "3000", "--warmup", "0", "--check-pattern", count=3000)  # fmt: skip
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
def test_stalled_reader_gets_every_message(shared_brokers, results, reliability):
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
            f"broker={shared_brokers.address(DRIVER)}",
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


def what_remains(service: dict, results: Path) -> list[str]:
    folder = Path(service["argv"][1]).parent
    ports = launcher_ports(service)
    left = [f"beam.smp {pid}" for pid in live_processes("beam.smp", str(results))]
    left += [f"epmd {pid}" for pid in live_processes("epmd", f"-port\0{ports[1]}")]
    left += [f"sh {pid}" for pid in live_processes("sh", str(folder))]
    left += [f"port {p} accepts" for p in ports if listening(f"127.0.0.1:{p}")]
    left += [str(folder / n) for n in ("data", ".erlang.cookie") if (folder / n).exists()]
    return left


def wait_until_nothing_remains(service: dict, results: Path) -> list[str]:
    end = time.monotonic() + GONE_WITHIN_S
    while (left := what_remains(service, results)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


def test_psbench_starts_and_stops_its_broker(rabbitmq, results):
    record, s = measured_rabbitmq(
        results, "ping", "--size", "64", "--count", "200", "--warmup", "10"
    )
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


def test_sigkill_of_psbench_leaves_no_broker_behind(rabbitmq, results):
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


@pytest.mark.parametrize(
    "args,message",
    [
        (["--option", "prefetch=10"], "rabbitmq: option prefetch applies to reliability reliable"),
        (
            ["--reliability", "reliable", "--option", "prefetch=0"],
            "rabbitmq: option prefetch='0': use a whole number from 1 to 65535",
        ),
    ],
)
def test_its_own_option_values_are_refused(rabbitmq, results, args, message):
    # Given a broker of its own (nothing listens there), psbench starts none: the node
    # refuses first.
    proc = run_cli(
        ["ping", "--driver", DRIVER, "--count", "10", "--option", "broker=127.0.0.1:9", *args],
        results,
    )
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert only_run(results)["services"] == []


def test_volatile_keeps_no_data_across_a_start():
    """The launcher removes data/ when it starts unless the manifest's durable_config
    (the marker) is appended, and that is exactly broker_launch.py's marker."""
    script = subprocess.run(
        [sys.executable, str(BROKER_LAUNCH), "1000", "5672", "127.0.0.1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    [spec] = manifests.load(DRIVER).services
    marker = spec.durable_config.strip()
    assert f"grep -qxF '{marker}' \"$0\" || rm -rf data" in script
    assert marker not in script.splitlines()
