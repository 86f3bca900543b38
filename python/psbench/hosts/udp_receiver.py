"""A plain UDP receiver for checking emulated links (bench/network_check, the hosts
tests), run as a script inside a host's namespace, standard library only:

    python udp_receiver.py ADDRESS PORT QUIET echo|count

Counts (and with `echo`, echoes) the datagrams arriving at ADDRESS:PORT until QUIET s pass
without one after the first (30 s before it); prints "ready" once bound, then one JSON
line {"count", "bytes", "first", "last"} (CLOCK_MONOTONIC s)."""

import json
import socket
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__)
SO_RCVBUFFORCE = 33


def main(address: str, port: int, quiet: float, echo: bool) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    s.bind((address, port))
    print("ready", flush=True)
    s.settimeout(30)
    count = size = 0
    first = last = None
    try:
        while True:
            data, peer = s.recvfrom(65536)
            last = time.monotonic()
            first = first or last
            count += 1
            size += len(data)
            if echo:
                s.sendto(data, peer)
            s.settimeout(quiet)
    except TimeoutError:
        pass
    print(json.dumps({"count": count, "bytes": size, "first": first, "last": last}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "echo")
