"""Licence: read from the package metadata on this machine, for what the driver really
uses: the Debian packages of the libraries its shared library links directly that a
baseline driver (no middleware) does not, the packages of the services' programs, the
crates its manifest names (at their locked versions), and a service's jars named after
it. The verdict is the licences found; evidence names each package and the file read."""

import subprocess
from pathlib import Path

from psbench.base import manifests, programs
from psbench.run.criteria import package_licences as read
from psbench.run.criteria.context import Context
from psbench.run.criteria.verdict import NOT_TESTABLE, Verdict
from psbench.run.service_definitions import ServiceDefinition

NAME = "licence"
TITLE = "licence"


def needed_libraries(library: Path) -> dict[str, Path]:
    """soname -> path of the libraries a shared library links directly (its NEEDED
    entries, resolved as the loader would: ldd)."""
    try:
        dynamic = programs.output(["readelf", "-d", str(library)], 20).stdout
        resolved = programs.output(["ldd", str(library)], 20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    names = [line.split("[", 1)[1].split("]", 1)[0] for line in dynamic.splitlines()
             if "(NEEDED)" in line and "[" in line]  # fmt: skip
    paths = {}
    for line in resolved.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("/"):
            paths[parts[0]] = Path(parts[2])
    return {name: paths[name] for name in names if name in paths}


def _service_program(spec) -> Path | None:
    program = ServiceDefinition(spec).program
    return Path(program) if "/" in program else None  # a bare name: not found


def sources(driver: str, library: Path, baseline: Path | None) -> list[tuple[str, str]]:
    """(kind, what) for each thing whose licence is read: ("debian", package),
    ("crate", name@version), ("jar", path); ("missing", why) where one cannot be found."""
    manifest = manifests.load(driver)
    # The runtime every driver links (C, C++, the loader): the packages of a baseline's.
    floor = (
        {read.owner_package(p) for p in needed_libraries(baseline).values()} if baseline else set()
    )
    found: list[tuple[str, str]] = []
    for path in needed_libraries(library).values():
        package = read.owner_package(path)
        if package is None:
            found.append(("missing", f"{path}: no Debian package"))
        elif package not in floor:
            found.append(("debian", package))
    for spec in manifest.services:
        if spec.name in manifest.cargo:  # built from its crate: read as a crate below
            continue
        program = _service_program(spec)
        if program is None or not program.exists():
            found.append(("missing", f"service {spec.name}: program not installed"))
            continue
        jars = sorted((program.parent / "libs").glob(f"{spec.name}*.jar"))
        if jars:
            found += [("jar", str(j)) for j in jars]
            continue
        package = read.owner_package(program)
        found.append(("debian", package) if package else
                     ("missing", f"service {spec.name}: {program} is in no Debian package"))  # fmt: skip
    locks = sorted(p for p in manifest.path.parent.rglob("Cargo.lock") if "target" not in p.parts)
    for crate in manifest.cargo:
        found.append(("crate", f"{crate}@{read.locked_version(crate, locks) or ''}"))
    return list(dict.fromkeys(found))


def judge(driver: str, read_licences: list[tuple[str, str | None, str]]) -> Verdict:
    """read_licences: (what, licence or None, file read or why not). The verdict: the
    distinct licences found, in order; not testable when none could be read."""
    known = [(what, lic, where) for what, lic, where in read_licences if lic]
    failed = [(what, where) for what, lic, where in read_licences if not lic]
    figures = {"read": [{"what": what, "licence": lic, "read_from": where}
                        for what, lic, where in read_licences]}  # fmt: skip
    if not known:
        why = "; ".join(f"{what}: {where}" for what, where in failed) or "no package found"
        return Verdict(NAME, driver, NOT_TESTABLE, f"no licence readable: {why}",
                       experiment="package metadata", figures=figures)  # fmt: skip
    seen: dict[str, str] = {}  # one licence once, whatever its case
    for _, lic, _ in known:
        seen.setdefault(lic.lower(), lic)
    licences = list(seen.values())
    evidence = "; ".join(f"{what}: {lic} ({where})" for what, lic, where in known)
    if failed:
        evidence += "; unreadable: " + "; ".join(f"{what}: {where}" for what, where in failed)
    return Verdict(NAME, driver, " + ".join(licences), evidence,
                   experiment="package metadata", figures=figures)  # fmt: skip


def _read(kind: str, what: str) -> tuple[str, str | None, str]:
    if kind == "debian":
        return (f"Debian package {what}", *read.debian(what))
    if kind == "crate":
        name, _, version = what.partition("@")
        return (f"crate {name}", *read.crate(name, version or None))
    if kind == "jar":
        return (f"jar {Path(what).name}", *read.jar(Path(what)))
    return ("not found", None, what)


def assess(ctx: Context) -> dict[str, Verdict]:
    floors = [ctx.built[b] for b in manifests.baseline_drivers() if b in ctx.built]
    found = {}
    for driver in ctx.drivers:
        listed = sources(driver, ctx.libraries[driver], floors[0] if floors else None)
        found[driver] = judge(driver, [_read(k, w) for k, w in listed])
    return found
