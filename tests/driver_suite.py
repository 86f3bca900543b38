"""The driver suite: the tests every driver gets from what it declares, written once
(tests/test_drivers_*.py), instead of a copy in each driver's own test file.

Which cases a driver gets comes from its manifest (drivers/NAME/manifest.toml: a service
with `broker = true`, the modes of [security]) and from what `psbench-node --describe`
says of it (capabilities: reliability, durability, history, notify modes, transports,
loans). A driver that is not built gets each test once, skipped with what builds it (as
driver_checks.require_built), so a driver written on another branch joins the suite by
its manifest alone, and its cases appear once it is built.

What only the middleware can say (its words when no broker answers or the broker dies,
the counters its nodes keep across a broker restart) a driver's own test file
(tests/test_driver_NAME.py) declares as `SUITE = Expect(...)`; a driver without one is
held to what every driver must do, and the suite's messages say what to declare."""

import importlib
import os
import re
import select
import signal
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from conftest import live_processes, only_run, run_cli
from driver_checks import alive, listening, load
from psbench.base import manifests, paths
from psbench.run import drivers
from psbench.run.drivers import build_hint

# What a test of a whole run allows it (a JVM broker's first start is most of a run here).
RUN_TIMEOUT_S = 240


@dataclass(frozen=True)
class Restart:
    """A driver's run with durability persistent across `--restart-broker AT:DOWN`."""

    # (notify, security) of each case make test runs.
    cases: tuple[tuple[str, str], ...] = (("wait", "none"),)
    rate: int = 200
    duration_s: int = 10
    at_down: str = "2:1"
    # A broker slow to serve again: the reader waits this long without ending on idle,
    # and the writer as long to drain what it queued meanwhile.
    idle_timeout_s: int | None = None
    # Writes while the broker is down: "none" (the client library queues them) or "some"
    # (they fail, counted; the run goes on).
    write_errors: str = "none"
    # Every message due in the window (less those a busy sender had no time for) was
    # written, and each arrived (published == received); False: those whose write did
    # not fail arrived.
    all_written: bool = True
    # A message may arrive twice (at least once: sent again when its acknowledgement was
    # lost with the broker).
    duplicates: bool = False
    # At least this share of the messages due in the window was written.
    sent_fraction: float = 7 / 8
    # Counters the nodes' summaries hold afterwards: (role, "writer"|"reader", name) -> value.
    counters: dict = field(default_factory=dict)
    # What the declaration cannot say: check(record, summaries) asserts it.
    check: object = None


@dataclass(frozen=True)
class Expect:
    """What a driver's own test file declares of it for the suite (all optional)."""

    # Words the run's output holds when nothing listens at the broker address given
    # ({address} is that address); any one of the tuple.
    no_broker: tuple[str, ...] = ()
    # Words the nodes' stderr holds when the broker is killed mid-run, and those of the
    # run's message: each entry, a string or a tuple of which any one will do.
    broker_gone: tuple[str, ...] = ()
    broker_gone_message: tuple[str, ...] = ()
    # What the run's message says of each --security-fault (wrong-ca, expired) under
    # --security tls: a string, or a tuple of which any one will do.
    tls_faults: dict = field(default_factory=dict)
    # The broker's process to kill when it is not the process psbench started (a launcher).
    broker_program: str | None = None
    # What the driver says of a broker address that is not one: "... is not HOST:PORT".
    broker_syntax: str = "HOST:PORT"
    # The reason the driver gives for a refusal, by test_drivers_refusals.py's key
    # ("history keep_all", "transport udp", "loan", "broker", "persistent best_effort").
    refusals: dict = field(default_factory=dict)
    # Notify modes whose broker-kill case is long (make test-long), with why.
    slow_kill: dict = field(default_factory=dict)
    restart: Restart = field(default_factory=Restart)
    # Late joiners (tests/test_late_join.py): the cases make test runs ("tl-keep5",
    # "tl-keep1", "tl-keep-all", "tl", "volatile"; the rest wait for make test-long), and
    # for a driver with no history to set, how many samples transient_local keeps.
    late_join: tuple[str, ...] = ()
    late_join_kept: int | None = None
    # Why the suite's late joiner (the publisher's pause, then its burst) cannot show what
    # transient_local keeps for this driver, where its own test shows it: its
    # transient_local cases skip, saying so.
    late_join_unframed: str | None = None
    # How long the publisher pauses (s) while the late joiner starts and associates: the
    # suite's 3, or more for a middleware whose association takes longer (its why).
    late_join_pause_s: float = 3
    # The xdist group every test that runs it joins (tests/scheduling.py): its runs may
    # not overlap (what one checks, another's run in flight would spoil).
    group: str | None = None


DEFAULT = Expect()


def expect(name: str) -> Expect:
    """The driver's SUITE (its test file's), or what every driver must do."""
    try:
        module = importlib.import_module(f"test_driver_{name}")
    except ModuleNotFoundError:
        return DEFAULT
    return getattr(module, "SUITE", DEFAULT)


@cache
def described(name: str) -> dict | None:
    """`psbench-node --describe` of a built driver; None when it is not built."""
    library = paths.driver_libraries().get(name)
    if library is None:
        return None
    return drivers.describe(paths.node_path(), library)


def capabilities(name: str) -> dict | None:
    d = described(name)
    return None if d is None else d.get("capabilities") or {}


def not_built(name: str):
    return pytest.mark.skip(reason=f"{name} is not built: {build_hint(name)}")


def broker(name: str) -> manifests.ServiceSpec | None:
    """The broker service the driver's manifest declares (broker = true), if any."""
    return next((s for s in manifests.load(name).services if s.broker), None)


def broker_transport(name: str) -> list[str]:
    """The --transport argument a run needs for its broker (a broker for one transport)."""
    spec = broker(name)
    return ["--transport", spec.transport] if spec and spec.transport else []


def broker_drivers() -> list[str]:
    """Drivers whose runs go through their broker: the manifest's architecture is broker
    or router, on the broker's transport (zenoh's router for transport client). A per-host
    daemon with a port of its own (ORTE's manager, OpenSplice 5's spliced) carries no
    messages; its driver's own tests say what it does."""
    found = []
    for name in manifests.driver_names():
        spec, manifest = broker(name), manifests.load(name)
        if spec is None:
            continue
        way = manifest.transport_architecture.get(spec.transport, manifest.architecture)
        if way in ("broker", "router"):
            found.append(name)
    return found


def cases(names, values=None, long=None) -> list:
    """pytest params: each driver, or each driver and each of values(capabilities) when
    it is built (a driver not built: one skipped case). long(name, value) -> str | None:
    why that case waits for make test-long."""
    params = []
    for name in names:
        caps = capabilities(name)
        if caps is None:
            params.append(pytest.param(name, None, id=name, marks=not_built(name)))
            continue
        for value in values(name, caps) if values else [None]:
            reason = long(name, value) if long else None
            marks = [pytest.mark.long] if reason else []
            ident = name if value is None else f"{name}-{value}"
            params.append(pytest.param(name, value, id=ident, marks=marks))
    return params


def roles(kind: str) -> tuple[str, str]:
    return ("ping", "pong") if kind == "ping" else ("pub", "sub")


def node_stderr(record: dict) -> str:
    return "".join(
        (record["_dir"] / f"{p}.stderr").read_text()
        for p in ("ping", "pong", "pub", "sub")
        if (record["_dir"] / f"{p}.stderr").exists()
    )


def measured(driver: str, results: Path, kind: str, *args: str, broker: str | None = None):
    """One run through the CLI that must end ok: the record and the summaries by role.
    broker: given to the run (option broker), which then uses it and starts none."""
    given = ["--option", f"broker={broker}"] if broker else []
    proc = run_cli([kind, "--driver", driver, *args, *given], results, timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert all(code == 0 for code in record["exit_codes"].values()), record["exit_codes"]
    assert record["driver"]["name"] == driver
    if broker:
        check_broker_used(driver, record, broker)
    # A fan-out run has sub1, sub2, ... instead of sub.
    made = [r for r in roles(kind) if (record["_dir"] / f"{r}.json").exists()]
    return record, {role: load(record["_dir"], role) for role in made}


def ok_run(driver: str, version: str):
    """A driver's run helper: run(results, kind, *args) makes one run through measured
    that must end ok, by that version of the middleware (--describe's version starts
    so), and returns its record."""

    def run(results: Path, *args: str) -> dict:
        record, _ = measured(driver, results, *args)
        assert record["driver"]["version"].startswith(version), record["driver"]
        return record

    return run


PROGRESS = re.compile(r"^\s+(\S+)\s+\d+ s: ([\d,]+) received")


def measuring(proc, seconds: float = RUN_TIMEOUT_S) -> str:
    """Reads the CLI's stderr until a progress line says its measuring role received
    something (the run measures: no sleep guessing when); returns what it read."""
    read = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if not ready:
            assert proc.poll() is None, "".join(read)
            continue
        line = proc.stderr.readline()
        assert line, "the run ended before it measured: " + "".join(read)
        read.append(line)
        match = PROGRESS.match(line)
        if match and int(match.group(2).replace(",", "")) > 0:
            return "".join(read)
    pytest.fail(f"the run did not measure within {seconds} s: " + "".join(read))


def kill_broker(driver: str, service: dict, results: Path) -> int:
    """SIGKILL the broker process of a run's service (the service's own process, or the
    program its driver names); its pid."""
    program = expect(driver).broker_program
    if program is None:
        pid = service["pid"]
    else:
        [pid] = live_processes(program, str(results))
    os.kill(pid, signal.SIGKILL)
    return pid


def broker_gone(service: dict) -> list[str]:
    """What is left of a psbench broker: its process, a port that still accepts, the
    data its manifest names as leftovers ({folder}/NAME)."""
    left = [f"{service['name']} {service['pid']}"] if alive(service["pid"]) else []
    if service["address"] and listening(service["address"]):
        left.append(f"{service['address']} accepts")
    spec = manifests.service(service["name"])
    folder = Path(service["log"]).with_suffix("")  # service-NAME.log -> service-NAME/
    for pattern in spec.leftovers if spec else ():
        if pattern.startswith("{folder}/"):
            path = folder / pattern.removeprefix("{folder}/")
            if path.exists():
                left.append(str(path))
    return left


def words_in(text: str, words: tuple[str, ...], **fmt) -> bool:
    """Any one of the words (each with {address} and the like filled in) is in text."""
    return any(w.format(**fmt) in text for w in words)


def said_all(text: str, entries: tuple) -> bool:
    """Each entry is in text: a string, or a tuple of which any one will do."""
    return all(words_in(text, (e,) if isinstance(e, str) else e) for e in entries)


def check_broker_used(driver: str, record: dict, address: str | None = None) -> None:
    """The run's nodes were told the broker's address: the given one (psbench started no
    broker), or that of the one psbench started for the run."""
    if address is not None:
        assert record["services"] == [], "psbench started a broker although one was given"
    else:
        [service] = record["services"]
        assert service["name"] == broker(driver).name and service["started_by_psbench"]
        address = service["address"]
        assert address.startswith("127.0.0.1:")
    for process in record["processes"]:
        assert f"broker={address}" in process["argv"], process["argv"]
