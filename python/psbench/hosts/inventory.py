"""Real machines named in an Ansible inventory (the INI or the YAML form), so that a lab's
existing inventory reaches psbench: each host becomes {ssh: TARGET, address: ADDRESS}.
TARGET is what the system `ssh` is given (`user@host`, or `ssh://user@host:port` when the
inventory names a port), so ~/.ssh/config still applies to it; ADDRESS is ansible_host
when the inventory gives one. Groups, children and group variables are read as Ansible
reads them (a host's own variables win over its groups'); nothing is executed."""

import shlex
from pathlib import Path

from psbench.base.errors import UserError

_in_use: dict[str, dict] = {}  # --hosts FILE: name -> {ssh, address}


def use(path: str | None) -> None:
    """The inventory of --hosts FILE: a host declared without settings (`robot1: {}`,
    `--host robot1`) whose name it lists becomes that real machine."""
    global _in_use
    _in_use = load(Path(path)) if path else {}


def resolve(name: str, link) -> dict | None:
    """The inventory's entry for a host declared without settings, else None."""
    return dict(_in_use[name]) if not link and name in _in_use else None


def in_use() -> dict[str, dict]:
    return dict(_in_use)


def load(path: Path) -> dict[str, dict]:
    """name -> {ssh, address} of every host in the inventory file."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the inventory: {exc.strerror}", 2) from None
    hosts = _yaml(path, text) if path.suffix in (".yaml", ".yml") else _ini(path, text)
    if not hosts:
        raise UserError(f"{path}: the inventory names no host", 2)
    return {name: _entry(path, name, found) for name, found in hosts.items()}


def _entry(path: Path, name: str, variables: dict) -> dict:
    host = str(variables.get("ansible_host") or name)
    user = variables.get("ansible_user")
    port = variables.get("ansible_port")
    if port is not None and not str(port).isdigit():
        raise UserError(f"{path}: host {name}: ansible_port {port!r} is not a port number", 2)
    target = f"{user}@{host}" if user else host
    if port is not None:
        target = f"ssh://{target}:{port}"
    entry = {"ssh": target}
    if variables.get("ansible_host"):
        entry["address"] = host
    return entry


def _yaml(path: Path, text: str) -> dict[str, dict]:
    import yaml  # only for a YAML inventory: `psbench --help` stays light

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not a YAML inventory: {exc}", 2) from None
    if not isinstance(doc, dict):
        raise UserError(f"{path}: a YAML inventory is a mapping of groups (all: hosts: ...)", 2)
    found: dict[str, dict] = {}

    def walk(group: str, body, inherited: dict) -> None:
        if body is None:
            return
        if not isinstance(body, dict):
            raise UserError(f"{path}: group {group}: expected hosts:, vars: or children:", 2)
        variables = {**inherited, **(body.get("vars") or {})}
        for name, own in (body.get("hosts") or {}).items():
            found[str(name)] = {**found.get(str(name), {}), **variables, **(own or {})}
        for child, child_body in (body.get("children") or {}).items():
            walk(str(child), child_body, variables)

    for group, body in doc.items():
        walk(str(group), body, {})
    return found


def _ini(path: Path, text: str) -> dict[str, dict]:
    """[group] lines of `name key=value ...`, [group:vars] and [group:children]."""
    members: dict[str, list[str]] = {"ungrouped": []}
    own: dict[str, dict] = {}
    group_vars: dict[str, dict] = {}
    children: dict[str, list[str]] = {}
    section = "ungrouped"
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        group, _, kind = section.partition(":")
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise UserError(f"{path}:{number}: {exc}", 2) from None
        if not words:
            continue
        if kind == "vars":
            key, _, value = line.partition("=")
            group_vars.setdefault(group, {})[key.strip()] = value.strip()
        elif kind == "children":
            children.setdefault(group, []).append(words[0])
        elif kind:
            raise UserError(f"{path}:{number}: unknown section kind [{section}]", 2)
        else:
            name, settings = words[0], words[1:]
            members.setdefault(group, []).append(name)
            for setting in settings:
                key, sep, value = setting.partition("=")
                if not sep:
                    raise UserError(f"{path}:{number}: {setting!r}: write KEY=VALUE", 2)
                own.setdefault(name, {})[key] = value
            own.setdefault(name, {})
    found: dict[str, dict] = {}

    def apply(group: str, inherited: dict, seen: frozenset) -> None:
        if group in seen:
            raise UserError(f"{path}: group {group} is its own child", 2)
        variables = {**inherited, **group_vars.get(group, {})}
        for name in members.get(group, []):
            found[name] = {**found.get(name, {}), **variables}
        for child in children.get(group, []):
            apply(child, variables, seen | {group})

    for group in list(members) + [g for g in children if g not in members]:
        apply(group, {}, frozenset())
    return {name: {**found.get(name, {}), **own.get(name, {})} for name in own}
