"""`psbench interop`: the interoperability matrix of the drivers that speak one wire
protocol (DDS vendors over RTPS): every ordered pair with a driver per role, best effort
and reliable, 64 B and 64 KiB; per cell matched or not, samples delivered, latency, and
where a failed pair parts (discovery, topic, type match, QoS match, data)."""

import sys

from psbench.base import manifests, paths
from psbench.base.errors import UserError
from psbench.base.options import message_size


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("interop", description=__doc__)
    parser.add_argument(
        "--wire", default="rtps", help="the wire protocol (manifests' `wire`; default rtps)"
    )
    parser.add_argument(
        "--drivers",
        metavar="A,B",
        help="these drivers only (default: every built one that speaks the wire)",
    )
    parser.add_argument(
        "--sizes", metavar="S,S", default="64,64KiB", help="message sizes (default 64,64KiB)"
    )
    parser.add_argument(
        "--reliability",
        metavar="R,R",
        default="best_effort,reliable",
        help="reliabilities (default best_effort,reliable)",
    )
    parser.add_argument(
        "--transport",
        metavar="NAME",
        help="one transport for every driver (default: each driver's own default)",
    )
    parser.add_argument("--count", type=int, default=200, help="round trips per cell (default 200)")
    parser.add_argument(
        "--match-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="how long a pair may take to match (default 10 s)",
    )
    parser.add_argument("--results", metavar="DIR", help="results folder (default ./results)")
    parser.set_defaults(handler=run_command)


def _choose(args) -> tuple[list[str], dict]:
    """The drivers of the matrix and their libraries: built, speaking the wire."""
    speaking = manifests.speaking(args.wire)
    if not speaking:
        raise UserError(f"argument --wire: no driver's manifest says wire = {args.wire!r}")
    built = paths.driver_libraries()
    chosen = args.drivers.split(",") if args.drivers else [d for d in speaking if d in built]
    for name in chosen:
        if name not in speaking:
            raise UserError(f"argument --drivers: {name!r} does not speak {args.wire} "
                            f"(those that do: {', '.join(speaking)})")  # fmt: skip
        if name not in built:
            raise UserError(f"argument --drivers: {name!r} is not built; run `make build`")
    if len(chosen) < 2:
        raise UserError(f"argument --drivers: interop needs two drivers that speak "
                        f"{args.wire}; built: {', '.join(chosen) or 'none'}")  # fmt: skip
    return chosen, {name: built[name] for name in chosen}


def _list(text: str, flag: str, parse, allowed=None) -> list:
    try:
        values = [parse(v.strip()) for v in text.split(",") if v.strip()]
    except ValueError as exc:
        raise UserError(f"argument {flag}: {exc}") from None
    bad = [v for v in values if allowed is not None and v not in allowed]
    if bad or not values:
        raise UserError(f"argument {flag}: give a comma list of {', '.join(allowed or ['values'])}")
    return values


def run_command(args) -> int:
    paths.require_node()
    if args.count < 1 or args.count > 100_000 or not 0 < args.match_timeout <= 300:
        raise UserError("argument --count: 1 to 100000; --match-timeout: up to 300 s")
    drivers, libraries = _choose(args)
    sizes = _list(args.sizes, "--sizes", message_size)
    reliabilities = _list(args.reliability, "--reliability", str, ("best_effort", "reliable"))
    # Here, not at the top: `psbench interop --help` needs none of them.
    from psbench.report import interop_text
    from psbench.results import rundir
    from psbench.run import envinfo, interop, services

    out = rundir.create(
        paths.results_dir(args.results), f"{rundir.utc_stamp()}-interop-{args.wire}"
    )

    def on_cell(cell, number, total):
        state = "ok" if cell.works else (cell.step or cell.status)
        print(f"[{number}/{total}] {cell.ping} → {cell.pong} {cell.reliability} {cell.size} B: {state}",
              file=sys.stderr, flush=True)  # fmt: skip

    with services.ServicePool(largest_message=max(sizes)) as pool:
        cells = interop.run_matrix(drivers, libraries, out, envinfo.collect(),
                                   ["psbench", *sys.argv[1:]], pool, count=args.count,
                                   match_timeout=args.match_timeout, transport=args.transport,
                                   reliabilities=reliabilities, sizes=sizes, on_cell=on_cell)  # fmt: skip
    print(interop_text.render(cells, args.wire, args.count, args.transport))
    print(f"results: {out}")
    return 0 if all(c.works for c in cells) else 1
