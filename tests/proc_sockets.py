"""The IPv4 sockets a process holds, read from /proc: its descriptors' socket inodes
looked up in /proc/net/udp or /proc/net/tcp."""

import os
from pathlib import Path


def _address(text: str) -> tuple[str, int]:
    """/proc/net's "0100007F:1F90" -> ("127.0.0.1", 8080)."""
    ip, port = text.split(":")
    return ".".join(str(int(ip[i : i + 2], 16)) for i in (6, 4, 2, 0)), int(port, 16)


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
