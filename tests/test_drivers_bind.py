"""Where each driver's nodes listen on one host: every socket a node binds is on
loopback (or a multicast group), except where the middleware's own code binds the
wildcard address and no setting changes it (WILDCARD names that code). Checked in real
runs of every built driver that needs no service on its default transport (brokers and
daemons are checked in tests/test_services.py); a driver that starts listening on every
interface fails here, and so does an exception that stopped being true."""

import ipaddress

import pytest

from driver_checks import nodes_seen_running, require_built
from proc_sockets import bound_addresses
from psbench.base import manifests

# The middlewares whose receive sockets bind every interface whatever psbench configures:
# their unicast ports take datagrams from any network the machine is on.
WILDCARD = {
    "cyclonedds": "Cyclone DDS binds every receive socket to INADDR_ANY "
    "(measured with 0.10.2; 11.0.1's ddsi_udp.c: bind_to_any for unicast and multicast); "
    "NetworkInterfaceAddress chooses where it sends, not where it listens",
    "opensplice": "OpenSplice DDSI2 6.9 binds every socket to INADDR_ANY "
    "(q_nwif.c: bind_socket); NetworkInterfaceAddress chooses where it sends",
}


def needs_no_service(name: str) -> bool:
    """No service on every transport (one for a named transport only is not started)."""
    return all(spec.transport is not None for spec in manifests.load(name).services)


# Each such driver on its default transport, and the transports of psbench's own drivers
# that bind an address of their own choosing.
CASES = {name: (name,) for name in manifests.driver_names() if needs_no_service(name)}
CASES["udp-unicast"] = ("udp", "--transport", "unicast", "--option", "peer=127.0.0.1")


def on_this_host_only(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return ip.is_loopback or ip.is_multicast


@pytest.mark.parametrize("case", CASES)
def test_nodes_listen_on_loopback_only(case, results):
    driver, *args = CASES[case]
    require_built(driver)
    seen = nodes_seen_running(
        ["ping", "--driver", driver, *args, "--duration", "3", "--warmup", "10"],
        results,
        bound_addresses,
        ready=lambda _: True,
        settle_s=0.5,  # their endpoints are open by then
    )
    addresses = set().union(*seen.values())
    wildcard = {a for a in addresses if ipaddress.ip_address(a).is_unspecified}
    elsewhere = {a for a in addresses - wildcard if not on_this_host_only(a)}
    assert not elsewhere, f"{driver} nodes bound {elsewhere}"
    if driver in WILDCARD:
        assert wildcard, f"{driver} no longer binds the wildcard address: drop it from WILDCARD"
    else:
        assert not wildcard, f"{driver} nodes listen on every interface ({wildcard})"
