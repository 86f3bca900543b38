"""`psbench hosts check`: whether the real machines of an experiment file (hosts with
ssh:) or of --host options can run psbench's nodes: reachable, the same architecture as
this machine, its OS and CPUs, clock synchronisation (chrony, PTP), whether its linker
finds the shared libraries the node and the drivers need, and the Debian packages of
the drivers' manifests (docs/network.md, "Real machines over SSH")."""

import sys
from pathlib import Path

from psbench.base import manifests, paths
from psbench.base.errors import UserError
from psbench.base.options import add_ssh_config_argument, host_declaration
from psbench.cli.commands import subcommands
from psbench.hosts import inventory, ssh
from psbench.hosts.links import is_real, parse_hosts

CHECK_HELP = (
    "per real machine (hosts with ssh:): reachable, architecture, OS, CPUs, clock "
    "sync, the node's and drivers' libraries, the drivers' packages; exit 1 when one "
    "cannot run psbench's node (or a driver chosen)"
)


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("hosts")
    (check,) = subcommands(parser, {"check": CHECK_HELP})
    check.add_argument(
        "experiment",
        nargs="?",
        metavar="EXPERIMENT.yaml",
        help="check the real machines this experiment's runs use",
    )
    check.add_argument(
        "--host",
        dest="host_declarations",
        type=host_declaration,
        action="append",
        default=[],
        metavar="NAME:ssh=TARGET",
        help="a real machine, e.g. b:ssh=user@10.0.0.7; repeatable",
    )
    check.add_argument(
        "--driver",
        action="append",
        default=[],
        metavar="NAME",
        help="whose packages to look for (default: the experiment's drivers, else every "
        "built driver); repeatable",
    )
    add_ssh_config_argument(check)
    check.set_defaults(handler=check_command)


def _from_experiment(path: str) -> tuple[dict[str, dict], list[str]]:
    """The real machines of every run of the file, and the runs' drivers."""
    from psbench.run.experiment import ExperimentError, prepare  # only for a file

    try:
        plan = prepare(Path(path), path)
    except ExperimentError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        raise UserError(f"{path}: cannot be read; nothing was checked", 2) from None
    hosts, drivers = {}, []
    for spec in plan.specs.values():
        for name, link in spec.hosts.items():
            if is_real(link):
                hosts.setdefault(name, link)
        if spec.driver not in drivers:
            drivers.append(spec.driver)
    return hosts, drivers


def _packages(drivers: list[str]) -> dict[str, list[str]]:
    known = manifests.driver_names()
    return {d: list(manifests.load(d).debian) for d in drivers if d in known}


def _libraries(drivers: list[str]) -> dict[str, list[str]]:
    """The shared libraries the node and each driver's .so name (ELF DT_NEEDED)."""
    found = {ssh.NODE_NAME: ssh.needed_libraries(paths.node_path()) or []}
    built = paths.driver_libraries()
    for driver in drivers:
        if driver in built:
            found[driver] = ssh.needed_libraries(built[driver]) or []
    return found


def check_command(args) -> int:
    ssh.use_config(args.ssh_config)
    inventory.use(args.inventory)  # --hosts INVENTORY
    hosts, drivers = {}, []
    if args.experiment:
        hosts, drivers = _from_experiment(args.experiment)
    if args.host_declarations:
        declared = dict(args.host_declarations)
        try:
            parse_hosts(declared)
        except UserError as exc:
            raise UserError(f"argument --host: {exc}") from None
        hosts.update(declared)
    if args.inventory and not args.experiment and not args.host_declarations:
        hosts = inventory.in_use()  # every machine the inventory lists
    hosts = {name: link for name, link in hosts.items() if is_real(link)}
    if not hosts:
        raise UserError(
            "no real machines to check: give an experiment whose hosts have ssh:, or "
            "--host NAME:ssh=TARGET",
            2,
        )
    chosen = bool(args.driver or drivers)  # else every built one, for information
    drivers = args.driver or drivers or sorted(paths.driver_libraries())
    packages = _packages(drivers)
    wanted = sorted({p for names in packages.values() for p in names})
    libraries = _libraries(drivers)
    sonames = sorted({lib for names in libraries.values() for lib in names})
    unusable = 0
    for name, link in hosts.items():
        result = ssh.check(name, str(link["ssh"]), wanted, sonames)
        for who, names in libraries.items():
            missing = [lib for lib in names if result.libraries.get(lib) is False]
            if missing and (who == ssh.NODE_NAME or chosen):
                result.problems.append(f"{who} cannot run there: {', '.join(missing)} missing")
        print(_text(result, link.get("address"), packages, libraries))
        unusable += bool(result.problems)
    if unusable:
        print(
            f"psbench hosts check: {unusable} of {len(hosts)} host"
            f"{'s' if len(hosts) != 1 else ''} cannot run psbench's node",
            file=sys.stderr,
        )
        return 1
    return 0


def _text(
    result: ssh.Check, address: str | None, packages: dict[str, list[str]], libraries: dict
) -> str:
    head = f"{result.name} (ssh {result.target})"
    p = result.probe
    if not p.reachable:
        return f"{head}: UNUSABLE: {'; '.join(result.problems)}"
    lines = [
        f"{head}: {'UNUSABLE: ' + '; '.join(result.problems) if result.problems else 'usable'}",
        f"  architecture  {p.arch} (this machine: {ssh.local_arch()})",
        f"  os            {p.os or '-'}; {p.kernel or '-'}",
        f"  cpus          {p.cpus if p.cpus is not None else '-'}",
        f"  address       {address or p.server_address or '-'}"
        f" ({'given' if address else 'of the ssh connection'})",
    ]
    tracking = {k.strip(): v.strip() for k, _, v in (c.partition(":") for c in result.clock)}
    clock = ", ".join(result.running) or "no chronyd, ntpd, timesyncd, ptp4l or phc2sys running"
    if tracking.get("System time"):
        clock += f"; chrony: {tracking['System time']}"
    elif tracking.get("Leap status"):
        clock += f"; chrony leap status {tracking['Leap status']}"
    lines.append(f"  clock sync    {clock}")
    for who in dict.fromkeys([*libraries, *packages]):
        missing = [lib for lib in libraries.get(who, []) if result.libraries.get(lib) is False]
        found = len(libraries.get(who, [])) - len(missing)
        shown = [
            f"libraries {found} found" + (f", MISSING {', '.join(missing)}" if missing else "")
        ]
        if who in packages:
            shown.append(
                "packages "
                + (
                    ", ".join(
                        f"{n} {result.packages[n]}" if result.packages.get(n) else f"{n} MISSING"
                        for n in packages[who]
                    )
                    or "none listed"
                )
            )
        lines.append(f"  {who:<13} {'; '.join(shown)}")
    return "\n".join(lines)
