"""Throughput of one run: what each receiver got per second on its own clock, what each
publisher sent, and what was offered.

From the node's `throughput` blocks when the summaries have them (docs/node.md): the
samples file may stop at --max-samples while the node keeps counting, so the blocks are
the full count. Results written before the blocks existed fall back to the samples.

Rates are (count - 1) / (last - first) on the clock of the process that counted them
(the subscriber's for what was received, the publisher's for what was sent): n events
span n - 1 intervals. None with fewer than 2 events. Mbit/s is that rate times the mean
message, whole messages, the psbench header included.
"""

import numpy as np

from psbench.results.describe import throughput as samples_throughput

BIN_NS = 1_000_000_000  # the per-second series


def span_rate(count, first_ns, last_ns) -> float | None:
    """(count - 1) / (last - first) in events per second: the intervals between the
    first and the last event over their span; None with fewer than 2 events."""
    if count is None or first_ns is None or last_ns is None:
        return None
    span = last_ns - first_ns
    if count < 2 or span <= 0:
        return None
    return (count - 1) / (span / 1e9)


def span_mbit(received_bytes, count, first_ns, last_ns) -> float | None:
    """Mbit/s: the span rate times the mean message of the count (whole messages)."""
    rate = span_rate(count, first_ns, last_ns)
    if rate is None or received_bytes is None:
        return None
    return rate * received_bytes / count * 8 / 1e6


def loss_percent(lost, sent) -> float | None:
    """lost as a percentage of what the publishers said they sent."""
    if lost is None or not sent:
        return None
    return 100.0 * lost / sent


def used_bins(per_bin: list, first_ns, last_ns, bin_ns: int) -> list[int]:
    """The bins up to the one holding the last arrival: the node preallocates bins for
    the whole timeout, the ones after the last arrival are not part of the run."""
    if first_ns is None or last_ns is None or not per_bin:
        return []
    used = int((last_ns - first_ns) // bin_ns) + 1
    return [int(x) for x in per_bin[:used]]


def bins_of(receive_ns: np.ndarray, bin_ns: int = BIN_NS) -> list[int]:
    """Arrivals per bin, bins anchored at the first arrival (as the node counts them)."""
    receive = np.asarray(receive_ns, dtype=np.int64)
    if receive.size == 0:
        return []
    return [int(x) for x in np.bincount((receive - receive.min()) // bin_ns)]


def _counted(summary: dict) -> tuple:
    counts = summary.get("counts") or {}
    return counts.get("sent"), counts.get("lost")


def receiver_from_block(summary: dict, size: int | None) -> dict:
    """One receiver's throughput from its summary's throughput block."""
    block = summary["throughput"]
    first, last = block.get("first_arrival_ns"), block.get("last_arrival_ns")
    received = int(block.get("received") or 0)
    rate = span_rate(received, first, last)
    received_bytes = block.get("received_bytes")
    if received_bytes is None and size:
        received_bytes = received * size
    mbit = span_mbit(received_bytes, received, first, last)
    sent, lost = _counted(summary)
    bin_ns = int(block.get("bin_ns") or BIN_NS)
    return {
        "received": received,
        "sent": sent,
        "lost": lost,
        "beyond_capacity": int(block.get("beyond_capacity") or 0),
        "samples_per_s": rate,
        "mbit_per_s": mbit,
        "loss_percent": loss_percent(lost, sent),
        "bin_ns": bin_ns,
        "per_bin": used_bins(block.get("per_bin") or [], first, last, bin_ns),
    }


def receiver_from_samples(summary: dict, receive_ns: np.ndarray, size: int | None) -> dict:
    """One receiver's throughput from its recorded samples (results before the blocks):
    (samples - 1) / (last - first), the samples' intervals over their span."""
    rates = samples_throughput(receive_ns, size)
    sent, lost = _counted(summary)
    counts = summary.get("counts") or {}
    received = counts.get("received")
    return {
        "received": int(received if received is not None else len(receive_ns)),
        "sent": sent,
        "lost": lost,
        "beyond_capacity": 0,
        "samples_per_s": rates["samples_per_s"],
        "mbit_per_s": rates["mbit_per_s"],
        "loss_percent": loss_percent(lost, sent),
        "bin_ns": BIN_NS,
        "per_bin": bins_of(receive_ns),
    }


def publisher_rate(summary: dict) -> dict:
    """What one publisher sent, on its own clock, and the rate it was asked for."""
    block = summary.get("throughput") or {}
    config = summary.get("config") or {}
    counts = summary.get("counts") or {}
    sent = block.get("sent", counts.get("sent"))
    offered = block.get("offered_rate_hz", config.get("rate_hz"))
    return {
        "sent": sent,
        "offered_rate_hz": None if offered is None else float(offered),
        "achieved_rate_hz": span_rate(sent, block.get("first_send_ns"), block.get("last_send_ns")),
    }


def _sum(values: list) -> float | None:
    present = [v for v in values if v is not None]
    return float(sum(present)) if present else None


def add_bins(series: list[list[int]]) -> list[int]:
    """Per-second series added bin by bin (each anchored at its own first arrival)."""
    length = max((len(s) for s in series), default=0)
    return [sum(s[i] for s in series if i < len(s)) for i in range(length)]


def run_throughput(
    receivers: dict[str, dict],
    publishers: dict[str, dict],
    receive_ns: dict[str, np.ndarray],
    size: int | None,
    rate_setting,
) -> dict:
    """A run's throughput: each receiver's, all of them together (rates added, loss over
    everything sent to them, per-second series added), each publisher's, and the rate
    offered (publishers' rates added; 0 = as fast as possible)."""
    subs = {}
    for name, summary in receivers.items():
        if isinstance(summary.get("throughput"), dict):
            subs[name] = dict(receiver_from_block(summary, size), source="node")
        elif name in receive_ns:
            subs[name] = dict(
                receiver_from_samples(summary, receive_ns[name], size), source="samples"
            )
    pubs = {name: publisher_rate(s) for name, s in publishers.items()}
    offered_each = [p["offered_rate_hz"] for p in pubs.values()]
    offered: float | None
    if pubs and all(o is not None for o in offered_each):
        offered = 0.0 if any(o == 0 for o in offered_each) else float(sum(offered_each))
    else:
        offered = None if rate_setting is None else float(rate_setting)
    sent = sum(s["sent"] or 0 for s in subs.values())
    lost = sum(s["lost"] or 0 for s in subs.values())
    sources = {s["source"] for s in subs.values()}
    return {
        "source": sources.pop() if len(sources) == 1 else ("mixed" if sources else None),
        "subscribers": subs,
        "samples_per_s": _sum([s["samples_per_s"] for s in subs.values()]),
        "mbit_per_s": _sum([s["mbit_per_s"] for s in subs.values()]),
        "received": sum(s["received"] for s in subs.values()),
        "loss_percent": loss_percent(lost, sent),
        "per_bin": add_bins([s["per_bin"] for s in subs.values()]),
        "publishers": pubs,
        "offered_rate_hz": offered,
        "achieved_rate_hz": _sum([p["achieved_rate_hz"] for p in pubs.values()]),
    }
