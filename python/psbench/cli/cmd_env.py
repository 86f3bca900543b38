"""`psbench env`: what shapes results on this machine."""

import json

from psbench.base import table
from psbench.run import envinfo


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("env")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run_command)


def flatten(value, prefix: str = "") -> list[tuple[str, object]]:
    """{"a": {"b": 1}} -> [("a.b", 1)]; lists become comma-separated text."""
    if isinstance(value, dict):
        if not value:
            return [(prefix, "{}")]
        pairs = []
        for key, item in value.items():
            pairs.extend(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return pairs
    if isinstance(value, list):
        return [(prefix, ", ".join(map(str, value)) if value else "(none)")]
    if isinstance(value, bool):
        return [(prefix, "yes" if value else "no")]
    return [(prefix, value)]


def run_command(args) -> int:
    info = envinfo.collect()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        print(table.key_values(flatten(info)))
    return 0
