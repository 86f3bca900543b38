"""`psbench drivers`: the built drivers and what they support."""

import json

from psbench.base import table
from psbench.run import drivers
from psbench.run.service_definitions import definition

COLUMNS = [
    "driver",
    "version",
    "reliability",
    "durability",
    "history",
    "notify",
    "transports",
    "max payload",
    "loan",
    "security",
    "services",
]


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("drivers")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run_command)


def _services(info: drivers.DriverInfo) -> str:
    if not info.services:
        return "none"
    return ", ".join(
        f"{s.name}{f' (transport {s.transport} only)' if s.transport else ''} ({_service_state(s)})"
        for s in info.services
    )


def _service_state(service: drivers.ServiceStatus) -> str:
    if not service.installed:
        return "NOT installed"
    if definition(service.name) is not None:
        return "installed; psbench starts it" + (", running now" if service.running else "")
    return "installed, running" if service.running else "installed, not running"


def _row(info: drivers.DriverInfo) -> list:
    if info.library is None:
        return [info.name, f"not built: {info.build_hint}"] + [""] * (len(COLUMNS) - 2)
    if info.describe is None:
        return [info.name, f"error: {info.error}"] + [""] * (len(COLUMNS) - 2)
    caps = info.describe.get("capabilities") or {}
    join = lambda key: ",".join(caps.get(key) or []) or "-"  # noqa: E731
    built = info.describe.get("build") or {}
    version = info.describe.get("version")
    if built.get("service_executables"):  # another version of its broker, same library
        version = f"{version}; {', '.join(built['service_executables'])} {built['version']}"
    return [
        info.name,
        version,
        join("reliability"),
        join("durability"),
        join("history"),
        join("notify"),
        join("transports"),
        caps.get("max_payload"),
        "yes" if caps.get("loan") else "no",
        ",".join(info.security) or "-",
        _services(info),
    ]


def run_command(args) -> int:
    infos = drivers.discover()
    if args.json:
        print(json.dumps([i.to_json() for i in infos], indent=2))
    elif not any(i.library for i in infos):
        print("no drivers built yet: run `make build`")
    else:
        print(table.render(COLUMNS, [_row(i) for i in infos]))
    return 1 if any(i.error for i in infos) else 0
