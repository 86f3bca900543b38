"""The report as one self-contained HTML page: inline CSS, plots embedded as base64 PNG,
no script, nothing fetched (a Content-Security-Policy forbids it), no timestamp of its
own, so the same report gives the same page."""

import base64
import json
from html import escape

from psbench.report.tables import Table

SECTIONS = (
    ("summary", "Summary"),
    ("tables", "Tables"),
    ("plots", "Plots"),
    ("environment", "Environment"),
    ("experiment", "Experiment"),
)

# Images only from data: URLs, styles only inline, nothing else: the page cannot reach
# the network even if something in it tried.
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1d2430; background: #fff; margin: 0 auto; padding: 0 1.5rem 3rem;
       max-width: 1200px; }
nav { position: sticky; top: 0; background: #f4f6f9; border-bottom: 1px solid #d6dbe3;
      padding: .5rem 0; margin: 0 -1.5rem 1rem; padding-left: 1.5rem; }
nav a { margin-right: 1.2rem; color: #1f5fa8; text-decoration: none; font-weight: 600; }
h1 { font-size: 1.6rem; margin: 1rem 0 .5rem; }
h2 { font-size: 1.3rem; border-bottom: 2px solid #1f5fa8; padding-bottom: .2rem;
     margin-top: 2.2rem; }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
ul.summary li { margin: .15rem 0; }
ul.warnings { list-style: none; padding: 0; }
ul.warnings li { background: #fff4d6; border-left: 5px solid #e0a100; padding: .35rem .7rem;
                 margin: .3rem 0; }
p.none { color: #56606e; font-style: italic; }
table.data { border-collapse: collapse; font-size: .85rem; margin: .3rem 0; }
table.data th, table.data td { border-bottom: 1px solid #e1e5eb; padding: .25rem .6rem;
                               text-align: left; white-space: nowrap; }
table.data th { background: #eef1f5; }
table.data .num { text-align: right; font-variant-numeric: tabular-nums; }
table.data tbody tr:nth-child(even) { background: #f8f9fb; }
.scroll { overflow-x: auto; }
p.note, ul.notes li { color: #56606e; font-size: .85rem; margin: .2rem 0; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #e1e5eb; }
figcaption { font-size: .9rem; max-width: 60rem; }
figcaption .files { color: #56606e; font-size: .8rem; }
dl.env { display: grid; grid-template-columns: max-content auto; gap: .15rem 1rem;
         margin: .2rem 0; font-size: .85rem; }
dl.env dt { font-weight: 600; }
dl.env dd { margin: 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace;
            overflow-wrap: anywhere; }
dl.env dl.env { border-left: 2px solid #e1e5eb; padding-left: .6rem; }
pre { background: #f4f6f9; border: 1px solid #e1e5eb; padding: .8rem; overflow-x: auto;
      font-size: .85rem; }
"""


def render_html(
    title: str,
    summary: list[str],
    warnings: list[str],
    tables: list[Table],
    plots: list,
    env: dict,
    experiment_text: str | None,
    notes: list[str],
) -> str:
    """The whole page. plots are analysis.plots.Plot objects whose PNG files exist."""
    body = [
        f"<h1>{escape(title)}</h1>",
        _section("summary", _summary(summary, warnings)),
        _section("tables", "\n".join(_table(t) for t in tables) or _none("No tables.")),
        _section("plots", _plots(plots, notes)),
        _section("environment", _environment(env)),
        _section("experiment", _experiment(experiment_text)),
    ]
    return document(title, _nav(), body)


def document(title: str, nav: str, body: list[str]) -> str:
    """A whole page around its nav and body: the style and the policy (other pages of
    psbench are made with it too)."""
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
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def _nav() -> str:
    links = " ".join(f'<a href="#{key}">{heading}</a>' for key, heading in SECTIONS)
    return f"<nav>{links}</nav>"


def _section(key: str, content: str) -> str:
    heading = dict(SECTIONS)[key]
    return f'<section id="{key}">\n<h2>{heading}</h2>\n{content}\n</section>'


def _none(sentence: str) -> str:
    return f'<p class="none">{escape(sentence)}</p>'


def _list(items: list[str], css_class: str) -> str:
    lines = "".join(f"<li>{escape(item)}</li>" for item in items)
    return f'<ul class="{css_class}">{lines}</ul>'


def _summary(summary: list[str], warnings: list[str]) -> str:
    parts = [_list(summary, "summary") if summary else _none("Nothing to summarize.")]
    if warnings:
        parts.append(_list([f"warning: {w}" for w in warnings], "warnings"))
    else:
        parts.append(_none("No warnings."))
    return "\n".join(parts)


FOLDED_ROWS = 40


def _table(t: Table) -> str:
    numeric = [c.format != "text" for c in t.columns]

    def cell(tag: str, text: str, is_number: bool) -> str:
        css = ' class="num"' if is_number else ""
        return f"<{tag}{css}>{escape(text)}</{tag}>"

    head = "".join(cell("th", h, n) for h, n in zip(t.headers, numeric))
    rows = "\n".join(
        "<tr>" + "".join(cell("td", text, n) for text, n in zip(row, numeric)) + "</tr>"
        for row in t.text_rows()
    )
    notes = "".join(f'<p class="note">{escape(note)}</p>' for note in t.notes)
    body = (
        f'<div class="scroll"><table class="data"><thead><tr>{head}</tr></thead>\n'
        f"<tbody>\n{rows}\n</tbody></table></div>\n"
    )
    if t.folded or len(t.rows) > FOLDED_ROWS:
        # A long table (e.g. every pair of a large sweep) folds, so that the page still
        # reads from top to bottom; <details> needs no script.
        body = f"<details><summary>{len(t.rows)} rows: show the table</summary>\n{body}</details>\n"
    return f'<h3 id="table-{escape(t.name)}">{escape(t.title)}</h3>\n{body}{notes}'


def table_html(t: Table) -> str:
    """One table as the report page shows it (other pages reuse it)."""
    return _table(t)


def _plots(plots: list, notes: list[str]) -> str:
    parts = [_figure(p) for p in plots] or [_none("No plots in this report.")]
    if notes:
        parts.append("<h3>Notes</h3>")
        parts.append(_list(notes, "notes"))
    return "\n".join(parts)


def figure_html(plot) -> str:
    """One plot as the report page shows it (other pages reuse it)."""
    return _figure(plot)


def _figure(plot) -> str:
    data = base64.b64encode(plot.png.read_bytes()).decode("ascii")
    files = f"plots/{plot.png.name}, plots/{plot.svg.name}"
    return (
        f'<figure id="plot-{escape(plot.name)}">\n'
        f'<img src="data:image/png;base64,{data}" alt="{escape(plot.title)}">\n'
        f"<figcaption><strong>{escape(plot.title)}.</strong> {escape(plot.caption)} "
        f'<span class="files">({escape(files)})</span></figcaption>\n</figure>'
    )


def _value(value) -> str:
    """An environment value: a nested mapping as its own list, anything else as text."""
    if isinstance(value, dict):
        return _definitions(value) if value else "{}"
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return escape(", ".join(_scalar(v) for v in value)) if value else "[]"
    if isinstance(value, list):
        return "".join(f"<div>{_value(v)}</div>" for v in value)
    return escape(_scalar(value))


def _scalar(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _definitions(mapping: dict) -> str:
    items = "".join(
        f"<dt>{escape(str(key))}</dt><dd>{_value(value)}</dd>" for key, value in mapping.items()
    )
    return f'<dl class="env">{items}</dl>'


def _environment(env: dict) -> str:
    return _definitions(env) if env else _none("No environment was recorded.")


def _experiment(text: str | None) -> str:
    if text is None:
        return _none(
            "No experiment file: these results are single runs of psbench ping "
            "or pubsub, not a sweep of psbench run."
        )
    return f"<pre>{escape(text)}</pre>"
