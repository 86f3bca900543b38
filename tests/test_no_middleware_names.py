"""psbench's own code names no middleware: what it knows of a driver comes from the
driver's folder (its manifest, its `--describe`), so a driver is added or changed there
alone (issue 16). Reproductions may name middlewares: the papers do."""

import re

from conftest import REPO
from psbench.base import manifests

PACKAGE = REPO / "python" / "psbench"
CHECKED = [p for p in PACKAGE.rglob("*.py") if "reproduce" not in p.relative_to(PACKAGE).parts]
CHECKED.append(REPO / "tests" / "conftest.py")


def names() -> tuple[list[str], list[str]]:
    """(middleware and service names, matched as words; baseline driver names, matched
    as string literals only: "udp" and "shm" are also words of Linux)."""
    drivers = manifests.driver_names()
    baselines = list(manifests.baseline_drivers())
    words = [d for d in drivers if d not in baselines]
    words += [s.name for d in drivers for s in manifests.load(d).services]
    return sorted(set(words)), baselines


def mentions(text: str) -> list[str]:
    words, baselines = names()
    found = [
        m.group(0)
        for w in words
        for m in re.finditer(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text, re.I)
    ]
    found += [m.group(0) for b in baselines for m in re.finditer(rf"[\"']{b}[\"']", text)]
    return found


def test_the_names_are_the_driver_folders_and_their_services():
    words, baselines = names()
    assert set(baselines) == {"udp", "shm"}  # known answer
    assert {"cyclonedds", "mosquitto", "iox-roudi"} <= set(words)
    # The check sees a name where one is (an injected mention).
    assert mentions("# started like mosquitto is\nx = 'udp'") == ["mosquitto", "'udp'"]


def test_psbench_code_names_no_middleware():
    found = {str(p.relative_to(REPO)): hits for p in CHECKED if (hits := mentions(p.read_text()))}
    assert found == {}
