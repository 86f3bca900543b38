"""`psbench ping` and `psbench pubsub`: one latency run."""

import argparse
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

from psbench.base import paths
from psbench.base.errors import UserError
from psbench.cli import run_options
from psbench.hosts import inventory, ssh
from psbench.hosts.links import parse_hosts, real_hosts
from psbench.run import drivers, placement, progress_lines, role_drivers, run_rules
from psbench.run.parameters import cli_term
from psbench.run.spec import MeasureSpec

# CLI exit code per run status; refused and timeout mirror the node's exit codes.
EXIT_CODES = {
    "ok": 0,
    "failed": 1,
    "crashed": 1,
    "incomplete": 1,
    "refused": 2,
    "timeout": 3,
    "interrupted": 130,
}


def add_parsers(subparsers) -> None:
    for kind in ("ping", "pubsub"):
        parser = subparsers.add_parser(kind)
        run_options.add_run_arguments(parser, kind)
        parser.add_argument(
            "--quiet",
            action="store_true",
            help="no interval line while it measures (by default one a "
            "second on stderr: received, rate, p50 and max)",
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help="print the summary as one JSON object on stdout; the "
            "human-readable lines go to stderr",
        )
        parser.set_defaults(handler=run_command, kind=kind)


def _cpus(kind: str, assignments: list[tuple[str, int]], real: bool) -> dict[str, int]:
    """--cpu ROLE=CPU; a CPU of this machine's, unless the nodes run on real machines
    (theirs are checked when they are reached)."""
    allowed = os.sched_getaffinity(0)
    cpus = {}
    for role, cpu in assignments:
        unknown = run_rules.unknown_cpu_role(kind, role)
        if unknown is not None:
            raise UserError(f"argument --cpu: {unknown}")
        if cpu not in allowed and not real:
            raise UserError(
                f"argument --cpu: CPU {cpu} is not available here; "
                f"use one of {', '.join(map(str, sorted(allowed)))}"
            )
        cpus[role] = cpu
    return cpus


def _pin_problem(args: argparse.Namespace) -> str | None:
    if args.pin == "none" and args.cpu:
        return "--pin none pins nothing; leave out --cpu, or use --pin role|process"
    if args.pin == "process" and not args.cpu:
        return "--pin process confines the node to its roles' CPUs; give --cpu ROLE=CPU"
    return None


def _driver(args: argparse.Namespace) -> dict:
    """driver, driver_path and role_drivers: --driver NAME, a .so, or ROLE=NAME,..."""
    try:
        driver, library, per_role = role_drivers.resolve(
            args.kind,
            args.driver,
            {
                "placement": args.placement,
                "relays": getattr(args, "relays", None),
                "late_join": getattr(args, "late_join", None),
            },
            drivers.find_driver,
        )
    except ValueError as exc:
        raise UserError(f"argument --driver: {exc}") from None
    return {"driver": driver, "driver_path": Path(library), "role_drivers": per_role}


def spec_from_args(args: argparse.Namespace) -> MeasureSpec:
    ssh.use_config(getattr(args, "ssh_config", None))  # for hosts reached over SSH
    inventory.use(getattr(args, "inventory", None))  # --hosts INVENTORY
    if _pin_problem(args):
        raise UserError(f"argument --pin: {_pin_problem(args)}")
    values = run_options.spec_values(args, args.kind)
    for key in ("publishers", "topics"):  # unset: one
        values[key] = values.get(key) or 1
    settings = SimpleNamespace(kind=args.kind, **values)
    for rule in (run_rules.timeout_problem, *run_rules.PROCESS_RULES):
        problem = rule(settings, cli_term)
        if problem is not None:
            raise UserError(problem.message)
    hosts = _hosts(values["hosts"])
    values.update(
        kind=args.kind,
        cpus=_cpus(args.kind, values["cpus"], real_hosts(hosts)),
        hosts=hosts,
        place=_place(values["place"]),
        **_driver(args),
    )
    spec = MeasureSpec(**values)
    problem = placement.problem(spec)
    if problem is not None:
        raise UserError(f"argument --place: {problem[1]}" if problem[0] == "place" else problem[1])
    return spec


def _hosts(declared: list[tuple[str, dict]]) -> dict[str, dict]:
    hosts = {}
    for name, link in declared:
        if name in hosts:
            raise UserError(f"argument --host: {name!r} is declared twice; declare each host once")
        try:
            parse_hosts({name: link})
        except UserError as exc:
            raise UserError(f"argument --host: {exc}") from None
        hosts[name] = link
    if hosts:
        try:
            # All real machines or all emulated; one an inventory names (--hosts) is real.
            return parse_hosts(hosts)
        except UserError as exc:
            raise UserError(f"argument --host: {exc}") from None
    return hosts


def _place(assignments: list[tuple[str, str]]) -> dict:
    place: dict = {}
    for role, host in assignments:
        if role in place:  # given twice: its processes spread over the hosts
            before = place[role]
            place[role] = (before if isinstance(before, list) else [before]) + [host]
        else:
            place[role] = host
    return place


def _print_progress(label: str, fields: dict) -> None:
    print(progress_lines.render(label, fields), file=sys.stderr, flush=True)


def json_summary(outcome) -> dict:
    """--json: what the human lines say, as data (run.json in run_dir holds all)."""
    return {
        "kind": outcome.spec.kind,
        "driver": outcome.spec.driver,
        "size": outcome.spec.size,
        "status": outcome.status,
        "message": outcome.message,
        "run_dir": str(outcome.run_dir),
        "stats": outcome.stats,
        "throughput": outcome.throughput,
        "accounting": outcome.accounting,
        "resources": outcome.resources,
        "graph": outcome.graph,
        "problems": outcome.problems,
    }


def _plain(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def run_command(args: argparse.Namespace, spec: MeasureSpec | None = None) -> int:
    """One run of args (ping, pubsub), or of the spec given (`psbench graph run`)."""
    paths.require_node()
    spec = spec or spec_from_args(args)
    from psbench.run import keeper

    keeper.instance().start()  # its start overlaps the imports below, not the run
    # Here, not at the top: `psbench ping --help` needs none of them (tests/test_cli_start.py).
    from psbench.report import run_text
    from psbench.run import envinfo, measure, services
    from psbench.run.graph.plans import largest_message

    with services.ServicePool(largest_message=largest_message(spec)) as pool:
        outcome = measure.run(
            spec,
            paths.results_dir(args.results),
            envinfo.collect(),
            ["psbench", *sys.argv[1:]],
            services=pool,
            on_progress=None if args.quiet else _print_progress,
        )
    if args.json:
        print(run_text.render(outcome), file=sys.stderr)
        print(json.dumps(json_summary(outcome), default=_plain))
    else:
        print(run_text.render(outcome))
    if outcome.status != "ok":
        what = {
            "refused": "the node refused the run",
            "timeout": "the run timed out",
            "interrupted": "the run was interrupted",
            "failed": "the run failed",
            "crashed": "a node crashed",
            "incomplete": "not every sample is accounted for",
        }[outcome.status]
        print(f"psbench {spec.kind}: {what}:\n{outcome.message}", file=sys.stderr)
    return EXIT_CODES[outcome.status]
