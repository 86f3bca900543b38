"""The trend as one self-contained HTML page, made as the report's page is (its style and
Content-Security-Policy: inline CSS, figures as base64 PNG, no script, nothing fetched)."""

from html import escape

from psbench.report.html import document, figure_html, table_html
from psbench.report.tables import Table

NAV = (
    '<nav><a href="#summary">Summary</a> <a href="#tables">Tables</a> '
    '<a href="#plots">Trends</a></nav>'
)


def render(title: str, summary: list[str], warnings: list[str], tables: list[Table], plots) -> str:
    items = "".join(f"<li>{escape(line)}</li>" for line in summary)
    warned = "".join(f"<li>warning: {escape(w)}</li>" for w in warnings)
    body = [
        f"<h1>{escape(title)}</h1>",
        '<section id="summary">\n<h2>Summary</h2>',
        f'<ul class="summary">{items}</ul>',
        f'<ul class="warnings">{warned}</ul>' if warned else "",
        "</section>",
        '<section id="tables">\n<h2>Tables</h2>',
        *(table_html(t) for t in tables),
        "</section>",
        '<section id="plots">\n<h2>Trends</h2>',
        *(figure_html(p) for p in plots),
        "" if plots else '<p class="none">No series to draw.</p>',
        "</section>",
    ]
    return document(title, NAV, [part for part in body if part])
