"""Reads a module's record files (docs/graphs.md, "Records"): NAME.activations,
NAME.origins and NAME.arrivals, each a 64-byte header (magic, version, record size,
count) and fixed little-endian records."""

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HEADER_SIZE = 64
HEADER = struct.Struct("<8sIIQ")  # magic, version, record size, count; the rest reserved
VERSION = 1
TIMER = 0xFFFFFFFF  # an activation's trigger when its timer fired
FLAG_OVERRUN = 1

ACTIVATION = np.dtype(
    [
        ("activation", "<u8"),
        ("scheduled_ns", "<i8"),
        ("start_ns", "<i8"),
        ("end_ns", "<i8"),
        ("trigger", "<u4"),
        ("flags", "<u4"),
    ]
)
ORIGIN = np.dtype(
    [
        ("activation", "<u8"),
        ("newest_seq", "<u8"),
        ("newest_ns", "<i8"),
        ("oldest_ns", "<i8"),
        ("source", "<u4"),
        ("reserved", "<u4"),
    ]
)
ARRIVAL = np.dtype(
    [
        ("seq", "<u8"),
        ("send_ns", "<i8"),
        ("arrival_ns", "<i8"),
        ("input", "<u4"),
        ("writer", "<u4"),
    ]
)
STREAMS = {
    "activations": (b"PSBACT01", ACTIVATION),
    "origins": (b"PSBORG01", ORIGIN),
    "arrivals": (b"PSBARR01", ARRIVAL),
}


class RecordFileError(Exception):
    """Not a valid record file; the message names the file."""


def read_stream(path: Path, stream: str) -> np.ndarray:
    magic, dtype = STREAMS[stream]
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise RecordFileError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) < HEADER_SIZE:
        raise RecordFileError(f"{path}: {len(data)} bytes is shorter than the 64-byte header")
    found, version, size, count = HEADER.unpack_from(data)
    if found != magic:
        raise RecordFileError(f"{path}: magic is {found!r}, expected {magic!r}")
    if version != VERSION or size != dtype.itemsize:
        raise RecordFileError(
            f"{path}: version {version} with {size}-byte records; this psbench reads "
            f"version {VERSION} with {dtype.itemsize}-byte records"
        )
    body = len(data) - HEADER_SIZE
    if body != count * size:
        raise RecordFileError(
            f"{path}: the header says {count} records ({count * size} bytes), the file "
            f"holds {body} bytes after it"
        )
    return np.frombuffer(data, dtype=dtype, count=count, offset=HEADER_SIZE)


def write_stream(path: Path, stream: str, records: np.ndarray) -> None:
    """The same format (what the node writes; tests make files with known answers)."""
    magic, dtype = STREAMS[stream]
    records = np.asarray(records, dtype=dtype)
    header = HEADER.pack(magic, VERSION, dtype.itemsize, len(records))
    Path(path).write_bytes(header.ljust(HEADER_SIZE, b"\0") + records.tobytes())


@dataclass
class ModuleRecords:
    name: str
    activations: np.ndarray
    origins: np.ndarray
    arrivals: np.ndarray


def read_module(run_dir: Path, name: str) -> ModuleRecords:
    return ModuleRecords(name, *(read_stream(Path(run_dir) / f"{name}.{s}", s) for s in STREAMS))
