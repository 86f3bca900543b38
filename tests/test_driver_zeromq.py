"""The zeromq driver in real runs through `./psbench ping|pubsub`: every transport (tcp,
ipc, inproc) and notify mode, small and large messages, loans, keep_last:1, the
refusals, a slow subscriber's drops at the high-water mark showing up in the counts,
and inproc between processes failing with its reason. No broker: nothing to start."""

import json
import re
from pathlib import Path

import pytest

from conftest import live_processes, only_run, run_cli
from driver_checks import check_accounted, nodes_seen_running, ping_case, pubsub_case

DRIVER = "zeromq"
MIB = 1 << 20


@pytest.fixture(scope="module")
def zeromq(driver_libs):
    if DRIVER not in driver_libs:
        pytest.fail(f"the {DRIVER} driver is not built: run `make build`")
    return driver_libs[DRIVER]


@pytest.fixture(autouse=True)
def no_ipc_directory_left(results):
    """Every ipc run removes its socket files and their directory, whatever the test."""
    yield
    if results.exists():
        for run_json in results.rglob("run.json"):
            run_id = json.loads(run_json.read_text())["run_id"]
            left = Path(f"/tmp/psbench-zeromq-{run_id}")
            assert not left.exists(), f"{left} left behind: {list(left.iterdir())}"


def load(run_dir: Path, role: str) -> dict:
    return json.loads((run_dir / f"{role}.json").read_text())


def measured(results: Path, kind: str, *args: str, placement: str = "inter"):
    """One run through the CLI that must succeed; returns the run record, its summaries
    and the CLI's stdout."""
    proc = run_cli([kind, "--driver", DRIVER, "--placement", placement, *args], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    assert len(record["processes"]) == (2 if placement == "inter" else 1)
    assert record["driver"]["name"] == DRIVER
    assert re.fullmatch(r"4\.\d+\.\d+", record["driver"]["version"]), record["driver"]
    assert record["services"] == []  # no broker, no daemon
    roles = ("ping", "pong") if kind == "ping" else ("pub", "sub")
    return record, {role: load(record["_dir"], role) for role in roles}, proc.stdout


def check_counts(summary: dict, sent: int, lossless: bool):
    check_accounted(summary, sent, lossless)
    assert summary["counts"]["reordered"] == 0, summary["counts"]


def placed(transport: str) -> str:
    """inproc needs both roles in one process."""
    return "intra" if transport == "inproc" else "inter"


def measure_placed(transport: str):
    """measured() for ping_case and pubsub_case on a transport: the run and its
    summaries; the measuring role's counts also without a reordered message."""

    def measure(results: Path, kind: str, *args: str):
        record, s, _ = measured(results, kind, "--transport", transport, *args,
                                placement=placed(transport))  # fmt: skip
        measuring = s["ping" if kind == "ping" else "sub"]
        assert measuring["counts"]["reordered"] == 0, measuring["counts"]
        return record, s

    return measure


# Closed-loop ping has one message in flight, so no queue reaches its high-water mark:
# every echo comes back. inproc needs both roles in one process.
# Each notify mode at 32 B, 1 KiB and up to 1 MiB on the default transport is the
# conformance suite's (DeliversInEveryNotifyMode, DeliversSamplesIntactAndInOrder, run by
# ctest); these cases are what is this driver's own: larger messages, other transports.
PING_CASES = {
    "tcp-wait-4MiB": ("tcp", "wait", 4 * MIB, 30),
    "ipc-wait-64": ("ipc", "wait", 64, 2000),
    "ipc-poll-1MiB": ("ipc", "poll", MIB, 50),
    "ipc-listener-4MiB": ("ipc", "listener", 4 * MIB, 30),
    "inproc-wait-64": ("inproc", "wait", 64, 2000),
    "inproc-poll-4MiB": ("inproc", "poll", 4 * MIB, 30),
    "inproc-listener-16KiB": ("inproc", "listener", 16384, 500),
}


@pytest.mark.parametrize("case", PING_CASES, ids=list(PING_CASES))
def test_ping(zeromq, results, case):
    transport, notify, size, count = PING_CASES[case]
    _, s = ping_case(measure_placed(transport), results, "--notify", notify, "--check-pattern",
                     size=size, count=count, warmup=20)  # fmt: skip
    ping = s["ping"]
    assert ping["config"]["transport"] == transport and ping["config"]["notify"] == notify
    assert ping["placement"] == f"{placed(transport)}-process"


def test_transport_tcp_is_the_default(zeromq, results):
    _, s, _ = measured(results, "ping", "--count", "200", "--warmup", "10")
    assert s["ping"]["config"]["transport"] == "tcp"
    check_counts(s["ping"], 200, lossless=True)


@pytest.mark.parametrize("transport", ["tcp", "ipc"])
def test_loaned_ping(zeromq, results, transport):
    _, s, _ = measured(
        results, "ping", "--transport", transport, "--loan", "--size", "65536", "--count", "300",
        "--warmup", "10", "--check-pattern",
    )  # fmt: skip
    assert s["ping"]["config"]["loan"] is True
    check_counts(s["ping"], 300, lossless=True)


# pub/sub at a moderate rate: the publisher starts only once the XPUB holds the
# subscriber's subscription, so no measured sample falls to the slow-joiner effect
# (no warm-up to hide it behind).
PUBSUB_CASES = {
    "tcp-wait-64": ("tcp", "wait", 64, 2000, 2000),
    "tcp-listener-64": ("tcp", "listener", 64, 2000, 2000),
    "tcp-poll-256KiB": ("tcp", "poll", 256 * 1024, 300, 200),
    "ipc-wait-256KiB": ("ipc", "wait", 256 * 1024, 300, 200),
    "ipc-poll-64": ("ipc", "poll", 64, 2000, 2000),
    "ipc-listener-64": ("ipc", "listener", 64, 2000, 2000),
    "inproc-wait-64": ("inproc", "wait", 64, 2000, 2000),
    "inproc-listener-1MiB": ("inproc", "listener", MIB, 100, 100),
}


@pytest.mark.parametrize("case", PUBSUB_CASES, ids=list(PUBSUB_CASES))
def test_pubsub_receives_every_sample(zeromq, results, case):
    transport, notify, size, count, rate = PUBSUB_CASES[case]
    _, s = pubsub_case(measure_placed(transport), results, "--notify", notify, "--size",
                       str(size), "--rate", str(rate), "--warmup", "0", "--check-pattern",
                       count=count)  # fmt: skip
    sub = s["sub"]
    assert sub["config"]["warmup"] == 0
    assert s["pub"]["counts"]["sent"] == count and s["pub"]["counts"]["write_errors"] == 0
    # the publisher waited for its subscriber (matched_readers), the subscriber for the
    # connection to its publisher (matched_writers): both timed
    assert sub["timing"]["discovery_ns"] > 0 and s["pub"]["timing"]["discovery_ns"] > 0


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc"])
def test_slow_subscriber_loss_is_counted(zeromq, results, transport):
    """Back to back, 256 KiB messages, queues of 2 messages a side: whatever the
    publisher drops at the high-water mark (it never says so) is counted lost by the
    subscriber. How much is lost is the machine's business; the accounting is not."""
    count = 1000
    placement = "intra" if transport == "inproc" else "inter"
    _, s, stdout = measured(
        results, "pubsub", "--transport", transport, "--rate", "0", "--size", "256K", "--count",
        str(count), "--option", "sndhwm=2", "--option", "rcvhwm=2", "--idle-timeout", "2",
        placement=placement,
    )  # fmt: skip
    sub, pub = s["sub"], s["pub"]
    assert pub["counts"]["sent"] == count and pub["counts"]["write_errors"] == 0
    assert sub["config"]["options"] == {"sndhwm": "2", "rcvhwm": "2"}
    counts = sub["counts"]
    assert counts["sent"] == count
    assert counts["received"] == counts["samples"]
    assert counts["received"] + counts["lost"] == count, counts
    # the CLI shows the sub's loss as recorded
    line = next(line for line in stdout.splitlines() if "sub counts:" in line)
    assert f"received {counts['received']}," in line and f"lost {counts['lost']}," in line


def test_keep_last_1_conflates(zeromq, results):
    _, s, _ = measured(
        results, "pubsub", "--history", "keep_last:1", "--option", "sndhwm=10", "--size", "1024",
        "--count", "500", "--rate", "500",
    )  # fmt: skip
    sub = s["sub"]
    assert (sub["config"]["history"], sub["config"]["history_depth"]) == ("keep_last", 1)
    # a sample replaced by a newer one before the subscriber took it is lost, not late
    check_counts(sub, 500, lossless=False)
    assert sub["counts"]["samples"] > 0


@pytest.mark.parametrize("kind", ["ping", "pubsub"])
def test_inproc_between_processes_is_refused_with_the_reason(zeromq, results, kind):
    # Refused before anything is created (it used to wait for the match timeout).
    proc = run_cli(
        [
            kind,
            "--driver",
            DRIVER,
            "--transport",
            "inproc",
            "--count",
            "100",
            "--match-timeout",
            "30",
        ],
        results,
        timeout=20,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    record = only_run(results)
    assert record["status"] == "refused"
    assert "transport 'inproc' only connects sockets of one process" in proc.stderr
    assert "--placement intra" in record["message"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--reliability", "reliable"], "zeromq: reliability 'reliable' is not supported"),
        (
            ["--durability", "transient_local"],
            "zeromq: durability 'transient_local' is not supported",
        ),
        (["--history", "keep_all"], "zeromq: history 'keep_all' is not supported"),
        (
            ["--history", "keep_last:4"],
            "zeromq: history keep_last:4 is not supported: ZeroMQ's only "
            "history setting is ZMQ_CONFLATE",
        ),
        (
            ["--history", "keep_last:1", "--option", "rcvhwm=5"],
            "option rcvhwm does not apply with history keep_last:1",
        ),
        (["--option", "sndhwm=many"], "zeromq: option sndhwm='many'"),
        (
            ["--transport", "ipc", "--option", "port_base=30000"],
            "option port_base applies to transport tcp only",
        ),
        (["--option", "port_base=99"], "zeromq: option port_base='99'"),
        (["--option", "broker=127.0.0.1:1883"], "zeromq: option 'broker' is not known"),
        (
            ["--transport", "udp"],
            "zeromq: transport 'udp' is not supported; this driver supports tcp|ipc|inproc",
        ),
    ],
)
def test_refused_settings_say_why(zeromq, results, args, message):
    proc = run_cli(["ping", "--driver", DRIVER, "--count", "10", *args], results)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr


# --- the transport a run really uses -------------------------------------------------


def nodes_writing_to(results: Path) -> list[int]:
    return live_processes("psbench-node", str(results))


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            match = re.fullmatch(r"socket:\[(\d+)\]", fd.readlink().as_posix())
        except OSError:
            continue
        if match:
            inodes.add(match.group(1))
    return inodes


def tcp_sockets() -> dict[str, tuple[str, int, str]]:
    """inode -> (local address, local port, state) of every IPv4 TCP socket."""
    table = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        address, port = fields[1].split(":")
        ip = ".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0))
        table[fields[9]] = (ip, int(port, 16), fields[3])
    return table


def unix_socket_paths() -> dict[str, str]:
    table = {}
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8:
            table[fields[6]] = fields[7]
    return table


def inspect(pid: int) -> tuple[set, set]:
    """The TCP listening ports and the Unix socket paths of a process."""
    inodes = socket_inodes(pid)
    tcp = {
        port
        for inode, (ip, port, state) in tcp_sockets().items()
        if inode in inodes and state == "0A" and ip == "127.0.0.1"
    }  # 0A = LISTEN
    paths = {path for inode, path in unix_socket_paths().items() if inode in inodes}
    return tcp, paths


@pytest.mark.parametrize("transport", ["tcp", "ipc"])
def test_transport_is_the_one_asked_for(zeromq, results, transport):
    seen = nodes_seen_running(
        ["ping", "--driver", DRIVER, "--transport", transport, "--duration", "2",
         "--warmup", "10"],
        results,
        inspect,
        ready=lambda seen: bool(seen[0] or seen[1]),
    )  # fmt: skip
    run_id = only_run(results)["run_id"]
    for pid, (tcp, paths) in seen.items():
        if transport == "tcp":
            # one listening port per writer, in the default range, and no ipc socket
            assert len(tcp) == 1 and all(20000 <= p < 20000 + 12288 for p in tcp), tcp
            assert not any("psbench-zeromq" in p for p in paths), paths
        else:
            assert tcp == set(), f"node {pid} listens on TCP {tcp}"
            assert any(
                p.startswith(f"/tmp/psbench-zeromq-{run_id}/psb_{run_id}_") for p in paths
            ), paths
    if transport == "tcp":
        assert len({port for tcp, _ in seen.values() for port in tcp}) == 2
