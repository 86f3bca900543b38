"""Criteria psbench does not test (yet, or cannot here), as the drivers' manifests
document them ([claims.<criterion>] text, source): shown as "documented, not verified"
with the source, never as a verdict of psbench's. Only criteria no experiment covers get
a column; a claim about a tested criterion goes into that criterion's evidence where the
experiment could not decide (monitoring, for one)."""

from psbench.base import manifests
from psbench.run.criteria.verdict import DOCUMENTED, NOT_TESTABLE, Verdict


def judge(driver: str, criterion: str, claim) -> Verdict:
    if claim is None:
        return Verdict(criterion, driver, NOT_TESTABLE,
                       "psbench has no experiment for it and the driver's manifest "
                       "documents no claim about it")  # fmt: skip
    return Verdict(criterion, driver, DOCUMENTED, claim.text, experiment="manifest claim",
                   source=claim.source)  # fmt: skip


def untested(drivers: list[str], tested: list[str]) -> list[str]:
    """The criteria the drivers' manifests claim something about that no experiment
    covers, in the order first met."""
    found = [c for d in drivers for c in manifests.load(d).claims if c not in tested]
    return list(dict.fromkeys(found))


def assess(drivers: list[str], criterion: str) -> dict[str, Verdict]:
    return {d: judge(d, criterion, manifests.load(d).claims.get(criterion)) for d in drivers}
