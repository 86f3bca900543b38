"""Synthetic run folders for the analysis tests: node summaries (with or without the
throughput and echo blocks of issue 7), samples files and run.json, written as the node
and psbench write them, with values chosen so that every rate and percentile is known.

The analysis is what is under test here: its inputs are built by hand so that the
expected numbers follow from them exactly. tests/test_report_throughput.py also reports
a real run of the current node.
"""

import json
from pathlib import Path

import numpy as np

from psbench.results.samples import HEADER, HEADER_SIZE, MAGIC, RECORD_DTYPE, VERSION

KIND_CODES = {"rtt": 1, "one_way": 2}
SECOND = 1_000_000_000


def write_samples(path: Path, kind: str, seq, intended_ns, latency_ns) -> None:
    records = np.zeros(len(seq), dtype=RECORD_DTYPE)
    records["seq"], records["intended_ns"], records["latency_ns"] = seq, intended_ns, latency_ns
    header = HEADER.pack(
        MAGIC, VERSION, RECORD_DTYPE.itemsize, len(records), KIND_CODES[kind], 0, 0
    )
    path.write_bytes(header.ljust(HEADER_SIZE, b"\0") + records.tobytes())


def _summary(
    role: str, name: str, config: dict, counts: dict, samples_file=None, sample_kind=None
) -> dict:
    return {
        "format": "psbench-node-summary/1",
        "role": role,
        "name": name,
        "config": config,
        "counts": counts,
        "samples_file": samples_file,
        "sample_kind": sample_kind,
        "exit_code": 0,
        "error": None,
        "realtime": {"cpu": 0, "sched_policy": "SCHED_FIFO"},
    }


class Sub:
    """One subscriber's arrivals: seq 0..sent-1 at `rate` Hz from t0, some lost, each with
    a one-way latency of base_ns + (seq % 100) * 10 ns; the samples file may hold only
    the first `stored` (the node's --max-samples)."""

    def __init__(
        self,
        name: str,
        sent: int,
        rate: float,
        base_ns: int,
        lost=(),
        t0=0,
        stored: int | None = None,
        topic: str = "data",
    ):
        self.name, self.sent, self.rate, self.topic = name, sent, rate, topic
        seq = np.array([s for s in range(sent) if s not in set(lost)], dtype=np.int64)
        self.seq = seq
        self.intended = t0 + (seq * (SECOND / rate)).astype(np.int64)
        self.latency = base_ns + (seq % 100) * 10
        self.receive = self.intended + self.latency
        self.lost = sent - len(seq)
        self.stored = len(seq) if stored is None else stored

    @property
    def received(self) -> int:
        return len(self.seq)

    @property
    def span_s(self) -> float:
        return (int(self.receive[-1]) - int(self.receive[0])) / 1e9

    def per_second(self) -> list[int]:
        return [int(x) for x in np.bincount((self.receive - self.receive[0]) // SECOND)]


def write_run(
    folder: Path,
    spec: dict,
    subs: list[Sub],
    pubs: dict[str, dict],
    size: int,
    blocks: bool = True,
    echo: dict | None = None,
    status: str = "ok",
    run_id: str = "synthetic0",
) -> Path:
    """A run folder as psbench pubsub writes it. pubs: name -> {sent, first_send_ns,
    last_send_ns, rate_hz}. echo: {publisher, every, rtt_ns: [...], expected} gives that
    publisher a pub.samples of kind rtt and an echo block."""
    folder.mkdir(parents=True)
    base_config = {
        "run_id": run_id,
        "size": size,
        "mode": "open_loop",
        "max_samples": 2_000_000,
        "publishers": len(pubs),
        "echo_every": None,
    }
    for sub in subs:
        file = f"{sub.name}.samples"
        write_samples(
            folder / file,
            "one_way",
            sub.seq[: sub.stored],
            sub.intended[: sub.stored],
            sub.latency[: sub.stored],
        )
        counts = {
            "sent": sub.sent,
            "received": sub.received,
            "samples": sub.stored,
            "lost": sub.lost,
            "duplicated": 0,
            "reordered": 0,
            "late": 0,
            "corrupted": 0,
            "warmup": 0,
            "write_errors": 0,
        }
        summary = _summary(
            "sub",
            sub.name,
            dict(base_config, topic=sub.topic, rate_hz=sub.rate),
            counts,
            file,
            "one_way",
        )
        if blocks:
            # bins preallocated for the timeout: zeros after the last arrival
            summary["throughput"] = {
                "first_arrival_ns": int(sub.receive[0]),
                "last_arrival_ns": int(sub.receive[-1]),
                "received": sub.received,
                "received_bytes": sub.received * size,
                "beyond_capacity": sub.received - sub.stored,
                "bin_ns": SECOND,
                "per_bin": sub.per_second() + [0] * 5,
            }
        (folder / f"{sub.name}.json").write_text(json.dumps(summary))
    for writer_id, (name, pub) in enumerate(pubs.items()):
        config = dict(base_config, rate_hz=pub["rate_hz"], writer_id=writer_id)
        counts = {
            "sent": pub["sent"],
            "received": 0,
            "samples": 0,
            "lost": 0,
            "warmup": 0,
            "write_errors": 0,
        }
        summary = _summary("pub", name, config, counts)
        if blocks:
            summary["throughput"] = {
                "first_send_ns": pub["first_send_ns"],
                "last_send_ns": pub["last_send_ns"],
                "sent": pub["sent"],
                "sent_bytes": pub["sent"] * size,
                "bin_ns": SECOND,
                "per_bin": [],
                "offered_rate_hz": float(pub["rate_hz"]),
            }
        if echo and echo["publisher"] == name:
            rtt = np.asarray(echo["rtt_ns"], dtype=np.int64)
            seq = np.arange(len(rtt)) * echo["every"]
            write_samples(folder / f"{name}.samples", "rtt", seq, seq * 1000, rtt)
            summary.update(samples_file=f"{name}.samples", sample_kind="rtt")
            summary["config"]["echo_every"] = echo["every"]
            summary["echo"] = {
                "expected": echo["expected"],
                "received": len(rtt),
                "lost": echo["expected"] - len(rtt),
            }
        (folder / f"{name}.json").write_text(json.dumps(summary))
    record = {
        "format": "psbench-run/1",
        "run_id": run_id,
        "kind": spec["kind"],
        "spec": spec,
        "status": status,
        "message": None,
        "env": {},
    }
    (folder / "run.json").write_text(json.dumps(record))
    return folder


def pubsub_spec(**settings) -> dict:
    return {
        "kind": "pubsub",
        "driver": "cyclonedds",
        "size": 1024,
        "count": 3000,
        "rate": 1000.0,
        "placement": "inter",
        "subscribers": 1,
        "timeout": 60.0,
        **settings,
    }


def search_document(steps: list[dict], best, bracket, max_loss=1.0, max_p99_ns=500_000) -> dict:
    return {
        "format": "psbench-search/1",
        "criteria": {"max_loss_percent": max_loss, "max_p99_ns": max_p99_ns},
        "steps": steps,
        "max_sustainable_rate_hz": best,
        "bracket": bracket,
        "ended_by": "precision",
    }
