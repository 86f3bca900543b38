"""The IPv4 UDP sockets a process holds, read from /proc: its descriptors' socket inodes
looked up in /proc/net/udp."""

import os
from pathlib import Path


def _udp_table() -> dict[str, tuple[str, int]]:
    """inode -> (local "a.b.c.d", local port) of every IPv4 UDP socket on this host."""
    table = {}
    for line in Path("/proc/net/udp").read_text().splitlines()[1:]:
        fields = line.split()
        address, port = fields[1].split(":")
        dotted = ".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0))
        table[fields[9]] = (dotted, int(port, 16))
    return table


def udp_sockets_of(pid: int) -> list[tuple[str, int]]:
    """(local address, local port) of each IPv4 UDP socket of a process."""
    table = _udp_table()
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in table:
            found.append(table[target[8:-1]])
    return found
