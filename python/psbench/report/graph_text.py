"""The terminal text of one graph run: per path its reaction latency, data age,
deadline misses and drops; per module its activations, overruns and lateness; the
slowest edges (docs/graphs.md, "What is measured")."""

from psbench.base import table
from psbench.base.units import micros

EDGES_SHOWN = 5


def _ms(ns) -> str:
    return "-" if ns is None else f"{ns / 1e6:g}"


def path_rows(graph: dict) -> list[list]:
    rows = []
    for name, p in graph["paths"].items():
        reaction, age = p["reaction"], p["data_age"]
        rows.append([
            name, f"{p['from']} -> {p['to']}", reaction["n"], micros(reaction["p50"]),
            micros(reaction["p99"]), micros(reaction["max"]), micros(age["p50"]),
            micros(age["max"]), _ms(p["deadline_ns"]),
            "-" if p["deadline_misses"] is None else p["deadline_misses"],
            p["dropped"], p["in_flight_at_end"],
        ])  # fmt: skip
    return rows


def module_rows(graph: dict) -> list[list]:
    rows = []
    for name, m in graph["modules"].items():
        period = "on " + m["on"] if m["period_ns"] is None else f"{m['period_ns'] / 1e6:g} ms"
        cpu = "-" if m.get("cpu_s") is None else f"{m['cpu_s'] * 1000:.1f}"
        rows.append([
            name, period, m["activations"], m["overruns"], micros(m["lateness"]["p50"]),
            micros(m["lateness"]["max"]), micros(m["busy"]["p50"]), micros(m["busy"]["max"]),
            cpu,
        ])  # fmt: skip
    return rows


def graph_lines(graph: dict | None) -> list[str]:
    if not graph:
        return []
    lines = [
        table.render(
            [
                "path",
                "chain",
                "n",
                "reaction p50 µs",
                "p99",
                "max",
                "age p50 µs",
                "max",
                "deadline ms",
                "misses",
                "dropped",
                "in flight",
            ],
            path_rows(graph),
            indent="  ",
        ),  # fmt: skip
        "  reaction: a source sample to the sink's first output holding it; age: each sink "
        "output against the freshest sample behind it; dropped: samples that never reached "
        "the sink (overwritten, undersampled or lost); in flight: after the last that did",
        table.render(
            [
                "module",
                "period",
                "activations",
                "overruns",
                "late p50 µs",
                "max",
                "busy p50 µs",
                "max",
                "CPU ms",
            ],
            module_rows(graph),
            indent="  ",
        ),  # fmt: skip
        "  late: a timer activation's start after its tick; busy: work and writes; CPU: "
        "the module's process, user and system, over the whole run",
    ]
    for name, p in graph["paths"].items():
        clock = p.get("clock")
        if clock:  # the source and the sink on two real machines
            lines.append(
                f"  clocks:    {name}: the offset between its machines' clocks "
                f"({clock['offset_removed_ns'] / 1000:,.1f} µs) is taken out, known to "
                f"±{clock['uncertainty_ns'] / 1000:.1f} µs"
                + ("; FLAGGED: more than a tenth of its median, or drifting; lead with the "
                   "round trips of kind ping" if clock["flagged"] else "")
            )  # fmt: skip
    slowest = sorted(graph["edges"], key=lambda e: -(e["latency"]["max"] or 0))[:EDGES_SHOWN]
    if slowest:
        lines.append(
            "  slowest edges: "
            + "; ".join(
                f"{e['writer']} -{e['topic']}-> {e['reader']} p50 {micros(e['latency']['p50'])} "
                f"max {micros(e['latency']['max'])} µs"
                for e in slowest
            )
        )
    return lines
