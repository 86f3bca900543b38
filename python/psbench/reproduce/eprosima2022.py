"""eProsima, "Benchmarking DDS Implementations" (Fast DDS vs OpenDDS, December 2022), in
the article's own form: mean latency and throughput against the Array message type, in
one process (intra) and in two (inter), per implementation, and its conclusions (latency
ratios, the runs that crashed, which implementation kept up with the 100 Hz publication
rate) beside what the article prints.

OpenDDS cannot be installed here: Cyclone DDS stands in for it (experiments/seeds/
eprosima2022.yaml says why). The article's results are figures without printed values,
so the published column holds what its text says: the ratios of its conclusion, the
crashes and the keep-up statements (experiments/seeds/eprosima2022.published.yaml).

A run that did not end ok (crashed, failed, timeout, refused) stays in every table as a
row with its status and no values, as the article shows OpenDDS's crashed runs.
"""

from dataclasses import dataclass

import numpy as np

from psbench.reproduce.common import Section, published_marker
from psbench.reproduce.eprosima2022_article import (
    LAYOUT,
    UDP_FRAGMENTATION,
    _keeps_up_in_article,
    _latency_article_note,
    _published_crashes,
    _published_latency_text,
    _published_throughput_text,
    _throughput_article_note,
    array_name,
    array_size,
    name_of,
)
from psbench.reproduce.layout import Line, Mark
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet

REFERENCE = LAYOUT.data["reference"]  # the article's subject; ratios are X / Fast DDS
STANDS_IN = LAYOUT.data["stands_in"]  # ours -> the article's implementation it replaces
PLACEMENTS = tuple(LAYOUT.data["placements"].items())
KEEP_UP_FRACTION = 0.95  # received rate >= 95% of offered (ratesearch's)


@dataclass
class Cell:
    """One implementation at one placement and size: its configuration and how its runs
    ended."""

    driver: str
    placement: str
    size: int
    config: Config

    @property
    def statuses(self) -> list[str]:
        return [r.status if r.status != "ok" or r.samples is not None else "ok, no samples"
                for r in self.config.runs]  # fmt: skip

    @property
    def ok(self) -> bool:
        return bool(self.config.ok_runs)

    @property
    def status(self) -> str:
        """ok, or what went wrong: crashed, failed, timeout, ... (with a count when only
        some repetitions did)."""
        bad = [s for s in self.statuses if s != "ok"]
        if not bad:
            return "ok"
        kinds = sorted(set(bad), key=bad.index)
        text = ", ".join(f"{bad.count(k)} {k}" if len(self.statuses) > 1 else k for k in kinds)
        return text if not self.ok else f"ok ({text} of {len(self.statuses)})"

    @property
    def mean(self) -> float | None:
        """The mean of every sample of the cell (all repetitions pooled)."""
        pooled = self.config.pooled_ns
        return float(np.mean(pooled)) if self.ok and pooled.size else None

    def stat(self, key: str):
        return self.config.stats.get(key) if self.ok else None

    def rate(self, key: str):
        return self.config.rate.get(key) if self.ok else None

    @property
    def lost(self) -> int | None:
        return self.config.counts.get("lost") if self.ok else None

    @property
    def offered(self) -> float | None:
        offered = self.config.params.get("rate")
        return float(offered) if offered else None

    @property
    def keeps_up(self) -> bool | None:
        """Received the publication rate: ok, nothing lost, and the subscriber's rate at
        least 95% of the offered one. None when it did not run to the end."""
        received = self.rate("samples_per_s")
        if not self.ok or received is None or self.offered is None or self.lost is None:
            return None
        return self.lost == 0 and received >= KEEP_UP_FRACTION * self.offered


def _cells(results: ResultSet) -> tuple[list[str], list[int], dict]:
    """(drivers with Fast DDS first, sizes, {(driver, placement, size): Cell}) of the
    pubsub runs."""
    cells = {(c.driver, c.placement, c.size): Cell(c.driver, c.placement, c.size, c)
             for c in build_configs(results) if c.kind == "pubsub" and c.size is not None}  # fmt: skip
    drivers = sorted(dict.fromkeys(k[0] for k in cells), key=lambda d: d != REFERENCE)
    return drivers, sorted({k[2] for k in cells}), cells


def _others(drivers: list[str]) -> list[str]:
    return [d for d in drivers if d != REFERENCE]


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


# Tables -------------------------------------------------------------------------------


def _results_table(kind: str, placement: str, title: str, drivers, sizes, cells, published):
    """The article's latency or throughput figure at one placement, as a table: a row
    per size, each driver's columns side by side, and what the article says there."""
    others = _others(drivers)
    ratios = others if kind == "latency" and REFERENCE in drivers else []
    rows = []
    for size in sizes:
        present = {d: cells.get((d, placement, size)) for d in drivers}
        if not any(present.values()):
            continue
        row = {"message": array_name(size), "size_bytes": size}
        for d, cell in present.items():
            row.update({f"{d}_{k}": v for k, v in _figures(kind, cell).items()})
        reference = cells.get((REFERENCE, placement, size))
        for d in ratios:
            cell = cells.get((d, placement, size))
            row[f"{d}_over_fastdds_mean"] = _ratio(cell and cell.mean, reference and reference.mean)
        row["published"] = (_published_latency_text(published, placement, size, others)
                            if kind == "latency" else _published_throughput_text(published, placement, size))  # fmt: skip
        rows.append(row)
    each = lambda found: [{"driver": d, "name": name_of(d)} for d in found]  # noqa: E731
    return LAYOUT.table(kind, rows, placement=placement, title=title, drivers=each(drivers),
                        ratios=each(ratios), marker=published_marker(published),
                        keep_up=KEEP_UP_FRACTION)  # fmt: skip


def _figures(kind: str, cell: Cell | None) -> dict:
    """One driver's columns of a results row: its status and figures, by column key."""
    if cell is None:
        return {"status": "not run"}
    if kind == "latency":
        return {"status": cell.status, "n": cell.stat("n"), "mean_ns": cell.mean,
                "p50_ns": cell.stat("p50"), "max_ns": cell.stat("max")}  # fmt: skip
    return {"status": cell.status, "samples_per_s": cell.rate("samples_per_s"),
            "mbit_per_s": cell.rate("mbit_per_s"), "lost": cell.lost, "keeps_up": cell.keeps_up}  # fmt: skip


def _range(values: list[float]) -> tuple[float | None, float | None]:
    values = [v for v in values if v is not None]
    return (min(values), max(values)) if values else (None, None)


def _not_ok_text(cells: dict, driver: str, placement: str) -> str:
    bad = [f"{array_name(c.size)} {c.status}" for (d, p, _), c in sorted(cells.items())
           if d == driver and p == placement and c.status != "ok"]  # fmt: skip
    return ", ".join(bad) or "none"


SIDES = (("below UDP fragmentation (< 64 KiB)", lambda s: s < UDP_FRAGMENTATION, "below_udp_fragmentation"),
         ("large (>= 64 KiB)", lambda s: s >= UDP_FRAGMENTATION, "large_samples"))  # fmt: skip


def _latency_conclusion(drivers: list[str], sizes: list[int], cells: dict, published: dict):
    rows = []
    for d, (placement, _), (label, test, side) in (
        (d, p, s) for d in _others(drivers) for p in PLACEMENTS for s in SIDES
    ):
        pairs = [(cells.get((d, placement, s)), cells.get((REFERENCE, placement, s)))
                 for s in sizes if test(s)]  # fmt: skip
        pairs = [(c, r) for c, r in pairs if c or r]
        if not pairs:
            continue
        ratios = [_ratio(c.mean if c else None, r.mean if r else None) for c, r in pairs]
        measured = [x for x in ratios if x is not None]
        found = ((published.get("latency") or {}).get("mean_ratio") or {}).get(side)
        crashed = [f"{r['placement']} {r['size']}" for r in _published_crashes(published, "latency")
                   if r.get("implementation") == STANDS_IN.get(d) and r.get("placement") == placement
                   and test(array_size(r["size"]))]  # fmt: skip
        not_ok = [f"{array_name(c.size)} {c.status}" for c, _ in pairs if c and c.status != "ok"]
        rows.append([name_of(d), placement, label, *_range(ratios),
                     f"{sum(x > 1 for x in measured)} of {len(measured)} sizes" if measured else None,
                     f"{found['low']:g} to {found['high']:g}" if found else None,
                     ", ".join(not_ok) or "none",
                     ", ".join(crashed) or ("none" if STANDS_IN.get(d) else None)])  # fmt: skip
    notes = [LAYOUT.text("stands_in", name=name_of(d), article=name_of(STANDS_IN[d]))
             for d in _others(drivers) if d in STANDS_IN]  # fmt: skip
    return LAYOUT.table("latency-conclusion", rows, lead=notes, marker=published_marker(published))


def _throughput_conclusion(drivers: list[str], sizes: list[int], cells: dict, published: dict):
    rows = []
    for d in drivers:
        article = d if d == REFERENCE else STANDS_IN.get(d)
        for placement, _ in PLACEMENTS:
            mine = [cells[(d, placement, s)] for s in sizes if (d, placement, s) in cells]
            if not mine:
                continue
            said = []
            if article:
                says = [(s, _keeps_up_in_article(published, article, placement, s)) for s in sizes]
                crashed = [r["size"] for r in _published_crashes(published, "throughput")
                           if r.get("implementation") == article and r.get("placement") == placement]  # fmt: skip
                for words, found in (("keeps up at", [array_name(s) for s, k in says if k]),
                                     ("does not keep up at", [array_name(s) for s, k in says if k is False]),
                                     ("crashed at", crashed)):  # fmt: skip
                    said += [f"{words} {', '.join(found)}"] if found else []
                said = [f"{name_of(article)}: {'; '.join(said)}"] if said else []
            rows.append([name_of(d), placement,
                         ", ".join(array_name(c.size) for c in mine if c.keeps_up) or "none",
                         ", ".join(array_name(c.size) for c in mine if c.keeps_up is False) or "none",
                         _not_ok_text(cells, d, placement), "; ".join(said) or None])  # fmt: skip
    return LAYOUT.table("throughput-conclusion", rows, marker=published_marker(published))


# Figures and sections -----------------------------------------------------------------


def _figure(kind: str, drivers: list[str], sizes: list[int], cells: dict):
    """Two panels (intra, inter): mean latency (kind latency) or received Mbit/s (kind
    throughput) against size, one line per implementation; a run that did not end ok is
    an x at the bottom of the panel, labelled with its status."""
    placements = [(p, t) for p, t in PLACEMENTS
                  if any((d, p, s) in cells for d in drivers for s in sizes)]  # fmt: skip
    if not placements or len(sizes) < 2:
        return None
    panels = []
    for placement, _ in placements:
        lines = []
        for index, d in enumerate(drivers):
            mine = [cells[(d, placement, s)] for s in sizes if (d, placement, s) in cells]
            ok, colour = [c for c in mine if c.ok], f"C{index % 10}"
            values = [c.mean / 1000.0 if kind == "latency" else c.rate("mbit_per_s") or np.nan
                      for c in ok]  # fmt: skip
            lines.append(Line([c.size for c in ok], values, name_of(d), None,
                              {"marker": "o", "color": colour}))  # fmt: skip
            lines += [Mark(c.size, c.status, colour) for c in mine if not c.ok]
        if kind == "throughput":
            lines.append(Line(sizes, [100 * s * 8 / 1e6 for s in sizes], "100 Hz x size", None,
                              {"linestyle": ":", "color": "0.4"}))  # fmt: skip
        panels.append(lines)
    return LAYOUT.drawing(kind, panels, [{"title": t} for _, t in placements], sizes=sizes)


def _results_section(kind: str, drivers, sizes, cells, published: dict) -> Section:
    """The article's "Latency Results" or "Throughput Results": one table per placement
    and the figure of both."""
    tables = [_results_table(kind, p, t, drivers, sizes, cells, published) for p, t in PLACEMENTS]
    figure = _figure(kind, drivers, sizes, cells)
    note = LAYOUT.text(kind, substitution=LAYOUT.text("substitution"))
    return LAYOUT.section(kind, tables, [figure] if figure else [], [note])


def sections(results: ResultSet, published: dict) -> list[Section]:
    drivers, sizes, cells = _cells(results)
    return [
        _results_section("latency", drivers, sizes, cells, published),
        LAYOUT.section("latency-conclusion", [_latency_conclusion(drivers, sizes, cells, published)],
                       notes=[_latency_article_note(published)]),
        _results_section("throughput", drivers, sizes, cells, published),
        LAYOUT.section("throughput-conclusion", [_throughput_conclusion(drivers, sizes, cells, published)],
                       notes=[_throughput_article_note(published)]),
    ]  # fmt: skip
