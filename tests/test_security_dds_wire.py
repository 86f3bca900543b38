"""What DDS Security's modes put on the wire, seen on the loopback interface (a raw
socket, so root or CAP_NET_RAW): with access control only, the samples' payload pattern
is readable in the datagrams; with any encrypt mode it is nowhere, and the submessage
modes wrap every sample's submessages in SEC_PREFIX/SEC_BODY/SEC_POSTFIX (DDS Security
7.3.7), which the other modes use only for the builtin key exchange. The
payload pattern (core/src/message.hpp) steps by 7 from byte to byte: 24 such steps in a
row do not happen in ciphertext."""

import secrets
import shutil
import struct
import subprocess

import pytest

from driver_checks import drivers_fixture
from lo_capture import captured, udp_datagram
from psbench.run.security import credentials, dds_documents
from wire_pattern import plain_pattern

DRIVERS = ["cyclonedds", "fastdds"]
SEC_PREFIX, SEC_BODY = 0x31, 0x30  # RTPS submessage ids


def _submessage_ids(rtps: bytes) -> list[int]:
    """The submessage ids of an RTPS message (20-byte header, then id, flags, length)."""
    ids, at = [], 20
    while at + 4 <= len(rtps):
        kind, flags = rtps[at], rtps[at + 1]
        length = struct.unpack("<H" if flags & 1 else ">H", rtps[at + 2 : at + 4])[0]
        ids.append(kind)
        if length == 0:
            break
        at += 4 + length
    return ids


def _rtps_to(domain: int):
    """keep() for lo_capture: the RTPS messages of UDP datagrams to a DDS domain's ports
    (7400 + 250 * domain, 250 of them)."""
    low, high = 7400 + 250 * domain, 7400 + 250 * (domain + 1)

    def keep(packet: bytes):
        found = udp_datagram(packet)
        if found is not None and low <= found[0] < high and found[1][:4] == b"RTPS":
            return found[1]
        return None

    return keep


dds_libs = drivers_fixture("dds_libs", DRIVERS)


def _secured_ping_pong(node, lib, tmp_path, mode: str, domain: int) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)  # one folder a try (lo_capture)
    ca = credentials.make_authority(tmp_path / "ca", "ca")
    run_id = "wire" + secrets.token_hex(5)
    out = tmp_path / "out"
    out.mkdir()
    procs = []
    for role in ("pong", "ping"):
        folder = tmp_path / role
        issued = credentials.issue(ca, folder, f"psbench-{role}")
        shutil.copyfile(ca.cert, folder / "ca.pem")
        dds_documents.write(folder, mode=mode, subject=issued.subject, ca=ca)
        argv = [str(node), "--driver", str(lib), "--role", role, "--run-id", run_id]
        argv += ["--out", str(out), "--count", "200", "--size", "256", "--transport", "udp"]
        argv += ["--option", f"domain_id={domain}", "--option", f"security={mode}"]
        argv += ["--option", f"security_dir={folder}", "--match-timeout", "15"]
        argv += ["--check-pattern"] if role == "ping" else []
        procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err


# mode -> (payload pattern readable, submessages wrapped in SEC_PREFIX/SEC_BODY)
EXPECTED = {
    "access": (True, False),
    "encrypt-payload": (False, False),
    "encrypt-submessage": (False, True),
    "encrypt": (False, True),
}


# One at a time: two of these on one domain (30 to pick from) would each capture the
# other's datagrams (seen once: fastdds-access counted another run's SEC_BODY).
@pytest.mark.xdist_group("dds_security_wire")
@pytest.mark.parametrize("mode", list(EXPECTED))
@pytest.mark.parametrize("driver", DRIVERS)
def test_what_each_mode_leaves_readable_on_the_wire(node, dds_libs, tmp_path, driver, mode):
    domain = 201 + secrets.randbelow(30)  # above the 1..200 runs pick by default
    tries = iter(range(10))

    def run():
        _secured_ping_pong(node, dds_libs[driver], tmp_path / str(next(tries)), mode, domain)

    datagrams = captured(_rtps_to(domain), run)
    readable, wrapped = EXPECTED[mode]
    assert len(datagrams) > 200
    assert any(plain_pattern(d) for d in datagrams) == readable
    ids = [i for d in datagrams for i in _submessage_ids(d)]
    # Wrapped: every sample (1000 warm-up and 200 measured each way); else only the
    # builtin secure endpoints' few (the crypto key exchange, encrypted in every mode).
    bodies = ids.count(SEC_BODY)
    assert bodies >= 1000 if wrapped else bodies < 100, (bodies, len(ids))
    assert ids.count(SEC_PREFIX) == bodies
