"""Zak 2017's samples and claims: every ping sample of a result set by driver,
reliability and size (repetitions pooled, as the paper's statistics were over its 10,000
samples), the paper's published rows beside them, and the numbers its claims rest on
(what reliable adds to the mean, the other DDS's mean over Fast DDS's, the sizes where
Welch's t-test finds Fast DDS faster), ours and the paper's. psbench.reproduce.zak2017
sets them in the paper's tables and figure."""

import numpy as np

from psbench.reproduce.layout import Layout
from psbench.results.load import ResultSet
from psbench.results.run_record import driver_version
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
        version = driver_version(run.run_record)
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


class Samples:
    """The samples of a result set and the published figures, by the paper's sizes."""

    def __init__(self, results: ResultSet, published: dict):
        self.results = results
        self.published = published
        self.samples, self.versions = _samples(results)
        measured = {size for (_, _, size) in self.samples}
        # The paper's sizes this run measured (all of them when it measured none).
        self.sizes = [s for s in PAPER_SIZES if our_size(s) in measured] or PAPER_SIZES

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

    # The paper's claims ----------------------------------------------------------------

    def _counted(self) -> list[int]:
        return [s for s in self.sizes if s >= HEADER]

    def _judged_other(self) -> str:
        """The driver the claims about OpenDDS are checked on: the first of its role with
        samples here (OpenDDS itself where it ran, else the driver standing in for it)."""
        for driver in OTHERS:
            if any(self.mean(driver, r, s) is not None
                   for r in ("best_effort", "reliable") for s in self._counted()):  # fmt: skip
                return driver
        return OTHERS[0]

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
        other = other or self._judged_other()
        pairs = [(self.mean(FASTDDS, reliability, s), self.mean(other, reliability, s))
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
            b = self.values(other or self._judged_other(), reliability, size)
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
