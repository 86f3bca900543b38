"""Licences as this machine's package metadata states them: a Debian package's
machine-readable copyright file (DEP-5, the `License:` of its `Files: *` paragraph), a
crate's `license` in the Cargo.toml of the registry's source, a Maven artifact's pom
`<licenses>`. Each reader returns (licence, file read) or (None, why not)."""

import re
import subprocess
import tomllib
import zipfile
from pathlib import Path

from psbench.base import programs

DEBIAN_DOC = Path("/usr/share/doc")
CARGO_REGISTRY = Path.home() / ".cargo" / "registry" / "src"
MAVEN_REPOSITORY = Path.home() / ".m2" / "repository"
DEP5_FORMAT = "copyright-format/1.0"


def dep5_licence(text: str) -> str | None:
    """The licence of `Files: *` in a machine-readable copyright file; None when the
    file is not machine-readable or has no such paragraph."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    if not paragraphs or DEP5_FORMAT not in paragraphs[0].split("\n", 1)[0]:
        return None
    for paragraph in paragraphs[1:]:
        fields = dict(re.findall(r"^([A-Za-z-]+):[ \t]*(.*)$", paragraph, re.M))
        if fields.get("Files", "").split()[:1] == ["*"] and fields.get("License"):
            return fields["License"].strip()
    return None


def debian(package: str) -> tuple[str | None, str]:
    path = DEBIAN_DOC / package.split(":")[0] / "copyright"
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    found = dep5_licence(text)
    if found is None:
        return None, f"{path} is not machine-readable (DEP-5) or has no `Files: *` licence"
    return found, str(path)


def owner_package(path: Path) -> str | None:
    """The Debian package that installed a file (dpkg -S), None if none did."""
    candidates = [str(path), str(path.resolve())]
    candidates += [c.replace("/lib/", "/usr/lib/", 1) for c in candidates if c.startswith("/lib/")]
    for candidate in dict.fromkeys(candidates):
        try:
            proc = programs.output(["dpkg", "-S", candidate], 20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if proc.returncode == 0 and ":" in proc.stdout:
            return proc.stdout.split(": ", 1)[0].split(",")[0].strip()
    return None


def cargo_toml_licence(text: str) -> str | None:
    try:
        package = tomllib.loads(text).get("package") or {}
    except tomllib.TOMLDecodeError:
        return None
    value = package.get("license")
    return value if isinstance(value, str) and value else None


def locked_version(crate: str, locks: list[Path]) -> str | None:
    for lock in locks:
        try:
            data = tomllib.loads(lock.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue
        for package in data.get("package") or []:
            if package.get("name") == crate and "registry" in (package.get("source") or ""):
                return package.get("version")
    return None


def crate(name: str, version: str | None) -> tuple[str | None, str]:
    """A crate's licence from its registry source; without a locked version, the one
    version there is (several: not testable, which one is used is unknown)."""
    pattern = f"*/{name}-{version}/Cargo.toml" if version else f"*/{name}-[0-9]*/Cargo.toml"
    found = sorted(CARGO_REGISTRY.glob(pattern))
    if not found:
        return None, f"no {name}-{version or '<version>'} in {CARGO_REGISTRY} (not fetched here)"
    if len(found) > 1:
        return None, f"several versions of {name} in {CARGO_REGISTRY} and none locked"
    value = cargo_toml_licence(found[0].read_text(errors="replace"))
    if value is None:
        return None, f"{found[0]} has no `license` field"
    return value, str(found[0])


def pom_licences(text: str) -> list[str]:
    block = re.search(r"<licenses>(.*?)</licenses>", text, re.S)
    return re.findall(r"<name>\s*([^<]+?)\s*</name>", block.group(1)) if block else []


def _pom_inside(path: Path) -> tuple[list[str], str] | None:
    """The licences of the pom a jar carries (META-INF/maven/.../pom.xml), if it has one."""
    try:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                if name.startswith("META-INF/maven/") and name.endswith("/pom.xml"):
                    text = archive.read(name).decode(errors="replace")
                    return pom_licences(text), f"{path}!/{name}"
    except (OSError, zipfile.BadZipFile):
        return None
    return None


def jar(path: Path) -> tuple[str | None, str]:
    """A jar's licence from the pom inside it, else from its pom in the local Maven
    repository (where Maven put it)."""
    inside = _pom_inside(path)
    if inside and inside[0]:
        return " / ".join(inside[0]), inside[1]
    match = re.fullmatch(r"(.+?)-(\d[\w.\-]*)\.jar", path.name)
    if not match:
        return None, f"{path.name}: no artifact-version in its name"
    artifact, version = match.groups()
    poms = sorted(MAVEN_REPOSITORY.glob(f"**/{artifact}/{version}/{artifact}-{version}.pom"))
    if not poms:
        return None, f"no pom of {artifact} {version} in {MAVEN_REPOSITORY}"
    names = pom_licences(poms[0].read_text(errors="replace"))
    if not names:
        return None, f"{poms[0]} declares no <licenses>"
    return " / ".join(names), str(poms[0])
