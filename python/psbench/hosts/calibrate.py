"""What an emulated network itself adds: before a run, small UDP datagrams echoed between
two of its hosts, through the links and the mechanisms the run will cross, give the
measured round trip beside the configured one (twice both links' delays). The difference
is the emulation's own cost (veth, bridge, the delay stage); with `delay: 0us` it is the
delay stage's cost alone. docs/network.md, "Calibration"."""

import socket
import statistics
import struct
import threading
import time

from psbench.hosts import netns

PROBES = 200
PROBE_BYTES = 64
PORT = 47999  # inside psbench's own namespaces only: nothing else listens there
BUDGET_S = 5.0  # the whole calibration of one pair, lost probes included


def configured_rtt_us(network, a: str, b: str) -> int:
    """Twice the delays of both hosts' links (each way crosses both)."""
    delays = (network.hosts[h].shape.delay_us or 0 for h in (a, b))
    return 2 * sum(delays)


def round_trips_ns(network, a: str, b: str, probes: int = PROBES) -> tuple[int, list[int]]:
    """How many datagrams host a sent to an echo on host b (up to `probes`, within
    BUDGET_S) and the round trips of those that came back."""
    server = network.hosts[b]
    ready = threading.Event()
    stop = threading.Event()

    def echo():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((server.address, PORT))
            s.settimeout(0.1)
            ready.set()
            while not stop.is_set():
                try:
                    data, peer = s.recvfrom(PROBE_BYTES)
                    s.sendto(data, peer)
                except OSError:
                    continue  # nothing yet, or the answer lost on the way out

    def probe():
        wait_s = max(0.05, 4 * configured_rtt_us(network, a, b) / 1e6)
        end = time.monotonic() + BUDGET_S
        sent_count, got = 0, []
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((server.address, PORT))
            s.settimeout(wait_s)
            for i in range(probes):
                if time.monotonic() > end:
                    break
                sent = time.perf_counter_ns()
                sent_count += 1
                try:
                    s.send(struct.pack("!I", i).ljust(PROBE_BYTES, b"\0"))
                    while struct.unpack("!I", s.recv(PROBE_BYTES)[:4])[0] != i:
                        pass  # a late answer to an earlier probe
                except OSError:
                    continue  # lost either way (timed out, or dropped on the way out)
                got.append(time.perf_counter_ns() - sent)
        return sent_count, got

    echoing = threading.Thread(target=lambda: netns.call_inside(server.namespace, echo))
    echoing.start()
    try:
        if not ready.wait(5):
            return 0, []
        return netns.call_inside(network.hosts[a].namespace, probe)
    finally:
        stop.set()
        echoing.join()


def calibrate(network, a: str, b: str) -> dict:
    """For run.json: the pair, the configured and the measured round trip, what the
    emulation adds (median - configured)."""
    sent, rtts = round_trips_ns(network, a, b)
    rtts.sort()
    configured = configured_rtt_us(network, a, b)
    entry = {
        "hosts": [a, b],
        "probes": sent,
        "received": len(rtts),
        "probe_bytes": PROBE_BYTES,
        "configured_rtt_us": configured,
    }
    if rtts:
        median_us = statistics.median(rtts) / 1000
        entry.update(
            rtt_us={"min": rtts[0] / 1000, "p50": median_us, "max": rtts[-1] / 1000},
            added_us=median_us - configured,
        )
    return entry
