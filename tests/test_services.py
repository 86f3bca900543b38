"""Which services a run needs, what happens with one psbench cannot start, and the
default CPU pinning of runs."""

import os
import threading
import time
from pathlib import Path

import pytest

from psbench.base import manifests
from psbench.base.errors import UserError
from psbench.run import services
from psbench.run.spec import default_cpus

# As the node describes them: the name (whose manifest declares the services) and the
# transports (the first is the default).
CYCLONE = {"name": "cyclonedds", "capabilities": {"transports": ["udp", "multicast", "shm"]}}


def test_a_transport_specific_service_is_needed_only_on_that_transport():
    assert services.needed(CYCLONE, "shm") == ["iox-roudi"]
    assert services.needed(CYCLONE, "udp") == []
    assert services.needed(CYCLONE, None) == []  # default = udp here
    shm_first = {"name": "cyclonedds", "capabilities": {"transports": ["shm"]}}
    assert services.needed(shm_first, "default") == ["iox-roudi"]


def test_a_service_for_every_run_is_always_needed_unless_the_run_brings_its_broker():
    broker = {"name": "mqtt", "capabilities": {"transports": ["tcp"]}}
    assert services.needed(broker, None) == ["mosquitto"]
    assert services.needed(broker, None, ["broker=127.0.0.1:1883"]) == []
    # A per-host daemon is not a broker: the run's own broker option does not replace it.
    daemon = {"name": "iceoryx", "capabilities": {"transports": ["shm"]}}
    assert services.needed(daemon, None, ["broker=127.0.0.1:1883"]) == ["iox-roudi"]


def test_a_driver_from_outside_the_tree_needs_no_service():
    outside = {"name": "not-a-folder", "capabilities": {"transports": ["x"]}}
    assert services.needed(outside, None) == []


def test_a_service_that_cannot_be_started_is_an_error_saying_what_to_do(tmp_path, monkeypatch):
    drivers_dir = tmp_path / "drivers"
    (drivers_dir / "mw").mkdir(parents=True)
    (drivers_dir / "mw" / "CMakeLists.txt").write_text("")
    (drivers_dir / "mw" / "manifest.toml").write_text(
        'architecture = "broker"\n[[services]]\nname = "no-such-daemon"\n'
    )
    monkeypatch.setattr(manifests, "DRIVERS_DIR", drivers_dir)
    manifests.load.cache_clear()
    try:
        mw = {"name": "mw", "capabilities": {"transports": ["x"]}}
        with services.ServicePool() as pool, pytest.raises(UserError) as err:
            pool.ensure(mw, None, tmp_path)
    finally:
        manifests.load.cache_clear()
    assert str(err.value).startswith("cannot start no-such-daemon:"), err.value
    assert "make setup installs it" in str(err.value)


def test_default_pinning_puts_each_role_on_its_own_core():
    allowed = sorted(os.sched_getaffinity(0))
    cpus = default_cpus("ping")
    assert set(cpus) == {"ping", "pong"}
    assert set(cpus.values()) <= set(allowed)
    if len(allowed) >= 2:
        assert cpus["ping"] != cpus["pong"]
    assert set(default_cpus("pubsub")) == {"pub", "sub"}


# Each broker, and the driver whose manifest declares it.
BROKERS = {"mosquitto": "mqtt", "nats-server": "nats", "redis-server": "redis"}


def needing(name: str) -> dict:
    """A describe of the driver that needs this broker."""
    return {"name": BROKERS[name], "capabilities": {"transports": ["tcp"]}}


def listening_pids(port: int) -> set[int]:
    """pids with a TCP socket listening on 127.0.0.1:port, from /proc."""
    inode_lines = [line.split() for line in open("/proc/net/tcp").read().splitlines()[1:]]
    wanted = {
        f[9] for f in inode_lines if f[1] == f"0100007F:{port:04X}" and f[3] == "0A"
    }  # 0A = LISTEN
    pids = set()
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in wanted:
            pids.add(int(fd.parts[2]))
    return pids


@pytest.mark.parametrize("name", list(BROKERS))
def test_a_broker_is_started_on_loopback_and_stopped(name, tmp_path):
    with services.ServicePool(largest_message=4 << 20) as pool:
        [broker] = pool.ensure(needing(name), None, tmp_path)
        assert broker.proc.poll() is None and broker.address.startswith("127.0.0.1:")
        assert listening_pids(broker.port) == {broker.proc.pid}  # loopback only
        assert services.broker_options([broker]) == [f"broker={broker.address}"]
        assert broker.version and broker.to_json()["log"] == str(tmp_path / f"service-{name}.log")
        assert any(str(tmp_path / f"service-{name}") in a for a in broker.config)
        again = pool.ensure(needing(name), None, tmp_path)  # reused, not restarted
        assert again[0] is broker
    assert broker.proc.poll() is not None and listening_pids(broker.port) == set()


def test_a_pool_stopping_while_its_broker_is_down_does_not_start_it_again(tmp_path):
    """A Ctrl-C during a broker restart's down time: stop_all ends the down time, and the
    restart's thread starts nothing that would outlive psbench (the fault: a down time of
    60 s, stopped after the kill)."""
    errors = []

    def restart(pool, broker):
        try:
            pool.restart(broker, 60.0)
        except UserError as exc:
            errors.append(str(exc))

    with services.ServicePool() as pool:
        [broker] = pool.ensure(needing("redis-server"), None, tmp_path)
        old = broker.proc
        thread = threading.Thread(target=restart, args=(pool, broker))
        thread.start()
        for _ in range(200):  # until it is killed: at most 10 s
            if old.poll() is not None and "down for 60 s" in broker.log.read_text():
                break
            time.sleep(0.05)
        assert old.poll() is not None
    thread.join(30)
    assert not thread.is_alive() and broker.proc is old and broker.restarts == 0
    assert errors == [f"redis-server: {services.NOT_STARTED_AGAIN}"]
    assert services.NOT_STARTED_AGAIN in broker.log.read_text()
    assert listening_pids(broker.port) == set()


def test_a_broker_that_dies_is_reported_with_its_log_and_replaced(tmp_path):
    with services.ServicePool() as pool:
        [first] = pool.ensure(needing("redis-server"), None, tmp_path)
        assert pool.casualties([first]) == []
        first.proc.kill()
        first.proc.wait()
        [message] = pool.casualties([first])
        assert "redis-server" in message and "ended during the run" in message
        assert str(first.log) in message
        [second] = pool.ensure(needing("redis-server"), None, tmp_path)
        assert second.proc.pid != first.proc.pid and second.proc.poll() is None


def test_a_run_with_its_own_broker_gets_none_started(tmp_path):
    with services.ServicePool() as pool:
        assert pool.ensure(needing("mosquitto"), None, tmp_path, ["broker=127.0.0.1:1883"]) == []


def test_roudi_pools_hold_the_largest_message(tmp_path):
    # The configuration the iceoryx driver's manifest has psbench write, read back.
    import tomllib

    from psbench.run.service_definitions import definition

    headroom = 4096  # drivers/iceoryx/roudi_config.py: the chunk header beside the message
    for largest in (32, 64, 16384, 1 << 20, 4 << 20):
        folder = tmp_path / str(largest)
        folder.mkdir()
        launch = definition("iox-roudi").launch(folder, largest)
        config = tomllib.loads((folder / "roudi.toml").read_text())
        pools = [(p["size"], p["count"]) for p in config["segment"][0]["mempool"]]
        assert pools[-1][0] >= largest + headroom
        assert all(size < largest + headroom for size, _ in pools[:-1])
        assert launch.argv[-2:] == ["-c", str(folder / "roudi.toml")] and launch.port is None


FAKE_BROKER = '''#!/usr/bin/env python3
"""A stand-in broker: `prepare FOLDER` makes its data directory; `serve CONFIG FOLDER`
listens on both ports its configuration names, once prepared."""
import socket, sys, time
from pathlib import Path

if sys.argv[1] == "prepare":
    print("formatting", flush=True)
    if Path(sys.argv[2], "fail").exists():
        sys.exit("cannot format: told to fail")
    Path(sys.argv[2], "data").mkdir()
    Path(sys.argv[2], "data", "formatted").write_text("yes")
    sys.exit(0)
config = dict(line.split("=") for line in Path(sys.argv[2]).read_text().split())
assert Path(sys.argv[3], "data", "formatted").is_file(), "not prepared"
listening = []
for key in ("port", "second"):
    s = socket.socket()
    s.bind(("127.0.0.1", int(config[key])))
    s.listen()
    listening.append(s)
time.sleep(60)
'''

FAKE_MANIFEST = """architecture = "broker"
[[services]]
name = "fake-broker"
broker = true
second_port = true
executable = "serve.py"
config_file = "fake.conf"
config = "port={port}\\nsecond={second_port}\\n"
prepare = ["{executable}", "prepare", "{folder}"]
argv = ["{executable}", "serve", "{config_file}", "{folder}"]
leftovers = ["{folder}/data"]
ready_timeout_s = 30
"""


@pytest.fixture
def fake_broker(tmp_path, monkeypatch):
    """A driver "fake" whose manifest declares a broker with a program of its own folder,
    a prepare command, a second port and its data directory as a leftover."""
    folder = tmp_path / "drivers" / "fake"
    folder.mkdir(parents=True)
    (folder / "CMakeLists.txt").write_text("")
    (folder / "manifest.toml").write_text(FAKE_MANIFEST)
    (folder / "serve.py").write_text(FAKE_BROKER)
    (folder / "serve.py").chmod(0o755)
    monkeypatch.setattr(manifests, "DRIVERS_DIR", tmp_path / "drivers")
    manifests.load.cache_clear()
    yield {"name": "fake", "capabilities": {"transports": ["tcp"]}}
    manifests.load.cache_clear()


def accepts(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def test_a_prepared_broker_with_two_ports_and_its_data_removed_once_stopped(fake_broker, tmp_path):
    runs = tmp_path / "run"
    runs.mkdir()
    with services.ServicePool() as pool:
        [broker] = pool.ensure(fake_broker, None, runs)
        folder = runs / "service-fake-broker"
        config = dict(line.split("=") for line in (folder / "fake.conf").read_text().split())
        second = int(config["second"])
        assert int(config["port"]) == broker.port and second != broker.port
        assert accepts(broker.port) and accepts(second)
        assert broker.config[0] == str(tmp_path / "drivers" / "fake" / "serve.py")
        assert (folder / "data" / "formatted").is_file()
        record = broker.to_json()
        assert record["prepared_in_s"] > 0 and record["started_in_s"] > 0
        assert "formatting" in broker.log.read_text()  # prepare's output comes first
    assert broker.proc.poll() is not None and not accepts(second)
    assert not (folder / "data").exists() and (folder / "fake.conf").is_file()


def test_a_failing_prepare_command_is_an_error_with_its_output(fake_broker, tmp_path):
    runs = tmp_path / "run"
    (runs / "service-fake-broker").mkdir(parents=True)
    (runs / "service-fake-broker" / "fail").write_text("")
    with services.ServicePool() as pool, pytest.raises(UserError) as err:
        pool.ensure(fake_broker, None, runs)
    assert "fake-broker's prepare command" in str(err.value)
    assert "exit code 1" in str(err.value) and "told to fail" in str(err.value)


def test_a_missing_program_of_the_manifest_is_named(fake_broker, tmp_path):
    program = tmp_path / "drivers" / "fake" / "serve.py"
    program.unlink()
    with services.ServicePool() as pool, pytest.raises(UserError) as err:
        pool.ensure(fake_broker, None, tmp_path)
    assert f"cannot prepare fake-broker: No such file or directory ({program})" in str(err.value)


def test_the_keeper_removes_a_service_folders_leftover_directory(tmp_path):
    import subprocess

    from psbench.run.keeper import Keeper

    data = tmp_path / "service-x" / "data"
    (data / "deep").mkdir(parents=True)
    (data / "deep" / "segment").write_bytes(b"x")
    service = subprocess.Popen(["sleep", "60"], start_new_session=True)
    keeper = Keeper()
    try:
        keeper.watch_service(service.pid, [str(data)])
        keeper._proc.stdin.close()  # psbench gone
        assert keeper._proc.wait(timeout=15) == 0
        assert service.wait(timeout=1) != 0
        assert not data.exists() and data.parent.is_dir()
    finally:
        service.kill()
        service.wait()


def test_a_tls_run_renders_the_tls_configuration_and_command_line(tmp_path):
    from psbench.base.manifests import ServiceSpec
    from psbench.run.service_definitions import ServiceDefinition

    spec = ServiceSpec(
        name="b", folder=tmp_path, broker=True, config_file="b.conf",
        config="listen {address}:{port}\n", argv=("{executable}", "-c", "{config_file}"),
        tls_config="tls-listen {address}:{port} cert {tls_cert}\n",
        tls_argv=("{executable}", "--ca", "{tls_ca}", "-c", "{config_file}"),
    )  # fmt: skip
    files = {"tls_ca": "/c/ca.pem", "tls_cert": "/c/cert.pem", "tls_key": "/c/key.pem",
             "tls_bundle": "/c/bundle.pem"}  # fmt: skip
    definition = ServiceDefinition(spec)
    plain = definition.render(tmp_path, 64, 7, "127.0.0.1", "b")
    assert plain == ("listen 127.0.0.1:7\n", ["b", "-c", f"{tmp_path}/b.conf"])
    secured = definition.render(tmp_path, 64, 7, "127.0.0.1", "b", tls=files)
    assert secured == (
        "tls-listen 127.0.0.1:7 cert /c/cert.pem\n",
        ["b", "--ca", "/c/ca.pem", "-c", f"{tmp_path}/b.conf"],
    )
