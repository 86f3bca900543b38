"""One-way latency between real machines, corrected for their clocks' offset.

A subscriber on one machine subtracts a writer's timestamp, taken on another machine's
CLOCK_MONOTONIC, from its own clock: the difference holds the clocks' offset. run.json's
`clock` block (psbench.hosts.clock, written by psbench.run.measure) has each host's
offset to the orchestrating machine before and after the run, and for each subscriber
its host and the host of each writer (by writer id). The raw samples file is never
changed: its records are corrected when read, each by the offset between the two hosts
at its send time (linear between the estimates), and the figures carry the offset's
uncertainty; they are flagged when it exceeds FLAG_SHARE of the median, or when the
offset moved during the run by more than the estimates can explain
(docs/network.md, "Clocks of real machines")."""

import numpy as np

from psbench.hosts.clock import FLAG_SHARE, Between, Offset
from psbench.results.samples import Samples


def _between(clock: dict, receiver: dict, writer_host: str) -> Between:
    if writer_host == receiver["host"]:
        return Between(None, None)
    hosts = clock["hosts"]
    return Between(Offset.from_json(hosts[receiver["host"]]), Offset.from_json(hosts[writer_host]))


def correct(samples: Samples, clock: dict | None, name: str) -> tuple[Samples, dict | None]:
    """The samples of receiver `name` with each record's clock offset taken out, and
    what was done (None when its writers share its host, or no clock block applies)."""
    receiver = ((clock or {}).get("receivers") or {}).get(name)
    if clock is None or samples.kind != "one_way" or not receiver:
        return samples, None
    writers = {int(k): _between(clock, receiver, h) for k, h in receiver["writers"].items()}
    if all(b.receiver is None for b in writers.values()):
        return samples, None
    records = samples.records.copy()
    removed = np.zeros(len(records), dtype=np.float64)
    for writer_id, between in writers.items():
        mine = records["writer"] == writer_id
        if between.receiver is None or between.writer is None or not mine.any():
            continue
        # The send time on this machine's clock: the writer's clock less its offset.
        local = records["send_ns"][mine] - between.writer.before.offset_ns
        removed[mine] = between.at(local.astype(np.float64))
    records["latency_ns"] = records["latency_ns"] - np.rint(removed).astype(np.int64)
    corrected = Samples(samples.path, samples.kind, samples.start_ns, records)
    return corrected, _verdict(corrected, removed, list(writers.values()))


def _verdict(samples: Samples, removed: np.ndarray, writers: list[Between]) -> dict:
    crossing = [b for b in writers if b.receiver is not None]
    uncertainty = max(b.uncertainty_ns for b in crossing)
    median = float(np.median(samples.latency_ns)) if len(samples) else None
    share = uncertainty / abs(median) if median else None
    drifted = any(b.drifted for b in crossing)
    why = []
    if share is None or share > FLAG_SHARE:
        why.append(
            f"the clocks' offset is known to ±{uncertainty / 1000:.1f} µs, "
            + (f"{100 * share:.0f}% of the median" if share is not None else "and no median")
            + f" (more than {100 * FLAG_SHARE:.0f}%)"
        )
    if drifted:
        moved = max((b.moved_ns for b in crossing), key=abs)
        why.append(
            f"the offset moved by {moved / 1000:.1f} µs during the run, more than its "
            "estimates' uncertainty explains"
        )
    return {
        "corrected": True,
        "offset_removed_ns": float(np.median(removed)) if len(removed) else None,
        "uncertainty_ns": uncertainty,
        "share_of_median": share,
        "moved_ns": max((b.moved_ns for b in crossing), key=abs),
        "drifted": drifted,
        "flagged": bool(why),
        "why": "; ".join(why) or None,
    }
