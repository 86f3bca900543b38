"""Which middleware version, origin and build flags the history records of a run: read
from run.json as psbench writes it (the driver's --describe block, its sdk block for a
driver built from source, a driver_version or label where the record has one, the
version a NAME@VERSION driver setting names), on known records."""

import json

from psbench.history.ingest import driver_identity, series_key

DESCRIBED = {"name": "cyclonedds", "version": "0.10.2 (libddsc.so.0.10.2)", "abi_version": 8}
# What scripts/build-source records in psbench-sdk.json, as a describe block would carry it.
SDK = {
    "system": "cyclonedds",
    "version": "11.0.1",
    "driver": "cyclonedds",
    "trees": [
        {
            "name": "cyclonedds",
            "url": "https://github.com/eclipse-cyclonedds/cyclonedds",
            "tag": "11.0.1",
            "commit": "0123456789abcdef0123456789abcdef01234567",
        }
    ],
    "flags": {"CMAKE_BUILD_TYPE": "Release", "ENABLE_SHM": "OFF"},
}


def test_a_packaged_driver_is_what_it_says_of_itself():
    found = driver_identity({"driver": DESCRIBED}, {"driver": "cyclonedds"})
    assert (found.name, found.version, found.origin, found.build) == (
        "cyclonedds",
        "0.10.2 (libddsc.so.0.10.2)",
        None,
        None,
    )


def test_a_named_version_and_a_source_build():
    block = {**DESCRIBED, "version": "11.0.1 (libddsc.so.11.0.1)", "sdk": SDK}
    found = driver_identity({"driver": block}, {"driver": "cyclonedds@11.0.1"})
    assert found.name == "cyclonedds"
    assert found.version == "11.0.1"  # the version the setting names
    assert found.origin == "https://github.com/eclipse-cyclonedds/cyclonedds@11.0.1"
    assert json.loads(found.build) == {"CMAKE_BUILD_TYPE": "Release", "ENABLE_SHM": "OFF"}


def test_a_recorded_driver_version_or_label_comes_first():
    record = {"driver": {**DESCRIBED, "label": "cyclonedds 0.10.2 (debian)"}}
    assert driver_identity(record, {"driver": "cyclonedds"}).version == "cyclonedds 0.10.2 (debian)"
    record["driver_version"] = "0.10.2"
    assert driver_identity(record, {"driver": "cyclonedds@0.10.2"}).version == "0.10.2"


def test_a_record_without_a_driver_block_still_names_the_driver():
    found = driver_identity({}, {"driver": "zenoh@1.10.2"})
    assert (found.name, found.version) == ("zenoh", "1.10.2")


def test_two_versions_of_one_configuration_are_one_series():
    a = {"kind": "ping", "driver": "cyclonedds", "size": 64}
    b = {"kind": "ping", "driver": "cyclonedds@11.0.1", "size": 64}
    assert series_key(a) == series_key(b)
    assert series_key(a) != series_key({**a, "size": 1024})


def test_a_service_version_names_the_default_and_the_named_version_alike():
    """nats' versions are nats-server's (its manifest): both the default and nats@2.15.2
    are named by the server the run started, as it printed itself, so that 2.9.10 comes
    before 2.15.2 and not the client library's name before a number."""
    nats = {"name": "nats", "version": "cnats 3.4.1"}
    default = {
        "driver": nats,
        "services": [{"name": "nats-server", "version": "nats-server: v2.9.10"}],
    }
    newer = {
        "driver": nats,
        "services": [{"name": "nats-server", "version": "nats-server: v2.15.2"}],
    }
    assert driver_identity(default, {"driver": "nats"}).version == "2.9.10"
    assert driver_identity(newer, {"driver": "nats@2.15.2"}).version == "2.15.2"
    # A driver whose versions are its library's keeps the library's own words.
    mqtt = {
        "driver": {"name": "mqtt", "version": "libmosquitto 2.0.11"},
        "services": [{"name": "mosquitto", "version": "mosquitto 2.0.11"}],
    }
    assert driver_identity(mqtt, {"driver": "mqtt"}).version == "libmosquitto 2.0.11"
