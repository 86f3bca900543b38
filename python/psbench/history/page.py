"""The trend as one self-contained HTML page, made as the report's page is (its style and
Content-Security-Policy: inline CSS, figures as base64 PNG, no script, nothing fetched)."""

import base64
from html import escape

from psbench.report.html import POLICY, STYLE, table_html
from psbench.report.tables import Table


def _figure(plot) -> str:
    data = base64.b64encode(plot.png.read_bytes()).decode("ascii")
    return (
        f'<figure id="plot-{escape(plot.name)}">\n'
        f'<img src="data:image/png;base64,{data}" alt="{escape(plot.title)}">\n'
        f"<figcaption><strong>{escape(plot.title)}.</strong> {escape(plot.caption)} "
        f'<span class="files">(plots/{escape(plot.png.name)}, plots/{escape(plot.svg.name)})'
        f"</span></figcaption>\n</figure>"
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
        *(_figure(p) for p in plots),
        "" if plots else '<p class="none">No series to draw.</p>',
        "</section>",
    ]
    nav = '<nav><a href="#summary">Summary</a> <a href="#tables">Tables</a> <a href="#plots">Trends</a></nav>'
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            "<body>",
            nav,
            *filter(None, body),
            "</body>",
            "</html>",
            "",
        ]
    )
