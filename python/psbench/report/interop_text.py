"""`psbench interop`'s matrix as text: per cell whether the pair matched, how many
samples came back, the round trip, and where a failed pair parts."""

from psbench.base import table

HEADERS = ["ping → pong", "reliability", "size", "matched", "delivered", "RTT p50 µs",
           "RTT p99 µs", "fails at"]  # fmt: skip


def _size(size: int) -> str:
    return f"{size // 1024} KiB" if size >= 1024 and size % 1024 == 0 else f"{size} B"


def _us(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _matched(cell) -> str:
    return {True: "yes", False: "no", None: "-"}[cell.matched]


def _delivered(cell) -> str:
    if cell.sent is None or cell.delivered is None:
        return "-"
    return f"{cell.delivered}/{cell.sent}"


def _fails_at(cell) -> str:
    if cell.works:
        return ""
    if cell.status == "refused":
        return "refused"
    return cell.step or cell.status


def render(cells, wire: str, count: int, transport: str | None = None) -> str:
    rows = [
        [
            f"{c.ping} → {c.pong}",
            c.reliability,
            _size(c.size),
            _matched(c),
            _delivered(c),
            _us(c.rtt_p50_us),
            _us(c.rtt_p99_us),
            _fails_at(c),
        ]
        for c in cells
    ]
    lines = [
        f"interop over {wire}: ping-pong, {count} round trips per cell, "
        + (f"transport {transport} for all, " if transport else "")
        + "each driver's defaults otherwise (a driver with itself is the reference)",
        table.render(HEADERS, rows),
    ]
    failed = [c for c in cells if not c.works]
    for c in failed:
        lines.append(f"{c.ping} → {c.pong} {c.reliability} {_size(c.size)}: {c.status}: "
                     f"{c.message or 'no message'}"
                     + (f"; fails at {c.step}: {c.why}" if c.step else ""))  # fmt: skip
    works = len(cells) - len(failed)
    lines.append(f"{works} of {len(cells)} cells delivered every sample")
    return "\n".join(lines)
