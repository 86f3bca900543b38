"""One table in each output format: terminal, Markdown, CSV, JSON and LaTeX."""

import csv
import io
import json

from psbench.base import table as text_table
from psbench.report.tables import Table


def terminal(t: Table) -> str:
    lines = [t.title, text_table.render(t.headers, t.text_rows(), indent="  ")]
    lines.extend(f"  {note}" for note in t.notes)
    return "\n".join(lines)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(t: Table) -> str:
    lines = [
        f"### {t.title}",
        "",
        "| " + " | ".join(_md_cell(h) for h in t.headers) + " |",
        "|" + "|".join("---:" if c.format != "text" else "---" for c in t.columns) + "|",
    ]
    lines.extend("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in t.text_rows())
    if t.notes:
        lines.append("")
        lines.extend(t.notes)
    return "\n".join(lines) + "\n"


def csv_text(t: Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([c.key for c in t.columns])
    for row in t.rows:
        writer.writerow(["" if v is None else v for v in row])
    return out.getvalue()


def json_value(t: Table) -> dict:
    return {
        "name": t.name,
        "title": t.title,
        "columns": [{"key": c.key, "name": c.name, "format": c.format} for c in t.columns],
        "rows": t.records(),
        "notes": t.notes,
    }


def json_text(t: Table) -> str:
    return json.dumps(json_value(t), indent=2, ensure_ascii=False) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "µ": r"$\mu$",
    "<": r"$<$",
    ">": r"$>$",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def latex(t: Table) -> str:
    """A booktabs table (\\usepackage{booktabs}), numbers right-aligned."""
    spec = "".join("r" if c.format != "text" else "l" for c in t.columns)
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        f"\\caption{{{latex_escape(t.title)}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in t.headers) + r" \\",
        r"\midrule",
    ]
    lines.extend(" & ".join(latex_escape(c) for c in row) + r" \\" for row in t.text_rows())
    lines.extend([r"\bottomrule", r"\end{tabular}"])
    lines.extend(f"% {note}" for note in t.notes)
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


WRITERS = {"md": markdown, "csv": csv_text, "json": json_text, "tex": latex}
