"""Interval lines inside a run: the node's `PROGRESS key=value ...` stdout lines (every
second while ping or sub measures, docs/node.md) parsed and shown as one terminal line."""

from psbench.base.units import micros

PREFIX = "PROGRESS "
INTEGER_KEYS = ("received", "kept", "p50_ns", "max_ns")
FLOAT_KEYS = ("t_s", "rate_hz")


def parse(line: str) -> dict | None:
    """The fields of a PROGRESS line; None for any other line or a malformed one."""
    if not line.startswith(PREFIX):
        return None
    fields = {}
    for item in line[len(PREFIX) :].split():
        key, sep, value = item.partition("=")
        if not sep:
            return None
        try:
            if key in INTEGER_KEYS:
                fields[key] = int(value)
            elif key in FLOAT_KEYS:
                fields[key] = float(value)
        except ValueError:
            return None
    return fields if "t_s" in fields and "received" in fields else None


def _micros(ns: int) -> str:
    return f"{micros(ns, 1, grouping=True)} µs"


def render(label: str, fields: dict) -> str:
    """`  sub   3 s: 15,000 received, 5,000/s; this second p50 52.1 µs, max 130.2 µs`."""
    text = (
        f"  {label:<5} {fields['t_s']:4.0f} s: {fields['received']:,} received, "
        f"{fields.get('rate_hz', 0):,.0f}/s"
    )
    if "p50_ns" in fields:
        text += f"; last interval p50 {_micros(fields['p50_ns'])}, max {_micros(fields['max_ns'])}"
    else:
        text += "; nothing arrived in the last interval"
    if fields.get("kept", fields["received"]) < fields["received"]:
        text += f" (store full: {fields['kept']:,} kept)"
    return text
