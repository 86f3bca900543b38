"""What DDS participants announce on the wire: their endpoints (topic, type, QoS) as RTPS
discovery (SEDP) sends them, read from the loopback interface with a packet socket.

An instrument of psbench's own, independent of every vendor: `psbench interop` reruns a
cell that failed with the wire watched, to tell at which step two implementations part
(docs/dds.md, "Interoperability"). Only what the RTPS specification (OMG DDSI-RTPS 2.x)
fixes is read: the message header, DATA and DATA_FRAG submessages of the two SEDP
built-in writers, and their parameter lists. Needs CAP_NET_RAW (root); reading every
packet costs CPU, so it never runs beside a measurement."""

import ctypes
import socket
import struct
import threading
import time
from dataclasses import dataclass

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4  # on lo each packet is seen leaving and arriving: keep one
ETHERNET_HEADER = 14
# Submessage ids and the SEDP built-in writers' entity ids (DDSI-RTPS 9.4.5, 9.3.1.4).
INFO_SRC, DATA, DATA_FRAG = 0x0C, 0x15, 0x16
SEDP_PUBLICATIONS = b"\x00\x00\x03\xc2"
SEDP_SUBSCRIPTIONS = b"\x00\x00\x04\xc2"
# Parameter ids (9.6.2.2.2) and the kinds of two QoS policies (DDS 2.2.3).
PID_SENTINEL, PID_TOPIC_NAME, PID_TYPE_NAME = 0x0001, 0x0005, 0x0007
PID_RELIABILITY, PID_DURABILITY, PID_ENDPOINT_GUID = 0x001A, 0x001D, 0x005A
RELIABILITY = {1: "best_effort", 2: "reliable"}
DURABILITY = {0: "volatile", 1: "transient_local", 2: "transient", 3: "persistent"}
# Defaults when a policy is left out of an announcement (DDS 2.2.3): writers offer
# reliable, readers request best effort; both volatile.
DEFAULT_RELIABILITY = {"writer": "reliable", "reader": "best_effort"}


@dataclass(frozen=True)
class Endpoint:
    """One endpoint as its participant announced it."""

    kind: str  # "writer" or "reader"
    topic: str
    type_name: str
    reliability: str
    durability: str
    vendor: str  # the RTPS vendor id, e.g. "01.10"
    participant: str  # the GUID prefix, hex

    def to_json(self) -> dict:
        return dict(self.__dict__)


def _string(value: bytes, little: bool) -> str:
    (length,) = struct.unpack("<I" if little else ">I", value[:4])
    return value[4 : 4 + length].split(b"\0", 1)[0].decode("utf-8", "replace")


def parameters(payload: bytes) -> dict[int, bytes] | None:
    """A serialized parameter list (PL_CDR_BE or PL_CDR_LE) as {pid: value}; None when
    the payload is not one."""
    if len(payload) < 4 or payload[0] != 0 or payload[1] not in (2, 3):
        return None
    little, at, found = payload[1] == 3, 4, {}
    while at + 4 <= len(payload):
        pid, length = struct.unpack_from("<HH" if little else ">HH", payload, at)
        at += 4
        if pid == PID_SENTINEL:
            break
        if not pid & 0x8000:  # a vendor's own parameter ids mean nothing here
            found.setdefault(pid & 0x3FFF, payload[at : at + length])  # less must-understand
        at += length
    found[-1] = b"\x01" if little else b"\x00"  # remembered for the values' byte order
    return found


def endpoint(kind: str, params: dict[int, bytes], vendor: str, prefix: bytes) -> Endpoint | None:
    """An SEDP announcement's endpoint; None when it names no topic (a disposal)."""
    little = params[-1] == b"\x01"
    if PID_TOPIC_NAME not in params or PID_TYPE_NAME not in params:
        return None
    number = "<I" if little else ">I"
    reliability = DEFAULT_RELIABILITY[kind]
    if len(params.get(PID_RELIABILITY, b"")) >= 4:
        code = struct.unpack(number, params[PID_RELIABILITY][:4])[0]
        reliability = RELIABILITY.get(code, f"kind {code}")
    durability = "volatile"
    if len(params.get(PID_DURABILITY, b"")) >= 4:
        code = struct.unpack(number, params[PID_DURABILITY][:4])[0]
        durability = DURABILITY.get(code, f"kind {code}")
    guid = params.get(PID_ENDPOINT_GUID, b"")
    return Endpoint(
        kind=kind,
        topic=_string(params[PID_TOPIC_NAME], little),
        type_name=_string(params[PID_TYPE_NAME], little),
        reliability=reliability,
        durability=durability,
        vendor=f"{vendor[0]:02x}.{vendor[1]:02x}",
        participant=(guid[:12] if len(guid) >= 12 else prefix).hex(),
    )


class Reassembly:
    """DATA_FRAG pieces of one sample until it is whole (an announcement larger than a
    vendor's fragment size, some fragment above 1344 bytes)."""

    def __init__(self):
        self.parts: dict[tuple, dict] = {}

    def add(self, key: tuple, size: int, start: int, fragment_size: int, data: bytes):
        entry = self.parts.setdefault(key, {"size": size, "pieces": {}})
        entry["pieces"][(start - 1) * fragment_size] = data
        joined = bytearray(size)
        have = 0
        for offset, piece in entry["pieces"].items():
            joined[offset : offset + len(piece)] = piece
            have += len(piece)
        if have < size:
            return None
        del self.parts[key]
        return bytes(joined[:size])


def announcements(message: bytes, reassembly: Reassembly) -> list[Endpoint]:
    """The endpoints one RTPS message announces (none for anything else)."""
    if len(message) < 20 or message[:4] != b"RTPS":
        return []
    vendor, prefix, at, found = message[6:8], message[8:20], 20, []
    while at + 4 <= len(message):
        sid, flags = message[at], message[at + 1]
        little = bool(flags & 1)
        (length,) = struct.unpack_from("<H" if little else ">H", message, at + 2)
        body = message[at + 4 : at + 4 + length] if length else message[at + 4 :]
        at += 4 + length if length else len(message)
        if sid == INFO_SRC and len(body) >= 20:
            vendor, prefix = body[6:8], body[8:20]
        if sid not in (DATA, DATA_FRAG) or len(body) < 20:
            continue
        writer = body[8:12]
        if writer not in (SEDP_PUBLICATIONS, SEDP_SUBSCRIPTIONS):
            continue
        kind = "writer" if writer == SEDP_PUBLICATIONS else "reader"
        to_inline = struct.unpack_from("<H" if little else ">H", body, 2)[0]
        start = 4 + to_inline  # octetsToInlineQos counts from the field after it
        payload = _past_inline_qos(body, start, flags, little, sid)
        if payload is None:
            continue
        if sid == DATA_FRAG:
            if len(body) < 32:
                continue
            fmt = "<IHHI" if little else ">IHHI"
            first, _count, fragment_size, size = struct.unpack_from(fmt, body, 20)
            key = (prefix, bytes(body[8:20]))  # writer and sequence number
            payload = reassembly.add(key, size, first, fragment_size, payload)
            if payload is None:
                continue
        params = parameters(payload)
        if params is not None and (e := endpoint(kind, params, vendor, prefix)) is not None:
            found.append(e)
    return found


def _past_inline_qos(body: bytes, start: int, flags: int, little: bool, sid: int):
    """The serialized payload of a DATA or DATA_FRAG submessage (inline QoS skipped);
    None for a DATA that carries neither data nor a key."""
    at = start
    if flags & 0x02:  # Q: an inline QoS parameter list precedes the payload
        while at + 4 <= len(body):
            pid, length = struct.unpack_from("<HH" if little else ">HH", body, at)
            at += 4 + length
            if pid == PID_SENTINEL:
                break
    if sid == DATA and not flags & 0x0C:  # D (data) or K (key); a fragment always has some
        return None
    return body[at:]


# A classic BPF program for the packet socket: an arriving (not outgoing: on lo each
# packet is seen twice) IPv4 UDP datagram, not a later IP fragment, whose payload starts
# with "RTPS"; the rest of lo's traffic never reaches psbench, nor counts as dropped.
SKF_AD_PKTTYPE = 0xFFFFF000 + 4  # the kernel's ancillary load of the packet type
_RTPS_ONLY = [
    (0x30, 0, 0, SKF_AD_PKTTYPE),  # ldb the packet type
    (0x15, 10, 0, PACKET_OUTGOING),  # jeq outgoing: drop
    (0x28, 0, 0, 12),  # ldh [12]: the Ethernet type
    (0x15, 0, 8, 0x0800),  # jeq IPv4, else drop
    (0x30, 0, 0, 23),  # ldb [23]: the IP protocol
    (0x15, 0, 6, socket.IPPROTO_UDP),  # jeq UDP, else drop
    (0x28, 0, 0, 20),  # ldh [20]: flags and fragment offset
    (0x45, 4, 0, 0x1FFF),  # jset offset: a later fragment has no UDP header, drop
    (0xB1, 0, 0, 14),  # ldxb 4*([14]&0xf): X = the IP header's length
    (0x40, 0, 0, 22),  # ld [x+22]: the first 4 bytes of the UDP payload
    (0x15, 0, 1, 0x52545053),  # jeq "RTPS", else drop
    (0x06, 0, 0, 0x40000),  # accept (up to 256 KiB)
    (0x06, 0, 0, 0),  # drop
]
SO_ATTACH_FILTER, SO_RCVBUFFORCE = 26, 33
SOL_PACKET, PACKET_STATISTICS = 263, 6
RECEIVE_BUFFER = 32 << 20


def _attach_rtps_filter(sock: socket.socket) -> None:
    program = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in _RTPS_ONLY))
    fprog = struct.pack("HL", len(_RTPS_ONLY), ctypes.addressof(program))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)


class WireWatch:
    """Reads RTPS discovery on lo in a thread while a cell runs: `with WireWatch() as w:
    ...; w.endpoints(run_id)`. available is False (and why says why) when no packet
    socket can be opened (not root). dropped: packets the kernel could not hand over
    (the reader fell behind); with any, what was not seen may still have been sent."""

    READ_TIMEOUT_S = 0.2

    def __init__(self, interface: str = "lo", limit_s: float = 300.0):
        self.interface, self.limit_s = interface, limit_s
        self.found: list[Endpoint] = []
        self.why: str | None = None
        self.dropped = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    @property
    def available(self) -> bool:
        return self._sock is not None

    def __enter__(self) -> "WireWatch":
        try:
            self._sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            _attach_rtps_filter(self._sock)
            self._sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
            self._sock.bind((self.interface, 0))
            self._sock.settimeout(self.READ_TIMEOUT_S)
            self._sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)  # reading resets them
        except (OSError, AttributeError) as exc:
            self._sock = None
            self.why = f"the wire cannot be read ({exc}): it needs root (CAP_NET_RAW)"
            return self
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._sock is not None:
            _, self.dropped = struct.unpack(
                "II", self._sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
            )
            self._sock.close()

    def _read(self) -> None:
        reassembly, until = Reassembly(), time.monotonic() + self.limit_s
        while not self._stop.is_set() and time.monotonic() < until:
            try:
                frame, address = self._sock.recvfrom(65535)
            except TimeoutError:
                continue
            except OSError:
                return
            if address[2] == PACKET_OUTGOING:
                continue
            udp = _udp_payload(frame)
            if udp is not None:
                self.found.extend(announcements(udp, reassembly))

    def endpoints(self, run_id: str) -> list[Endpoint]:
        """The distinct endpoints announced on topics of this run."""
        return list(dict.fromkeys(e for e in self.found if run_id in e.topic))


def _udp_payload(frame: bytes) -> bytes | None:
    ip = frame[ETHERNET_HEADER:]
    if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != socket.IPPROTO_UDP:
        return None
    header = (ip[0] & 0x0F) * 4
    return ip[header + 8 :]
