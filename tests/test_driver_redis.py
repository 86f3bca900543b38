"""The redis driver in real runs through `./psbench ping|pubsub`, with the redis-server
psbench starts for them (or one this module starts, given as option broker): every
notify mode, small and large messages, intra-process placement, back-to-back pubsub
with nothing lost from the first message on, counts and integrity checked; the TCP
connections the nodes really open; refusals with their messages; no server at all, and
a server killed in the middle of a run."""

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import cli_in_background, live_processes, node_processes_with, only_run, run_cli
from driver_checks import check_counts, check_samples_file, load
from psbench.run.service_definitions import free_port

DRIVER = "redis"
MIB = 1 << 20


@pytest.fixture(scope="module")
def redis(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


def redis_servers_at(address: str) -> list[int]:
    """Live redis-server processes serving address ("127.0.0.1:PORT"). redis-server
    rewrites its command line to "redis-server 127.0.0.1:PORT" (set-proc-title), so its
    configuration's path is no longer there to look for."""
    return live_processes("redis-server", address)


def assert_servers_stopped(results: Path) -> None:
    """Every redis-server psbench started for the runs under results is gone."""
    for run_json in results.rglob("run.json"):
        for service in json.loads(run_json.read_text()).get("services") or []:
            if service["started_by_psbench"]:
                assert redis_servers_at(service["address"]) == [], service


@contextmanager
def own_server(folder: Path):
    """A redis-server of our own (not psbench's) on 127.0.0.1, configured as psbench
    configures its own; yields (HOST:PORT, process)."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = folder / "redis.conf"
    config.write_text(
        "\n".join(
            [
                "bind 127.0.0.1",
                f"port {port}",
                "protected-mode yes",
                'save ""',
                "appendonly no",
                "daemonize no",
                f"dir {folder}",
                f"logfile {folder}/redis.log",
                "client-output-buffer-limit pubsub 512mb 128mb 60",
            ]
        )
        + "\n"
    )
    exe = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/sbin")
    assert exe, "redis-server is not installed (Debian package redis-server)"
    proc = subprocess.Popen(
        [exe, str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        end = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16) == b"+PONG\r\n":
                        break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < end, "redis-server did not start"
            time.sleep(0.05)
        yield f"127.0.0.1:{port}", proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def measured(results: Path, kind: str, *args: str, own_broker: str | None = None):
    """One run through the CLI; returns the run record and the summaries by role."""
    extra = ["--option", f"broker={own_broker}"] if own_broker else []
    proc = run_cli([kind, "--driver", DRIVER, *args, *extra], results)
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    assert len(record["processes"]) == (1 if "intra" in args else 2)
    assert record["driver"]["name"] == DRIVER
    # --describe connects nowhere: the client's (header) version only.
    assert record["driver"]["version"] == "0.14.1 (hiredis header)"
    if own_broker:
        assert record["services"] == [], "psbench started a server although one was given"
        address = own_broker
    else:
        [service] = record["services"]
        assert service["name"] == "redis-server" and service["started_by_psbench"]
        address = service["address"]
        assert address.startswith("127.0.0.1:")
    for process in record["processes"]:
        assert f"broker={address}" in process["argv"]
    assert_servers_stopped(results)
    run_dir = record["_dir"]
    roles = ("ping", "pong") if kind == "ping" else ("pub", "sub")
    summaries = {role: load(run_dir, role) for role in roles}
    for summary in summaries.values():
        # The node, having connected, adds the server's version (INFO server).
        assert summary["driver"]["version"].startswith("0.14.1 (hiredis header); server redis ")
    if not own_broker:
        server = summaries[roles[0]]["driver"]["version"].rsplit(" ", 1)[1]
        assert f"v={server} " in service["version"]  # what `redis-server --version` said
    return record, summaries


# Every notify mode, small and large (up to the 4 MiB largest), both placements.
# Each notify mode at 32 B, 1 KiB and up to 1 MiB on the default transport is the
# conformance suite's (DeliversInEveryNotifyMode, DeliversSamplesIntactAndInOrder; run
# for this driver with its service by tests/test_conformance_services.py); these cases
# are what is this driver's own: its options, larger messages, other transports.
PING_CASES = {
    "wait-4MiB": (["--notify", "wait"], 4 * MIB, 20),
    "listener-4MiB": (["--notify", "listener"], 4 * MIB, 20),
    "intra-wait-16KiB": (["--placement", "intra", "--notify", "wait"], 16384, 300),
    "intra-listener-64B": (["--placement", "intra", "--notify", "listener"], 64, 300),
}


@pytest.mark.parametrize("case", PING_CASES, ids=list(PING_CASES))
def test_ping(redis, results, case):
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
    assert ping["config"]["notify"] == args[args.index("--notify") + 1]
    assert ping["ended_by"] == "count"
    check_counts(ping, count)
    check_samples_file(record["_dir"], ping, "rtt")
    # pong echoed every ping it got, handshakes and warm-up included
    assert s["pong"]["counts"]["received"] >= ping["counts"]["samples"]


@pytest.mark.parametrize(
    "notify,size,count", [("wait", 64, 3000), ("poll", 4096, 2000), ("listener", 4 * MIB, 40)]
)
def test_back_to_back_pubsub_loses_nothing_from_the_first_message(
    redis, results, notify, size, count
):
    # No warm-up: the subscriber's SUBSCRIBE is confirmed before its node reports ready,
    # and the publisher waits until PUBSUB NUMSUB counts it, so message 0 arrives too.
    record, s = measured(
        results,
        "pubsub",
        "--notify",
        notify,
        "--size",
        str(size),
        "--count",
        str(count),
        "--warmup",
        "0",
        "--rate",
        "0",
        "--check-pattern",
    )
    sub, pub = s["sub"], s["pub"]
    check_counts(sub, count)
    assert sub["ended_by"] in ("count", "end_marker")
    check_samples_file(record["_dir"], sub, "one_way")
    assert pub["counts"]["write_errors"] == 0
    # matched_readers is real (the publisher waited for it); matched_writers is not.
    assert pub["timing"]["discovery_ns"] is not None
    assert sub["timing"]["discovery_ns"] is None


def test_a_run_with_its_own_server_uses_it(redis, results, tmp_path):
    with own_server(tmp_path / "server") as (address, server):
        assert redis_servers_at(address) == [server.pid]
        _, s = measured(
            results,
            "pubsub",
            "--size",
            "256",
            "--count",
            "300",
            "--rate",
            "5000",
            "--check-pattern",
            own_broker=address,
        )
    assert s["sub"]["config"]["options"] == {"broker": address}
    check_counts(s["sub"], 300)


# --- what goes over the wire -------------------------------------------------------------


def tcp_connections() -> dict[str, tuple[str, str, str]]:
    """inode -> (local "a.b.c.d:port", remote "a.b.c.d:port", state) of IPv4 TCP sockets."""

    def address(text: str) -> str:
        ip, port = text.split(":")
        return ".".join(str(int(ip[i : i + 2], 16)) for i in (6, 4, 2, 0)) + f":{int(port, 16)}"

    table = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        table[fields[9]] = (address(fields[1]), address(fields[2]), fields[3])
    return table


def sockets_of(pid: int) -> list[tuple[str, str, str]]:
    table = tcp_connections()
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in table:
            found.append(table[target[8:-1]])
    return found


def test_each_node_holds_a_publishing_and_a_subscribing_connection_to_the_server(redis, results):
    outcome = {}
    runner = threading.Thread(
        target=lambda: outcome.update(
            proc=run_cli(
                ["ping", "--driver", DRIVER, "--duration", "3", "--warmup", "10", "--size", "256"],
                results,
            )
        )
    )
    runner.start()
    seen = {}
    end = time.monotonic() + 30
    while runner.is_alive() and time.monotonic() < end and len(seen) < 2:
        for pid in node_processes_with(str(results)):
            try:
                sockets = sockets_of(pid)
            except OSError:
                continue
            if len([s for s in sockets if s[2] == "01"]) >= 2:  # 01 = ESTABLISHED
                time.sleep(0.5)  # measuring by now: the open() probe is long closed
                seen[pid] = sockets_of(pid)
        time.sleep(0.05)
    runner.join()
    assert outcome["proc"].returncode == 0, outcome["proc"].stderr
    [service] = only_run(results)["services"]
    assert len(seen) == 2, "did not catch both nodes while they ran"
    for pid, sockets in seen.items():
        established = [s for s in sockets if s[2] == "01"]
        assert len(established) == 2, f"node {pid}: {sockets}"
        assert all(remote == service["address"] for _, remote, _ in established), sockets
        assert all(local.startswith("127.0.0.1:") for local, _, _ in established), sockets


# --- refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--durability", "persistent"],  # with the default reliability, best_effort
            "redis: durability persistent needs reliability reliable: ",
        ),
        (
            ["--durability", "transient_local"],
            "redis: durability 'transient_local' is not supported; this driver supports volatile",
        ),
        (["--history", "keep_last:4"], "redis: history 'keep_last' is not supported"),
        (["--history", "keep_all"], "redis: history 'keep_all' is not supported"),
        (
            ["--transport", "udp"],
            "redis: transport 'udp' is not supported; this driver supports tcp",
        ),
        (["--loan"], "redis: --loan is not supported"),
        (
            ["--option", "channel=x"],
            "redis: option 'channel' is not known; this driver takes broker",
        ),
        (["--option", "broker=localhost"], "redis: option broker='localhost' is not HOST:PORT"),
        (["--size", str(4 * MIB + 1)], "4194304"),
    ],
)
def test_refused_settings_say_why(redis, results, args, message):
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert_servers_stopped(results)


def test_the_node_without_a_broker_option_is_refused(redis, node, tmp_path):
    proc = subprocess.run(
        [
            str(node),
            "--driver",
            str(redis),
            "--role",
            "ping,pong",
            "--out",
            str(tmp_path),
            "--run-id",
            "nobroker",
            "--count",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert (
        "redis: option broker=HOST:PORT is missing; psbench sets it when it starts "
        "redis-server, or give the address of your own redis-server"
    ) in proc.stderr


def test_no_server_at_the_given_address_fails_the_run_saying_so(redis, results):
    port = free_port()  # nothing listens there
    proc = run_cli(
        ["ping", "--driver", DRIVER, "--count", "10", "--option", f"broker=127.0.0.1:{port}"],
        results,
    )
    assert proc.returncode == 1, proc.stderr
    assert f"cannot connect the probe to redis-server at 127.0.0.1:{port}" in proc.stderr
    record = only_run(results)
    assert record["status"] == "failed" and record["services"] == []


@pytest.mark.parametrize("notify", ["wait", "poll"])
def test_a_server_killed_mid_run_fails_the_run_instead_of_hanging(redis, results, tmp_path, notify):
    with own_server(tmp_path / "server") as (address, server):
        with cli_in_background(
            [
                "ping",
                "--driver",
                DRIVER,
                "--duration",
                "60",
                "--notify",
                notify,
                "--option",
                f"broker={address}",
            ],
            results,
        ) as cli:
            end = time.monotonic() + 60
            while not list(results.rglob("pong.stderr")) or not node_processes_with(str(results)):
                assert time.monotonic() < end and cli.poll() is None, "the run did not start"
                time.sleep(0.05)
            time.sleep(1.5)  # measuring by now
            server.send_signal(signal.SIGKILL)
            server.wait()
            out, err = cli.communicate(timeout=50)  # far less than the 60 s duration
    assert cli.returncode == 1, out + err
    assert "closed the subscriber connection of psbench:" in err, err
    record = only_run(results)
    assert record["status"] == "failed"
    ping = load(record["_dir"], "ping")
    assert ping["ended_by"] != "duration" and ping["error"], ping
