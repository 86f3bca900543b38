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

from psbench.reproduce.common import Section, published_marker, where_measured
from psbench.reproduce.layout import Line, folded
from psbench.reproduce.zak2017_claims import (
    ALPHA,
    FASTDDS,
    LAYOUT,
    OTHERS,
    PAPER_LOWER,
    PAPER_NAMES,
    PAPER_SIZES,
    RELIABILITIES,
    ROLE,
    Samples,
    _lower_mean,
    _published_p,
    _stats,
    _us_to_ns,
    our_size,
)
from psbench.results.load import ResultSet
from psbench.results.significance import welch

STAND_INS = LAYOUT.data["stand_ins"]  # drivers in place of the paper's implementation


class _Versions(dict):
    def __missing__(self, driver: str) -> str:
        return "(not measured)"


class _Study(Samples):
    """The paper's tables, figure and claims tables, from the samples."""

    @cached_property
    def text(self) -> dict:
        """What the tables' notes say of every table: marker, size note, where."""
        return {"marker": published_marker(self.published), "size_note": LAYOUT.text("size_note"),
                "where": where_measured(self.results), "alpha": ALPHA}  # fmt: skip

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
        stands_in = LAYOUT.text("stands_in", **names) if driver in STAND_INS else ""
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
                                 "color": colours.get(driver) or colours[ROLE.get(driver, driver)]}))  # fmt: skip
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

    def claims_tables(self) -> list:
        figure4 = self.published.get("figure4", {})
        stated = figure4.get("reliable_increase_us") or {}
        increase = [[LAYOUT.text("reliable_increase", name=LAYOUT.name(d),
                                 paper_name=PAPER_NAMES[ROLE[d]]),
                     self._reliable_increase(d), self._published_increase(ROLE[d]),
                     _us_to_ns(stated.get(ROLE[d]))] for d in (FASTDDS, *OTHERS)]  # fmt: skip
        judged = self._judged_other()
        other = LAYOUT.name(judged) + (
            f" (standing in for {PAPER_NAMES['other']})" if judged in STAND_INS else ""
        )
        ratio = [[LAYOUT.text("ratio", reliability=RELIABILITIES[r], name=other), self._ratio(r),
                  self._published_ratio(r), figure4.get("faster_factor")] for r in RELIABILITIES]  # fmt: skip
        faster = [[LAYOUT.text("faster", reliability=RELIABILITIES[r], alpha=ALPHA, name=other),
                   self._faster_count(r), self._published_faster_count(r),
                   self._published_every_size(r)] for r in RELIABILITIES]  # fmt: skip
        sizes = ", ".join(str(s) for s in self._counted())
        marker = published_marker(self.published)
        return [LAYOUT.table("claims-latency", increase), LAYOUT.table("claims-ratio", ratio),
                LAYOUT.table("claims-significance", faster, sizes=sizes, marker=marker)]  # fmt: skip

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
