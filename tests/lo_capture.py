"""IPv4 packets seen on lo by a packet socket (root or CAP_NET_RAW), read in a thread
while a test's run goes on: `capture = LoCapture(keep)`, run, `capture.close()`. keep(ip)
gets each IPv4 packet (from its IP header on) and returns what to keep of it, or None.
dropped: packets the kernel could not hand over (the reader fell behind the other tests'
traffic on lo): with any, a packet of the run may be missing, and the test runs again
(`captured`) rather than judge a partial capture."""

import socket
import struct
import threading

import pytest

from psbench.run.rtps_wire import PACKET_STATISTICS, RECEIVE_BUFFER, SO_RCVBUFFORCE, SOL_PACKET

ETH_P_IP = 0x0800
TRIES = 3  # runs made until one was captured without a dropped packet


class LoCapture:
    LIMIT = 200_000  # packets kept (other tests may be running on lo too)

    def __init__(self, keep):
        try:
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
        except PermissionError:
            pytest.skip("a raw socket needs root or CAP_NET_RAW")
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
        self.sock.bind(("lo", 0))
        self.sock.settimeout(0.2)
        self.sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)  # reading resets them
        self.keep, self.kept, self.dropped = keep, [], 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set() and len(self.kept) < self.LIMIT:
            try:
                packet = self.sock.recv(65535)
            except TimeoutError:
                continue
            if len(packet) >= 20 and (found := self.keep(packet)) is not None:
                self.kept.append(found)

    def close(self):
        self.stop.set()
        self.thread.join()
        _, self.dropped = struct.unpack(
            "II", self.sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
        )
        self.sock.close()


def captured(keep, run):
    """What keep kept of the packets of run() (which asserts its own outcome), from the
    first of TRIES runs whose capture dropped nothing."""
    for _ in range(TRIES):
        capture = LoCapture(keep)
        try:
            run()
        finally:
            capture.close()
        if capture.dropped == 0:
            return capture.kept
    pytest.fail(f"every capture of {TRIES} runs dropped packets (lo too busy)")


def tcp_segment(packet: bytes):
    """(source port, destination port, payload's first 2 KiB) of a TCP segment with a
    payload, else None."""
    header = (packet[0] & 0x0F) * 4
    if packet[9] != socket.IPPROTO_TCP or len(packet) < header + 20:
        return None
    sport, dport = struct.unpack(">HH", packet[header : header + 4])
    payload = packet[header + (packet[header + 12] >> 4) * 4 :]
    return (sport, dport, payload[:2048]) if payload else None


def udp_datagram(packet: bytes):
    """(destination port, payload) of a UDP datagram, else None."""
    header = (packet[0] & 0x0F) * 4
    if packet[9] != socket.IPPROTO_UDP or len(packet) < header + 8:
        return None
    return struct.unpack(">H", packet[header + 2 : header + 4])[0], packet[header + 8 :]
