"""The conformance suite (core/tests/conformance) for the drivers that need a service.

ctest runs the suite without services, on each driver's first transport, so a driver
whose manifest names a broker or a per-host daemon is checked there only as far as its
table and check() go. Here psbench starts each such driver's services as a run would (the
manifests say which, how and where), and the suite runs for that driver in full, also on
a transport other than its first that needs a service (PSBENCH_TRANSPORT_<NAME>): every
test must pass, and the only skips allowed are those for what the driver does not claim
(loans it has no functions for, refusals it has no second problem for)."""

import os
import subprocess

import pytest

from psbench.base import manifests, paths
from psbench.run import drivers
from psbench.run.services import ServicePool, needed

# What a driver without the feature skips, by the words of the suite's own skip message.
ALLOWED_SKIPS = (
    "has no loan()",
    "offers every QoS bit",
    "no two independent problems",
    "crosses hosts",
    "stays on one host",
)


def service_drivers() -> list[str]:
    """Drivers whose default transport needs a service, from their manifests."""
    return [
        name
        for name in manifests.driver_names()
        if any(s.transport is None for s in manifests.load(name).services)
    ]


def conformance_binary():
    return paths.build_dir() / "core" / "tests" / "conformance" / "conformance_test"


# Pairs the suite cannot configure: it asks reliable keep_all of a driver that offers
# keep_all, which the driver refuses on that transport alone (check() says so).
UNFIT = {
    ("cyclonedds", "shm"): "the suite asks reliable keep_all, which Cyclone DDS 0.10.2 "
    "refuses over shm (iceoryx carries only keep_last endpoints)",
}


def transport_services() -> list:
    """(driver, transport) pairs where a transport other than the default needs a service
    of the manifest (RouDi for Cyclone's shm, zenohd for client, OpenDDS's DCPSInfoRepo)."""
    pairs = sorted(
        {
            (name, s.transport)
            for name in manifests.driver_names()
            for s in manifests.load(name).services
            if s.transport
        }
    )
    return [
        pytest.param(*pair, marks=pytest.mark.skip(reason=UNFIT[pair])) if pair in UNFIT else pair
        for pair in pairs
    ]


@pytest.mark.parametrize("driver", service_drivers())
def test_the_suite_passes_with_the_services_psbench_starts(node, driver_libs, driver, tmp_path):
    run_suite(node, driver_libs, driver, None, tmp_path)


@pytest.mark.parametrize("driver,transport", transport_services())
def test_the_suite_passes_on_a_transport_whose_service_psbench_starts(
    node, driver_libs, driver, transport, tmp_path
):
    # The suite opens a driver on its first transport; PSBENCH_TRANSPORT_<NAME> names
    # another, here the one whose service psbench starts.
    run_suite(node, driver_libs, driver, transport, tmp_path)


def run_suite(node, driver_libs, driver: str, transport: str | None, tmp_path) -> None:
    """The whole suite for one driver (on `transport`, or its first) with the services
    psbench starts for it; every test passes or skips for what the driver does not claim."""
    if driver not in driver_libs:
        pytest.skip(f"{driver} is not built")
    binary = conformance_binary()
    assert binary.is_file(), f"{binary} is missing: run `make build`"
    describe = drivers.describe(node, driver_libs[driver])
    assert needed(describe, transport), f"{driver}'s manifest names no service for {transport}"
    env = dict(os.environ)
    if transport is not None:
        env[f"PSBENCH_TRANSPORT_{driver.upper()}"] = transport
    with ServicePool() as pool:
        for service in pool.ensure(describe, transport, tmp_path):
            if service.address:  # a broker: the suite connects to it through this variable
                env[f"PSBENCH_BROKER_{driver.upper()}"] = service.address
        proc = subprocess.run(
            [str(binary), f"--gtest_filter=Drivers/Conformance.*/{driver}"],
            env=env,
            timeout=600,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    outcomes = gtest_outcomes(proc.stdout)
    assert len(outcomes) >= 8, proc.stdout[-4000:]  # the whole suite ran for it
    unexplained = {
        name: text
        for name, (result, text) in outcomes.items()
        if result == "SKIPPED" and not any(w in text for w in ALLOWED_SKIPS)
    }
    assert unexplained == {}, unexplained
    assert all(result in ("OK", "SKIPPED") for result, _ in outcomes.values()), outcomes


def gtest_outcomes(stdout: str) -> dict[str, tuple[str, str]]:
    """GoogleTest's output -> {test: (OK|SKIPPED|FAILED, what it printed meanwhile)}."""
    outcomes, name, lines = {}, None, []
    for line in stdout.splitlines():
        if line.startswith("[ RUN      ] "):
            name, lines = line[13:].strip(), []
        elif name and line.startswith(("[       OK ] ", "[  SKIPPED ] ", "[  FAILED  ] ")):
            outcomes[name] = (line[1:11].strip(), "\n".join(lines))
            name = None
        elif name:
            lines.append(line)
    return outcomes
