"""Zak 2017 in the paper's own form: the latency tables per implementation and reliability
(the paper's tables 1, 2, 4, 5: min, max, mean, stdev per size), the Welch t-tests of
Fast DDS against the other DDS (tables 3, 6), the mean latency against size (figure 4),
and the paper's claims against ours, each beside the published figures.

The paper's implementations are eProsima Fast RTPS (today's Fast DDS, `fastdds`) and
OpenDDS 3.12, which is not installable here: Cyclone DDS (`cyclonedds`) stands in for it
("the other DDS"). The udp and shm baselines are the floor the paper did not measure.
Statistics are over all samples of a configuration (its repetitions pooled), as the
paper's were over its 10,000 samples: stdev with n - 1, Welch's t-test on the samples.
"""

import matplotlib
import numpy as np

from psbench.report.tables import Column, Table
from psbench.reproduce.common import Section, published_marker, where_measured
from psbench.results.load import ResultSet
from psbench.results.significance import welch

FASTDDS, OTHER = "fastdds", "cyclonedds"
NAMES = {FASTDDS: "Fast DDS", OTHER: "Cyclone DDS", "udp": "udp", "shm": "shm"}
# Ours -> the paper's key in zak2017.published.yaml.
PUBLISHED_KEY = {FASTDDS: "fastdds", OTHER: "other"}
PAPER_NAMES = {"fastdds": "Fast RTPS", "other": "OpenDDS"}
RELIABILITIES = ("best_effort", "reliable")
RELIABILITY_TEXT = {"best_effort": "best effort", "reliable": "reliable"}
PAPER_SIZES = [16 << i for i in range(11)]  # 16 .. 16384 bytes
HEADER = 32  # psbench's smallest message
# Paper table number of each (implementation, reliability), and of each t-test.
TABLE_NUMBERS = {
    (FASTDDS, "best_effort"): 1,
    (OTHER, "best_effort"): 2,
    (FASTDDS, "reliable"): 4,
    (OTHER, "reliable"): 5,
}
TTEST_NUMBERS = {"best_effort": 3, "reliable": 6}
# The floor beside the DDS in figure 4 and the claims (not in the paper).
BASELINES = (("udp", "best_effort"), ("shm", "best_effort"), ("shm", "reliable"))
ALPHA = 0.05
PAPER_LOWER = ("Fast RTPS", "OpenDDS")  # the paper's t-tests, in its order


def our_size(paper_size: int) -> int:
    """The psbench message measured for a size of the paper (its 16 B is our 32 B)."""
    return max(paper_size, HEADER)


def _samples(results: ResultSet) -> tuple[dict, dict]:
    """(driver, reliability, size) -> every ok ping sample (ns), repetitions pooled; and
    driver -> version, from the runs' records."""
    parts: dict[tuple, list[np.ndarray]] = {}
    versions: dict[str, str] = {}
    for run in results.ok_runs:
        if run.kind != "ping":
            continue
        key = (run.driver, run.params.get("reliability") or "best_effort", run.size)
        parts.setdefault(key, []).append(run.latency_ns)
        version = (run.run_record.get("driver") or {}).get("version")
        if version:
            versions.setdefault(run.driver, version)
    return ({key: np.concatenate(values) for key, values in parts.items()}, versions)


def _stats(values: np.ndarray | None) -> list:
    """n, min, max, mean, stdev (ns); None where there are no samples."""
    if values is None or values.size == 0:
        return [None] * 5
    stdev = float(np.std(values, ddof=1)) if values.size > 1 else None
    return [int(values.size), float(values.min()), float(values.max()), float(values.mean()), stdev]


def _lower_mean(t: float, p: float, names: tuple[str, str] = ("Fast DDS", "Cyclone DDS")) -> str:
    """Which side of a Welch t-test (t = first - second) has the significantly lower
    mean (p < ALPHA), or neither."""
    return (names[0] if t < 0 else names[1]) if p < ALPHA else "neither"


def _published_p(text) -> float | None:
    """The paper's printed p-value as a number: '<2.2e-16' is read as its bound."""
    try:
        return float(str(text).lstrip("<").strip())
    except ValueError:
        return None


def _us_to_ns(value) -> float | None:
    return None if value is None else float(value) * 1000.0


class _Study:
    def __init__(self, results: ResultSet, published: dict):
        self.results = results
        self.published = published
        self.samples, self.versions = _samples(results)
        measured = {size for (_, _, size) in self.samples}
        # The paper's sizes this run measured (all of them when it measured none).
        self.sizes = [s for s in PAPER_SIZES if our_size(s) in measured] or PAPER_SIZES
        self.marker = published_marker(published)

    def values(self, driver: str, reliability: str, paper_size: int) -> np.ndarray | None:
        return self.samples.get((driver, reliability, our_size(paper_size)))

    def published_row(self, driver: str, reliability: str, paper_size: int) -> list:
        table = (
            self.published.get("latency", {}).get(PUBLISHED_KEY[driver], {}).get(reliability, {})
        )
        row = (table.get("rows") or {}).get(paper_size)
        return [_us_to_ns(v) for v in row] if row else [None] * 4

    def published_source(self, section: str, *keys: str) -> str:
        node = self.published.get(section, {})
        for key in keys:
            node = node.get(key, {})
        return node.get("source", "")

    def mean(self, driver: str, reliability: str, paper_size: int) -> float | None:
        return _stats(self.values(driver, reliability, paper_size))[3]

    def size_note(self) -> str:
        return (
            f"Size is the paper's message size; ours is psbench's whole message, its "
            f"{HEADER}-byte header included, so the paper's 16 B row is measured at "
            f"{HEADER} B (the same samples as the 32 B row)."
        )

    def missing_note(self, drivers: list[str]) -> list[str]:
        missing = [d for d in drivers if not any(key[0] == d for key in self.samples)]
        return [
            f"{NAMES[d]} ({d}) has no ok run in these results (not built here, or "
            f"its runs failed: see the report's 'Runs that were not ok'); its "
            f"columns are '-'."
            for d in missing
        ]

    # Tables 1, 2, 4, 5 -----------------------------------------------------------------

    def latency_table(self, driver: str, reliability: str) -> Table:
        number = TABLE_NUMBERS[(driver, reliability)]
        paper_key = PUBLISHED_KEY[driver]
        paper_name = PAPER_NAMES[paper_key]
        rows = []
        for size in self.sizes:
            n, low, high, mean, stdev = _stats(self.values(driver, reliability, size))
            p_low, p_high, p_mean, p_stdev = self.published_row(driver, reliability, size)
            ratio = mean / p_mean if mean is not None and p_mean else None
            rows.append(
                [
                    size,
                    our_size(size),
                    n,
                    low,
                    high,
                    mean,
                    stdev,
                    p_low,
                    p_high,
                    p_mean,
                    p_stdev,
                    ratio,
                ]
            )
        columns = [
            Column("size B", "size_bytes", "count"),
            Column("our size B", "our_size_bytes", "count"),
            Column("n", "n", "count"),
            Column("min µs", "min_ns", "us"),
            Column("max µs", "max_ns", "us"),
            Column("mean µs", "mean_ns", "us"),
            Column("stdev µs", "stdev_ns", "us"),
            Column(f"{paper_name} min µs", "published_min_ns", "us"),
            Column(f"{paper_name} max µs", "published_max_ns", "us"),
            Column(f"{paper_name} mean µs", "published_mean_ns", "us"),
            Column(f"{paper_name} stdev µs", "published_stdev_ns", "us"),
            Column("mean ours/paper", "mean_ratio", "ratio"),
        ]
        substitute = (
            ""
            if driver == FASTDDS
            else f" (in place of the paper's {paper_name}, not installable here)"
        )
        version = self.versions.get(driver, "version unknown")
        notes = [
            f"RTT/2 {where_measured(self.results)}, {NAMES[driver]} ({version}){substitute}, "
            f"{RELIABILITY_TEXT[reliability]}; published: "
            f"{self.published_source('latency', paper_key, reliability)}.",
            self.size_note(),
            self.marker,
        ]
        return Table(
            f"table{number}-{driver}-{reliability.replace('_', '-')}",
            f"Table {number}: {NAMES[driver]} latency, "
            f"{RELIABILITY_TEXT[reliability]} (paper: {paper_name})",
            columns,
            rows,
            notes,
        )

    # Tables 3, 6 ----------------------------------------------------------------------

    def ttest_table(self, reliability: str) -> Table:
        number = TTEST_NUMBERS[reliability]
        published = self.published.get("ttest", {}).get(reliability, {})
        rows = []
        for size in self.sizes:
            a = self.values(FASTDDS, reliability, size)
            b = self.values(OTHER, reliability, size)
            t = df = p = diff = lower = None
            if a is not None and b is not None and a.size > 1 and b.size > 1:
                result = welch(a, b)
                t, df, p = result.t, result.df, result.p
                diff = float(a.mean() - b.mean())
                lower = _lower_mean(t, p)
            p_row = (published.get("rows") or {}).get(size)
            p_t, p_df = p_row if p_row else (None, None)
            p_p = _published_p(published.get("p"))
            rows.append(
                [
                    size,
                    our_size(size),
                    t,
                    df,
                    p,
                    diff,
                    lower,
                    p_t,
                    p_df,
                    published.get("p") if p_row else None,
                    _lower_mean(p_t, p_p, PAPER_LOWER)
                    if p_t is not None and p_p is not None
                    else None,
                ]
            )
        columns = [
            Column("size B", "size_bytes", "count"),
            Column("our size B", "our_size_bytes", "count"),
            Column("t", "t", "stat"),
            Column("df", "df", "stat"),
            Column("p-value", "p", "p"),
            Column("mean diff µs", "mean_difference_ns", "us"),
            Column("lower mean", "lower_mean", "text"),
            Column("paper t", "published_t", "stat"),
            Column("paper df", "published_df", "stat"),
            Column("paper p-value", "published_p", "text"),
            Column("paper lower mean", "published_lower_mean", "text"),
        ]
        notes = [
            f"Welch's two-sided t-test of Fast DDS against Cyclone DDS on the RTT/2 "
            f"samples, {RELIABILITY_TEXT[reliability]} (t < 0: Fast DDS has the lower "
            f"mean; mean diff = Fast DDS - Cyclone DDS; 'lower mean' names the faster "
            f"one where p < {ALPHA}). The paper tested Fast RTPS against OpenDDS: "
            f"{published.get('source', '')}.",
            "t grows with the number of samples: compare signs and verdicts, not "
            "magnitudes, when the sample counts differ (--quick measures fewer).",
            self.size_note(),
            self.marker,
        ]
        return Table(
            f"table{number}-ttest-{reliability.replace('_', '-')}",
            f"Table {number}: Welch t-test, Fast DDS vs Cyclone DDS, "
            f"{RELIABILITY_TEXT[reliability]} (paper: Fast RTPS vs OpenDDS)",
            columns,
            rows,
            notes,
        )

    # Figure 4 -------------------------------------------------------------------------

    def series(self) -> list[tuple[str, str]]:
        return [(d, r) for r in RELIABILITIES for d in (FASTDDS, OTHER)] + list(BASELINES)

    def means_table(self) -> Table:
        series = self.series()
        columns = [
            Column("size B", "size_bytes", "count"),
            Column("our size B", "our_size_bytes", "count"),
        ]
        columns += [
            Column(f"{NAMES[d]} {RELIABILITY_TEXT[r]} µs", f"{d}_{r}_mean_ns", "us")
            for d, r in series
        ]
        columns += [
            Column(
                f"paper {PAPER_NAMES[PUBLISHED_KEY[d]]} {RELIABILITY_TEXT[r]} µs",
                f"published_{PUBLISHED_KEY[d]}_{r}_mean_ns",
                "us",
            )
            for r in RELIABILITIES
            for d in (FASTDDS, OTHER)
        ]
        rows = []
        for size in self.sizes:
            row = [size, our_size(size)] + [self.mean(d, r, size) for d, r in series]
            row += [
                self.published_row(d, r, size)[2] for r in RELIABILITIES for d in (FASTDDS, OTHER)
            ]
            rows.append(row)
        notes = [
            "The data of figure 4: mean RTT/2 per size. The paper plots only its four "
            "DDS series; udp and shm are the floor on this machine (not in the paper).",
            self.size_note(),
            self.marker,
        ]
        return Table(
            "figure4-means", "Figure 4 data: mean latency against size", columns, rows, notes
        )

    def figure(self):
        from matplotlib.figure import Figure

        from psbench.report.plots import (
            DPI,
            MARGIN_INCHES,
            PANEL_INCHES,
            STYLE,
            Drawing,
            _size_axis,
        )

        colours = {FASTDDS: "C0", OTHER: "C1", "udp": "0.45", "shm": "0.7"}
        styles = {"best_effort": "-", "reliable": "--"}
        with matplotlib.rc_context(STYLE):
            left, right, bottom, top, across, _ = MARGIN_INCHES
            legend = 1.9
            width = left + 2 * PANEL_INCHES[0] + across + legend + right
            height = bottom + PANEL_INCHES[1] + top
            figure = Figure(figsize=(width, height), dpi=DPI)
            figure.subplots_adjust(
                left=left / width,
                right=1 - (right + legend) / width,
                bottom=bottom / height,
                top=1 - top / height,
                wspace=across / PANEL_INCHES[0],
            )
            ours, paper = figure.subplots(1, 2)
            for driver, reliability in self.series():
                points = [
                    (x, _stats(self.samples.get((driver, reliability, x)))[3])
                    for x in sorted({our_size(size) for size in self.sizes})
                ]
                points = [(x, y / 1000) for x, y in points if y is not None]
                if points:
                    xs, ys = zip(*points)
                    ours.plot(
                        xs,
                        ys,
                        styles[reliability],
                        marker="o",
                        markersize=3,
                        color=colours[driver],
                        label=f"{NAMES[driver]} {RELIABILITY_TEXT[reliability]}",
                    )
            for reliability in RELIABILITIES:
                for driver in (FASTDDS, OTHER):
                    key = PUBLISHED_KEY[driver]
                    rows = (
                        self.published.get("latency", {})
                        .get(key, {})
                        .get(reliability, {})
                        .get("rows")
                        or {}
                    )
                    if rows:
                        xs = sorted(rows)
                        paper.plot(
                            xs,
                            [rows[x][2] for x in xs],
                            styles[reliability],
                            marker="o",
                            markersize=3,
                            color=colours[driver],
                            label=f"{PAPER_NAMES[key]} {RELIABILITY_TEXT[reliability]}",
                        )
            sizes = [our_size(s) for s in self.sizes]
            _size_axis(ours, sizes)
            _size_axis(paper, PAPER_SIZES)
            ours.set_title("ours: this machine (Cyclone DDS for OpenDDS)")
            paper.set_title("published: Zak 2017 (other hardware, 2017 versions)")
            for ax in (ours, paper):
                ax.set_ylabel("mean RTT/2 latency (µs)")
                ax.set_ylim(bottom=0)
            inside = paper.legend(loc="lower right", fontsize=6)
            paper.add_artist(inside)
            handles, names = ours.get_legend_handles_labels()
            if handles:  # ours, beside both panels (the colours are the same in both)
                paper.legend(
                    handles,
                    names,
                    loc="upper left",
                    bbox_to_anchor=(1.04, 1.0),
                    borderaxespad=0.0,
                    title="ours: solid best effort,\ndashed reliable",
                    title_fontsize=7,
                )
        caption = (
            "Figure 4 of the paper, reproduced: the mean RTT/2 latency of every "
            "measured sample against message size, best effort solid and reliable "
            "dashed. Left, ours on this machine, with the udp and shm floor in "
            "grey; right, the paper's published means (tables 1, 2, 4, 5) from an "
            "Intel Core i5 M 540 at 1.2 GHz and 2017 versions: compare the shapes "
            "and the ordering, not the absolute values. Linear latency axis, log2 "
            "size axis; our 32 B point stands for the paper's 16 B."
        )
        return Drawing(
            "figure4-mean-latency", "Figure 4: mean latency against size", caption, figure
        )

    # The paper's claims ----------------------------------------------------------------

    def _reliable_increase(self, driver: str) -> float | None:
        """Mean over sizes of (reliable mean - best effort mean), ns."""
        steps = []
        for size in self.sizes:
            if size < HEADER:
                continue
            a, b = self.mean(driver, "best_effort", size), self.mean(driver, "reliable", size)
            if a is not None and b is not None:
                steps.append(b - a)
        return float(np.mean(steps)) if steps else None

    def _published_increase(self, key: str) -> float | None:
        latency = self.published.get("latency", {}).get(key, {})
        be = (latency.get("best_effort") or {}).get("rows") or {}
        rel = (latency.get("reliable") or {}).get("rows") or {}
        steps = [rel[s][2] - be[s][2] for s in self.sizes if s >= HEADER and s in be and s in rel]
        return float(np.mean(steps)) * 1000 if steps else None

    def _ratio(self, reliability: str) -> float | None:
        """Median over sizes of mean(other) / mean(Fast DDS)."""
        ratios = []
        for size in self.sizes:
            if size < HEADER:
                continue
            a, b = self.mean(FASTDDS, reliability, size), self.mean(OTHER, reliability, size)
            if a and b is not None:
                ratios.append(b / a)
        return float(np.median(ratios)) if ratios else None

    def _published_ratio(self, reliability: str) -> float | None:
        latency = self.published.get("latency", {})
        a = (latency.get("fastdds", {}).get(reliability) or {}).get("rows") or {}
        b = (latency.get("other", {}).get(reliability) or {}).get("rows") or {}
        ratios = [b[s][2] / a[s][2] for s in self.sizes if s >= HEADER and s in a and s in b]
        return float(np.median(ratios)) if ratios else None

    def _faster_count(self, reliability: str) -> str | None:
        tested = faster = 0
        for size in self.sizes:
            if size < HEADER:
                continue
            a = self.values(FASTDDS, reliability, size)
            b = self.values(OTHER, reliability, size)
            if a is None or b is None or a.size < 2 or b.size < 2:
                continue
            tested += 1
            result = welch(a, b)
            faster += _lower_mean(result.t, result.p) == "Fast DDS"
        return f"{faster} of {tested}" if tested else None

    def _published_faster_count(self, reliability: str) -> str | None:
        """The same count from the paper's own t-test table (t and its one p-value)."""
        published = self.published.get("ttest", {}).get(reliability) or {}
        rows = published.get("rows") or {}
        p = _published_p(published.get("p"))
        tested = [rows[s][0] for s in self.sizes if s >= HEADER and s in rows]
        if not tested or p is None:
            return None
        faster = sum(_lower_mean(t, p, PAPER_LOWER) == PAPER_LOWER[0] for t in tested)
        return f"{faster} of {len(tested)}"

    def _published_every_size(self, reliability: str) -> str | None:
        """Section 5's words: every t-test has p < 2.2e-16 (the one p the tables print),
        and sections 6-7 have Fast RTPS faster at every size."""
        p = _published_p((self.published.get("ttest", {}).get(reliability) or {}).get("p"))
        return "all sizes" if p is not None and p < ALPHA else None

    def claims_tables(self) -> list[Table]:
        figure4 = self.published.get("figure4", {})
        stated = figure4.get("reliable_increase_us") or {}
        counted = [s for s in self.sizes if s >= HEADER]
        rows = [
            [
                "reliable adds to the mean, Fast DDS (paper: Fast RTPS), µs, mean over sizes",
                self._reliable_increase(FASTDDS),
                self._published_increase("fastdds"),
                _us_to_ns(stated.get("fastdds")),
            ],
            [
                "reliable adds to the mean, Cyclone DDS (paper: OpenDDS), µs, mean over sizes",
                self._reliable_increase(OTHER),
                self._published_increase("other"),
                _us_to_ns(stated.get("other")),
            ],
        ]
        ratio_rows = [
            [
                f"mean of the other DDS / mean of Fast DDS, {RELIABILITY_TEXT[r]}, median over "
                f"sizes",
                self._ratio(r),
                self._published_ratio(r),
                figure4.get("faster_factor"),
            ]
            for r in RELIABILITIES
        ]
        count_rows = [
            [
                f"sizes where Fast DDS has the significantly lower mean (Welch p < {ALPHA}), "
                f"{RELIABILITY_TEXT[r]}",
                self._faster_count(r),
                self._published_faster_count(r),
                self._published_every_size(r),
            ]
            for r in RELIABILITIES
        ]
        us_table = Table(
            "claims-latency",
            "The paper's claims against ours: latency",
            [
                Column("claim", "claim", "text"),
                Column("ours", "ours_ns", "us"),
                Column("paper's tables", "published_tables_ns", "us"),
                Column("paper's text", "published_text_ns", "us"),
            ],
            rows,
        )
        ratio_table = Table(
            "claims-ratio",
            "The paper's claims against ours: the other DDS against Fast DDS",
            [
                Column("claim", "claim", "text"),
                Column("ours", "ours", "ratio"),
                Column("paper's tables", "published_tables", "ratio"),
                Column("paper's text", "published_text", "ratio"),
            ],
            ratio_rows,
        )
        count_table = Table(
            "claims-significance",
            "The paper's claims against ours: significance",
            [
                Column("claim", "claim", "text"),
                Column("ours", "ours", "text"),
                Column("paper's tables", "published_tables", "text"),
                Column("paper's text", "published_text", "text"),
            ],
            count_rows,
            [
                "Sizes counted: " + ", ".join(str(s) for s in counted) + " B (the paper's "
                "16 B is left out of the claims: we measure it at 32 B).",
                "'paper's text': section 5 says reliable adds 50 µs (Fast RTPS) and 70 µs "
                "(OpenDDS) on average and that every t-test has p < 2.2e-16; sections 6-7 "
                "that Fast RTPS is two times faster at every size.",
                "The other DDS is Cyclone DDS here and OpenDDS 3.12 in the paper. " + self.marker,
            ],
        )
        return [us_table, ratio_table, count_table]

    # The setup ------------------------------------------------------------------------

    def setup_table(self) -> Table:
        env = self.results.env or {}
        published = self.published
        ours_hw = (
            "; ".join(
                str(v)
                for v in (
                    env.get("cpu_model"),
                    f"{env['logical_cpus']} logical CPUs" if env.get("logical_cpus") else None,
                    f"kernel {env['kernel']}" if env.get("kernel") else None,
                    f"virtualization {_virt(env.get('virtualization'))}"
                    if env.get("virtualization")
                    else None,
                )
                if v
            )
            or "unknown"
        )
        counts = sorted(
            {
                int(run.run_record.get("spec", {}).get("count") or 0)
                for run in self.results.ok_runs
                if run.kind == "ping"
            }
        )
        warmups = sorted(
            {
                int(run.run_record.get("spec", {}).get("warmup") or 0)
                for run in self.results.ok_runs
                if run.kind == "ping"
            }
        )
        rows = [
            [
                "implementations",
                "eProsima Fast RTPS (bec4a97) and OpenDDS 3.12",
                f"Fast DDS {self.versions.get(FASTDDS, '(not measured)')} and Cyclone DDS "
                f"{self.versions.get(OTHER, '(not measured)')}; OpenDDS is not installable "
                f"here",
            ],
            ["floor", "none", "udp (raw UDP, best effort) and shm (shared memory)"],
            [
                "latency",
                "round trip / 2, one host, loopback",
                f"round trip / 2 (ping), {where_measured(self.results)} (DDS over UDP); closed "
                "loop; listener",
            ],
            [
                "samples per size",
                "1,000 discarded, 10,000 measured",
                f"{', '.join(f'{w:,}' for w in warmups) or '-'} discarded, "
                f"{', '.join(f'{c:,}' for c in counts) or '-'} measured",
            ],
            [
                "sizes",
                "16 to 16,384 B, powers of two",
                ", ".join(str(our_size(s)) for s in self.sizes if s >= HEADER)
                + " B (psbench's 32-byte header included; 16 B measured as 32 B)",
            ],
            ["reliability", "best effort, reliable", "best effort, reliable"],
            [
                "statistics",
                "min, max, mean, stdev; t-tests (Welch's and R's, inferred "
                "from the printed df and '<2.2e-16')",
                "min, max, mean, stdev (n - 1) over the pooled samples; Welch's t-test (scipy)",
            ],
            ["hardware", " ".join(str(published.get("hardware", "")).split()), ours_hw],
            [
                "versions",
                " ".join(str(published.get("versions", "")).split()),
                "; ".join(f"{NAMES.get(d, d)} {v}" for d, v in sorted(self.versions.items()))
                or "-",
            ],
        ]
        return Table(
            "setup",
            "Setup: the paper against this run",
            [
                Column("", "aspect", "text"),
                Column("paper", "paper", "text"),
                Column("this run", "ours", "text"),
            ],
            rows,
        )


def _virt(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def sections(results: ResultSet, published: dict) -> list[Section]:
    study = _Study(results, published)
    missing = study.missing_note([FASTDDS, OTHER])
    by_reliability = []
    for reliability in RELIABILITIES:
        first = TABLE_NUMBERS[(FASTDDS, reliability)]
        by_reliability.append(
            Section(
                f"{RELIABILITY_TEXT[reliability].capitalize()}: tables {first}, {first + 1}, "
                f"{TTEST_NUMBERS[reliability]}",
                [
                    study.latency_table(FASTDDS, reliability),
                    study.latency_table(OTHER, reliability),
                    study.ttest_table(reliability),
                ],
                notes=missing,
            )
        )
    return [
        Section(
            "Setup",
            [study.setup_table()],
            notes=[
                "Zak 2017 measured eProsima Fast RTPS against OpenDDS; OpenDDS is not "
                "installable here, so Cyclone DDS, the other DDS psbench drives, "
                "takes its place. Cyclone DDS is fully distributed like Fast DDS: "
                "the paper's federated-versus-distributed question is not what "
                "this comparison answers."
            ],
        ),
        *by_reliability,
        Section("Figure 4: mean latency", [study.means_table()], [study.figure()]),
        Section("The paper's claims against ours", study.claims_tables()),
    ]
