"""Physics checks of emulated links (docs/network.md): for each shaping mechanism this
machine uses, what was asked against what a plain UDP sender and receiver measure across
two emulated hosts. Prints figures only; the tests assert only what cannot be noise.

  rate:  what a link shaped to R carries (the sender offers 1.2 R, the receiver times
         the arrivals; Ethernet, IP and UDP headers counted), against R; goal: within
         5 %, never above.
  delay: median round trip with delay d on host b's link (crossed twice per round trip),
         against the unshaped median + 2d.
  loss:  datagrams through host b's link with loss p, against the 99.9 % binomial
         interval of n (1 - p).

Needs root. Traffic only between 198.18.0.0/24 addresses inside the namespaces it makes.
"""

import json
import math
import os
import statistics
import subprocess
import sys

from psbench.hosts import udp_receiver, udp_sender
from psbench.hosts.emulated import EmulatedNetwork
from psbench.hosts.links import LinkShape


def exchange(shape_b: LinkShape, count, size=64, gap=0.0, ping=False):
    with EmulatedNetwork({"a": LinkShape(), "b": shape_b}) as net:
        receiver = subprocess.Popen(
            net.argv(
                "b",
                [
                    sys.executable,
                    str(udp_receiver.SCRIPT),
                    "198.18.0.2",
                    "9100",
                    "1.5",
                    "echo" if ping else "count",
                ],
            ),
            stdout=subprocess.PIPE,
            text=True,
        )
        receiver.stdout.readline()
        sent = subprocess.run(
            net.argv(
                "a",
                [
                    sys.executable,
                    str(udp_sender.SCRIPT),
                    "198.18.0.2",
                    "9100",
                    str(count),
                    str(size),
                    str(gap),
                    "ping" if ping else "send",
                    str(16 << 20),  # offering more than the link: not held back by its socket
                ],
            ),
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        got = json.loads(receiver.communicate(timeout=60)[0])
        applied = net.describe()["hosts"]["b"]["applied"]
    return got, json.loads(sent.stdout)["rtts"], applied


def main() -> int:
    if os.geteuid() != 0:
        print("bench/network_check needs root (network namespaces)", file=sys.stderr)
        return 2
    print(
        "rate: 1200-byte datagrams offered at 1.2 R (back to back above 50 Mbit/s) for "
        "about 2 s; measured on the wire"
    )
    print(f"  {'asked':>10}  {'measured':>10}  {'ratio':>6}  mechanism")
    for rate in (1_000_000, 10_000_000, 100_000_000):
        per_s = 1.2 * rate / 8 / 1242  # a full queue, never a burst of the whole offer
        # Python cannot pace gaps under ~200 us: there, back to back (the bucket is then
        # small beside 2 s of traffic).
        count, gap = int(2 * per_s), (1 / per_s if per_s < 5000 else 0.0)
        got, _, applied = exchange(LinkShape(rate_bps=rate), count, size=1200, gap=gap)
        span = got["last"] - got["first"]
        measured = (got["bytes"] - 1200) * 8 / span if span > 0 else float("nan")
        # The wire carries 1200 + 28 (UDP/IP) + 14 (Ethernet) bytes per datagram.
        wire = measured * (1200 + 42) / 1200
        print(f"  {rate / 1e6:>8g}M  {wire / 1e6:>9.2f}M  {wire / rate:>6.3f}  {applied['rate']}")
    print("delay: median round trip, 300 pings of 64 B")
    base = statistics.median(exchange(LinkShape(), 300, ping=True)[1])
    print(f"  unshaped: {base * 1e6:.0f} us")
    print(f"  {'d':>8}  {'median RTT':>11}  {'base + 2d':>10}  {'added - 2d':>10}  mechanism")
    for delay_us in (0, 100, 1000, 10000):
        _, rtts, applied = exchange(LinkShape(delay_us=delay_us), 300, ping=True)
        median = statistics.median(rtts)
        expected = base + 2 * delay_us / 1e6
        print(
            f"  {delay_us:>6}us  {median * 1e6:>9.0f}us  {expected * 1e6:>8.0f}us  "
            f"{(median - expected) * 1e6:>8.0f}us  {applied.get('delay', '-')}"
        )
    print("loss: 5000 datagrams of 64 B through host b's link")
    print(f"  {'asked':>6}  {'arrived':>8}  {'expected':>9}  {'99.9% interval':>16}  mechanism")
    n = 5000
    for loss in (1.0, 10.0, 50.0):
        got, _, applied = exchange(LinkShape(loss_pct=loss), n, gap=0.0001)
        p = 1 - loss / 100
        half = 3.29 * math.sqrt(n * p * (1 - p))
        print(
            f"  {loss:>5g}%  {got['count']:>8}  {n * p:>9.0f}  "
            f"{n * p - half:>7.0f}..{n * p + half:<7.0f}  {applied['loss']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
