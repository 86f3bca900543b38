"""The test scheduling of `make test` (tests/scheduling.py) as pytest-xdist applies it:
a group only holds if xdist sees its mark, which it reads in a hook of its own."""

import pytest

from scheduling import HOST_GROUP, host_wide_drivers


def test_the_drivers_with_a_per_host_daemon_come_from_their_manifests():
    drivers = host_wide_drivers()
    assert drivers["iceoryx"] is None  # every run needs RouDi
    assert "shm" in drivers["cyclonedds"]  # only runs on shm do


def test_under_loadgroup_the_host_groups_tests_are_sent_as_one_group(request):
    if not request.config.getvalue("loadgroup"):
        pytest.skip("not run by pytest-xdist with --dist loadgroup (make test does)")
    grouped = [i for i in request.session.items if i.get_closest_marker("xdist_group")]
    host = [i for i in grouped if i.get_closest_marker("xdist_group").args[0] == HOST_GROUP]
    assert host, "no test joined the host group"
    # xdist sends tests by node id; "@group" at its end keeps a group on one worker.
    assert all(i.nodeid.endswith(f"@{HOST_GROUP}") for i in host), host[0].nodeid
