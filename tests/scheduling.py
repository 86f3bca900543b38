"""Which tests may run side by side (`make test` runs them with pytest-xdist).

Most runs share nothing with each other: run ids are random, brokers take free ports,
files and shared memory are named after the run (a driver's cleanup command removes only
what dead processes left). A per-host daemon is the exception: one serves every run on
the machine, and the run that started it stops it, under any other run that found it
running and used it. Every test that runs a driver needing one joins one xdist group,
"host", whose tests run one at a time in one worker. Which drivers those are comes from
their manifests, never from a list here; when a driver needs its daemon only on some
transports (Cyclone DDS on shm), a test of it joins the group only when it also names
one of those transports or the daemon (a fixture that starts it).

A sweep that a session or module fixture runs once for many tests (the report tests'
report_sweep, compare's sweeps) would run once per worker; the tests using it join a group
of their own, so it runs once. So do the tests that share the brokers the test process
starts (shared_brokers: a Kafka JVM or a RabbitMQ Erlang VM starts once, not per worker).

A test runs such a driver when the driver's name is in its id (a parameter), its module's
name (tests/test_driver_<name>.py), its fixtures' names, its own source or a module-level
value its code refers to (an experiment held in a constant); a test parametrized by driver
runs only the drivers its parameters name. A test that runs one without naming it anywhere
(every driver of an experiment file) says so with @pytest.mark.host_wide.

A driver whose runs may not overlap each other (what one run checks, another's in flight
would spoil) names a group in its SUITE (tests/driver_suite.py): a test parametrized by
that driver joins it.
"""

import inspect
import re

import pytest

from psbench.base import manifests

HOST_GROUP = "host"
# Fixtures that run real sweeps and are shared by many tests (scope session or module).
SHARED_SWEEPS = ("report_sweep", "sweeps", "history_sweep", "shared_brokers")


def host_wide_drivers() -> dict[str, set[str] | None]:
    """Drivers whose runs may need a per-host daemon, each with the words that say a test
    of it does (its daemons' transports and name parts), or None when every run does."""
    drivers: dict[str, set[str] | None] = {}
    for name in manifests.driver_names():
        for s in manifests.load(name).services:
            if not (s.per_host or (manifests.service(s.name) or s).per_host):
                continue
            if s.transport is None:
                drivers[name] = None
            elif name not in drivers or drivers[name] is not None:
                words = drivers.setdefault(name, set())
                words |= {s.transport, *re.findall(r"[a-z0-9]+", s.name.lower())}
    return drivers


def _code_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _code_names(const)
    return names


def _text(item) -> str:
    """Everything of a test that may name a driver."""
    parts = [item.nodeid, " ".join(item.fixturenames)]
    function = getattr(item, "function", None)
    if function is not None:
        try:
            parts.append(inspect.getsource(function))
        except (OSError, TypeError):
            pass
        module_globals = function.__globals__
        parts += [
            repr(module_globals[n])
            for n in _code_names(function.__code__)
            if n in module_globals
            and not callable(module_globals[n])
            and not inspect.ismodule(module_globals[n])
        ]
    return " ".join(parts)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9_]+", text)) | set(re.findall(r"[a-z0-9]+", text))


def runs_host_wide(item, drivers: dict[str, set[str] | None]) -> bool:
    if item.get_closest_marker("host_wide"):
        return True
    words = _words(_text(item))
    # A test parametrized by driver runs the driver its parameter names, whatever other
    # drivers its source lists (the parameter list itself, say).
    params = getattr(getattr(item, "callspec", None), "params", {})
    named = {v for v in params.values() if isinstance(v, str) and v in manifests.driver_names()}
    module = item.module.__name__ if item.module else ""
    return any(
        (name in (named or words) or module == f"test_driver_{name}")
        and (needs is None or needs & words)
        for name, needs in drivers.items()
    )


def driver_group(item) -> str | None:
    """The group a driver named by the test's parameters declares (SUITE.group)."""
    from driver_suite import expect

    params = getattr(getattr(item, "callspec", None), "params", {})
    names = manifests.driver_names()
    groups = [expect(v).group for v in params.values() if isinstance(v, str) and v in names]
    return next((g for g in groups if g), None)


def group_tests(items) -> None:
    drivers = host_wide_drivers()
    for item in items:
        if runs_host_wide(item, drivers):
            item.add_marker(pytest.mark.xdist_group(HOST_GROUP))
            continue
        if group := driver_group(item):
            item.add_marker(pytest.mark.xdist_group(group))
            continue
        shared = [name for name in SHARED_SWEEPS if name in item.fixturenames]
        if shared:
            item.add_marker(pytest.mark.xdist_group(shared[0]))
