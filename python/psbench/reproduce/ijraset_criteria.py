"""IJRASET Table 1 beside `psbench criteria`'s verdicts, row by row, for the paper's
DDS implementations that have a driver here (experiments/seeds/ijraset.published.yaml,
`systems`): for each criterion the paper's cell as printed, ours, and whether they
agree, disagree, or cannot be compared (ours not tested, or the two say different
kinds of things)."""

from psbench.report.tables import Column, Table

AGREE, DISAGREE, PARTLY, NOT_COMPARABLE = "agree", "disagree", "partly", "not comparable"
# Table 1's columns, in its order, and the criterion of ours each is read against.
CRITERIA = ("interoperability", "architecture", "persistence", "routing", "monitoring",
            "low_bandwidth", "licence")  # fmt: skip
# Section III.A: "non-federated" is peer-to-peer without a daemon, "federated" a daemon
# per host; "Both": either, which one architecture of ours cannot be compared with.
ARCHITECTURES = {"non-federated": "peer-to-peer", "federated": "per-host daemon"}
OPEN_LICENCES = ("Apache", "EPL", "EDL", "BSD", "MIT", "Expat", "LGPL", "GPL", "MPL", "ISC")
SCOPE = {
    "persistence": "ours: transient_local late joiners only; the paper's also counts "
    "TRANSIENT/PERSISTENT durability services",
    "licence": "ours: the licence of the packages installed here; commercial support "
    "is not checked",
    "interoperability": "ours: the interop matrix with the other DDS driver here",
    "low_bandwidth": "ours: discovery and delivery over 256 kbit/s with 2% loss, each "
    "middleware's defaults; the paper's limited-bandwidth plugins, compression and static "
    "discovery are not driven",
}


def _yes_no(text: str) -> str | None:
    word = text.strip().lower()
    return "yes" if word.startswith("yes") else "no" if word.startswith("no") else None


def compare(criterion: str, paper: str, ours) -> str:
    """Agreement of the paper's cell (as printed) with our verdict (None: not run)."""
    if (
        ours is None
        or ours.verdict in ("not testable here", "not applicable")
        or (ours.verdict.startswith("documented"))
    ):
        return NOT_COMPARABLE
    if criterion == "architecture":
        expected = ARCHITECTURES.get(paper.strip().lower())
        if expected is None:
            return NOT_COMPARABLE
        return AGREE if ours.verdict.split(" (")[0] == expected else DISAGREE
    if criterion == "licence":
        open_here = any(name in ours.verdict for name in OPEN_LICENCES)
        if "open source" in paper.lower():
            return AGREE if open_here else DISAGREE
        if paper.strip().lower() == "commercial":
            return DISAGREE if open_here else NOT_COMPARABLE
        return NOT_COMPARABLE
    claim = "yes" if criterion == "interoperability" and "rtps" in paper.lower() else _yes_no(paper)
    if claim is None or ours.verdict not in ("yes", "no", "partial"):
        return NOT_COMPARABLE
    if ours.verdict == "partial":
        return PARTLY
    return AGREE if ours.verdict == claim else DISAGREE


def _ours(verdict) -> str:
    if verdict is None:
        return "not run by psbench criteria"
    if verdict.verdict.startswith("documented"):
        return f"{verdict.verdict}: {verdict.evidence}"
    return verdict.verdict


def table(published: dict, verdicts: list, drivers: list[str]) -> Table | None:
    """The comparison, or None when none of the paper's systems has a driver among
    those the criteria ran for."""
    by_cell = {(v.driver, v.criterion): v for v in verdicts}
    rows = []
    values = (published.get("criteria") or {}).get("values") or {}
    for key, system in (published.get("systems") or {}).items():
        driver = system.get("driver")
        if driver not in drivers:
            continue
        for criterion in CRITERIA:
            paper = str((values.get(key) or {}).get(criterion, "-"))
            ours = by_cell.get((driver, criterion))
            rows.append([system["name"], driver, criterion, paper, _ours(ours),
                         compare(criterion, paper, ours), SCOPE.get(criterion)])  # fmt: skip
    if not rows:
        return None
    return Table(
        "criteria-ijraset",
        "IJRASET Table 1 beside our verdicts",
        [Column("paper's system", "system"), Column("driver here", "driver"),
         Column("criterion"), Column("paper (Table 1)", "paper"),
         Column("ours"), Column("agreement"), Column("scope")],
        rows,
        [
            "the paper's cells as printed (experiments/seeds/ijraset.published.yaml); a "
            "driver stands in for the paper's system as experiments/seeds/ijraset.yaml says "
            "(Fast DDS: Fast RTPS renamed; Cyclone DDS: ADLINK's successor to OpenSplice, "
            "without its RT Networking service or federated daemon): the agreement is the "
            "stand-in's",
            "not comparable: ours was not tested here or documented only, or the paper's "
            "cell is not a yes/no (architecture 'Both')",
        ],
    )  # fmt: skip
