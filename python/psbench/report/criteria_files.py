"""The criteria report's files, in a folder of the result set (report/): each table as
Markdown, CSV and JSON, criteria.md with them all, and one HTML page (html.py's style
and policy: nothing fetched, no script)."""

import json
from html import escape
from pathlib import Path

from psbench.report import formats
from psbench.report.html import POLICY, STYLE, table_html
from psbench.report.tables import Table

TITLE = "psbench criteria"


def terminal_text(tables: list[Table]) -> str:
    return "\n\n".join(formats.terminal(t) for t in tables)


def page(tables: list[Table], summary: list[str]) -> str:
    items = "".join(f"<li>{escape(s)}</li>" for s in summary)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
        f"<title>{TITLE}</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
        f"<h1>{TITLE}</h1>", f'<ul class="summary">{items}</ul>',
        *(table_html(t) for t in tables), "</body>", "</html>", "",
    ])  # fmt: skip


def write(out: Path, tables: list[Table], summary: list[str]) -> Path:
    """Writes every file into out (created; earlier files of the same names replaced)
    and returns the HTML page's path."""
    out.mkdir(parents=True, exist_ok=True)
    for t in tables:
        for suffix in ("md", "csv", "json"):
            (out / f"{t.name}.{suffix}").write_text(formats.WRITERS[suffix](t))
    (out / "criteria.md").write_text(
        f"# {TITLE}\n\n" + "".join(f"- {s}\n" for s in summary) + "\n"
        + "\n".join(formats.markdown(t) for t in tables)
    )  # fmt: skip
    (out / "report.json").write_text(json.dumps(
        {"format": "psbench-criteria-report/1", "summary": summary,
         "tables": [formats.json_value(t) for t in tables]}, indent=1, ensure_ascii=False) + "\n")  # fmt: skip
    html = out / "criteria.html"
    html.write_text(page(tables, summary))
    return html
