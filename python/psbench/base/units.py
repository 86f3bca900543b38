"""How numbers, sizes and settings are written for people, the same in every table,
line and page psbench prints."""


def micros(ns) -> str:
    """ns -> µs with two decimals; None (too few samples) -> '-'."""
    return "-" if ns is None else f"{ns / 1000:.2f}"


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
