"""Reads the node's raw sample files (`<role>.samples`, see docs/node.md)."""

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"PSBSMP01"
VERSION = 1
HEADER_SIZE = 64
# magic, version, record_size, count, kind, reserved, start_ns (little-endian)
HEADER = struct.Struct("<8sIIQIIq")
RECORD_DTYPE = np.dtype([("seq", "<u8"), ("intended_ns", "<i8"), ("latency_ns", "<i8")])
KINDS = {1: "rtt", 2: "one_way"}


class SamplesFileError(Exception):
    """The file is not a valid samples file; the message names the file."""


@dataclass
class Samples:
    path: Path
    kind: str          # "rtt" or "one_way"
    start_ns: int
    records: np.ndarray  # RECORD_DTYPE, in sequence order

    @property
    def latency_ns(self) -> np.ndarray:
        return self.records["latency_ns"]

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
            f"{path}: {len(data)} bytes is shorter than the {HEADER_SIZE}-byte header")
    magic, version, record_size, count, kind, _, start_ns = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise SamplesFileError(f"{path}: magic is {magic!r}, expected {MAGIC!r}")
    if version != VERSION:
        raise SamplesFileError(f"{path}: format version {version}, this reader knows {VERSION}")
    if record_size != RECORD_DTYPE.itemsize:
        raise SamplesFileError(
            f"{path}: record_size {record_size}, expected {RECORD_DTYPE.itemsize}")
    if kind not in KINDS:
        raise SamplesFileError(f"{path}: unknown sample kind {kind} (1 = rtt, 2 = one_way)")
    expected = HEADER_SIZE + count * record_size
    if len(data) != expected:
        raise SamplesFileError(
            f"{path}: header says {count} records ({expected} bytes) but the file has "
            f"{len(data)} bytes")
    records = np.frombuffer(data, dtype=RECORD_DTYPE, count=count, offset=HEADER_SIZE)
    return Samples(path=path, kind=KINDS[kind], start_ns=start_ns, records=records)
