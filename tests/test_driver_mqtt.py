"""The mqtt driver in real runs through `./psbench ping|pubsub`, with the mosquitto that
psbench starts (or one the test starts itself): every notify mode, both QoS, retained
messages, small and large messages, inter- and intra-process; counts, integrity, the
broker's address reaching the nodes, clean disconnects in the broker's log, refusals,
and no broker left running."""

import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import live_processes, only_run, run_cli
from driver_checks import check_counts, check_samples_file, load
from psbench.run.service_definitions import executable, free_port

DRIVER = "mqtt"
KIB, MIB = 1 << 10, 1 << 20


@pytest.fixture(scope="module")
def mqtt(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


def mosquitto_processes_mentioning(text: str) -> list[int]:
    """Live mosquitto processes whose command line contains text (a results path)."""
    return live_processes("mosquitto", text)


def check_clients_disconnected_cleanly(log: str, run_id: str, clients: int):
    """Every client of the run connected under its own id and said DISCONNECT."""
    ids = re.findall(rf" as (psb-{run_id}-\d+-\d+) \(", log)
    assert len(ids) == clients and len(set(ids)) == clients, log
    for client in ids:
        assert f"Client {client} disconnected." in log, log
        assert f"Client {client} closed its connection." not in log, log


def measured(results: Path, kind: str, *args: str, processes: int = 2):
    """One run through the CLI with the broker psbench starts; returns the run record
    and its summaries."""
    proc = run_cli([kind, "--driver", DRIVER, *args], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    assert len(record["processes"]) == processes
    assert record["driver"]["name"] == DRIVER
    assert re.fullmatch(r"libmosquitto 2\.\d+\.\d+", record["driver"]["version"])
    # psbench started the broker and told every node where it listens.
    [broker] = record["services"]
    assert broker["name"] == "mosquitto" and broker["started_by_psbench"]
    assert re.fullmatch(r"127\.0\.0\.1:\d+", broker["address"])
    for p in record["processes"]:
        assert f"broker={broker['address']}" in p["argv"], p["argv"]
    # It is stopped after the run (the launcher waited for it), with a complete log.
    assert mosquitto_processes_mentioning(str(results)) == []
    run_dir = record["_dir"]
    check_clients_disconnected_cleanly(Path(broker["log"]).read_text(), record["run_id"], clients=2)
    roles = ("ping", "pong") if kind == "ping" else ("pub", "sub")
    return record, {role: load(run_dir, role) for role in roles}


# Every notify mode at both QoS, small and large, closed and open loop, retained.
# Each notify mode at 32 B, 1 KiB and up to 1 MiB on the default transport is the
# conformance suite's (DeliversInEveryNotifyMode, DeliversSamplesIntactAndInOrder; run
# for this driver with its service by tests/test_conformance_services.py); these cases
# are what is this driver's own: its options, larger messages, other transports.
PING_CASES = {
    "wait-best_effort-4MiB": (["--notify", "wait"], 4 * MIB, 20),
    "open-loop-wait-reliable": (
        ["--notify", "wait", "--reliability", "reliable", "--rate", "2000"],
        1024,
        1000,
    ),
    "open-loop-poll-best_effort": (["--notify", "poll", "--rate", "2000"], 256, 1000),
    "open-loop-listener-reliable": (
        ["--notify", "listener", "--reliability", "reliable", "--rate", "2000"],
        256,
        1000,
    ),
    "retained-wait-reliable": (
        ["--durability", "transient_local", "--reliability", "reliable"],
        512,
        300,
    ),
    "retained-listener-best_effort": (
        ["--notify", "listener", "--durability", "transient_local"],
        64,
        300,
    ),
    "no-nodelay-keepalive": (["--option", "tcp_nodelay=false", "--option", "keepalive=5"], 64, 200),
}


@pytest.mark.parametrize("case", PING_CASES, ids=list(PING_CASES))
def test_ping(mqtt, results, case):
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
        "--check-pattern",
    )
    ping = s["ping"]
    assert ping["config"]["size"] == size
    assert ping["config"]["transport"] == "tcp"
    assert ping["ended_by"] == "count"
    check_counts(ping, count)
    check_samples_file(record["_dir"], ping, "rtt")
    assert s["pong"]["counts"]["received"] >= count


def test_ping_intra_process(mqtt, results):
    """Both roles in one process: two contexts, two client ids, one broker."""
    record, s = measured(
        results,
        "ping",
        "--placement",
        "intra",
        "--notify",
        "listener",
        "--size",
        "256",
        "--count",
        "300",
        "--warmup",
        "10",
        "--check-pattern",
        processes=1,
    )
    check_counts(s["ping"], 300)


# pubsub: the node cannot ask MQTT whether the subscriber is there (matched counts are
# -1), so nothing is lost only because create_reader returns after the SUBACK and the
# publisher starts after every node said READY. No warm-up to hide a late start.
PUBSUB_CASES = {
    "wait-best_effort-64B": (["--notify", "wait", "--rate", "1000"], 64, 1000),
    "poll-reliable-64B": (
        ["--notify", "poll", "--reliability", "reliable", "--rate", "2000"],
        64,
        1000,
    ),
    "listener-reliable-16KiB": (
        ["--notify", "listener", "--reliability", "reliable", "--rate", "500"],
        16 * KIB,
        500,
    ),
    "listener-best_effort-1MiB": (["--notify", "listener", "--rate", "50"], MIB, 50),
    "wait-best_effort-4MiB": (["--notify", "wait", "--rate", "20"], 4 * MIB, 20),
    "poll-reliable-4MiB": (
        ["--notify", "poll", "--reliability", "reliable", "--rate", "20"],
        4 * MIB,
        20,
    ),
    "back-to-back-reliable-4KiB": (["--reliability", "reliable", "--rate", "0"], 4 * KIB, 2000),
    "retained-wait-reliable": (
        ["--durability", "transient_local", "--reliability", "reliable", "--rate", "1000"],
        256,
        300,
    ),
}


@pytest.mark.parametrize("case", PUBSUB_CASES, ids=list(PUBSUB_CASES))
def test_pubsub_loses_nothing(mqtt, results, case):
    args, size, count = PUBSUB_CASES[case]
    record, s = measured(
        results,
        "pubsub",
        *args,
        "--size",
        str(size),
        "--count",
        str(count),
        "--warmup",
        "0",
        "--check-pattern",
    )
    sub = s["sub"]
    assert sub["ended_by"] in ("count", "end_marker")
    check_counts(sub, count)
    check_samples_file(record["_dir"], sub, "one_way")
    assert s["pub"]["counts"]["sent"] == count
    # MQTT cannot count subscribers: no discovery time is claimed.
    assert s["pub"]["timing"]["discovery_ns"] is None


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--durability", "transient_local", "--history", "keep_last:1"],
            "mqtt: history 'keep_last' is not supported; this driver supports (none) (history "
            "keep_last:1 cannot be honoured: the broker queues every message for each subscriber",
        ),
        (
            ["--history", "keep_all"],
            "mqtt: history 'keep_all' is not supported; this driver supports (none) (history "
            "keep_all cannot be honoured",
        ),
        (["--option", "keepalive=2"], "mqtt: option keepalive='2': use 0 (off) or 5 to 65535"),
        (["--option", "tcp_nodelay=yes"], "mqtt: option tcp_nodelay='yes': use true or false"),
        (["--option", "max_inflight=-3"], "mqtt: option max_inflight='-3'"),
        (["--option", "broker=localhost"], "mqtt: option broker='localhost' is not HOST:PORT"),
        (["--option", "qos=2"], "mqtt: option 'qos' is not known"),
        (["--transport", "websockets"], "mqtt: transport 'websockets' is not supported"),
        (["--size", str(4 * MIB + 1)], "--size: size 4194305 is out of range"),
        (["--loan"], "mqtt: --loan is not supported"),
    ],
)
def test_refused_settings_say_why(mqtt, results, args, message):
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr, proc.stderr
    assert mosquitto_processes_mentioning(str(results)) == []


# --- a broker of one's own -------------------------------------------------------------


def accepts_connections(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def own_broker(tmp_path):
    """A mosquitto the user started, on 127.0.0.1 and a free port."""
    port = free_port()
    config = tmp_path / "own-mosquitto.conf"
    config.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\n"
        "set_tcp_nodelay true\npersistence false\nlog_dest stdout\n"
    )
    log = tmp_path / "own-mosquitto.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [executable("mosquitto"), "-c", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        end = time.monotonic() + 10
        while not accepts_connections(port):
            assert proc.poll() is None and time.monotonic() < end, log.read_text()
            time.sleep(0.05)
        yield f"127.0.0.1:{port}", proc, log
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)


def test_a_broker_given_by_option_is_used_and_psbench_starts_none(mqtt, results, own_broker):
    address, proc, log = own_broker
    run = run_cli(
        [
            "pubsub",
            "--driver",
            DRIVER,
            "--option",
            f"broker={address}",
            "--reliability",
            "reliable",
            "--size",
            "128",
            "--count",
            "300",
            "--rate",
            "1000",
            "--warmup",
            "0",
        ],
        results,
    )
    assert run.returncode == 0, run.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert record.get("services", []) == []
    check_counts(load(record["_dir"], "sub"), 300)
    assert proc.poll() is None  # left running: it is the user's
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    check_clients_disconnected_cleanly(log.read_text(), record["run_id"], clients=2)


def test_no_broker_at_the_given_address_fails_the_run_saying_where(mqtt, results):
    port = free_port()
    run = run_cli(
        ["ping", "--driver", DRIVER, "--option", f"broker=127.0.0.1:{port}", "--count", "10"],
        results,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    record = only_run(results)
    assert record["status"] == "failed"
    assert f"mqtt: cannot connect to the broker at 127.0.0.1:{port}: Connection refused" in (
        run.stderr + (record["message"] or "")
    ), run.stderr


# --- durability persistent: the broker killed and started again -------------------------


@pytest.mark.parametrize(
    "notify,security",
    [("wait", "none"), ("listener", "none"), ("wait", "tls"), ("listener", "tls")],
)
def test_persistent_loses_nothing_across_a_broker_killed_mid_stream(
    mqtt, results, notify, security
):
    """mosquitto killed (SIGKILL) 1 s into the window and started again 1 s later on its
    port, configuration and database: every sample written arrives, no write fails, both
    clients came back to their sessions, and the database is gone after the run. Under
    TLS too (libmosquitto alone would not notice a refused connect there, and its own
    thread ends on the killed broker's TLS EPROTO)."""
    proc = run_cli(
        ["pubsub", "--driver", DRIVER, "--notify", notify, "--durability", "persistent",
         "--reliability", "reliable", "--rate", "200", "--duration", "4",
         "--restart-broker", "1:1", "--security", security],
        results,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    [broker] = record["services"]
    assert broker["durable"] and broker["restarts"] == 1
    restart = record["restart"]
    assert restart["done"] and restart["signal"] == "SIGKILL", restart
    assert restart["write_errors"] == 0
    sub = restart["receivers"]["sub"]
    # The 800 due in the window, less those a busy sender had no time left for (its
    # schedule counts them as not sent): each written one arrived.
    schedule = load(record["_dir"], "pub")["schedule"]
    assert schedule["due"] == 800, schedule
    assert sub["published"] == sub["received"] == 800 - schedule["not_sent"] > 700, sub
    assert sub["lost"] == 0 and sub["missing"] == 0, sub
    assert sub["received_after_ready"] > 0 and sub["recovery_s"] is not None, sub
    counters = load(record["_dir"], "sub")["middleware_counters"]["reader"]
    assert counters["reconnects"] == 1 and counters["sessions_lost"] == 0, counters
    # The broker was configured by the manifest's durable_config, and its database
    # (the manifest's leftovers) went with it.
    folder = Path(broker["argv"][-1]).parent
    assert "persistence true" in (folder / "mosquitto.conf").read_text()
    assert not (folder / "mosquitto.db").exists() and not (folder / "mosquitto.db.new").exists()
    log = Path(broker["log"]).read_text()
    assert "psbench: killed (SIGKILL), started again" in log, log
    assert mosquitto_processes_mentioning(str(results)) == []


def test_persistent_needs_reliable(mqtt, results):
    proc = run_cli(
        ["pubsub", "--driver", DRIVER, "--durability", "persistent", "--duration", "1"], results
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "mqtt: durability persistent needs reliability reliable: " in proc.stderr, proc.stderr
    assert mosquitto_processes_mentioning(str(results)) == []
