"""Which services a run needs, what happens with one psbench cannot start, and the
default CPU pinning of runs."""

import os

import pytest

from psbench import services
from psbench.errors import UserError
from psbench.spec import default_cpus

CYCLONE_LIKE = {"capabilities": {"transports": ["udp", "multicast", "shm"],
                                 "services": ["shm:iox-roudi"]}}


def test_a_transport_specific_service_is_needed_only_on_that_transport():
    assert services.needed(CYCLONE_LIKE, "shm") == ["iox-roudi"]
    assert services.needed(CYCLONE_LIKE, "udp") == []
    assert services.needed(CYCLONE_LIKE, None) == []        # default = udp here
    shm_first = {"capabilities": {"transports": ["shm"], "services": ["shm:iox-roudi"]}}
    assert services.needed(shm_first, "default") == ["iox-roudi"]


def test_a_service_for_every_run_is_always_needed():
    broker = {"capabilities": {"transports": ["tcp"], "services": ["mosquitto"]}}
    assert services.needed(broker, None) == ["mosquitto"]


def test_an_unknown_service_is_an_error_saying_what_to_do(tmp_path):
    unknown = {"capabilities": {"transports": ["x"], "services": ["no-such-daemon"]}}
    with services.ServicePool() as pool, pytest.raises(UserError) as err:
        pool.ensure(unknown, None, tmp_path)
    assert "no-such-daemon" in str(err.value) and "start it yourself" in str(err.value)


def test_default_pinning_puts_each_role_on_its_own_core():
    allowed = sorted(os.sched_getaffinity(0))
    cpus = default_cpus("ping")
    assert set(cpus) == {"ping", "pong"}
    assert set(cpus.values()) <= set(allowed)
    if len(allowed) >= 2:
        assert cpus["ping"] != cpus["pong"]
    assert set(default_cpus("pubsub")) == {"pub", "sub"}
