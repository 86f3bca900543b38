"""Prose numbers in the docs must be figures their own tables show, so the prose cannot
drift from the tables (issue 15, section 4)."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def _table_cells(text: str) -> set[str]:
    return {
        c.strip()
        for line in text.splitlines()
        if line.startswith("|")
        for part in line.split("|")
        for c in part.split("/")
    }


def test_trento_prose_worst_cases_are_in_its_tables():
    text = (DOCS / "reproductions.md").read_text()
    trento = _section(text, "Figure 3, latency against subscribers", "### What agrees")
    bullet = _section(text, "**The x86 bound of 1 ms", '- **"ORTE')
    quoted = re.findall(r"\d[\d,]*\.\d\d", bullet)
    assert quoted == ["588.76", "1,052.16", "1,554.31"]
    cells = _table_cells(trento)
    assert all(q in cells for q in quoted), (quoted, "not all in the Trento tables")


def test_trento_prose_does_not_quote_a_figure_its_table_lacks():
    # Known answer: the old prose's "589 µs ... at 4 subscribers" is not the table's
    # 4-subscriber Fast DDS worst case (520.96); the helper must see that.
    text = (DOCS / "reproductions.md").read_text()
    cells = _table_cells(_section(text, "Figure 3, latency against subscribers", "### What agrees"))
    assert "520.96" in cells and "589.00" not in cells


def test_compare_p99_of_500_is_the_sixth_largest():
    # nearest rank: ceil(0.99 * 500) = 495, so 500 - 495 + 1 = 6th largest
    rank = -(-99 * 500 // 100)
    assert 500 - rank + 1 == 6
    assert "p99 is the 6th\nlargest" in (DOCS / "compare.md").read_text()
