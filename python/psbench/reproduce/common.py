"""What every study shares: its files, the published figures, and the paper's sections
(tables and figures in the paper's own form) written beside the normal report.

A study module builds `Section`s from the measured ResultSet and the published figures;
this module writes them as DIR/report/paper.md and paper.json, each table as
DIR/report/paper/<table>.md|csv|json|tex (analysis.formats), each figure as
DIR/report/paper/<drawing>.png|svg, and prints them on the terminal.
"""

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from psbench.base import paths
from psbench.base.errors import UserError
from psbench.base.units import hosts_text
from psbench.report import formats
from psbench.report.tables import Table

PAPER_FORMAT = "psbench-paper/1"
PAPER_DIR = "paper"


@dataclass
class Section:
    """One part of the paper, reproduced: its tables (the analysis Table type, so every
    output format works), its figures (analysis.plots.Drawing) and notes for readers."""

    title: str
    tables: list[Table] = field(default_factory=list)
    drawings: list = field(default_factory=list)  # analysis.plots.Drawing
    notes: list[str] = field(default_factory=list)


def seeds_dir() -> Path:
    return paths.REPO_ROOT / "experiments" / "seeds"


def experiment_path(name: str, quick: bool = False, network: bool = False) -> Path:
    """experiments/seeds/NAME[-network][-quick].yaml."""
    path = seeds_dir() / f"{name}{'-network' if network else ''}{'-quick' if quick else ''}.yaml"
    if not path.is_file():
        if network:
            raise UserError(
                f"study {name!r} has no network variant yet ({path} is missing); "
                f"run it without --network",
                2,
            )
        raise UserError(f"study {name!r}: its experiment file {path} is missing", 2)
    return path


def on_hosts(results) -> bool:
    """Whether a result set's runs are on hosts (their `hosts`), not one host's loopback."""
    return any(run.params.get("hosts") for run in results.runs)


def where_measured(results) -> str:
    """'over loopback (one host)', or 'between emulated hosts a(100mbit)+b(100mbit)' for a
    result set whose runs are on hosts (per_network gives each network its own)."""
    networks = {hosts_text(run.params.get("hosts") or {}) for run in results.runs}
    networks.discard("")
    if not networks:
        return "over loopback (one host)"
    return "between emulated hosts " + " and ".join(sorted(networks))


def per_network(results, sections_of) -> list[Section]:
    """The paper's sections once per network of a result set (its runs' `hosts`), each
    titled with the network and with its own table and figure names; one network (or
    none): the sections as they are."""
    groups: dict[str, list] = {}
    for run in results.runs:
        groups.setdefault(hosts_text(run.params.get("hosts") or {}), []).append(run)
    if len(groups) < 2:
        return sections_of(results)
    found = []
    for label, runs in groups.items():
        slug = re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")
        for section in sections_of(replace(results, runs=runs)):
            section.title = f"{section.title} [{label or 'one host'}]"
            for t in section.tables:
                t.name = f"{t.name}-{slug}"
            for d in section.drawings:
                d.name = f"{d.name}-{slug}"
            found.append(section)
    return found


def load_published(name: str) -> dict:
    """experiments/seeds/NAME.published.yaml: the paper's printed figures (with `source`,
    `hardware` and `versions` notes). A missing file is an error: a reproduction without
    the figures it reproduces is not one."""
    path = seeds_dir() / f"{name}.published.yaml"
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise UserError(f"study {name!r}: its published figures {path} are missing", 2) from None
    except yaml.YAMLError as exc:
        raise UserError(f"study {name!r}: {path} is not valid YAML: {exc}", 2) from None
    if not isinstance(data, dict):
        raise UserError(f"study {name!r}: {path} must be a mapping", 2)
    return data


def published_marker(published: dict) -> str:
    """The note that goes under every table holding published figures."""
    hardware = published.get("hardware") or "unknown hardware"
    versions = published.get("versions") or "unknown versions"
    return (
        f"Published figures were measured on other hardware ({_one_line(hardware)}) "
        f"and with other versions ({_one_line(versions)}); compare shapes and ratios, "
        f"not absolute values."
    )


def not_testable(reason) -> str:
    """The verdict of a claim this setup cannot test, whatever the data: it says why
    (issue 15: never a verdict that looks measured when nothing was)."""
    return "not testable: " + _one_line(reason or "no reason given")


def _one_line(value) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return " ".join(str(value).split())


def _table_names(sections: list[Section]) -> None:
    seen: set[str] = set()
    for section in sections:
        for t in section.tables + section.drawings:
            if t.name in seen:
                raise ValueError(f"two tables or figures of the paper are named {t.name!r}")
            seen.add(t.name)


def terminal_text(name: str, sections: list[Section]) -> str:
    parts = []
    for section in sections:
        lines = [f"== {name}: {section.title} =="]
        lines.extend(section.notes)
        parts.append("\n".join(lines))
        parts.extend(formats.terminal(t) for t in section.tables)
        parts.extend(f"figure: {d.title} ({PAPER_DIR}/{d.name}.png)" for d in section.drawings)
    return "\n\n".join(parts)


def markdown(name: str, description: str, sections: list[Section]) -> str:
    lines = [f"# Reproduction: {name}", "", description, ""]
    for section in sections:
        lines += [f"## {section.title}", ""]
        if section.notes:
            lines += [*section.notes, ""]
        for t in section.tables:
            lines += [formats.markdown(t)]
        for d in section.drawings:
            lines += [f"![{d.title}]({PAPER_DIR}/{d.name}.svg)", "", d.caption, ""]
    return "\n".join(lines)


def json_document(
    name: str,
    description: str,
    sections: list[Section],
    quick: bool,
    results: Path,
    published: dict,
) -> dict:
    return {
        "format": PAPER_FORMAT,
        "study": name,
        "description": description,
        "quick": quick,
        "results": str(results),
        "published": {
            k: published.get(k) for k in ("source", "hardware", "versions") if k in published
        },
        "sections": [
            {
                "title": s.title,
                "notes": s.notes,
                "tables": [formats.json_value(t) for t in s.tables],
                "figures": [
                    {
                        "name": d.name,
                        "title": d.title,
                        "caption": d.caption,
                        "png": f"{PAPER_DIR}/{d.name}.png",
                        "svg": f"{PAPER_DIR}/{d.name}.svg",
                    }
                    for d in s.drawings
                ],
            }
            for s in sections
        ],
    }


def write_sections(
    name: str,
    description: str,
    sections: list[Section],
    report_dir: Path,
    quick: bool = False,
    results: Path | None = None,
    published: dict | None = None,
) -> Path:
    """Writes report_dir/paper.md, paper.json and report_dir/paper/* ; returns paper.md."""
    import matplotlib  # slow to import: only when writing

    from psbench.report.plots import STYLE, _save

    _table_names(sections)
    out = report_dir / PAPER_DIR
    out.mkdir(parents=True, exist_ok=True)
    for section in sections:
        for t in section.tables:
            for suffix, writer in formats.WRITERS.items():
                (out / f"{t.name}.{suffix}").write_text(writer(t))
        with matplotlib.rc_context(STYLE):
            for d in section.drawings:
                _save(d, out)
    (report_dir / "paper.md").write_text(markdown(name, description, sections))
    (report_dir / "paper.json").write_text(
        json.dumps(
            json_document(
                name, description, sections, quick, results or report_dir.parent, published or {}
            ),
            indent=2,
            ensure_ascii=False,
            default=str,
        )
        + "\n"
    )
    return report_dir / "paper.md"
