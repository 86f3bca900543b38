"""Built drivers: what `psbench-node --describe` says about each, and whether the
services (daemons, brokers) a driver needs are installed and running."""

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from psbench.base import manifests, paths, programs
from psbench.base.errors import UserError
from psbench.run.service_definitions import definition, find_executable

DESCRIBE_TIMEOUT_S = 30


@dataclass
class ServiceStatus:
    name: str
    installed: bool
    path: str | None
    running: bool
    transport: str | None = None  # needed only by runs on this transport; None: by all


@dataclass
class DriverInfo:
    name: str
    library: Path | None  # None: not built
    describe: dict | None = None
    error: str | None = None
    services: list[ServiceStatus] = field(default_factory=list)
    build_command: str | None = None  # not built: what builds it
    build_hint: str | None = None  # not built: `COMMAND` builds it (and what that takes)
    security: tuple[str, ...] = ()  # the modes --security takes (its manifest's)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "library": str(self.library) if self.library else None,
            "describe": self.describe,
            "error": self.error,
            "services": [vars(s) for s in self.services],
            "build_command": self.build_command,
            "build_hint": self.build_hint,
            "security": list(self.security),
        }


def build_command(name: str) -> str:
    """The command that builds a driver of drivers/: `make build`, or for one built on
    request or from source (its manifest's build) `make driver-NAME`; NAME@VERSION `make
    driver-NAME VERSION=VERSION`."""
    base, _, version = name.partition(manifests.VERSION_MARK)
    if version:
        return f"make driver-{base} VERSION={version}"
    return "make build" if manifests.load(name).build == "always" else f"make driver-{name}"


def build_hint(name: str) -> str:
    """`COMMAND` builds it, and for a driver built from source what that takes."""
    hint = f"`{build_command(name)}` builds it"
    base, _, version = name.partition(manifests.VERSION_MARK)
    if version:
        found = next(v for v in manifests.load(base).versions if v.version == version)
        what = f"its {found.service} at version {version}" if found.service else name
        minutes = f", about {found.build_minutes} min on 2 cores" if found.build_minutes else ""
        return hint + f" ({what}{minutes}: docs/versions.md)"
    source = manifests.load(name).source
    if source is not None:
        minutes = f", about {source.build_minutes} min on 2 cores" if source.build_minutes else ""
        hint += (f" ({source.system} {source.version} from source{minutes}: "
                 f"docs/source-builds.md)")  # fmt: skip
    return hint


def describe(node: Path, library: Path) -> dict:
    """Runs `psbench-node --driver LIB --describe` and returns its JSON object."""
    argv = [str(node), "--driver", str(library), "--describe"]
    try:
        proc = programs.output(argv, DESCRIBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"`{' '.join(argv)}` did not finish in {DESCRIBE_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        message = proc.stderr.strip() or f"exit code {proc.returncode}"
        raise RuntimeError(f"--describe failed: {message}")
    try:
        value = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise RuntimeError(
            f"--describe printed invalid JSON ({exc}): {proc.stdout[:200]!r}"
        ) from None
    if not isinstance(value, dict):
        raise RuntimeError("--describe printed JSON that is not an object")
    built = build_record(library)
    if built is not None:
        value["build"] = built
    return value


def build_record(library: Path) -> dict | None:
    """What a driver was built against, recorded with every run of it: build.json beside
    a driver built against another version of its middleware (scripts/build-version), or
    for a driver whose middleware psbench built from source, that build's record
    (psbench-sdk.json: trees, commits, flags). None for a middleware from a registry."""
    folder = Path(library).parent
    try:
        return json.loads((folder / "build.json").read_text())
    except (OSError, json.JSONDecodeError):
        pass
    name = folder.name
    if name not in manifests.driver_names() or manifests.load(name).source is None:
        return None
    source = manifests.load(name).source
    sdk = paths.source_cache() / f"{source.system}-{source.version}" / "psbench-sdk.json"
    try:
        return {"origin": "source", "version": source.version, "sdk": json.loads(sdk.read_text())}
    except (OSError, json.JSONDecodeError):
        return None


def running_programs() -> set[str]:
    """Names of running programs (/proc/*/comm, which the kernel cuts to 15 bytes); a
    zombie (ended, not yet reaped by its parent) does not run."""
    names = set()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            state = proc.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0]
            if state not in ("Z", "X"):
                names.add(proc.joinpath("comm").read_text().strip())
        except (OSError, IndexError):
            pass  # the process ended while we looked
    return names


def service_status(entry: str, running: set[str]) -> ServiceStatus:
    """entry: "EXE", or "TRANSPORT:EXE" for a service only that transport needs."""
    transport, _, name = entry.rpartition(":")
    declared = definition(name)
    if declared is not None and declared.spec.executable is not None:
        program = declared.program  # a path of the manifest's (e.g. in a cache)
        path = program if os.access(program, os.X_OK) else None
    else:
        path = find_executable(name)
    return ServiceStatus(
        name=name,
        installed=path is not None,
        path=path,
        running=os.path.basename(name)[:15] in running,
        transport=transport or None,
    )


def discover() -> list[DriverInfo]:
    """Every driver under build/drivers, described by the node."""
    node = paths.require_node()
    running = running_programs()
    infos = []
    for name, library in paths.driver_libraries().items():
        info = DriverInfo(name=name, library=library)
        try:
            info.describe = describe(node, library)
        except RuntimeError as exc:
            info.error = str(exc)
        else:
            own = info.describe.get("name", info.name)
            services = manifests.service_entries(own)
            info.services = [service_status(s, running) for s in services]
            if own in manifests.driver_names():
                info.security = manifests.load(own).security_modes
        infos.append(info)
    built = {i.name for i in infos}
    for name in manifests.driver_names():
        labels = [name, *(f"{name}@{v.version}" for v in manifests.load(name).versions)]
        for label in labels:
            if label not in built:
                infos.append(DriverInfo(name=label, library=None, build_command=build_command(label),
                                        build_hint=build_hint(label)))  # fmt: skip
    return infos


def find_driver(name: str) -> Path:
    """The library for --driver NAME (a name, or a path to a .so file)."""
    if "/" in name or name.endswith(".so"):
        library = Path(name).expanduser().resolve()
        if not library.is_file():
            raise UserError(f"argument --driver: no such file {library}")
        return library
    libraries = paths.driver_libraries()
    if name in libraries:
        return libraries[name]
    raise UserError(f"argument --driver: {not_built(name, libraries)}")


def not_built(name: str, libraries: dict[str, Path]) -> str:
    """Why there is no library for driver NAME, and what to do: a version psbench does
    not build, a driver or version declared but not built (with the command that builds
    it), or a name psbench does not know."""
    base, _, version = name.partition(manifests.VERSION_MARK)
    if base in manifests.driver_names():
        versions = [v.version for v in manifests.load(base).versions]
        if version and version not in versions:
            return (
                f"{name}: psbench does not build version {version} of "
                f"{base}; it builds {', '.join(versions) or 'no other version'} beside the "
                f"default ({base}): docs/versions.md"
            )
        return f"driver {name!r} is not built; {build_hint(name)}"
    known = ", ".join(libraries) or "none"
    return (
        f"unknown driver {name!r}; built drivers: {known} "
        f"(found as {paths.build_dir()}/drivers/*/libpsbench-*.so; "
        f"`psbench drivers` lists them, `make build` builds them)"
    )
