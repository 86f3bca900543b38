"""A drawing of each graph run's application graph (Graphviz's dot, from Debian): its
modules with their period or trigger, and every edge with its topic and the median and
worst transport latency measured on it, from run.json's `graph` block. Written as PNG and
SVG beside the plots; the HTML page embeds the PNG like any plot."""

import shutil
import subprocess
from pathlib import Path

from psbench.base.units import micros
from psbench.report.plots import Plot
from psbench.results.configs import Config
from psbench.results.load import RunData

DOT_TIMEOUT_S = 30.0


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _us(ns) -> str:
    return micros(ns, 0, grouping=True)


def dot_source(graph: dict) -> str:
    """The graph in dot's language: modules as boxes (sources shaded), edges labelled
    with their topic and p50 / max latency in µs."""
    lines = ["digraph G {", '  rankdir=LR; node [shape=box, fontname="DejaVu Sans", '
             'fontsize=10]; edge [fontname="DejaVu Sans", fontsize=8];']  # fmt: skip
    sources = set(graph.get("sources") or [])
    for name, m in graph["modules"].items():
        when = f"every {m['period_ns'] / 1e6:g} ms" if m["period_ns"] else f"on {m['on']} input"
        style = ', style=filled, fillcolor="#dbe8f7"' if name in sources else ""
        lines.append(f"  {_quote(name)} [label={_quote(name + chr(10) + when)}{style}];")
    for e in graph["edges"]:
        lat = e["latency"]
        label = f"{e['topic']}\np50 {_us(lat['p50'])} µs\nmax {_us(lat['max'])} µs"
        lines.append(f"  {_quote(e['writer'])} -> {_quote(e['reader'])} [label={_quote(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _render(source: str, target: Path, fmt: str) -> None:
    subprocess.run(["dot", f"-T{fmt}", "-o", str(target)], input=source.encode(), check=True,
                   capture_output=True, timeout=DOT_TIMEOUT_S)  # fmt: skip


def write_graph_drawings(configs: list[Config], out_dir: Path) -> tuple[list[Plot], list[str]]:
    """One drawing per graph run shown (the first ok run of each graph, mapping and
    driver), and a note when none can be drawn."""
    runs: dict[tuple[str, str, str], tuple[RunData, dict]] = {}
    for config in configs:
        for run in config.ok_runs:
            graph = run.run_record.get("graph")
            if run.kind != "graph" or not graph:
                continue
            key = (graph["graph"], graph["mapping"], run.driver)
            runs.setdefault(key, (run, graph))
    if not runs:
        return [], []
    if shutil.which("dot") is None:
        return [], ["no graph drawing: Graphviz's dot is not installed (make setup installs it)"]
    plots: list[Plot] = []
    for (name, mapping, driver), (run, graph) in runs.items():
        stem = f"graph-{name}-{mapping}-{driver}"
        png, svg = out_dir / f"{stem}.png", out_dir / f"{stem}.svg"
        source = dot_source(graph)
        try:
            _render(source, png, "png")
            _render(source, svg, "svg")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            return plots, [f"no graph drawing of {stem}: dot failed ({exc})"]
        plots.append(Plot(
            stem,
            f"Graph {name}, {mapping}, {driver}",
            "Each module with its period or trigger (sources shaded); each edge with its "
            "topic and the median and worst latency of the messages taken on it, write to "
            f"arrival (run {run.label.rsplit(' ', 1)[0]}).",
            png,
            svg,
        ))  # fmt: skip
    return plots, []
