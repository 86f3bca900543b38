"""The kafka driver in real two-process runs through `./psbench ping|pubsub`: both
producer profiles and both reliabilities, the largest messages in every notify mode,
counted, with one broker for the module (shared_brokers: KRaft, from the jars
fetch_broker.py put in the cache, started by psbench's own service machinery and given
as option broker: a JVM starts once, not per run); the broker psbench starts, with
nothing left after the run (no broker process, its ports closed, its data directory
gone); its own refusals; with durability persistent a broker killed mid-stream (SIGKILL)
and started again on its port and data loses nothing. What every broker driver gets (a
broker given by option, none at the given address, the broker killed mid-run, durability
persistent across --restart-broker, the refusals of what --describe leaves out) is the
driver suite's (tests/driver_suite.py), with what kafka says and counts declared in
SUITE."""

import json
import os
import time
from pathlib import Path

import pytest

from conftest import cli_in_background, live_processes, only_run, run_cli
from driver_checks import check_all_arrived, listening, load
from driver_suite import RUN_TIMEOUT_S, Expect, Restart, check_broker_used, measured
from psbench.base import manifests, paths
from psbench.run import drivers
from psbench.run.service_definitions import definition
from psbench.run.services import ServicePool

DRIVER = "kafka"
MIB = 1 << 20
SUITE = Expect(
    no_broker=("kafka: cannot reach the broker at {address}",),
    broker_gone=("kafka: the broker at 127.0.0.1:", "is gone"),
    broker_gone_message=("kafka (pid", "ended during the run", "its log: "),
    refusals={
        "durability transient_local": "a reader here starts at the log's end when it is created",
        "persistent best_effort": "use --reliability reliable (acks=all, idempotent)",
        "history keep_last": "the broker keeps every message in its log",
        "history keep_all": "nothing is dropped for a depth",
        "loan": "librdkafka copies every payload",
        "broker": "127.0.0.1:9092",
    },
    tls_faults={
        "wrong-ca": "certificate verify failed",
        # Java's TLS answers an expired client certificate with alert 46,
        # certificate_unknown.
        "expired": "alert certificate unknown",
    },
    # Killed 3 s into the window and started again 1 s later, the reader in listener mode:
    # every message arrives once, none before the restart was lost; the writer's queue
    # rides the outage out (no failed write, no failed delivery).
    restart=Restart(
        cases=(("listener", "none"),),
        at_down="3:1",
        idle_timeout_s=60,  # the broker's restart waits out its previous session: README
        sent_fraction=0.95,
        counters={
            ("pub", "writer"): {"delivery_failed": 0, "broker_outages": 1},
            ("sub", "reader"): {"broker_outages": 1},
        },
        check=lambda record, s: (
            s["pub"]["middleware_counters"]["writer"] == {"delivery_failed": 0, "broker_outages": 1}
        ),
    ),
)


@pytest.fixture(scope="module")
def kafka(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    program = definition("kafka").program
    if not os.access(program, os.X_OK):
        pytest.fail(f"{program} is missing: cmake --build build --target kafka-broker")
    return driver_libs[DRIVER]


def brokers_of(results: Path) -> list[int]:
    """Live broker JVMs of this test (their command line names its results folder)."""
    return live_processes("java", str(results))


def assert_broker_gone(results: Path, service: dict) -> None:
    """No broker process, neither of its ports open, its data directory removed."""
    assert brokers_of(results) == []
    controller = service_config(service)["controller"]
    assert not listening(service["address"]) and not listening(controller)
    folder = Path(service["log"]).with_suffix("")  # service-kafka.log -> service-kafka/
    assert (folder / "server.properties").is_file()
    assert not (folder / "data").exists(), "the broker's data directory was left behind"


def service_config(service: dict) -> dict:
    folder = Path(service["log"]).with_suffix("")
    text = (folder / "server.properties").read_text()
    props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {"controller": props["controller.quorum.voters"].split("@", 1)[1], **props}


def measured_kafka(results: Path, kind: str, *args: str, broker: str):
    """One run through the CLI with the module's broker."""
    record, s = measured(DRIVER, results, kind, *args, broker=broker)
    assert record["driver"]["version"].startswith("librdkafka 2.")
    return record, s


def test_psbench_starts_its_broker_and_leaves_nothing(kafka, results):
    record, s = measured(DRIVER, results, "ping", "--size", "64", "--count", "100")
    check_all_arrived(record["_dir"], s["ping"], 100, "rtt")
    check_broker_used(DRIVER, record)
    [service] = record["services"]
    assert service["version"].startswith("Apache Kafka 4.3.1")
    # Formatting the storage and starting the broker are timed apart.
    assert service["prepared_in_s"] > 0 and service["started_in_s"] > 0
    assert_broker_gone(results, service)


PROFILES = ["latency", "throughput"]
RELIABILITIES = ["best_effort", "reliable"]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("reliability", RELIABILITIES)
def test_ping(kafka, shared_brokers, results, profile, reliability):
    record, s = measured_kafka(
        results, "ping", "--reliability", reliability, "--option", f"profile={profile}",
        "--size", "64", "--count", "300", "--warmup", "10", "--check-pattern",
        broker=shared_brokers.address(DRIVER),
    )  # fmt: skip
    ping = s["ping"]
    assert ping["config"]["options"]["profile"] == profile  # recorded with the run
    assert ping["config"]["reliability"] == reliability
    check_all_arrived(record["_dir"], ping, 300, "rtt")
    assert s["pong"]["counts"]["received"] >= 300


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("reliability", RELIABILITIES)
def test_pubsub_without_warmup_loses_nothing(kafka, shared_brokers, results, profile, reliability):
    # Matched counts are -1: this passes only because a reader is assigned at the log's
    # end as it was when create_reader returned, before the sub says it is ready.
    record, s = measured_kafka(
        results, "pubsub", "--reliability", reliability, "--option", f"profile={profile}",
        "--size", "64", "--count", "2000", "--rate", "2000", "--warmup", "0",
        "--check-pattern", broker=shared_brokers.address(DRIVER),
    )  # fmt: skip
    sub = s["sub"]
    assert sub["counts"]["warmup"] == 0
    check_all_arrived(record["_dir"], sub, 2000, "one_way")
    assert s["pub"]["middleware_counters"]["writer"]["delivery_failed"] == 0


def test_pubsub_of_the_largest_messages_in_every_notify_mode(kafka, shared_brokers, results):
    for notify in ("wait", "poll", "listener"):
        record, s = measured_kafka(
            results / notify, "pubsub", "--reliability", "reliable", "--notify", notify,
            "--size", str(4 * MIB), "--count", "30", "--rate", "20", "--check-pattern",
            broker=shared_brokers.address(DRIVER),
        )  # fmt: skip
        check_all_arrived(record["_dir"], s["sub"], 30, "one_way")


def test_its_own_option_values_are_refused(kafka, results):
    # The run names a broker of its own (nothing listens there), so psbench starts none:
    # the node refuses first.
    proc = run_cli(
        ["ping", "--driver", DRIVER, "--count", "10", "--option", "broker=127.0.0.1:9",
         "--option", "profile=fast"],
        results,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert (
        "kafka: option profile='fast' is not known; use profile=latency (default) or "
        "profile=throughput"
    ) in proc.stderr
    assert only_run(results)["services"] == []
    assert brokers_of(results) == []


def wait_until_written(data: Path, proc) -> None:
    """Until the broker's log of the run's topic holds messages (the stream has begun)."""
    end = time.monotonic() + RUN_TIMEOUT_S
    while not any(f.stat().st_size > 0 for f in data.glob("psb_*-0/*.log")):
        assert time.monotonic() < end and proc.poll() is None, "nothing was written"
        time.sleep(0.1)


def test_persistent_rides_out_a_broker_killed_mid_stream(kafka, results):
    # A durable broker as psbench starts one; the run is given its address, so the test
    # kills it (SIGKILL: nothing saved on the way out) a second into the stream and
    # starts it again on its port, configuration and data, as --restart-broker does.
    # 200 messages/s for 12 s: every one arrives, once, in order; none failed. The
    # outage is longer than the sub's default idle timeout (the broker's restart waits
    # out its previous incarnation's session: README), hence --idle-timeout, and the
    # pub's drain may wait as long (on a loaded machine it served again 26 s after).
    sent = 2400
    with ServicePool(largest_message=64) as pool:
        describe = drivers.describe(paths.node_path(), kafka)
        (results / "broker").mkdir(parents=True)
        [broker] = pool.ensure(describe, None, results / "broker", durable=True)
        assert broker.durable
        data = broker.folder / "data"
        with cli_in_background(
            ["pubsub", "--driver", DRIVER, "--durability", "persistent", "--reliability",
             "reliable", "--size", "64", "--rate", "200", "--duration", "12", "--warmup", "0",
             "--idle-timeout", "60", "--drain-timeout", "60", "--check-pattern",
             "--option", f"broker={broker.address}"],
            results / "run",
        ) as proc:  # fmt: skip
            wait_until_written(data, proc)
            time.sleep(1.0)
            pool.restart(broker, 1.0)
            out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        assert proc.returncode == 0, out + err
        assert broker.restarts == 1
        assert "--- psbench: killed (SIGKILL)" in broker.log.read_text()
        record = only_run(results / "run")
        assert record["status"] == "ok", record.get("message")
        s = {role: load(record["_dir"], role) for role in ("pub", "sub")}
        check_all_arrived(record["_dir"], s["sub"], sent, "one_way")
        assert s["pub"]["counts"]["write_errors"] == 0
        writer = s["pub"]["middleware_counters"]["writer"]
        assert writer["delivery_failed"] == 0 and writer["broker_outages"] == 1, writer
        reader = s["sub"]["middleware_counters"]["reader"]
        assert reader["broker_outages"] == 1, reader
        assert data.is_dir()
    # The pool stopped it: no broker, its data removed (manifest leftovers).
    assert brokers_of(results / "broker") == []
    assert not data.exists()


def test_the_pom_and_the_manifest_name_one_version():
    folder = manifests.DRIVERS_DIR / DRIVER
    pom = (folder / "pom.xml").read_text()
    version = pom.split("<kafka.version>", 1)[1].split("<", 1)[0]
    [service] = manifests.load(DRIVER).services
    assert f"/kafka/{version}/kafka-java" in service.executable
    # The console consumer of the monitoring criterion: kafka-tools at that version.
    assert f"/kafka/{version}/kafka-console-consumer" in manifests.load(DRIVER).monitor.argv[0]
    assert "${kafka.version}" in (folder / "tools-pom.xml").read_text()
    assert json.dumps(version) != '""'


@pytest.mark.long
def test_a_broker_on_its_emulated_host_carries_every_message(kafka, results):
    # ping on a, pong on b, the broker on c behind 2 ms each way (both listeners at c's
    # address): each round trip crosses c's link four times, at least 8 ms.
    record, s = measured_on_hosts(results)
    [service] = record["services"]
    assert service["host"] == "c" and service["address"].startswith("198.18.0.3:")
    assert service_config(service)["controller"].startswith("198.18.0.3:")
    assert record["stats"]["ping"]["rtt"]["min"] >= 8e6
    check_all_arrived(record["_dir"], s["ping"], 100, "rtt")


def measured_on_hosts(results: Path):
    proc = run_cli(
        ["ping", "--driver", DRIVER, "--size", "64", "--count", "100", "--host", "a",
         "--host", "b", "--host", "c:delay=2ms", "--place", "ping=a", "--place", "pong=b",
         "--place", "broker=c", "--quiet"],
        results,
        timeout=RUN_TIMEOUT_S,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    [service] = record["services"]
    end = time.monotonic() + 5
    while brokers_of(results) and time.monotonic() < end:
        time.sleep(0.1)
    assert brokers_of(results) == []
    assert not (Path(service["log"]).with_suffix("") / "data").exists()
    return record, {role: load(record["_dir"], role) for role in ("ping", "pong")}
