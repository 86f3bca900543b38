"""What the orchestrator knows of each driver, from the driver's own folder:
drivers/<name>/manifest.toml (docs/writing-a-driver.md, "The manifest"). psbench's code
names no middleware: which drivers are baselines, what each needs installed and which
services it depends on, and how to start and check each service, is all read here.

A manifest that cannot be read, or holds a field psbench does not know or a value of
the wrong kind, is a UserError naming the file and the field (exit code 2).
"""

import re
import sys
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from psbench.base.errors import UserError
from psbench.base.paths import REPO_ROOT

DRIVERS_DIR = REPO_ROOT / "drivers"
ARCHITECTURES = ("floor", "peer-to-peer", "per-host daemon", "router", "broker")
# When `make build` builds a driver: always, or only when asked (`make driver-NAME`,
# `make build-all`; CMakeLists.txt reads the same field), or from-source: its middleware
# is built from source by `make driver-NAME` alone (scripts/build-source reads [source]).
BUILDS = ("always", "on-request", "from-source")
# Signed documents a security mode needs besides certificates (psbench.run.security).
SECURITY_DOCUMENTS = ("dds-security",)
TLS = "tls"  # the security mode a broker serves with its tls_config


@dataclass(frozen=True)
class ServiceSpec:
    """A daemon or broker a driver's runs need, as its manifest declares it."""

    name: str  # the executable (also its /proc comm name)
    folder: Path  # the declaring driver's folder (scripts live there)
    transport: str | None = None  # needed only by runs on this transport
    per_host: bool = False  # one per machine: a running one is used as it is
    broker: bool = False  # free port of 127.0.0.1; node option broker=
    config_file: str | None = None
    config: str | None = None  # template: {port}, {folder}, {largest_message}
    config_script: str | None = None  # prints the config: SCRIPT LARGEST_MESSAGE [PORT]
    argv: tuple[str, ...] = ("{executable}",)
    # The program's path when it is not on PATH under its name: "~" is the home
    # directory, a relative path is taken from the driver's folder.
    executable: str | None = None
    prepare: tuple[str, ...] = ()  # argv run to completion before argv (as argv templated)
    second_port: bool = False  # a broker's second free port: {second_port}
    ready_line: str | None = None  # printed once clients may connect (else: port)
    ready_timeout_s: float | None = None  # how long it may take to be ready (None: psbench's)
    ready_socket: str | None = None  # a per-host daemon's Unix socket, bound while it serves
    # /dev/shm names to remove once it is stopped; "{folder}/NAME": a file or directory
    # in its folder (its data)
    leftovers: tuple[str, ...] = ()
    version_argv: tuple[str, ...] = ()
    # Used instead of config and argv when the run's security is tls: templates with
    # {tls_ca}, {tls_cert}, {tls_key} and {tls_bundle} (key then certificate) too.
    tls_config: str | None = None
    tls_argv: tuple[str, ...] | None = None
    # Appended to its configuration for the runs with durability persistent (what it
    # writes survives its restart: docs/criteria.md, "Durability across a restart"); the
    # same placeholders as config.
    durable_config: str | None = None


@dataclass(frozen=True)
class Manifest:
    name: str
    path: Path
    architecture: str
    baseline: bool = False
    debian: tuple[str, ...] = ()
    pypi: tuple[str, ...] = ()
    cargo: tuple[str, ...] = ()
    services: tuple[ServiceSpec, ...] = field(default_factory=tuple)
    cleanup: tuple[str, ...] = ()  # argv after every run (cleanup_command expands it)
    wire: str | None = None  # the wire protocol it speaks with other drivers (e.g. rtps)
    wire_vendor: str | None = None  # its vendor id on that wire, e.g. "01.10"
    build: str = "always"  # or "on-request": heavy to build, built when asked
    # A transport whose runs go another way than `architecture` says (a router between
    # the processes): transport -> architecture.
    transport_architecture: dict = field(default_factory=dict)
    security_modes: tuple[str, ...] = ()  # what --security takes ([security] modes)
    security_documents: str | None = None  # the documents those modes need, by kind
    # A standard tool that observes the middleware's traffic (psbench criteria,
    # "monitoring"): argv with {broker}, {host}, {port}, {service_dir} (the broker's
    # folder); expect: a regex its output shows.
    monitor: "MonitorSpec | None" = None
    # What the middleware's documentation says of a criterion psbench does not (or cannot)
    # test here: criterion -> Claim (psbench criteria: "documented, not verified").
    claims: dict = field(default_factory=dict)
    source: "SourceSpec | None" = None  # build = "from-source": what it is built from
    # Other versions psbench builds beside the default one ([[versions]]): NAME@VERSION.
    versions: tuple["VersionSpec", ...] = ()


@dataclass(frozen=True)
class SourceSpec:
    """[source] of a driver built from source (scripts/build-source reads the trees)."""

    system: str  # installed into ~/.cache/psbench/<system>-<version>
    version: str
    build_minutes: int | None = None  # measured from nothing on 2 cores


@dataclass(frozen=True)
class VersionSpec:
    """A version of the middleware built beside the default (docs/versions.md): from its
    source trees (scripts/build-source --version), the driver then built against it; or
    its service (a broker) from a go module, the driver's library unchanged."""

    version: str
    build_minutes: int | None = None
    service: str | None = None  # a version of the driver's service (its broker), not its library


@dataclass(frozen=True)
class MonitorSpec:
    argv: tuple[str, ...]
    expect: str  # a regular expression its output must show while a run goes on
    timeout_s: int = 20  # it is stopped after the run, or after this long at most
    debian: tuple[str, ...] = ()  # the packages that install it (scripts/setup-system)
    name: str | None = None  # what the evidence calls it, when argv[0] is a wrapper
    # Its environment on top of psbench's ({folder}: the driver's folder), e.g. the
    # middleware's configuration that puts it on the run's network interface.
    env: dict = field(default_factory=dict)
    # Driver options ("KEY=VALUE") the watched run is given, for what the tool must know
    # beforehand (e.g. the DDS domain it joins).
    options: tuple[str, ...] = ()
    stop_signal: str = "TERM"  # or "INT": a tool that prints what it gathered on Ctrl-C


@dataclass(frozen=True)
class Claim:
    text: str
    source: str  # where it is stated (an address)
    count: int | None = None  # a number the claim states (e.g. messages kept)


_TABLES = "tables"  # a list of tables: [[services]]
_TOP = {
    "architecture": str,
    "baseline": bool,
    "packages": dict,
    "services": _TABLES,
    "cleanup": list,
    "wire": str,
    "wire_vendor": str,
    "build": str,
    "transport_architecture": dict,
    "security": dict,
    "monitor": dict,
    "claims": dict,
    "source": dict,
    "versions": _TABLES,
}
_SOURCE = {"system": str, "version": str, "build_minutes": int, "trees": _TABLES}
_VERSION = {
    "version": str,
    "system": str,
    "build_minutes": int,
    "trees": _TABLES,
    "service": str,
    "go": str,
}
# NAME@VERSION names a version of drivers/NAME (docs/versions.md).
VERSION_MARK = "@"
_SECURITY = {"modes": list, "documents": str}
_MONITOR = {
    "argv": list,
    "expect": str,
    "timeout_s": int,
    "debian": list,
    "name": str,
    "env": dict,
    "options": list,
    "stop_signal": str,
}
MONITOR_STOP_SIGNALS = ("TERM", "INT")
_CLAIM = {"text": str, "source": str, "count": int}
_PACKAGES = {"debian": list, "pypi": list, "cargo": list}
_SERVICE = {
    "name": str,
    "transport": str,
    "from": str,
    "per_host": bool,
    "broker": bool,
    "config_file": str,
    "config": str,
    "config_script": str,
    "argv": list,
    "executable": str,
    "prepare": list,
    "second_port": bool,
    "ready_line": str,
    "ready_timeout_s": int,
    "ready_socket": str,
    "leftovers": list,
    "version_argv": list,
    "tls_config": str,
    "tls_argv": list,
    "durable_config": str,
}


def _fields(table: dict, allowed: dict, where: str, path: Path) -> None:
    for key, value in table.items():
        kind = allowed.get(key)
        if kind is None:
            raise UserError(
                f"{path}: {where}{key}: unknown field; the fields are {', '.join(allowed)}", 2
            )
        if kind is _TABLES:
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise UserError(f"{path}: {where}{key}: must be tables ([[{key}]])", 2)
            continue
        if not isinstance(value, kind) or (
            kind is list and not all(isinstance(v, str) for v in value)
        ):
            what = "a list of strings" if kind is list else kind.__name__
            raise UserError(f"{path}: {where}{key}: must be {what}", 2)


def _service(table: dict, index: int, path: Path) -> dict:
    where = f"services[{index}]."
    _fields(table, _SERVICE, where, path)
    if "name" not in table:
        raise UserError(f"{path}: {where}name: missing; name the executable", 2)
    if (
        "from" not in table
        and "config_file" in table
        and not ("config" in table or "config_script" in table)
    ):
        raise UserError(
            f"{path}: {where}config_file: give config (a template) or "
            f"config_script (a script in the driver's folder)",
            2,
        )
    if "durable_config" in table and "config_file" not in table:
        raise UserError(
            f"{path}: {where}durable_config: it is appended to the configuration file; "
            f"give config_file too",
            2,
        )
    if "tls_argv" in table and "tls_config" not in table:
        raise UserError(f"{path}: {where}tls_argv: give tls_config too (the TLS configuration)", 2)
    if table.get("second_port") and not table.get("broker"):
        raise UserError(f"{path}: {where}second_port: only a broker (broker = true) has ports", 2)
    return table


def _monitor(table: dict | None, path: Path) -> MonitorSpec | None:
    if table is None:
        return None
    _fields(table, _MONITOR, "monitor.", path)
    for key in ("argv", "expect"):
        if not table.get(key):
            raise UserError(f"{path}: monitor.{key}: missing; give the tool's argv and the "
                            f"regex its output shows", 2)  # fmt: skip
    try:
        re.compile(table["expect"])
    except re.error as exc:
        raise UserError(f"{path}: monitor.expect: not a regular expression: {exc}", 2) from None
    if not 1 <= table.get("timeout_s", 20) <= 300:
        raise UserError(f"{path}: monitor.timeout_s: give 1 to 300 seconds", 2)
    for key, value in table.get("env", {}).items():
        if not isinstance(value, str):
            raise UserError(f"{path}: monitor.env.{key}: must be str", 2)
    for option in table.get("options", []):
        if "=" not in option:
            raise UserError(f"{path}: monitor.options: {option!r}: give KEY=VALUE", 2)
    if table.get("stop_signal", "TERM") not in MONITOR_STOP_SIGNALS:
        raise UserError(f"{path}: monitor.stop_signal: give one of "
                        f"{', '.join(MONITOR_STOP_SIGNALS)}", 2)  # fmt: skip
    return MonitorSpec(
        argv=tuple(table["argv"]),
        expect=table["expect"],
        timeout_s=table.get("timeout_s", 20),
        debian=tuple(table.get("debian", [])),
        name=table.get("name"),
        env=dict(table.get("env", {})),
        options=tuple(table.get("options", [])),
        stop_signal=table.get("stop_signal", "TERM"),
    )


def _claims(tables: dict, path: Path) -> dict:
    found = {}
    for criterion, table in tables.items():
        if not isinstance(table, dict):
            raise UserError(
                f"{path}: claims.{criterion}: must be a table ([claims.{criterion}])", 2
            )
        _fields(table, _CLAIM, f"claims.{criterion}.", path)
        if not table.get("text") or not table.get("source"):
            raise UserError(f"{path}: claims.{criterion}: give text and source (where it is "
                            f"stated)", 2)  # fmt: skip
        found[criterion] = Claim(" ".join(table["text"].split()), table["source"],
                                 table.get("count"))  # fmt: skip
    return found


def base_name(name: str) -> str:
    """The driver folder of a name: NAME of NAME@VERSION."""
    return name.partition(VERSION_MARK)[0]


def load(name: str) -> Manifest:
    """The manifest of drivers/<name>/ (NAME@VERSION: of NAME; a driver without one is a
    UserError)."""
    return _load(base_name(name))


@cache
def _load(name: str) -> Manifest:
    """load(), once per driver folder (load.cache_clear() forgets them)."""
    path = DRIVERS_DIR / name / "manifest.toml"
    data = _read(path)
    _check_kinds(data, path)
    source = _source(data, path)
    packages = data.get("packages", {})
    _fields(packages, _PACKAGES, "packages.", path)
    services = _services(data.get("services", []), path)
    security = _security(data.get("security", {}), services, path)
    return Manifest(
        name=name,
        path=path,
        architecture=data["architecture"],
        baseline=data.get("baseline", False),
        debian=tuple(packages.get("debian", [])),
        pypi=tuple(packages.get("pypi", [])),
        cargo=tuple(packages.get("cargo", [])),
        services=tuple(services),
        cleanup=tuple(data.get("cleanup", [])),
        wire=data.get("wire"),
        wire_vendor=data.get("wire_vendor"),
        build=data.get("build", "always"),
        transport_architecture=dict(data.get("transport_architecture", {})),
        security_modes=tuple(security.get("modes", [])),
        security_documents=security.get("documents"),
        monitor=_monitor(data.get("monitor"), path),
        claims=_claims(data.get("claims", {}), path),
        source=source,
        versions=_versions(data.get("versions", []), path),
    )


def _read(path: Path) -> dict:
    """The manifest's TOML, its top-level keys checked."""
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UserError(
            f"{path}: missing; every driver folder declares itself in a "
            f"manifest.toml (docs/writing-a-driver.md)",
            2,
        ) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: cannot be read: {exc}", 2) from None
    _fields(data, _TOP, "", path)
    return data


def _check_kinds(data: dict, path: Path) -> None:
    """architecture, transport_architecture and build name known kinds."""
    if data.get("architecture") not in ARCHITECTURES:
        raise UserError(f"{path}: architecture: give one of {', '.join(ARCHITECTURES)}", 2)
    for transport, kind in data.get("transport_architecture", {}).items():
        if kind not in ARCHITECTURES:
            raise UserError(
                f"{path}: transport_architecture.{transport}: give one of "
                f"{', '.join(ARCHITECTURES)}",
                2,
            )
    if data.get("build", "always") not in BUILDS:
        raise UserError(f"{path}: build: give one of {', '.join(BUILDS)}", 2)


def _services(tables: list, path: Path) -> list[ServiceSpec]:
    """The [[services]] the driver needs: its own, or another driver's (from =)."""
    services = []
    for index, table in enumerate(tables):
        table = _service(table, index, path)
        if "from" in table:  # declared by another driver: that one's, this transport
            owner = next((s for s in load(table["from"]).services if s.name == table["name"]), None)
            if owner is None:
                raise UserError(
                    f"{path}: services[{index}].from: drivers/{table['from']}"
                    f" declares no service {table['name']!r}",
                    2,
                )
            services.append(ServiceSpec(**{**owner.__dict__, "transport": table.get("transport")}))
            continue
        services.append(
            ServiceSpec(
                name=table["name"],
                folder=path.parent,
                transport=table.get("transport"),
                per_host=table.get("per_host", False),
                broker=table.get("broker", False),
                config_file=table.get("config_file"),
                config=table.get("config"),
                config_script=table.get("config_script"),
                argv=tuple(table.get("argv", ["{executable}"])),
                executable=table.get("executable"),
                prepare=tuple(table.get("prepare", [])),
                second_port=table.get("second_port", False),
                ready_line=table.get("ready_line"),
                ready_timeout_s=table.get("ready_timeout_s"),
                ready_socket=table.get("ready_socket"),
                leftovers=tuple(table.get("leftovers", [])),
                version_argv=tuple(table.get("version_argv", [])),
                tls_config=table.get("tls_config"),
                tls_argv=tuple(table["tls_argv"]) if "tls_argv" in table else None,
                durable_config=table.get("durable_config"),
            )
        )
    return services


def _versions(tables: list, path: Path) -> tuple[VersionSpec, ...]:
    found = []
    for index, table in enumerate(tables):
        where = f"versions[{index}]."
        _fields(table, _VERSION, where, path)
        if not table.get("version") or not (table.get("trees") or table.get("go")):
            raise UserError(f"{path}: {where}version: give the version and its source trees, "
                            f"or the go module of its service (docs/versions.md)", 2)  # fmt: skip
        if table.get("go") and not table.get("service"):
            raise UserError(f"{path}: {where}service: a version built with go is a service's: "
                            f"name it", 2)  # fmt: skip
        if VERSION_MARK in table["version"] or table["version"] in (v.version for v in found):
            raise UserError(f"{path}: {where}version: {table['version']!r} is not a new version "
                            f"name", 2)  # fmt: skip
        found.append(VersionSpec(table["version"], table.get("build_minutes"),
                                 table.get("service")))  # fmt: skip
    return tuple(found)


def _source(data: dict, path: Path) -> SourceSpec | None:
    """[source], which a driver has exactly when it is built from source."""
    table = data.get("source")
    if (table is None) != (data.get("build") != "from-source"):
        raise UserError(f"{path}: source: a driver has a [source] table exactly when its "
                        f"build is \"from-source\"", 2)  # fmt: skip
    if table is None:
        return None
    _fields(table, _SOURCE, "source.", path)
    for key in ("system", "version", "trees"):
        if not table.get(key):
            raise UserError(f"{path}: source.{key}: missing (scripts/build-source, "
                            f"docs/source-builds.md)", 2)  # fmt: skip
    return SourceSpec(table["system"], table["version"], table.get("build_minutes"))


def _security(table: dict, services: list[ServiceSpec], path: Path) -> dict:
    """[security]: the modes --security takes, and the documents they need."""
    _fields(table, _SECURITY, "security.", path)
    if "none" in table.get("modes", []):
        raise UserError(f"{path}: security.modes: none is every driver's; list the others", 2)
    documents = table.get("documents")
    if documents is not None and documents not in SECURITY_DOCUMENTS:
        raise UserError(
            f"{path}: security.documents: give one of {', '.join(SECURITY_DOCUMENTS)}", 2
        )
    if TLS in table.get("modes", []):
        for service in services:
            if service.broker and service.tls_config is None:
                raise UserError(
                    f"{path}: security.modes: tls needs every broker's tls_config; "
                    f"{service.name} has none",
                    2,
                )
    return table


def driver_names() -> list[str]:
    """Every driver folder (one with a CMakeLists.txt) under drivers/."""
    return sorted(p.parent.name for p in DRIVERS_DIR.glob("*/CMakeLists.txt"))


load.cache_clear = _load.cache_clear  # type: ignore[attr-defined]  # tests swap folders


def baseline_drivers() -> tuple[str, ...]:
    """The drivers that measure the physical floor (no middleware)."""
    return tuple(n for n in driver_names() if load(n).baseline)


def speaking(wire: str) -> list[str]:
    """The drivers whose manifest says they speak this wire protocol to other drivers
    (`wire = "rtps"`): the ones `psbench interop` pairs."""
    return [n for n in driver_names() if load(n).wire == wire]


def cleanup_command(driver: str) -> list[str] | None:
    """The argv to run after every run of the driver, None when it declares none (or is
    a driver from outside drivers/). In each argument {folder} is the driver's folder
    and {python} this Python interpreter, so a script of the driver's runs as
    ["{python}", "{folder}/script.py"]; nothing else is expanded."""
    if driver not in driver_names():
        return None
    manifest = load(driver)
    folder = str(manifest.path.parent)
    return [
        a.replace("{folder}", folder).replace("{python}", sys.executable) for a in manifest.cleanup
    ] or None


def service(name: str) -> ServiceSpec | None:
    """A service by its name, as the first driver that declares it describes it."""
    for driver in driver_names():
        for spec in load(driver).services:
            if spec.name == name:
                return spec
    return None


def service_entries(driver: str) -> list[str]:
    """The driver's services as "NAME", or "TRANSPORT:NAME" for one needed only on that
    transport; [] for a driver without a manifest (from outside drivers/)."""
    if driver not in driver_names():
        return []
    return [f"{s.transport}:{s.name}" if s.transport else s.name for s in load(driver).services]
