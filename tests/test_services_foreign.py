"""A per-host daemon someone else runs: used once it serves, waited for while it stops,
never mistaken for one when it has ended (a zombie). The daemon here is a small program
of the test's own, named like a service a temporary manifest declares; its socket is a
Unix socket in the test's folder."""

import os
import secrets
import socket
import subprocess
import sys
import time

import pytest

from psbench.base import manifests
from psbench.base.errors import UserError
from psbench.run import services
from psbench.run.drivers import running_programs

DAEMON = f"""#!{sys.executable}
import sys, time
print("ready", flush=True)
time.sleep(float(sys.argv[1]))
"""


@pytest.fixture
def daemon(tmp_path, monkeypatch):
    """(name, socket path, start(seconds)): a per-host service of a temporary driver
    folder, its program on PATH, and a way to run it as someone else would."""
    name = f"psbfg{secrets.token_hex(4)}"  # within the 15 characters of /proc comm
    program = tmp_path / "bin" / name
    program.parent.mkdir()
    program.write_text(DAEMON)
    program.chmod(0o755)
    sock = tmp_path / "daemon.sock"
    folder = tmp_path / "drivers" / "mw"
    folder.mkdir(parents=True)
    (folder / "CMakeLists.txt").write_text("")
    (folder / "manifest.toml").write_text(
        'architecture = "per-host daemon"\n[[services]]\n'
        f'name = "{name}"\nper_host = true\nargv = ["{{executable}}", "30"]\n'
        f'ready_line = "ready"\nready_socket = "{sock}"\n'
    )
    monkeypatch.setattr(manifests, "DRIVERS_DIR", tmp_path / "drivers")
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(services, "FOREIGN_WAIT_S", 2.0)
    manifests.load.cache_clear()
    started = []

    def start(seconds: float) -> subprocess.Popen:
        proc = subprocess.Popen([str(program), str(seconds)], stdout=subprocess.DEVNULL)
        started.append(proc)
        end = time.monotonic() + 10
        while name not in running_programs():
            assert time.monotonic() < end, "the daemon did not start"
            time.sleep(0.02)
        return proc

    yield name, str(sock), start
    for proc in started:
        proc.kill()
        proc.wait()
    manifests.load.cache_clear()


MW = {"name": "mw", "capabilities": {"transports": ["x"]}}


def test_someone_elses_daemon_that_serves_is_used_as_it_is(daemon, tmp_path):
    name, sock, start = daemon
    foreign = start(30)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as bound:
        bound.bind(sock)
        with services.ServicePool() as pool:
            [used] = pool.ensure(MW, None, tmp_path)
            assert used.proc is None  # not psbench's: never stopped by it
    assert foreign.poll() is None


def test_one_that_never_serves_is_an_error_naming_it(daemon, tmp_path):
    name, sock, start = daemon
    start(30)
    with services.ServicePool() as pool, pytest.raises(UserError) as err:
        pool.ensure(MW, None, tmp_path)
    assert f"{name} runs on this host (someone else's) but has not served on {sock}" in str(
        err.value
    )


def test_one_that_is_stopping_is_waited_for_then_psbench_starts_its_own(daemon, tmp_path):
    name, sock, start = daemon
    stopping = start(0.5)  # ends within the wait, never having served
    with services.ServicePool() as pool:
        [used] = pool.ensure(MW, None, tmp_path)
        assert stopping.poll() is not None
        assert used.proc is not None and used.proc.poll() is None  # psbench's own
    assert used.proc.poll() is not None  # and stopped with the pool


def test_a_zombie_is_not_a_running_program(daemon):
    name, _, start = daemon
    proc = start(0)  # ends at once; not reaped until wait()
    end = time.monotonic() + 10
    while open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < end, "the child did not end"
        time.sleep(0.02)
    assert name not in running_programs()
    proc.wait()
