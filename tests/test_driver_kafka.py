"""The kafka driver in real two-process runs through `./psbench ping|pubsub`, with the
Kafka broker psbench starts for them (KRaft, from the jars fetch_broker.py put in the
cache): both producer profiles and both reliabilities, counted; refusals with their
messages; nothing left after a run (no broker process, its ports closed, its data
directory gone), also when psbench is killed; a broker killed mid-run fails the run with
its log's tail, and the next run works; with durability persistent a broker killed
mid-stream (SIGKILL) and started again on its port and data loses nothing."""

import json
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from conftest import cli_in_background, live_processes, only_run, run_cli, run_records
from driver_checks import load
from psbench.base import manifests, paths
from psbench.results.samples import read_samples
from psbench.run import drivers
from psbench.run.service_definitions import definition
from psbench.run.services import ServicePool

DRIVER = "kafka"
MIB = 1 << 20
RUN_TIMEOUT_S = 240  # the broker's first start (a JVM) is most of a run here


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


def accepts(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=0.3):
            return True
    except OSError:
        return False


def assert_broker_gone(results: Path, service: dict) -> None:
    """No broker process, neither of its ports open, its data directory removed."""
    assert brokers_of(results) == []
    controller = service_config(service)["controller"]
    assert not accepts(service["address"]) and not accepts(controller)
    folder = Path(service["log"]).with_suffix("")  # service-kafka.log -> service-kafka/
    assert (folder / "server.properties").is_file()
    assert not (folder / "data").exists(), "the broker's data directory was left behind"


def service_config(service: dict) -> dict:
    folder = Path(service["log"]).with_suffix("")
    text = (folder / "server.properties").read_text()
    props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {"controller": props["controller.quorum.voters"].split("@", 1)[1], **props}


def measured(results: Path, kind: str, *args: str):
    proc = run_cli([kind, "--driver", DRIVER, *args], results, timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert record["driver"]["version"].startswith("librdkafka 2.")
    [service] = record["services"]
    assert service["name"] == "kafka" and service["started_by_psbench"]
    assert service["version"].startswith("Apache Kafka 4.3.1")
    assert service["address"].startswith("127.0.0.1:")
    # Formatting the storage and starting the broker are timed apart.
    assert service["prepared_in_s"] > 0 and service["started_in_s"] > 0
    for process in record["processes"]:
        assert f"broker={service['address']}" in process["argv"]
    assert_broker_gone(results, service)
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


PROFILES = ["latency", "throughput"]
RELIABILITIES = ["best_effort", "reliable"]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("reliability", RELIABILITIES)
def test_ping(kafka, results, profile, reliability):
    record, s = measured(
        results, "ping", "--reliability", reliability, "--option", f"profile={profile}",
        "--size", "64", "--count", "300", "--warmup", "10", "--check-pattern",
    )  # fmt: skip
    ping = s["ping"]
    assert ping["config"]["options"]["profile"] == profile  # recorded with the run
    assert ping["config"]["reliability"] == reliability
    check_all_arrived(record["_dir"], ping, 300, "rtt")
    assert s["pong"]["counts"]["received"] >= 300


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("reliability", RELIABILITIES)
def test_pubsub_without_warmup_loses_nothing(kafka, results, profile, reliability):
    # Matched counts are -1: this passes only because a reader is assigned at the log's
    # end as it was when create_reader returned, before the sub says it is ready.
    record, s = measured(
        results, "pubsub", "--reliability", reliability, "--option", f"profile={profile}",
        "--size", "64", "--count", "2000", "--rate", "2000", "--warmup", "0",
        "--check-pattern",
    )  # fmt: skip
    sub = s["sub"]
    assert sub["counts"]["warmup"] == 0
    check_all_arrived(record["_dir"], sub, 2000, "one_way")
    assert s["pub"]["middleware_counters"]["writer"]["delivery_failed"] == 0


def test_pubsub_of_the_largest_messages_in_every_notify_mode(kafka, results):
    for notify in ("wait", "poll", "listener"):
        record, s = measured(
            results / notify, "pubsub", "--reliability", "reliable", "--notify", notify,
            "--size", str(4 * MIB), "--count", "30", "--rate", "20", "--check-pattern",
        )  # fmt: skip
        check_all_arrived(record["_dir"], s["sub"], 30, "one_way")


# Each refusal with the node's words and then check()'s reason. The run names a broker of
# its own (nothing listens there), so psbench starts none: the node refuses first.
REFUSALS = {
    "transient_local": (
        ["--durability", "transient_local"],
        "kafka: durability 'transient_local' is not supported; this driver supports "
        "volatile|persistent",
        "a reader here starts at the log's end when it is created",
    ),
    "persistent_best_effort": (
        ["--durability", "persistent", "--reliability", "best_effort"],
        "kafka: durability persistent needs reliability reliable: ",
        "use --reliability reliable (acks=all, idempotent)",
    ),
    "keep_last": (
        ["--history", "keep_last:1"],
        "kafka: history 'keep_last' is not supported",
        "the broker keeps every message in its log",
    ),
    "keep_all": (
        ["--history", "keep_all"],
        "kafka: history 'keep_all' is not supported",
        "nothing is dropped for a depth",
    ),
    "udp": (["--transport", "udp"], "kafka: transport 'udp' is not supported", "tcp"),
    "loan": (["--loan"], "kafka: --loan is not supported", "librdkafka copies every payload"),
    "profile": (
        ["--option", "profile=fast"],
        "kafka: option profile='fast' is not known; use profile=latency (default) or "
        "profile=throughput",
        "",
    ),
    "broker": (
        ["--option", "broker=nowhere"],
        "kafka: option broker='nowhere' is not HOST:PORT",
        "127.0.0.1:9092",
    ),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_refused_settings_say_why(kafka, results, case):
    args, message, reason = REFUSALS[case]
    own = [] if case == "broker" else ["--option", "broker=127.0.0.1:9"]
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *own, *args], results)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and reason in proc.stderr
    assert only_run(results)["services"] == []
    assert brokers_of(results) == []


def test_no_broker_at_the_given_address(kafka, results):
    proc = run_cli(
        ["ping", "--driver", DRIVER, "--count", "5", "--match-timeout", "5",
         "--option", "broker=127.0.0.1:9"],
        results,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "kafka: cannot reach the broker at 127.0.0.1:9" in proc.stderr


def start_ping(results: Path, *extra: str):
    return cli_in_background(
        ["ping", "--driver", DRIVER, "--duration", "60", "--warmup", "10", "--rate", "500",
         "--timeout", "200", *extra],
        results,
    )  # fmt: skip


def wait_measuring(results: Path, proc) -> dict:
    """The run's record once both nodes measure (pong has printed, the broker runs)."""
    end = time.monotonic() + RUN_TIMEOUT_S
    while True:
        assert time.monotonic() < end and proc.poll() is None, "the run did not start"
        records = run_records(results) if results.exists() else []
        if records and records[0]["status"] == "running" and records[0].get("services"):
            if (records[0]["_dir"] / "ping.stderr").exists():
                time.sleep(2.0)  # into the measurement
                return records[0]
        time.sleep(0.1)


@pytest.mark.parametrize("notify", ["wait", "listener"])
def test_broker_killed_mid_run_fails_the_run_and_the_next_run_works(kafka, results, notify):
    with start_ping(results / "killed", "--notify", notify) as proc:
        record = wait_measuring(results / "killed", proc)
        [pid] = brokers_of(results / "killed")
        os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, out + err
    [record] = run_records(results / "killed")
    assert record["status"] == "failed", record["message"]
    assert "kafka (pid" in record["message"] and "ended during the run" in record["message"]
    assert "its log: " in record["message"]
    stderr = "".join((record["_dir"] / f"{r}.stderr").read_text() for r in ("ping", "pong"))
    assert "kafka: the broker at 127.0.0.1:" in stderr and "is gone" in stderr, stderr
    [service] = record["services"]
    assert_broker_gone(results / "killed", service)
    # The next run starts a broker of its own and measures.
    record, s = measured(results / "next", "ping", "--size", "64", "--count", "100")
    check_all_arrived(record["_dir"], s["ping"], 100, "rtt")


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
    # out its previous incarnation's session: README), hence --idle-timeout.
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
             "--idle-timeout", "60", "--check-pattern", "--option", f"broker={broker.address}"],
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


def test_restart_broker_run_counts_every_message(kafka, results):
    # The same through `--restart-broker` (the broker psbench starts, killed 3 s into the
    # window and started again 1 s later), the reader in listener mode: run.json's
    # restart block says every message arrived once, none before the restart was lost.
    record, s = measured(
        results, "pubsub", "--durability", "persistent", "--reliability", "reliable",
        "--notify", "listener", "--size", "64", "--rate", "200", "--duration", "10",
        "--restart-broker", "3:1", "--check-pattern",
    )  # fmt: skip
    [service] = record["services"]
    assert service["durable"] and service["restarts"] == 1
    restart = record["restart"]
    assert restart["done"] and restart["error"] is None and restart["write_errors"] == 0
    side = restart["receivers"]["sub"]
    # Every message written arrived once; the 2,000 due in the window were written but
    # those a busy sender had no time left for (its schedule counts them, not sent).
    schedule = s["pub"]["schedule"]
    assert schedule["due"] == 2000
    assert side["published"] == side["received"] == 2000 - schedule["not_sent"] > 1900
    assert side["lost"] == side["duplicated"] == side["missing"] == 0
    assert side["received_after_ready"] > 0
    check_all_arrived(record["_dir"], s["sub"], side["published"], "one_way")
    assert s["pub"]["middleware_counters"]["writer"] == {"delivery_failed": 0, "broker_outages": 1}
    assert s["sub"]["middleware_counters"]["reader"]["broker_outages"] == 1


def test_sigkill_of_psbench_leaves_no_broker_and_no_data(kafka, results):
    with start_ping(results) as proc:
        record = wait_measuring(results, proc)
        [service] = record["services"]
        assert brokers_of(results) == [service["pid"]]
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    end = time.monotonic() + 10  # the keeper: SIGTERM, then SIGKILL after 3 s
    while brokers_of(results) and time.monotonic() < end:
        time.sleep(0.1)
    folder = Path(service["log"]).with_suffix("")
    while (folder / "data").exists() and time.monotonic() < end:
        time.sleep(0.1)
    assert_broker_gone(results, service)
    assert [p for p in Path("/tmp").glob(f"*psbench*{record['run_id']}*")] == []


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
