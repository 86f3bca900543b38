"""Real machines over SSH, end to end against real sshds: psbench's own emulated hosts
stand in for the machines, each running /usr/sbin/sshd inside its namespace, listening
on its 198.18.0.x address only, root login by a key made here. psbench reaches them with
the system's ssh through a config file made here (-F), whose ProxyCommand enters the
host's namespace (the machine's own namespace cannot route to 198.18.0.x). Checked: a
run over SSH gets every sample and its files back, records the network, deploys once and
leaves nothing behind (no remote run directory, no node); a SIGKILLed psbench leaves no
node on the "remote" within 5 s; `hosts check` on reachable and unreachable hosts. The
refusals (mixing real and emulated hosts, shaping a real link) need no root. Traffic goes
only to 198.18.0.x inside the namespaces made here; every wait is bounded."""

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest

from conftest import LAUNCHER, REPO, cli_env, live_processes
from psbench.base import paths
from psbench.hosts import netns, ssh
from psbench.hosts.emulated import EmulatedNetwork
from psbench.hosts.links import LinkShape

HOSTS = ("a", "b")
# One worker runs them all: their "machines" share this one's ~/.cache/psbench, which
# the tests empty to see a first run copy.
pytestmark = pytest.mark.xdist_group("ssh_hosts")

# make test runs one driver over ssh, the clocks' offset and the refusals; make test-long
# (CI too) the second driver, brokers, stopping a remote node, graphs across machines
# and the slower variations below (LONG), for make test's 8-minute budget.
LONG = pytest.mark.long
REMOTE_RUNS = Path.home() / ".cache" / "psbench" / "runs"  # both "machines" are this one
# Host b's CLOCK_MONOTONIC runs this far ahead of a's (its sshd, and so everything it
# starts, is in a Linux time namespace): one-way latency from a to b holds it until
# psbench takes the clocks' offset out.
SKEW_S = 7


def _listening(namespace: str, address: str, port: int) -> bool:
    def attempt():
        with socket.socket() as sock:
            sock.settimeout(0.5)
            return sock.connect_ex((address, port)) == 0

    return netns.call_inside(namespace, attempt)


@pytest.fixture(scope="module")
def machines(tmp_path_factory):
    """Two emulated hosts with an sshd each; yields the ssh config file. Every sshd is
    killed and the namespaces removed, whatever happens."""
    # Every test on these machines is skipped here, for want of either.
    if os.geteuid() != 0:
        pytest.skip("emulated hosts and sshd need root (CI is)")
    if not Path("/usr/sbin/sshd").exists() or shutil.which("socat") is None:
        pytest.skip("needs openssh-server and socat (scripts/debian-packages.txt; make setup)")
    tmp = tmp_path_factory.mktemp("ssh")
    keygen = ["ssh-keygen", "-q", "-t", "ed25519", "-N", ""]
    subprocess.run([*keygen, "-f", str(tmp / "id"), "-C", "psbench-test"], check=True, timeout=30)
    subprocess.run([*keygen, "-f", str(tmp / "hostkey")], check=True, timeout=30)
    (tmp / "authorized_keys").write_text((tmp / "id.pub").read_text())
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation
    daemons = []
    with EmulatedNetwork({h: LinkShape() for h in HOSTS}) as network:
        try:
            config = []
            for name, host in network.hosts.items():
                sshd_config = tmp / f"sshd-{name}.conf"
                sshd_config.write_text(
                    f"ListenAddress {host.address}:22\n"
                    f"HostKey {tmp / 'hostkey'}\n"
                    "PidFile none\nUsePAM no\nStrictModes no\n"
                    "PermitRootLogin prohibit-password\nPubkeyAuthentication yes\n"
                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                    f"AuthorizedKeysFile {tmp / 'authorized_keys'}\n"
                    "LogLevel ERROR\n"
                )
                log = open(tmp / f"sshd-{name}.log", "wb")
                sshd = ["/usr/sbin/sshd", "-D", "-e", "-f", str(sshd_config)]
                if name == "b":  # another machine, another clock: the kernel moves b's
                    sshd = ["unshare", "--time", "--fork", "--monotonic", str(SKEW_S), *sshd]
                daemons.append(
                    subprocess.Popen(
                        network.argv(name, sshd),
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=log,
                    )
                )
                proxy = f"ProxyCommand ip netns exec {host.namespace} socat STDIO TCP:%h:%p"
                config += [f"Host {name}", f"  HostName {host.address}", f"  {proxy}"]
                if name == "a":  # a port nothing listens at: unreachable
                    config += ["Host down", f"  HostName {host.address}", "  Port 2999",
                               f"  {proxy}"]  # fmt: skip
            config += [
                "Host *",
                "  User root",
                f"  IdentityFile {tmp / 'id'}",
                "  IdentitiesOnly yes",
                f"  UserKnownHostsFile {tmp / 'known_hosts'}",
                "  GlobalKnownHostsFile /dev/null",
                "  StrictHostKeyChecking accept-new",
                "  ControlMaster no",
            ]
            (tmp / "ssh_config").write_text("\n".join(config) + "\n")
            for name, host in network.hosts.items():
                end = time.monotonic() + 10
                while not _listening(host.namespace, host.address, 22):
                    assert time.monotonic() < end, (tmp / f"sshd-{name}.log").read_text()
                    assert all(d.poll() is None for d in daemons), "an sshd ended"
                    time.sleep(0.1)
            yield tmp / "ssh_config"
        finally:
            for daemon in daemons:
                daemon.kill()
                daemon.wait(timeout=10)


def psbench(args: list[str], tmp: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LAUNCHER), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=cli_env(tmp / "results"),
    )


def only_record(results: Path) -> dict:
    found = sorted(results.rglob("run.json"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text())


def nodes_of(run_id: str) -> list[int]:
    """psbench-node processes of a run on this machine (where both "remotes" are)."""
    return live_processes("psbench-node", run_id)


# udp from a publisher on a to a subscriber on b, 200 messages.
PUBSUB_A_TO_B = [
    "pubsub", "--driver", "udp", "--transport", "unicast", "--host", "a:ssh=a",
    "--host", "b:ssh=b", "--place", "pub=a", "--place", "sub=b", "--count", "200",
]  # fmt: skip


def ping_args(driver: str, transport: str, config: Path) -> list[str]:
    return [
        "ping", "--driver", driver, "--transport", transport,
        "--host", "a:ssh=a", "--host", "b:ssh=b", "--place", "ping=a", "--place", "pong=b",
        "--count", "200", "--ssh-config", str(config),
    ]  # fmt: skip


def cache_of(driver: str) -> Path:
    files = [paths.node_path(), paths.driver_libraries()[driver]]
    return Path.home() / ssh.CACHE / ssh.content_key(files)


@contextmanager
def ran_over_ssh(args: list[str], machines: Path, tmp_path: Path):
    """psbench with the test's ssh config; what it copied to the "machines" (this
    machine's cache, shared by both) for the driver args name is removed afterwards,
    whatever the test found."""
    try:
        yield psbench([*args, "--ssh-config", str(machines)], tmp_path)
    finally:
        shutil.rmtree(cache_of(args[args.index("--driver") + 1]), ignore_errors=True)


@contextmanager
def ran_ok_over_ssh(args: list[str], machines: Path, tmp_path: Path):
    """ran_over_ssh, which must have succeeded: (completed process, its one run's record)."""
    with ran_over_ssh(args, machines, tmp_path) as done:
        assert done.returncode == 0, done.stdout + done.stderr
        yield done, only_record(tmp_path / "results")


@pytest.mark.parametrize(
    ("driver", "transport"), [("udp", "unicast"), pytest.param("zeromq", "tcp", marks=LONG)]
)
def test_a_run_over_ssh_gets_every_sample_and_leaves_nothing(machines, tmp_path, driver, transport):
    cache = cache_of(driver)
    shutil.rmtree(cache, ignore_errors=True)  # the first run copies
    try:
        first = psbench(ping_args(driver, transport, machines), tmp_path / "1")
        assert first.returncode == 0, first.stdout + first.stderr
        record = only_record(tmp_path / "1" / "results")
        assert record["status"] == "ok"
        network = record["network"]
        assert network["kind"] == "ssh"
        for name, address in (("a", "198.18.0.1"), ("b", "198.18.0.2")):
            host = network["hosts"][name]
            assert host["target"] == name and host["address"] == address
            assert host["arch"] == ssh.local_arch() and host["os"]
            assert host["cache_dir"] == str(cache)
        # Both "machines" share this one's home: a copies, b finds it there.
        assert [network["hosts"][h]["deployed"] for h in HOSTS] == [True, False]
        assert (cache / "psbench-node").is_file()
        run_dir = Path(next((tmp_path / "1" / "results").rglob("run.json"))).parent
        for name in ("ping", "pong"):
            summary = json.loads((run_dir / f"{name}.json").read_text())
            assert summary["counts"]["sent"] == 200, summary["counts"]
        assert json.loads((run_dir / "ping.json").read_text())["counts"]["samples"] == 200
        assert record["stats"]["ping"]["rtt"]["n"] == 200
        assert (run_dir / json.loads((run_dir / "ping.json").read_text())["samples_file"]).is_file()
        # Each node ran over ssh, told its host's address and its peer's.
        argv = {p["name"]: p["argv"] for p in record["processes"]}
        assert argv["ping"][0] == "ssh" and "--" in argv["ping"]
        assert "--address 198.18.0.1 --peer 198.18.0.2" in argv["ping"][-1]
        assert not (REMOTE_RUNS / record["run_id"]).exists()
        assert nodes_of(record["run_id"]) == []
        stamp = cache.stat().st_mtime_ns
        second = psbench(ping_args(driver, transport, machines), tmp_path / "2")
        assert second.returncode == 0, second.stdout + second.stderr
        again = only_record(tmp_path / "2" / "results")
        assert [again["network"]["hosts"][h]["deployed"] for h in HOSTS] == [False, False]
        assert cache.stat().st_mtime_ns == stamp
        assert not (REMOTE_RUNS / again["run_id"]).exists()
    finally:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.mark.parametrize(
    "shared", [False, pytest.param(True, marks=LONG)], ids=["own-connections", "controlmaster"]
)
def test_sigkill_of_psbench_mid_run_leaves_no_node_on_the_remote(machines, tmp_path, shared):
    with (
        control_master(machines, tmp_path) if shared else nullcontext((machines, None)) as (
            config,
            _,
        )
    ):
        sigkill_mid_run(config, tmp_path)


def long_run_in_background(driver: str, place: str, config: Path, tmp_path: Path):
    """`psbench run` of a 60 s ping between machines a and b, in its own session, its
    results in tmp_path/results: for killing it mid-run."""
    experiment = tmp_path / "long.yaml"
    experiment.write_text(
        "name: long\n"
        f"defaults: {{kind: ping, {driver}, duration: 60, rate: 100,\n"
        f"           hosts: {{a: {{ssh: a}}, b: {{ssh: b}}}}, place: {{{place}}}}}\n"
    )
    return subprocess.Popen(
        [str(LAUNCHER), "run", str(experiment), "-o", str(tmp_path / "results"),
         "--ssh-config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
        env=cli_env(tmp_path),
        start_new_session=True,
    )  # fmt: skip


def sigkill_mid_run(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = long_run_in_background(
        "driver: udp, transport: unicast", "ping: a, pong: b", config, tmp_path
    )
    run_id, nodes = None, []
    try:
        end = time.monotonic() + 60
        while len(nodes) < 2:
            assert proc.poll() is None and time.monotonic() < end, "the run did not start"
            for path in out.rglob("run.json") if out.exists() else []:
                record = json.loads(path.read_text())
                if record.get("status") == "running":
                    run_id = record["run_id"]
            nodes = nodes_of(run_id) if run_id else []
            time.sleep(0.1)
        time.sleep(1)  # measuring
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(cache_of("udp"), ignore_errors=True)  # deployed by this run
    end = time.monotonic() + 5
    while nodes_of(run_id) and time.monotonic() < end:
        time.sleep(0.1)
    assert nodes_of(run_id) == []
    # The guards remove the directories of the nodes they killed; a node that ended by
    # itself first (its peer killed, the run over) may leave its own (docs/network.md).
    shutil.rmtree(REMOTE_RUNS / run_id, ignore_errors=True)


@LONG
def test_a_graph_across_machines_with_different_clocks_is_corrected(machines, tmp_path):
    # A source on a, a module on b (whose clock runs 7 s ahead) reading it on each message.
    graph = tmp_path / "g.yaml"
    graph.write_text(
        "name: two\n"
        "modules:\n"
        "  sensor: {period: 5ms, publishes: [raw]}\n"
        "  sink: {on: any, subscribes: [raw]}\n"
        "topics: {raw: {size: 128}}\n"
        "paths: {across: {from: sensor, to: sink}}\n"
        "mappings: {apart: {hosts: {a: [sensor], b: [sink]}}}\n"
    )
    with ran_ok_over_ssh(
        ["graph", "run", "--graph", str(graph), "--driver", "udp", "--transport", "unicast",
         "--host", "a:ssh=a", "--host", "b:ssh=b", "--count", "100"],
        machines,
        tmp_path,
    ) as (done, record):  # fmt: skip
        path = record["graph"]["paths"]["across"]
        assert (path["published"], path["reached"]) == (100, 100)
        clock = path["clock"]
        assert abs(clock["offset_removed_ns"] - SKEW_S * 10**9) <= clock["uncertainty_ns"]
        # Corrected: no reaction holds the 7 s, none is below minus the uncertainty.
        assert -clock["uncertainty_ns"] <= path["reaction"]["min"]
        assert path["reaction"]["max"] < 10**9
        edge = record["graph"]["edges"][0]
        assert (edge["writer"], edge["reader"]) == ("sensor", "sink")
        assert -clock["uncertainty_ns"] <= edge["latency"]["min"] and edge["latency"]["max"] < 10**9
        assert "clocks:    across: the offset between its machines' clocks" in done.stdout


@LONG
def test_a_node_psbench_stops_on_a_real_machine_still_brings_its_files_back(machines, tmp_path):
    # The publisher aborts at its 50th write (49 sent); the subscriber, whose idle
    # timeout is long, would wait on: psbench stops it, and what it wrote on its way out
    # comes back.
    with ran_over_ssh(
        [*PUBSUB_A_TO_B, "--warmup", "0", "--rate", "500", "--idle-timeout", "60",
         "--option", "fault=crash", "--option", "fault_after=50"],
        machines,
        tmp_path,
    ) as done:  # fmt: skip
        assert done.returncode == 1, done.stdout + done.stderr
        record = only_record(tmp_path / "results")
        assert record["status"] == "failed", record["message"]
        run_dir = Path(next((tmp_path / "results").rglob("run.json"))).parent
        sub = json.loads((run_dir / "sub.json").read_text())
        assert sub["ended_by"] == "interrupted" and sub["counts"]["received"] == 49
        assert (run_dir / sub["samples_file"]).is_file()
        assert record["stats"]["sub"]["one_way"]["n"] == 49
        assert nodes_of(record["run_id"]) == [] and not (REMOTE_RUNS / record["run_id"]).exists()


def test_hosts_check_says_which_hosts_can_run_nodes(machines, tmp_path):
    good = psbench(
        ["hosts", "check", "--host", "a:ssh=a", "--host", "b:ssh=b", "--driver", "zeromq",
         "--ssh-config", str(machines)],
        tmp_path,
        timeout=60,
    )  # fmt: skip
    assert good.returncode == 0, good.stdout + good.stderr
    assert "a (ssh a): usable" in good.stdout and "b (ssh b): usable" in good.stdout
    assert f"architecture  {ssh.local_arch()}" in good.stdout
    assert "address       198.18.0.2 (of the ssh connection)" in good.stdout
    assert "  psbench-node  libraries 3 found" in good.stdout
    assert "  zeromq        libraries 4 found; packages libzmq3-dev" in good.stdout
    bad = psbench(
        ["hosts", "check", "--host", "a:ssh=a", "--host", "c:ssh=down",
         "--ssh-config", str(machines)],
        tmp_path,
        timeout=60,
    )  # fmt: skip
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "a (ssh a): usable" in bad.stdout
    assert "c (ssh down): UNUSABLE: unreachable: ssh down:" in bad.stdout
    assert "1 of 2 hosts cannot run psbench's node" in bad.stderr


@LONG
def test_hosts_check_of_an_experiment_checks_its_real_machines_and_drivers(machines, tmp_path):
    experiment = tmp_path / "lab.yaml"
    experiment.write_text(
        "name: lab\n"
        "defaults: {kind: ping, count: 10, transport: tcp, hosts: {a: {ssh: a}, b: {ssh: down}},\n"
        "           place: {ping: a, pong: b}}\n"
        "matrix: {driver: [zeromq]}\n"
    )
    done = psbench(
        ["hosts", "check", str(experiment), "--ssh-config", str(machines)], tmp_path, timeout=60
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "a (ssh a): usable" in done.stdout
    assert "  zeromq        libraries 4 found; packages libzmq3-dev" in done.stdout
    assert "  udp " not in done.stdout
    assert "b (ssh down): UNUSABLE: unreachable" in done.stdout


@LONG
def test_hosts_check_names_a_library_a_driver_needs_and_the_host_lacks(
    machines, monkeypatch, capsys
):
    from psbench.cli.main import main

    real = ssh.needed_libraries
    monkeypatch.setattr(
        ssh,
        "needed_libraries",
        lambda path: real(path) + (["libpsbench-absent.so.9"] if "zeromq" in path.name else []),
    )
    args = ["hosts", "check", "--host", "a:ssh=a", "--ssh-config", str(machines)]
    assert main([*args, "--driver", "zeromq"]) == 1
    out = capsys.readouterr().out
    assert "a (ssh a): UNUSABLE: zeromq cannot run there: libpsbench-absent.so.9 missing" in out
    assert "  zeromq        libraries 4 found, MISSING libpsbench-absent.so.9" in out
    # Every built driver (none chosen): said, but the host stays usable.
    assert main(args) == 0
    assert "MISSING libpsbench-absent.so.9" in capsys.readouterr().out


def test_a_host_of_another_architecture_is_refused(machines, monkeypatch, capsys):
    from psbench.cli.main import main

    monkeypatch.setattr(ssh, "local_arch", lambda: "riscv64")
    assert main(["hosts", "check", "--host", "a:ssh=a", "--ssh-config", str(machines)]) == 1
    assert "UNUSABLE: architecture" in capsys.readouterr().out
    code = main(["ping", "--driver", "udp", "--transport", "unicast", "--host", "a:ssh=a",
                 "--place", "ping=a", "--place", "pong=a", "--count", "10",
                 "--ssh-config", str(machines)])  # fmt: skip
    assert code == 2
    assert "this machine riscv64" in capsys.readouterr().err


def test_a_cpu_is_checked_against_the_real_machine_not_this_one(machines, tmp_path):
    # CPU 63 is none of this machine's either: the real machine's count decides, after
    # ssh reached it, before anything is copied or run.
    done = psbench(
        ["ping", "--driver", "udp", "--transport", "unicast", "--host", "a:ssh=a",
         "--place", "ping=a", "--place", "pong=a", "--cpu", "pong=63", "--count", "10",
         "--ssh-config", str(machines)],
        tmp_path,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"cpus: pong is pinned to CPU 63, but host a (a) has CPUs 0-{os.cpu_count() - 1}" in (
        done.stderr
    )
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").rglob("run.json"))


@pytest.mark.parametrize(
    ("hosts", "said"),
    [
        (["a:ssh=robot1", "b"], "hosts are all real machines (ssh:) or all emulated"),
        (["a:ssh=robot1,delay=1ms"], "a real machine's link is not shaped"),
        (["a:address=10.0.0.7"], "only a real machine has an address of its own"),
        (["a:ssh=-oProxyCommand=x"], "give an ssh destination"),
    ],
)
def test_what_cannot_run_on_real_machines_is_refused_before_anything_runs(tmp_path, hosts, said):
    args = ["ping", "--driver", "udp", "--place", "ping=a", "--place", "pong=a"]
    for host in hosts:
        args += ["--host", host]
    done = psbench(args, tmp_path, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr


def brokers_of(token: str) -> list[int]:
    """mosquitto processes whose command line names token (their config's folder)."""
    return live_processes("mosquitto", token)


@LONG
def test_a_broker_runs_on_its_real_machine_and_goes_with_the_run(machines, tmp_path):
    if "mqtt" not in paths.driver_libraries():
        pytest.skip("the mqtt driver is not built")
    with ran_ok_over_ssh(
        ["ping", "--driver", "mqtt", "--host", "a:ssh=a", "--host", "b:ssh=b",
         "--place", "ping=a", "--place", "pong=a", "--place", "broker=b", "--count", "200"],
        machines,
        tmp_path,
    ) as (done, record):  # fmt: skip
        assert record["status"] == "ok" and record["stats"]["ping"]["rtt"]["n"] == 200
        (service,) = record["services"]
        assert service["name"] == "mosquitto" and service["host"] == "b"
        # It listened at b's address, and the nodes on a were told so.
        assert service["address"].startswith("198.18.0.2:")
        assert f"broker={service['address']}" in " ".join(record["processes"][0]["argv"])
        assert service["version"].startswith("mosquitto version")
        # Its configuration was made for b's folder there, which is gone with it.
        folder = Path(service["argv"][-1]).parent
        assert folder.is_relative_to(REMOTE_RUNS) and not folder.exists()
        assert brokers_of(str(folder)) == []


@LONG
def test_a_broker_the_machine_lacks_is_named_with_what_it_said(machines, monkeypatch, capsys):
    if "mqtt" not in paths.driver_libraries():
        pytest.skip("the mqtt driver is not built")
    from psbench.cli.main import main
    from psbench.run.service_definitions import ServiceDefinition

    real = ServiceDefinition.render

    def absent(self, folder, largest, port, address, program, **more):
        text, argv = real(self, folder, largest, port, address, program, **more)
        return text, ["psbench-absent-broker", *argv[1:]]  # as if not installed there

    monkeypatch.setattr(ServiceDefinition, "render", absent)
    code = main(["ping", "--driver", "mqtt", "--host", "a:ssh=a", "--place", "ping=a",
                 "--place", "pong=a", "--count", "10", "--ssh-config", str(machines)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1, err
    assert "mosquitto on host a did not accept clients at 198.18.0.1:" in err
    assert "psbench-absent-broker: not found" in err
    shutil.rmtree(cache_of("mqtt"), ignore_errors=True)


@LONG
def test_sigkill_of_psbench_leaves_no_broker_on_the_remote(machines, tmp_path):
    if "mqtt" not in paths.driver_libraries():
        pytest.skip("the mqtt driver is not built")
    out = tmp_path / "results"
    proc = long_run_in_background("driver: mqtt", "ping: a, pong: b, broker: b", machines, tmp_path)
    folder = None
    try:
        end = time.monotonic() + 60
        while folder is None or not brokers_of(folder):
            assert proc.poll() is None and time.monotonic() < end, "the run did not start"
            for path in out.rglob("run.json") if out.exists() else []:
                record = json.loads(path.read_text())
                if record.get("status") == "running" and record.get("services"):
                    folder = str(Path(record["services"][0]["argv"][-1]).parent)
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(cache_of("mqtt"), ignore_errors=True)
    end = time.monotonic() + 5
    while brokers_of(folder) and time.monotonic() < end:
        time.sleep(0.1)
    assert brokers_of(folder) == [] and not Path(folder).exists()
    shutil.rmtree(REMOTE_RUNS, ignore_errors=True)  # a node that ended by itself may leave its own


@contextmanager
def control_master(machines: Path, tmp_path: Path):
    """An ssh config as many users have: connections shared through a persisting
    master (ControlMaster auto, ControlPersist); the masters are stopped on the way out."""
    sockets = Path(f"/tmp/psb-cm-{os.getpid()}")  # short: a socket path is 108 bytes at most
    sockets.mkdir()
    config = tmp_path / "ssh_config"
    config.write_text(
        "Host *\n  ControlMaster auto\n  ControlPersist 30\n"
        f"  ControlPath {sockets}/%h\n" + machines.read_text().replace("ControlMaster no", "")
    )
    try:
        yield config, sockets
    finally:
        for host in HOSTS:  # the masters are this test's
            subprocess.run(["ssh", "-F", str(config), "-O", "exit", host], capture_output=True,
                           timeout=30)  # fmt: skip
        shutil.rmtree(sockets, ignore_errors=True)


def secured_over_ssh(driver: str, args: list[str], machines: Path, tmp_path: Path):
    """A ping of driver with its roles on the two machines (args: placement, security):
    (its CompletedProcess, its run.json, its run directory)."""
    if driver not in paths.driver_libraries():
        pytest.skip(f"the {driver} driver is not built")
    argv = ["ping", "--driver", driver, "--host", "a:ssh=a", "--host", "b:ssh=b", *args]
    with ran_over_ssh(argv, machines, tmp_path) as done:
        found = sorted((tmp_path / "results").rglob("run.json"))
        assert len(found) == 1, done.stdout + done.stderr
        return done, json.loads(found[0].read_text()), found[0].parent


def _no_credentials_left(run_dir: Path, record: dict) -> None:
    """Nothing secret came back beside the figures, and nothing of the run stayed there."""
    assert [p.name for p in run_dir.rglob("*.pem")] == []
    assert [p.name for p in run_dir.rglob("*.p7s")] == []
    assert not (REMOTE_RUNS / record["run_id"]).exists()
    assert record["remote_files_left"] is None
    assert nodes_of(record["run_id"]) == []


def test_a_secured_run_copies_each_machines_credentials_and_takes_them_back(machines, tmp_path):
    """mutual TLS across two machines: ping on a, pong and the broker on b, each with
    credentials psbench made here and copied there (readable by the remote user only);
    every round trip made, the broker served TLS with the certificate made for b's
    address, and no key or certificate stayed on the machines or came back."""
    done, record, run_dir = secured_over_ssh(
        "mqtt", ["--place", "ping=a", "--place", "pong=b", "--place", "broker=b",
                 "--count", "200", "--security", "tls"], machines, tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert record["status"] == "ok", record["message"]
    assert record["stats"]["ping"]["rtt"]["n"] == 200
    assert record["security"]["mode"] == "tls" and record["security"]["fault"] is None
    (service,) = record["services"]
    assert service["host"] == "b" and service["security"] == "tls"
    folder = Path(service["argv"][-1]).parent
    assert folder.is_relative_to(REMOTE_RUNS) and not folder.exists()
    assert brokers_of(str(folder)) == []
    # Each node was told its credentials' folder on its own machine.
    for process in record["processes"]:
        there = REMOTE_RUNS / record["run_id"] / process["name"] / ssh.SECURITY_DIR
        assert f"security_dir={there}" in process["argv"][-1], process["argv"]
    _no_credentials_left(run_dir, record)


@LONG
def test_dds_security_across_machines_with_its_signed_documents(machines, tmp_path):
    """DDS Security (authentication, access control, encryption) between two machines:
    each node's certificate, governance and permissions (signed here) copied there."""
    done, record, run_dir = secured_over_ssh(
        "cyclonedds", ["--place", "ping=a", "--place", "pong=b", "--count", "200",
                       "--security", "encrypt"], machines, tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert record["status"] == "ok", record["message"]
    assert record["stats"]["ping"]["rtt"]["n"] == 200
    assert record["security"]["mode"] == "encrypt"
    _no_credentials_left(run_dir, record)


def test_a_secret_is_written_for_the_remote_user_alone(machines, monkeypatch):
    monkeypatch.setattr(ssh, "_config_file", str(machines))
    folder = REMOTE_RUNS / "secret-test" / ssh.SECURITY_DIR
    try:
        with ssh.SshNetwork({"a": {"ssh": "a"}}) as network:
            network.put("a", str(folder), "key.pem", b"-----BEGIN PRIVATE KEY-----\n", secret=True)
            network.put("a", str(folder.parent), "plain.txt", "x")
        assert (folder / "key.pem").read_bytes() == b"-----BEGIN PRIVATE KEY-----\n"
        assert folder.stat().st_mode & 0o777 == 0o700
        assert (folder / "key.pem").stat().st_mode & 0o777 == 0o600
        assert (folder.parent / "plain.txt").stat().st_mode & 0o077 != 0  # as umask made it
    finally:
        shutil.rmtree(REMOTE_RUNS / "secret-test", ignore_errors=True)


@LONG
def test_bad_credentials_on_a_machine_fail_the_run_and_it_receives_nothing(machines, tmp_path):
    # pong on b gets a certificate of another CA: the broker (on a) refuses it.
    done, record, run_dir = secured_over_ssh(
        "mqtt", ["--place", "ping=a", "--place", "pong=b", "--place", "broker=a",
                 "--count", "50", "--security", "tls", "--security-fault", "wrong-ca",
                 "--match-timeout", "8"], machines, tmp_path)  # fmt: skip
    assert done.returncode != 0
    assert record["status"] == "failed" and record["security"]["fault"] == "wrong-ca"
    assert "unable to get local issuer certificate" in done.stderr, done.stderr
    pong = run_dir / "pong.json"
    if pong.exists():  # a node stopped before its summary received nothing either
        assert json.loads(pong.read_text())["counts"]["received"] == 0
    _no_credentials_left(run_dir, record)


@LONG
def test_a_users_controlmaster_with_controlpersist_works(machines, tmp_path):
    # A persisting master ssh (ControlPersist) outlives the ssh that started it: psbench
    # must not wait for it (its pipes), and a run through the master must still end.
    with control_master(machines, tmp_path) as (config, sockets):
        started = time.monotonic()
        done = psbench(ping_args("udp", "unicast", config), tmp_path, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert time.monotonic() - started < 30
        record = only_record(tmp_path / "results")
        assert record["stats"]["ping"]["rtt"]["n"] == 200
        assert nodes_of(record["run_id"]) == []
        assert sorted(p.name for p in sockets.iterdir()) == ["198.18.0.1", "198.18.0.2"]
    shutil.rmtree(cache_of("udp"), ignore_errors=True)


@LONG
def test_pubsub_over_ssh_gets_every_message(machines, tmp_path):
    # On one real machine; the publisher's window lines (WINDOW begin, answered
    # SAMPLED) cross ssh too.
    with ran_ok_over_ssh(
        ["pubsub", "--driver", "udp", "--transport", "unicast", "--host", "a:ssh=a",
         "--place", "pub=a", "--place", "sub=a", "--count", "200", "--rate", "1000"],
        machines,
        tmp_path,
    ) as (done, record):  # fmt: skip
        assert record["status"] == "ok"
        assert record["accounting"]["sub"]["received"] == 200, record["accounting"]
        assert "clock" not in record["stats"]["sub"]  # one machine, one clock
        assert nodes_of(record["run_id"]) == [] and not (REMOTE_RUNS / record["run_id"]).exists()


def test_one_way_between_machines_with_different_clocks_is_corrected(machines, tmp_path):
    with ran_ok_over_ssh([*PUBSUB_A_TO_B, "--rate", "1000"], machines, tmp_path) as (done, record):
        assert record["status"] == "ok" and record["accounting"]["sub"]["received"] == 200
        clock = record["clock"]
        assert clock["reference"] == "a" and clock["receivers"]["sub"] == {
            "host": "b",
            "writers": {"0": "a"},
        }
        b = clock["hosts"]["b"]["to_reference"]
        assert clock["hosts"]["a"]["to_reference"]["offset_ns"] == 0
        # The kernel's offset, found to within the uncertainty psbench states, both times.
        for when in ("before", "after"):
            a_read, b_read = clock["hosts"]["a"][when], clock["hosts"]["b"][when]
            found = b_read["offset_ns"] - a_read["offset_ns"]
            assert (
                abs(found - SKEW_S * 10**9) <= a_read["uncertainty_ns"] + b_read["uncertainty_ns"]
            )
        assert abs(b["offset_ns"] - SKEW_S * 10**9) <= b["uncertainty_ns"]
        stats = record["stats"]["sub"]
        # The raw records hold the skew; the figures have it taken out. A real latency
        # is positive, so the corrected one is above minus the stated uncertainty.
        assert stats["one_way_uncorrected"]["min"] > (SKEW_S - 1) * 10**9
        assert -stats["clock"]["uncertainty_ns"] <= stats["one_way"]["min"]
        assert stats["one_way"]["max"] < 10**9
        assert "corrected for the clocks' offset" in stats["one_way"]["method"]
        assert "clocks:    the offset between the machines' clocks" in done.stdout
        # The report reads the same corrected samples back from the run's files.
        report = psbench(["report", str(tmp_path / "results")], tmp_path)
        assert report.returncode == 0, report.stderr
        assert "corrected for their clocks' offset" in report.stdout


def test_a_per_host_daemon_on_real_machines_is_refused_before_anything_runs(tmp_path):
    if "iceoryx" not in paths.driver_libraries():
        pytest.skip("the iceoryx driver is not built")
    experiment = tmp_path / "lab.yaml"
    experiment.write_text(
        "name: lab\n"
        "defaults: {kind: ping, count: 10, hosts: {a: {ssh: robot1}},\n"
        "           place: {ping: a, pong: a}}\n"
        "matrix: {driver: [iceoryx]}\n"
    )
    done = psbench(["run", str(experiment), "--dry-run"], tmp_path, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "lab.yaml:2: defaults.hosts: iceoryx needs iox-roudi, a per-host daemon, which " in (
        done.stderr
    )
    assert "1 problem in" in done.stderr


@LONG
def test_an_ansible_inventory_names_the_machines(machines, tmp_path):
    # The lab's inventory: a and b are reached by name (the ssh config resolves them),
    # a with ansible_user; `down` is unreachable.
    inventory = tmp_path / "lab.ini"
    inventory.write_text("[robots]\na ansible_user=root\nb\n\n[spare]\ndown\n")
    checked = psbench(
        ["hosts", "check", "--hosts", str(inventory), "--ssh-config", str(machines)],
        tmp_path,
        timeout=60,
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "a (ssh root@a): usable" in checked.stdout and "b (ssh b): usable" in checked.stdout
    assert "down (ssh down): UNUSABLE: unreachable" in checked.stdout
    # A run declares its hosts without settings; the inventory makes them real machines.
    ran = psbench(
        ["ping", "--driver", "udp", "--transport", "unicast", "--host", "a", "--host", "b",
         "--place", "ping=a", "--place", "pong=b", "--count", "200",
         "--hosts", str(inventory), "--ssh-config", str(machines)],
        tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    record = only_record(tmp_path / "results")
    assert record["network"]["kind"] == "ssh"
    assert record["network"]["hosts"]["a"]["target"] == "root@a"
    counts = json.loads(next((tmp_path / "results").rglob("ping.json")).read_text())["counts"]
    assert counts["sent"] == counts["received"] == 200
