"""run.json's JSON Schema and field list, generated from its one definition
(results/run_record.py) and, for its `spec` block, from MeasureSpec's fields (the settings
as run). scripts/run-json-docs writes them to docs/; the tests check the files are what
this generates and validate every run.json they make against the schema."""

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints

from psbench.base.paths import REPO_ROOT
from psbench.results import run_record
from psbench.run.spec import MeasureSpec

SCHEMA_FILE = REPO_ROOT / "docs" / "run.schema.json"
DOCS_FILE = REPO_ROOT / "docs" / "run-json.md"
SCHEMA_ID = "https://psbench/docs/run.schema.json"

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _is_typeddict(t) -> bool:
    return isinstance(t, type) and typing.is_typeddict(t)


def _unwrap(hint) -> tuple[Any, str, bool, bool]:
    """(type, doc, required, at_end) of a field's hint."""
    required = True
    if get_origin(hint) is NotRequired:
        hint, required = get_args(hint)[0], False
    doc, at_end = "", False
    if get_origin(hint) is typing.Annotated:
        hint, *meta = get_args(hint)
        doc = next((m for m in meta if isinstance(m, str)), "")
        at_end = run_record.AT_END in meta
    return hint, doc, required, at_end


def _fields(typed) -> list[tuple[str, Any, str, bool, bool]]:
    hints = get_type_hints(typed, include_extras=True)
    return [(name, *_unwrap(hint)) for name, hint in hints.items()]


def type_schema(t, defs: dict) -> dict:
    """The JSON Schema of a Python type; a TypedDict goes into defs, closed."""
    if t is Any:
        return {}
    if t in _SIMPLE:
        return {"type": _SIMPLE[t]}
    if t is Path:
        return {"type": "string"}
    origin, args = get_origin(t), get_args(t)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        parts = [type_schema(a, defs) for a in args]
        if all(set(p) == {"type"} for p in parts):
            return {"type": [p["type"] for p in parts]}
        return {"anyOf": parts}
    if origin is list:
        return {"type": "array", "items": type_schema(args[0], defs)} if args else {"type": "array"}
    if origin is dict:
        return {"type": "object", "additionalProperties": type_schema(args[1], defs)}
    if t is dict:
        return {"type": "object"}
    if _is_typeddict(t):
        if t.__name__ not in defs:
            defs[t.__name__] = {}  # a placeholder: a block met again refers to itself
            defs[t.__name__] = _object_schema(t, defs)
        return {"$ref": f"#/$defs/{t.__name__}"}
    raise TypeError(f"run.json's definition: no JSON Schema for {t!r}")


def _object_schema(typed, defs: dict) -> dict:
    fields = _fields(typed)
    schema = {
        "type": "object",
        "properties": {
            name: {**type_schema(t, defs), **({"description": doc} if doc else {})}
            for name, t, doc, _, _ in fields
        },
        "required": [name for name, _, _, required, _ in fields if required],
        "additionalProperties": False,
    }
    at_end = [name for name, _, _, _, end in fields if end]
    if at_end:  # written once the run ended
        schema["if"] = {
            "properties": {"status": {"enum": list(run_record.ENDED)}},
            "required": ["status"],
        }
        schema["then"] = {"required": at_end}
    return schema


def spec_schema(defs: dict) -> dict:
    """MeasureSpec's fields, as to_json writes them (auto goes beside it in run.json)."""
    hints = get_type_hints(MeasureSpec)
    names = [f.name for f in dataclasses.fields(MeasureSpec) if f.name != "auto"]
    return {
        "type": "object",
        "properties": {name: type_schema(hints[name], defs) for name in names},
        "required": names,
        "additionalProperties": False,
    }


def schema() -> dict:
    defs: dict = {}
    record = _object_schema(run_record.RunRecord, defs)
    record["properties"]["spec"].update(spec_schema(defs))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"run.json ({run_record.RUN_FORMAT})",
        "description": "Generated from python/psbench/results/run_record.py by "
        "scripts/run-json-docs; do not edit.",
        **record,
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2) + "\n"


def _type_words(t) -> str:
    """A type as the docs say it."""
    if t is Any:
        return "any"
    if t in _SIMPLE:
        return _SIMPLE[t]
    if t is Path:
        return "string"
    origin, args = get_origin(t), get_args(t)
    if origin is Literal:
        return " \\| ".join(json.dumps(a) for a in args)
    if origin in (Union, types.UnionType):
        return " \\| ".join(_type_words(a) for a in args)
    if origin is list:
        return f"list of {_type_words(args[0])}" if args else "list"
    if origin is dict:
        return "object" if args[1] is Any else f"object of {_type_words(args[1])}"
    if _is_typeddict(t):
        return f"[{t.__name__}](#{t.__name__.lower()})"
    return "object"


def _when(required: bool, at_end: bool) -> str:
    return "at the end" if at_end else "always" if required else "when it applies"


def _table(typed) -> list[str]:
    lines = ["| field | type | present | holds |", "|---|---|---|---|"]
    for name, t, doc, required, at_end in _fields(typed):
        lines.append(f"| `{name}` | {_type_words(t)} | {_when(required, at_end)} | {doc} |")
    return lines


def _blocks(typed, seen: list) -> None:
    """Every TypedDict the record reaches, in the order met."""
    for _, t, _, _, _ in _fields(typed):
        stack = [t]
        while stack:
            here = stack.pop(0)
            if _is_typeddict(here) and here not in seen:
                seen.append(here)
                _blocks(here, seen)
            stack += list(get_args(here))


def markdown() -> str:
    blocks: list = []
    _blocks(run_record.RunRecord, blocks)
    hints = get_type_hints(MeasureSpec)
    spec_fields = [f.name for f in dataclasses.fields(MeasureSpec) if f.name != "auto"]
    lines = [
        "<!-- Generated from python/psbench/results/run_record.py by scripts/run-json-docs;",
        "     do not edit (tests/test_run_schema.py checks it). -->",
        "# run.json",
        "",
        f"Every run folder holds a `run.json` (`format: {run_record.RUN_FORMAT}`): the run as "
        "launched and how it ended. It is written as soon as the folder exists (`starting`), "
        "again once the processes run (`running`, with pids) and at the end. Its JSON Schema "
        "is [run.schema.json](run.schema.json).",
        "",
        "Present: *always*, from the first write; *at the end*, once the run ended with a "
        f"status of {', '.join(f'`{s}`' for s in run_record.ENDED)} (a run psbench itself "
        "stopped on an error or Ctrl-C keeps what it had); *when it applies*, only in the "
        "runs that have it. A block of type *object* is another part's record, described "
        "where its row says.",
        "",
        "## RunRecord",
        "",
        *_table(run_record.RunRecord),
        "",
        "## spec",
        "",
        "Every setting as run, null where the node's default applies (MeasureSpec, "
        "python/psbench/run/spec.py):",
        "",
        ", ".join(f"`{name}` ({_type_words(hints[name])})" for name in spec_fields),
    ]
    for block in blocks:
        lines += ["", f"## {block.__name__}", "", *_table(block)]
    return "\n".join(lines) + "\n"


def field_count() -> int:
    """Every field the definition names, the spec's included (the report's coverage)."""
    blocks: list = []
    _blocks(run_record.RunRecord, blocks)
    spec = [f for f in dataclasses.fields(MeasureSpec) if f.name != "auto"]
    return len(_fields(run_record.RunRecord)) + sum(len(_fields(b)) for b in blocks) + len(spec)
