"""The studies' layouts (experiments/seeds/NAME.layout.yaml) and the one module that renders
them (psbench/reproduce/layout.py): every layout is well formed, and the renderer builds
tables, sections, figures and claim rows as a made-up layout says."""

import pytest
import yaml

from psbench.report.tables import FORMATS
from psbench.reproduce import STUDIES, common
from psbench.reproduce.layout import Layout, Line, Settings, claim_rows

LAYOUTS = sorted(
    p.name.removesuffix(".layout.yaml") for p in common.seeds_dir().glob("*.layout.yaml")
)


def test_every_study_has_a_layout():
    assert LAYOUTS == sorted(STUDIES)


@pytest.mark.parametrize("study", LAYOUTS)
def test_every_layout_is_well_formed(study):
    data = Layout(study).data
    groups = data.get("column_groups") or {}

    def check(entries):
        for entry in entries:
            if isinstance(entry, str):
                check(groups[entry])
            elif isinstance(entry, dict):
                assert set(entry) == {"each", "columns"}, entry
                check(entry["columns"])
            else:  # a comma in an unquoted title would split it into more items
                assert len(entry) in (2, 3) and (len(entry) == 2 or entry[2] in FORMATS), entry

    names = [spec["name"] for spec in data.get("tables", {}).values()]
    names += [spec["name"] for spec in data.get("figures", {}).values()]
    assert len(names) == len(set(names)), names
    for spec in data.get("tables", {}).values():
        assert spec["title"] and spec["columns"]
        check(spec["columns"])
    for spec in data.get("figures", {}).values():
        assert spec["title"] and spec["caption"] and ("panels" in spec or "panel" in spec)
    for spec in data.get("sections", {}).values():
        assert spec["title"]


@pytest.fixture
def made_up(tmp_path, monkeypatch):
    (tmp_path / "madeup.layout.yaml").write_text(
        yaml.safe_dump(
            {
                "names": {"a": "Alpha", "b": "Beta"},
                "order": ["b", "a"],
                "roles": {"other": ["a"]},
                "column_groups": {"who": [["middleware", "middleware"]]},
                "texts": {"hello": "hello {who}", "raw": "{number}"},
                "tables": {
                    "t": {
                        "name": "t-{slug}",
                        "title": "Table {number}",
                        "columns": [
                            "who",
                            ["n", "n", "count"],
                            {"each": "drivers", "columns": [["{name} µs", "{driver}_ns", "us"]]},
                        ],
                        "notes": ["measured {where}", "{{braces}} stay"],
                    },
                    "fixed": {
                        "name": "fixed",
                        "title": "Fixed",
                        "columns": [["what", "what"], ["paper", "paper"], ["ours", "ours"]],
                        "rows": [["samples", "{method[count]}", "{runs[count]}, {runs[size]}"]],
                    },
                },
                "figures": {
                    "f": {
                        "name": "f-plot",
                        "title": "F",
                        "caption": "a caption {where}",
                        "axes": {"xscale": "log2", "ylabel": "µs", "legend": {"fontsize": 7}},
                        "panel": {"title": "panel {title}"},
                    }
                },
                "sections": {"s": {"title": "Section", "notes": ["{marker}"]}},
            },
            allow_unicode=True,
        )
    )
    monkeypatch.setattr(common, "seeds_dir", lambda: tmp_path)
    return Layout("madeup")


def test_names_order_roles_and_texts(made_up):
    assert made_up.name("a") == "Alpha" and made_up.name("c") == "c"
    assert made_up.ranked(["c", "a", "b"]) == ["b", "a", "c"]
    assert made_up.role("other") == ["a"] and made_up.role("none") == []
    assert made_up.text("hello", who="you") == "hello you"
    assert made_up.text("raw", number=7) == 7  # one whole field: the value itself


def test_a_table_from_dict_rows_groups_and_repeated_columns(made_up):
    drivers = [{"driver": "a", "name": "Alpha"}, {"driver": "b", "name": "Beta"}]
    rows = [{"middleware": "Alpha", "n": 3, "a_ns": 1000.0}]
    table = made_up.table("t", rows, ["extra"], ["first"], slug="x", number=2, where="here",
                          drivers=drivers)  # fmt: skip
    assert (table.name, table.title) == ("t-x", "Table 2")
    assert [c.name for c in table.columns] == ["middleware", "n", "Alpha µs", "Beta µs"]
    assert [c.key for c in table.columns] == ["middleware", "n", "a_ns", "b_ns"]
    assert table.rows == [["Alpha", 3, 1000.0, None]]
    assert table.notes == ["first", "measured here", "{braces} stay", "extra"]


def test_a_table_of_the_layouts_own_rows_keeps_raw_values(made_up):
    class Run:
        def __init__(self, **params):
            self.params = params

    runs = Settings([Run(count=10, size=64), Run(count=10, size=1024.0), Run(size=32)])
    table = made_up.table("fixed", method={"count": 100}, runs=runs)
    assert table.rows == [["samples", 100, "10, 32, 64, 1024"]]


def test_a_section_and_a_figure(made_up):
    section = made_up.section("s", ["T"], [], ["more"], marker="M")
    assert (section.title, section.tables, section.notes) == ("Section", ["T"], ["M", "more"])
    lines = [Line([1, 2, 4], [3.0, 2.0, 1.0], "one", "-", {"marker": "o"})]
    drawing = made_up.drawing("f", [lines, []], [{"title": "A"}, {"title": "B"}], where="here")
    assert (drawing.name, drawing.caption) == ("f-plot", "a caption here")
    first, second = drawing.figure.axes
    assert (first.get_title(), second.get_title()) == ("panel A", "panel B")
    assert first.get_xscale() == "log" and first.get_ylabel() == "µs"
    assert first.get_legend() is not None and [t.get_text() for t in first.get_legend().texts] == [
        "one"
    ]


def test_claim_rows_check_each_kind_and_say_why_otherwise():
    published = {
        "claims": [
            {"id": "c1", "kind": "above", "text": "a  long\n text", "note": "read  as x"},
            {"id": "c2", "kind": "not_testable", "reason": "no such system here"},
            {"id": "c3", "kind": "odd"},
        ]
    }
    rows, notes = claim_rows(published, {"above": lambda claim: ("ours", "agrees")})
    assert [(r["id"], r["ours"], r["verdict"]) for r in rows] == [
        ("c1", "ours", "agrees"),
        ("c2", "-", "not testable: no such system here"),
        ("c3", "-", "not checked (unknown kind 'odd')"),
    ]
    assert rows[0]["text"] == "a long text" and notes == ["c1: read as x"]
