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

from functools import cached_property

import numpy as np

from psbench.reproduce.common import Section, published_marker, where_measured
from psbench.reproduce.layout import Layout, Line, folded
from psbench.results.load import ResultSet
from psbench.results.significance import welch

LAYOUT = Layout("zak2017")  # roles, tables, figure 4: zak2017.layout.yaml
FASTDDS = LAYOUT.role("fastdds")[0]
OTHERS = LAYOUT.role("other")  # the drivers in OpenDDS's role
ROLE = {d: role for role in ("fastdds", "other") for d in LAYOUT.role(role)}
PAPER_NAMES = LAYOUT.data["paper_names"]
RELIABILITIES = LAYOUT.data["reliabilities"]  # best_effort -> "best effort", ...
PAPER_SIZES = [16 << i for i in range(11)]  # 16 .. 16384 bytes
HEADER = 32  # psbench's smallest message
ALPHA = 0.05
PAPER_LOWER = (PAPER_NAMES["fastdds"], PAPER_NAMES["other"])  # the paper's t-tests, in order


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


class _Versions(dict):
    def __missing__(self, driver: str) -> str:
        return "(not measured)"


class _Study:
    def __init__(self, results: ResultSet, published: dict):
        self.results = results
        self.published = published
        self.samples, self.versions = _samples(results)
        measured = {size for (_, _, size) in self.samples}
        # The paper's sizes this run measured (all of them when it measured none).
        self.sizes = [s for s in PAPER_SIZES if our_size(s) in measured] or PAPER_SIZES

    @cached_property
    def text(self) -> dict:
        """What the tables' notes say of every table: marker, size note, where."""
        return {"marker": published_marker(self.published), "size_note": LAYOUT.text("size_note"),
                "where": where_measured(self.results), "alpha": ALPHA}  # fmt: skip

    def values(self, driver: str, reliability: str, paper_size: int) -> np.ndarray | None:
        return self.samples.get((driver, reliability, our_size(paper_size)))

    def mean(self, driver: str, reliability: str, paper_size: int) -> float | None:
        return _stats(self.values(driver, reliability, paper_size))[3]

    def published_rows(self, role: str, reliability: str) -> dict:
        return ((self.published.get("latency", {}).get(role) or {}).get(reliability) or {}).get(
            "rows"
        ) or {}

    def published_row(self, role: str, reliability: str, paper_size: int) -> list:
        row = self.published_rows(role, reliability).get(paper_size)
        return [_us_to_ns(v) for v in row] if row else [None] * 4

    def _names(self, driver: str, reliability: str, number_of: str) -> dict:
        role = ROLE[driver]
        return {"driver": driver, "name": LAYOUT.name(driver), "paper_name": PAPER_NAMES[role],
                "reliability": RELIABILITIES[reliability], "slug": reliability.replace("_", "-"),
                "number": LAYOUT.data["table_numbers"][reliability][number_of]}  # fmt: skip

    # Tables 1, 2, 4, 5 -----------------------------------------------------------------

    def latency_table(self, driver: str, reliability: str):
        role = ROLE[driver]
        rows = []
        for size in self.sizes:
            n, low, high, mean, stdev = _stats(self.values(driver, reliability, size))
            published = self.published_row(role, reliability, size)
            ratio = mean / published[2] if mean is not None and published[2] else None
            rows.append([size, our_size(size), n, low, high, mean, stdev, *published, ratio])
        names = self._names(driver, reliability, role)
        source = (
            self.published.get("latency", {}).get(role, {}).get(reliability, {}).get("source", "")
        )
        stands_in = "" if role == "fastdds" else LAYOUT.text("stands_in", **names)
        return LAYOUT.table("latency", rows, **names, **self.text, stands_in=stands_in,
                            version=self.versions.get(driver, "version unknown"), source=source)  # fmt: skip

    # Tables 3, 6 ----------------------------------------------------------------------

    def ttest_table(self, reliability: str, other: str):
        published = self.published.get("ttest", {}).get(reliability, {})
        rows = []
        for size in self.sizes:
            a, b = self.values(FASTDDS, reliability, size), self.values(other, reliability, size)
            t = df = p = diff = lower = None
            if a is not None and b is not None and a.size > 1 and b.size > 1:
                result = welch(a, b)
                t, df, p = result.t, result.df, result.p
                diff = float(a.mean() - b.mean())
                lower = _lower_mean(t, p, (LAYOUT.name(FASTDDS), LAYOUT.name(other)))
            p_row = (published.get("rows") or {}).get(size)
            p_t, p_df = p_row or (None, None)
            p_p = _published_p(published.get("p"))
            paper_lower = _lower_mean(p_t, p_p, PAPER_LOWER) if None not in (p_t, p_p) else None
            rows.append([size, our_size(size), t, df, p, diff, lower, p_t, p_df,
                         published.get("p") if p_row else None, paper_lower])  # fmt: skip
        names = self._names(FASTDDS, reliability, "ttest")
        versus = "" if other == OTHERS[0] else f"-{other}"  # one table per other driver
        return LAYOUT.table("ttest", rows, **names, **self.text, other=LAYOUT.name(other), versus=versus,
                            paper_other=PAPER_NAMES["other"], source=published.get("source", ""))  # fmt: skip

    # Figure 4 -------------------------------------------------------------------------

    def series(self) -> list[tuple[str, str]]:
        dds = [(d, r) for r in RELIABILITIES for d in (FASTDDS, *OTHERS)]
        return dds + [tuple(floor) for floor in LAYOUT.data["floors"]]

    def means_table(self):
        paper = [(role, r) for r in RELIABILITIES for role in ("fastdds", "other")]
        rows = [[size, our_size(size)] + [self.mean(d, r, size) for d, r in self.series()]
                + [self.published_row(role, r, size)[2] for role, r in paper]
                for size in self.sizes]  # fmt: skip
        series = [{"name": LAYOUT.name(d), "driver": d, "key": r, "reliability": RELIABILITIES[r]}
                  for d, r in self.series()]  # fmt: skip
        paper = [{"paper_name": PAPER_NAMES[role], "role": role, "key": r,
                  "reliability": RELIABILITIES[r]} for role, r in paper]  # fmt: skip
        return LAYOUT.table("means", rows, series=series, paper_series=paper, **self.text)

    def figure(self):
        colours = LAYOUT.data["colours"]
        styles = {"best_effort": "-", "reliable": "--"}
        ours, paper = [], []
        for driver, reliability in self.series():
            points = [(x, _stats(self.samples.get((driver, reliability, x)))[3])
                      for x in sorted({our_size(size) for size in self.sizes})]  # fmt: skip
            points = [(x, y / 1000) for x, y in points if y is not None]
            if points:
                xs, ys = zip(*points)
                ours.append(Line(xs, ys, f"{LAYOUT.name(driver)} {RELIABILITIES[reliability]}",
                                 styles[reliability], {"marker": "o", "markersize": 3,
                                 "color": colours[ROLE.get(driver, driver)]}))  # fmt: skip
        for reliability in RELIABILITIES:
            for role in ("fastdds", "other"):
                if rows := self.published_rows(role, reliability):
                    xs = sorted(rows)
                    paper.append(Line(xs, [rows[x][2] for x in xs],
                                      f"{PAPER_NAMES[role]} {RELIABILITIES[reliability]}",
                                      styles[reliability], {"marker": "o", "markersize": 3,
                                      "color": colours[role]}))  # fmt: skip
        return LAYOUT.drawing("figure4", [ours, paper], sizes=[our_size(s) for s in self.sizes],
                              paper_sizes=PAPER_SIZES)  # fmt: skip

    # The paper's claims ----------------------------------------------------------------

    def _counted(self) -> list[int]:
        return [s for s in self.sizes if s >= HEADER]

    def _reliable_increase(self, driver: str) -> float | None:
        """Mean over sizes of (reliable mean - best effort mean), ns."""
        steps = [(self.mean(driver, "best_effort", s), self.mean(driver, "reliable", s))
                 for s in self._counted()]  # fmt: skip
        steps = [b - a for a, b in steps if a is not None and b is not None]
        return float(np.mean(steps)) if steps else None

    def _published_increase(self, role: str) -> float | None:
        be, rel = self.published_rows(role, "best_effort"), self.published_rows(role, "reliable")
        steps = [rel[s][2] - be[s][2] for s in self._counted() if s in be and s in rel]
        return float(np.mean(steps)) * 1000 if steps else None

    def _ratio(self, reliability: str, other: str | None = None) -> float | None:
        """Median over sizes of mean(other) / mean(Fast DDS)."""
        pairs = [(self.mean(FASTDDS, reliability, s), self.mean(other or OTHERS[0], reliability, s))
                 for s in self._counted()]  # fmt: skip
        ratios = [b / a for a, b in pairs if a and b is not None]
        return float(np.median(ratios)) if ratios else None

    def _published_ratio(self, reliability: str) -> float | None:
        a, b = (
            self.published_rows("fastdds", reliability),
            self.published_rows("other", reliability),
        )
        ratios = [b[s][2] / a[s][2] for s in self._counted() if s in a and s in b]
        return float(np.median(ratios)) if ratios else None

    def _faster_count(self, reliability: str, other: str | None = None) -> str | None:
        tested = faster = 0
        for size in self._counted():
            a = self.values(FASTDDS, reliability, size)
            b = self.values(other or OTHERS[0], reliability, size)
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
        tested = [rows[s][0] for s in self._counted() if s in rows]
        if not tested or p is None:
            return None
        faster = sum(_lower_mean(t, p, PAPER_LOWER) == PAPER_LOWER[0] for t in tested)
        return f"{faster} of {len(tested)}"

    def _published_every_size(self, reliability: str) -> str | None:
        """Section 5's words: every t-test has p < 2.2e-16 (the one p the tables print),
        and sections 6-7 have Fast RTPS faster at every size."""
        p = _published_p((self.published.get("ttest", {}).get(reliability) or {}).get("p"))
        return "all sizes" if p is not None and p < ALPHA else None

    def claims_tables(self) -> list:
        figure4 = self.published.get("figure4", {})
        stated = figure4.get("reliable_increase_us") or {}
        increase = [[LAYOUT.text("reliable_increase", name=LAYOUT.name(d),
                                 paper_name=PAPER_NAMES[ROLE[d]]),
                     self._reliable_increase(d), self._published_increase(ROLE[d]),
                     _us_to_ns(stated.get(ROLE[d]))] for d in (FASTDDS, *OTHERS)]  # fmt: skip
        ratio = [[LAYOUT.text("ratio", reliability=RELIABILITIES[r]), self._ratio(r),
                  self._published_ratio(r), figure4.get("faster_factor")] for r in RELIABILITIES]  # fmt: skip
        faster = [[LAYOUT.text("faster", reliability=RELIABILITIES[r], alpha=ALPHA),
                   self._faster_count(r), self._published_faster_count(r),
                   self._published_every_size(r)] for r in RELIABILITIES]  # fmt: skip
        sizes = ", ".join(str(s) for s in self._counted())
        return [LAYOUT.table("claims-latency", increase), LAYOUT.table("claims-ratio", ratio),
                LAYOUT.table("claims-significance", faster, sizes=sizes, marker=published_marker(self.published))]  # fmt: skip

    # The setup ------------------------------------------------------------------------

    def setup_table(self):
        env = self.results.env or {}
        virtualization = env.get("virtualization")
        if isinstance(virtualization, dict):
            virtualization = ", ".join(f"{k} {v}" for k, v in virtualization.items())
        hardware = [env.get("cpu_model"),
                    f"{env['logical_cpus']} logical CPUs" if env.get("logical_cpus") else None,
                    f"kernel {env['kernel']}" if env.get("kernel") else None,
                    f"virtualization {virtualization}" if virtualization else None]  # fmt: skip
        pings = [
            run.run_record.get("spec", {}) for run in self.results.ok_runs if run.kind == "ping"
        ]
        counts = sorted({int(spec.get("count") or 0) for spec in pings})
        warmups = sorted({int(spec.get("warmup") or 0) for spec in pings})
        return LAYOUT.table(
            "setup", versions=_Versions(self.versions), where=self.text["where"],
            warmups=", ".join(f"{w:,}" for w in warmups) or "-",
            counts=", ".join(f"{c:,}" for c in counts) or "-",
            sizes=", ".join(str(our_size(s)) for s in self._counted()),
            paper_hardware=folded(self.published.get("hardware", "")),
            paper_versions=folded(self.published.get("versions", "")),
            hardware="; ".join(str(v) for v in hardware if v) or "unknown",
            our_versions="; ".join(f"{LAYOUT.name(d)} {v}" for d, v in sorted(self.versions.items())) or "-",
        )  # fmt: skip


def sections(results: ResultSet, published: dict) -> list[Section]:
    study = _Study(results, published)
    missing = [LAYOUT.text("missing", name=LAYOUT.name(d), driver=d)
               for d in (FASTDDS, *OTHERS) if not any(key[0] == d for key in study.samples)]  # fmt: skip
    by_reliability = []
    for reliability, title in RELIABILITIES.items():
        numbers = LAYOUT.data["table_numbers"][reliability]
        tables = [study.latency_table(d, reliability) for d in (FASTDDS, *OTHERS)]
        tables += [study.ttest_table(reliability, other) for other in OTHERS]
        heading = LAYOUT.text("reliability_section", title=title.capitalize(), first=numbers["fastdds"],
                              second=numbers["other"], ttest=numbers["ttest"])  # fmt: skip
        by_reliability.append(Section(heading, tables, notes=missing))
    return [
        LAYOUT.section("setup", [study.setup_table()]),
        *by_reliability,
        LAYOUT.section("figure4", [study.means_table()], [study.figure()]),
        LAYOUT.section("claims", study.claims_tables()),
    ]
