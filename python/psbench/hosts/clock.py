"""The clocks of real machines: each one's CLOCK_MONOTONIC against the host of the run's
first role, estimated before and after a run with an NTP-style exchange over the run's
control channel (SSH, to `psbench-node --clock-echo` there), so that one-way latency
between two machines can be corrected, and flagged when it cannot be trusted.

One exchange: this machine notes t0, sends a line, the far end answers its clock T, this
machine notes t3. With equal delays both ways, T was read at (t0 + t3) / 2, so the offset
is T - (t0 + t3) / 2; unequal delays move it by up to half the round trip, the
uncertainty. Of ROUNDS exchanges the one with the shortest round trip is kept (the
minimum-RTT filter: the least queueing, the least room for asymmetry). Offsets of two
machines to this one subtract to their offset to each other; their uncertainties add.
docs/network.md, "Clocks of real machines"."""

import os
import select
import subprocess
import time
from dataclasses import asdict, dataclass

from psbench.base import programs
from psbench.base.errors import UserError

ROUNDS = 64
ANSWER_TIMEOUT_S = 10.0  # for the far end's first line (an SSH connection) and each answer
# One-way figures are flagged when the offset's uncertainty exceeds this share of their
# median, or when the offset moved during the run by more than the two estimates'
# uncertainties can explain.
FLAG_SHARE = 0.10


@dataclass
class Reading:
    """One host's clock against this machine's: offset = its clock - ours, uncertainty =
    half the shortest round trip, at = when (our clock, the middle of that exchange)."""

    offset_ns: int
    uncertainty_ns: int
    at_ns: int
    rounds: int

    def to_json(self) -> dict:
        return asdict(self)


def _line(proc, deadline: float, what: str) -> bytes:
    out = proc.stdout.fileno()
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([out], [], [], left)[0]:
            raise UserError(f"{what}: no answer within {ANSWER_TIMEOUT_S:g} s", 1)
        chunk = os.read(out, 64)
        if not chunk:
            said = proc.stderr.read().decode(errors="replace").strip().splitlines()
            raise UserError(f"{what}: ended: {said[-1] if said else 'no answer'}", 1)
        data += chunk
    return data


def read_clock(argv: list[str], what: str, rounds: int = ROUNDS) -> Reading:
    """The exchange with `psbench-node --clock-echo` started by argv (over ssh)."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0)  # fmt: skip
    try:
        if _line(proc, time.monotonic() + ANSWER_TIMEOUT_S, what) != b"CLOCK\n":
            raise UserError(f"{what}: the far end is not psbench-node --clock-echo", 1)
        best = None
        for _ in range(rounds):
            t0 = time.monotonic_ns()
            os.write(proc.stdin.fileno(), b"t\n")
            far = int(_line(proc, time.monotonic() + ANSWER_TIMEOUT_S, what))
            t3 = time.monotonic_ns()
            if best is None or t3 - t0 < best[1] - best[0]:
                best = (t0, t3, far)
        t0, t3, far = best
        middle = (t0 + t3) // 2
        return Reading(far - middle, (t3 - t0 + 1) // 2, middle, rounds)
    finally:
        programs.finish(proc, 5)


@dataclass
class Offset:
    """One host's clock against this machine's, before and after the run."""

    before: Reading
    after: Reading | None = None

    def at(self, local_ns: float) -> float:
        """The offset at a moment of this machine's clock: linear between the two
        estimates (the drift), the first one alone when there is no second."""
        if self.after is None or self.after.at_ns == self.before.at_ns:
            return float(self.before.offset_ns)
        share = (local_ns - self.before.at_ns) / (self.after.at_ns - self.before.at_ns)
        return self.before.offset_ns + share * (self.after.offset_ns - self.before.offset_ns)

    @property
    def uncertainty_ns(self) -> int:
        return max(self.before.uncertainty_ns, (self.after or self.before).uncertainty_ns)

    @property
    def moved_ns(self) -> int:
        return 0 if self.after is None else self.after.offset_ns - self.before.offset_ns

    @property
    def noise_ns(self) -> int:
        """What the two estimates' uncertainties allow the offset to move by."""
        return self.before.uncertainty_ns + (self.after.uncertainty_ns if self.after else 0)

    def to_json(self) -> dict:
        return {
            "before": self.before.to_json(),
            "after": self.after.to_json() if self.after else None,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Offset":
        after = data.get("after")
        return cls(Reading(**data["before"]), Reading(**after) if after else None)


@dataclass
class Between:
    """A receiver's clock against a writer's: what a one-way latency between them holds
    besides the latency (receiver - writer), from both hosts' offsets to this machine.
    The same host: exactly nothing."""

    receiver: Offset | None
    writer: Offset | None

    def at(self, local_ns) -> float:
        if self.receiver is None:
            return 0.0
        return self.receiver.at(local_ns) - self.writer.at(local_ns)

    @property
    def uncertainty_ns(self) -> int:
        if self.receiver is None:
            return 0
        return self.receiver.uncertainty_ns + self.writer.uncertainty_ns

    @property
    def moved_ns(self) -> int:
        return 0 if self.receiver is None else self.receiver.moved_ns - self.writer.moved_ns

    @property
    def drifted(self) -> bool:
        """The offset moved by more than the estimates' uncertainties explain."""
        if self.receiver is None:
            return False
        return abs(self.moved_ns) > self.receiver.noise_ns + self.writer.noise_ns
