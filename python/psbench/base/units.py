"""How numbers, sizes and settings are written for people, the same in every table,
line and page psbench prints."""

from decimal import ROUND_HALF_UP, Decimal, localcontext


def decimal_text(value, places: int, shift: int = 0, grouping: bool = False) -> str:
    """value / 10**shift with `places` decimals, rounded from its exact decimal value,
    halves away from zero (up, for a latency): 60,355.0 ns -> "60.36" µs, where
    f"{60355.0 / 1000:.2f}" gives "60.35" (60.355 has no exact binary double; the
    nearest is below it). One rule for every figure psbench prints."""
    with localcontext() as context:
        context.prec = 80  # a double's exact decimal has at most 767 digits; 80 hold
        # every one psbench prints (latencies below 10**20 ns) without rounding twice
        exact = Decimal(value).scaleb(-shift)
        text = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{text:,}" if grouping else str(text)


def micros(ns, places: int = 2, grouping: bool = False) -> str:
    """ns -> µs with two decimals (decimal_text's rounding); None (too few samples) ->
    '-'."""
    return "-" if ns is None else decimal_text(ns, places, 3, grouping)


def bytes_text(size) -> str:
    return f"{size} B"


def sizes_text(size, reply_size, unit=bytes_text) -> str:
    """The message size, and pong's reply beside it when the reply is shorter (an
    acknowledgement, --reply-size): "1024 B -> 32 B reply"."""
    text = unit(size)
    if isinstance(reply_size, int) and isinstance(size, int) and 0 < reply_size < size:
        text += f" -> {unit(reply_size)} reply"
    return text


def rate_text(value, unit: str = "") -> str:
    """1234567.8 -> '1,234,568'; None -> '-'."""
    if value is None:
        return "-"
    text = f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return text + (f" {unit}" if unit else "")


def percent_text(value) -> str:
    return "-" if value is None else f"{value:.3g}%" if value else "0%"


def value_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def hosts_text(hosts: dict) -> str:
    """Emulated hosts and their links, short: a+b(100mbit,1ms,0.5%)."""
    parts = []
    for name, link in hosts.items():
        shown = [f"mtu{v}" if k == "mtu" else str(v) for k, v in (link or {}).items()]
        parts.append(f"{name}({','.join(shown)})" if shown else name)
    return "+".join(parts)


def size_text(size) -> str:
    if not isinstance(size, int):
        return "-"
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"
