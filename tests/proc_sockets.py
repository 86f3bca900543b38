"""The sockets a process holds, read from /proc: its descriptors' socket inodes looked
up in /proc/net/udp, tcp (and udp6, tcp6)."""

import ipaddress
import os
from pathlib import Path


def _address(text: str) -> tuple[str, int]:
    """/proc/net's "0100007F:1F90" -> ("127.0.0.1", 8080); IPv6 alike (32 hex digits)."""
    ip, port = text.split(":")
    raw = bytes.fromhex(ip)
    # /proc/net prints each 32-bit word in host (little-endian) order.
    raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(raw)), int(port, 16)


def _rows(table: str) -> list[list[str]]:
    return [line.split() for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]]


def _held(pid: int, by_inode: dict) -> list:
    """The values of by_inode for the socket inodes the process holds."""
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in by_inode:
            found.append(by_inode[target[8:-1]])
    return found


def udp_sockets_of(pid: int) -> list[tuple[str, int]]:
    """(local address, local port) of each IPv4 UDP socket of a process."""
    return _held(pid, {row[9]: _address(row[1]) for row in _rows("udp")})


def tcp_sockets_of(pid: int) -> list[tuple[str, str, str]]:
    """(local "a.b.c.d:port", remote "a.b.c.d:port", state) of each IPv4 TCP socket of a
    process."""

    def text(field: str) -> str:
        address, port = _address(field)
        return f"{address}:{port}"

    return _held(pid, {row[9]: (text(row[1]), text(row[2]), row[3]) for row in _rows("tcp")})


def bound_addresses(pid: int) -> set[str]:
    """The local addresses of a process's UDP and TCP sockets, IPv4 and IPv6."""
    by_inode = {
        row[9]: _address(row[1])[0]
        for table in ("udp", "udp6", "tcp", "tcp6")
        for row in _rows(table)
    }
    return set(_held(pid, by_inode))
