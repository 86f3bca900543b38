"""Reads the node's raw sample files (`<role>.samples`, see docs/node.md)."""

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"PSBSMP01"
VERSION = 2
HEADER_SIZE = 64
# magic, version, record_size, count, kind, reserved, start_ns (little-endian)
HEADER = struct.Struct("<8sIIQIIq")
# Version 2: records in arrival order, with the write's start, flags and the writer.
RECORD_DTYPE = np.dtype(
    [
        ("seq", "<u8"),
        ("intended_ns", "<i8"),
        ("latency_ns", "<i8"),
        ("send_ns", "<i8"),
        ("flags", "<u4"),
        ("writer", "<u4"),
    ]
)
# Version 1 (older results): seq order, no send time (it was the intended time).
RECORD_DTYPE_V1 = np.dtype([("seq", "<u8"), ("intended_ns", "<i8"), ("latency_ns", "<i8")])
RECORD_DTYPES = {1: RECORD_DTYPE_V1, 2: RECORD_DTYPE}
FLAG_LATE = 1  # ping: the echo came after --sample-timeout (kept, flagged)
KINDS = {1: "rtt", 2: "one_way"}


class SamplesFileError(Exception):
    """The file is not a valid samples file; the message names the file."""


@dataclass
class Samples:
    path: Path | None  # the file; several receivers' merged: their run's folder (load.py)
    kind: str  # "rtt" or "one_way"
    start_ns: int
    records: np.ndarray  # RECORD_DTYPE, in arrival order

    @property
    def latency_ns(self) -> np.ndarray:
        return self.records["latency_ns"]

    @property
    def late(self) -> np.ndarray:
        """Which records are late echoes (kept in every statistic, flagged)."""
        return (self.records["flags"] & FLAG_LATE) != 0

    def arrival_ns(self, latency_from: str | None = "intended") -> np.ndarray:
        """When each sample arrived, on the receiver's clock: the latency's time base (the
        schedule, or the write's start with latency_from "send") plus the latency."""
        base = "send_ns" if latency_from == "send" else "intended_ns"
        return self.records[base] + self.records["latency_ns"]

    @property
    def lateness_ns(self) -> np.ndarray:
        """How late each message's write began against its schedule (open loop; 0 in a
        closed loop, where the intended time is the send)."""
        return self.records["send_ns"] - self.records["intended_ns"]

    def __len__(self) -> int:
        return len(self.records)


def read_samples(path: Path | str) -> Samples:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SamplesFileError(f"{path}: cannot read samples file: {exc.strerror}") from None
    if len(data) < HEADER_SIZE:
        raise SamplesFileError(
            f"{path}: {len(data)} bytes is shorter than the {HEADER_SIZE}-byte header"
        )
    magic, version, record_size, count, kind, _, start_ns = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise SamplesFileError(f"{path}: magic is {magic!r}, expected {MAGIC!r}")
    if version not in RECORD_DTYPES:
        raise SamplesFileError(
            f"{path}: format version {version}, this reader knows "
            f"{', '.join(map(str, RECORD_DTYPES))}"
        )
    dtype = RECORD_DTYPES[version]
    if record_size != dtype.itemsize:
        raise SamplesFileError(f"{path}: record_size {record_size}, expected {dtype.itemsize}")
    if kind not in KINDS:
        raise SamplesFileError(f"{path}: unknown sample kind {kind} (1 = rtt, 2 = one_way)")
    expected = HEADER_SIZE + count * record_size
    if len(data) != expected:
        raise SamplesFileError(
            f"{path}: header says {count} records ({expected} bytes) but the file has "
            f"{len(data)} bytes"
        )
    records = np.frombuffer(data, dtype=dtype, count=count, offset=HEADER_SIZE)
    if version == 1:
        records = _upgrade_v1(records)
    return Samples(path=path, kind=KINDS[kind], start_ns=start_ns, records=records)


def _upgrade_v1(old: np.ndarray) -> np.ndarray:
    records = np.zeros(len(old), dtype=RECORD_DTYPE)
    for name in RECORD_DTYPE_V1.names or ():  # a structured dtype: its field names
        records[name] = old[name]
    records["send_ns"] = old["intended_ns"]
    return records
