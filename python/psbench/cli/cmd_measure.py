"""`psbench ping` and `psbench pubsub`: one latency run."""

import argparse
import json
import os
import sys
from pathlib import Path

from psbench.base import paths
from psbench.base.errors import UserError
from psbench.base.options import add_measure_arguments
from psbench.cli.commands import help_of
from psbench.hosts import inventory, ssh
from psbench.hosts.links import parse_hosts, real_hosts
from psbench.run import drivers, placement, progress_lines, role_drivers
from psbench.run.spec import (
    ROLES,
    MeasureSpec,
    late_join_problem,
    relay_problem,
    restart_problem,
)

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

HELP = {kind: help_of(kind) for kind in ("ping", "pubsub")}


def add_parsers(subparsers) -> None:
    for kind in ("ping", "pubsub"):
        parser = subparsers.add_parser(kind, help=HELP[kind], description=HELP[kind])
        add_measure_arguments(parser, kind)
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
    roles = ROLES[kind] + (("relay",) if kind == "pubsub" else ())  # relay: --relays 1
    for role, cpu in assignments:
        if role not in roles:
            raise UserError(
                f"argument --cpu: unknown role {role!r} for {kind}; use one of {', '.join(roles)}"
            )
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


def spec_from_args(args: argparse.Namespace) -> MeasureSpec:
    ssh.use_config(getattr(args, "ssh_config", None))  # for hosts reached over SSH
    inventory.use(getattr(args, "inventory", None))  # --hosts INVENTORY
    if _pin_problem(args):
        raise UserError(f"argument --pin: {_pin_problem(args)}")
    if args.duration is not None and args.duration >= args.timeout:
        raise UserError(
            f"argument --timeout: {args.timeout:g} s would end a "
            f"{args.duration:g} s run early; give --timeout more than --duration"
        )
    subscribers = getattr(args, "subscribers", 1)
    publishers = getattr(args, "publishers", None) or 1
    topics = getattr(args, "topics", None) or 1
    if args.placement == "intra":
        for flag, value, what in (
            ("--subscribers", subscribers, "subscribers are"),
            ("--publishers", publishers, "publishers are"),
            ("--topics", topics, "topics are run by"),
        ):
            if value > 1:
                raise UserError(
                    f"argument {flag}: several {what} separate processes; use --placement inter"
                )
    hosts = _hosts(args.host_declarations)
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
    spec = MeasureSpec(
        kind=args.kind,
        driver=driver,
        driver_path=Path(library),
        role_drivers=per_role,
        size=args.size,
        count=args.count,
        duration=args.duration,
        warmup=args.warmup,
        rate=getattr(args, "rate", None),
        placement=args.placement,
        notify=args.notify,
        reliability=args.reliability,
        durability=args.durability,
        history=args.history,
        transport=args.transport,
        options=args.option,
        cpus=_cpus(args.kind, args.cpu, real_hosts(hosts)),
        pin=args.pin,
        fifo=args.fifo,
        mlockall=args.mlockall,
        dma_latency=args.dma_latency,
        check_pattern=args.check_pattern,
        loan=args.loan,
        spin_send=args.spin_send,
        timeout=args.timeout,
        match_timeout=args.match_timeout,
        sample_timeout=getattr(args, "sample_timeout", None),
        idle_timeout=getattr(args, "idle_timeout", None),
        subscribers=subscribers,
        publishers=publishers,
        topics=topics,
        echo_every=getattr(args, "echo_every", None),
        reply_size=getattr(args, "reply_size", None),
        max_samples=args.max_samples,
        latency_from=getattr(args, "latency_from", None),
        relays=getattr(args, "relays", None),
        send_wait=args.send_wait,
        send_spin_us=args.send_spin_us,
        drain_timeout=getattr(args, "drain_timeout", None),
        inject=getattr(args, "inject", None) or [],
        security=getattr(args, "security", None),
        security_fault=getattr(args, "security_fault", None),
        late_join=getattr(args, "late_join", None),
        restart_broker=getattr(args, "restart_broker", None),
        hosts=hosts,
        place=_place(args.role_hosts),
    )
    problem = placement.problem(spec)
    if problem is not None:
        raise UserError(f"argument --place: {problem[1]}" if problem[0] == "place" else problem[1])
    problem = relay_problem(spec)
    if problem is not None:
        raise UserError(f"argument --relays: {problem[1]}")
    problem = late_join_problem(spec)
    if problem is not None:
        raise UserError(f"argument --late-join: {problem[1]}")
    problem = restart_problem(spec)
    if problem is not None:
        raise UserError(f"argument --restart-broker: {problem[1]}")
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
