"""Two private network namespaces joined by a veth pair, for tests and benches of
psbench-netdelay (docs/netdelay.md). Nothing here touches the machine's own interfaces:
the veth ends are created inside the namespaces, addresses are in 198.18.0.0/15, and
deleting a namespace removes its veth end and its iptables rules.

Namespace `a` sends (a UDP client), namespace `b` echoes. Traffic a -> b can be steered
to an NFQUEUE in `a` (its OUTPUT chain), so only that direction passes the delay stage.
"""

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HELPER = Path(os.environ.get("PSBENCH_BUILD", REPO / "build")) / "netem" / "psbench-netdelay"
PREFIX = "psbt-"
ADDR_A, ADDR_B, PORT = "198.18.0.1", "198.18.0.2", 9000

# Echoes every datagram back to its sender; says "ready" once bound.
ECHO = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE: bursts must not overflow
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready", flush=True)
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(data, peer)
"""

# Sends numbered datagrams and prints, as JSON, the numbers echoed back in arrival order
# and (ping mode) each round trip in ns. ping: one at a time, each waiting for its echo up
# to `wait` s; burst: all back to back, then echoes are read until `wait` s pass quietly.
CLIENT = """
import json, socket, sys, time
mode, host, port, count, wait = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)
s.connect((host, port))
got, rtts = [], []
if mode == "ping":
    s.settimeout(wait)
    for i in range(count):
        t0 = time.perf_counter_ns()
        s.send(i.to_bytes(4, "big"))
        while True:
            try:
                n = int.from_bytes(s.recv(64), "big")
            except TimeoutError:
                break
            if n == i:
                rtts.append(time.perf_counter_ns() - t0)
                got.append(n)
                break
else:
    for i in range(count):
        s.send(i.to_bytes(4, "big"))
    s.settimeout(wait)
    try:
        while len(got) < count:
            got.append(int.from_bytes(s.recv(64), "big"))
    except TimeoutError:
        pass
print(json.dumps({"got": got, "rtts_ns": rtts}))
"""


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, check=check, timeout=30)


class NetnsPair:
    def __init__(self):
        tag = f"{random.getrandbits(32):08x}"
        self.a, self.b = f"{PREFIX}{tag}a", f"{PREFIX}{tag}b"
        self.queue = random.randrange(1, 65536)
        self.procs: list[subprocess.Popen] = []
        self.helper: subprocess.Popen | None = None

    def __enter__(self) -> "NetnsPair":
        try:
            run("ip", "netns", "add", self.a)
            run("ip", "netns", "add", self.b)
            # Both ends are made inside the namespaces: the host's own links are never named.
            run("ip", "-n", self.a, "link", "add", "va", "type", "veth", "peer", "name", "vb",
                "netns", self.b)  # fmt: skip
            for ns, dev, addr in ((self.a, "va", ADDR_A), (self.b, "vb", ADDR_B)):
                run("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
                run("ip", "-n", ns, "link", "set", dev, "up")
                run("ip", "-n", ns, "link", "set", "lo", "up")
            echo = self.spawn(self.b, [sys.executable, "-c", ECHO, ADDR_B, str(PORT)])
            if echo.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the echo server did not start: {echo.stderr.read()}")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def spawn(self, ns: str, argv: list[str]) -> subprocess.Popen:
        # `ip netns exec` execs the program, so the process (and its pid) is the program's.
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.procs.append(p)
        return p

    def add_queue_rule(self) -> None:
        run("ip", "netns", "exec", self.a, "iptables", "-A", "OUTPUT", "-o", "va", "-p", "udp",
            "-j", "NFQUEUE", "--queue-num", str(self.queue))  # fmt: skip

    def delete_queue_rule(self) -> None:
        run("ip", "netns", "exec", self.a, "iptables", "-D", "OUTPUT", "-o", "va", "-p", "udp",
            "-j", "NFQUEUE", "--queue-num", str(self.queue))  # fmt: skip

    def bound_queues(self) -> set[int]:
        """Queue numbers a listener holds in namespace a (the kernel's own list)."""
        out = run("ip", "netns", "exec", self.a, "cat", "/proc/net/netfilter/nfnetlink_queue",
                  check=False).stdout  # fmt: skip
        return {int(line.split()[0]) for line in out.splitlines() if line.strip()}

    def start_helper(self, *args: str) -> subprocess.Popen:
        """Starts psbench-netdelay on this pair's queue in namespace a; returns once the
        kernel shows the queue bound."""
        self.helper = self.spawn(self.a, [str(HELPER), "--queue", str(self.queue), *args])
        for _ in range(200):
            if self.queue in self.bound_queues():
                return self.helper
            if self.helper.poll() is not None:
                raise RuntimeError(f"psbench-netdelay exited: {self.helper.stderr.read()}")
            time.sleep(0.025)
        raise RuntimeError("psbench-netdelay did not bind its queue within 5 s")

    def stop_helper(self) -> dict:
        """SIGTERM, then the helper's exit line as a dict."""
        helper, self.helper = self.helper, None
        helper.terminate()
        out, err = helper.communicate(timeout=10)
        if helper.returncode != 0:
            raise RuntimeError(f"psbench-netdelay exited {helper.returncode}: {err}")
        return json.loads(out.strip().splitlines()[-1])

    def client(self, mode: str, count: int, wait: float) -> dict:
        argv = [sys.executable, "-c", CLIENT, mode, ADDR_B, str(PORT), str(count), str(wait)]
        timeout = 60 + count * (wait if mode == "ping" else 0.01)
        proc = subprocess.run(
            ["ip", "netns", "exec", self.a, *argv], capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
        if proc.returncode != 0:
            raise RuntimeError(f"client failed: {proc.stderr}")
        return json.loads(proc.stdout)

    def close(self) -> None:
        # Deleting a namespace does not end its processes: end ours first.
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.communicate(timeout=10)
        for ns in (self.a, self.b):
            run("ip", "netns", "del", ns, check=False)
