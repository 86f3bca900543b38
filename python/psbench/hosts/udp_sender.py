"""A plain UDP sender for checking emulated links (bench/network_check, the hosts tests),
run as a script inside a host's namespace, standard library only; udp_receiver.py is the
other end:

    python udp_sender.py ADDRESS PORT COUNT SIZE GAP ping|send [SNDBUF]

Sends COUNT datagrams of SIZE bytes, each numbered in its payload, to ADDRESS:PORT, GAP s
apart; with `ping` one at a time, each waiting (up to 2 s) for its echo. SNDBUF: the
socket's send buffer in bytes (SO_SNDBUFFORCE, root), so that a sender offering more than
the link carries is not held back by its own socket. Prints one JSON line {"rtts": [...]},
the round trips in s."""

import json
import socket
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__)
SO_SNDBUFFORCE = 32


def main(address: str, port: int, count: int, size: int, gap: float, ping: bool,
         sndbuf: int | None) -> None:  # fmt: skip
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if sndbuf:
        s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, sndbuf)
    s.connect((address, port))
    s.settimeout(2)
    rtts = []
    for i in range(count):
        t = time.monotonic()
        s.send(i.to_bytes(4, "big") * (size // 4))
        if ping:
            try:
                s.recv(65536)
                rtts.append(time.monotonic() - t)
            except TimeoutError:
                pass
        elif gap:
            time.sleep(gap)
    print(json.dumps({"rtts": rtts}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
         sys.argv[6] == "ping", int(sys.argv[7]) if len(sys.argv) > 7 else None)  # fmt: skip
