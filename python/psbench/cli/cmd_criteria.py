"""`psbench criteria`: short, scripted capability experiments for every built driver and
the matrix of their verdicts (yes / no / partial / not applicable / not testable here,
or a value: architecture, licence), each with its evidence: the experiment, its figures,
its run directory. Claims psbench cannot test are shown as "documented, not verified"
with their source (the drivers' manifests). docs/criteria.md says how each criterion is
measured and its limits."""

import sys
from pathlib import Path

from psbench.base import manifests, paths
from psbench.base.errors import UserError


def add_parsers(subparsers) -> None:
    parser = subparsers.add_parser("criteria", description=__doc__)
    parser.add_argument(
        "--drivers", metavar="A,B", help="these drivers only (default: every built one but "
        "the baselines)")  # fmt: skip
    parser.add_argument(
        "--criteria", metavar="A,B", help="these criteria only (default: all; "
        "architecture, licence, interoperability, persistence, restart, monitoring, "
        "discovery, low_bandwidth, routing)")  # fmt: skip
    parser.add_argument("--quick", action="store_true",
                        help="the short form for CI: the interop matrix at 64 B, reliable "
                        "only, 50 round trips a cell; discovery up to 10 subscribers; low "
                        "bandwidth 5 s and 3 s; the broker restart 12 s; routing 100 round trips")  # fmt: skip
    parser.add_argument("--results", metavar="DIR", help="results folder (default ./results)")
    parser.add_argument(
        "--report", metavar="DIR", help="run nothing: render again the report of a result "
        "set `psbench criteria` wrote (its criteria.json)")  # fmt: skip
    parser.set_defaults(handler=run_command)


def _names(text: str, flag: str, allowed: list[str], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise UserError(f"argument {flag}: {', '.join(bad) or 'nothing'} is not {what}; "
                        f"give a comma list of {', '.join(allowed)}")  # fmt: skip
    return list(dict.fromkeys(names))


def _drivers(args, built: dict) -> list[str]:
    if not args.drivers:
        chosen = [d for d in built if d not in manifests.baseline_drivers()]
        if not chosen:
            raise UserError("no driver is built; run `make build`")
        return chosen
    chosen = _names(args.drivers, "--drivers", manifests.driver_names(), "a driver")
    missing = [d for d in chosen if d not in built]
    if missing:
        raise UserError(f"argument --drivers: {', '.join(missing)} not built; run `make "
                        f"driver-{missing[0]}` (or make build)")  # fmt: skip
    return chosen


def render(out: Path, record: dict, verdicts: list) -> tuple[str, Path]:
    """The report of a battery's record: its tables as text, and the HTML page written
    into out/report/ with the tables' files."""
    from psbench.report import criteria_files, criteria_tables
    from psbench.reproduce import ijraset_criteria
    from psbench.reproduce.common import load_published

    tables = [criteria_tables.matrix(record, verdicts)]
    beside = ijraset_criteria.table(load_published("ijraset"), verdicts, record["drivers"])
    if beside is not None:
        tables.append(beside)
    tables.append(criteria_tables.evidence(record, verdicts, out))
    summary = [
        f"{len(record['drivers'])} drivers, {len(record['criteria'])} criteria, "
        f"{'--quick, ' if record.get('quick') else ''}started {record.get('created_utc')}, "
        f"finished {record.get('finished_utc') or 'not (interrupted)'}",
        f"command: {' '.join(record.get('cli_argv') or [])}",
        f"result set: {out}",
    ]
    page = criteria_files.write(out / "report", tables, summary)
    shown = [t for t in tables if t.name != criteria_tables.EVIDENCE]
    return criteria_files.terminal_text(shown), page


def run_command(args) -> int:
    # Here, not at the top: `psbench criteria --help` needs none of them.
    from psbench.run.criteria import battery

    if args.report:
        if args.drivers or args.criteria or args.quick or args.results:
            raise UserError("argument --report: it renders a result set again and takes no "
                            "other option")  # fmt: skip
        folder = Path(args.report)
        record, verdicts = battery.load(folder)
        text, page = render(folder if folder.is_dir() else folder.parent, record, verdicts)
        print(text)
        print(f"report: {page}")
        return 0
    chosen = tuple(_names(args.criteria, "--criteria", list(battery.CRITERIA), "a criterion")
                   if args.criteria else battery.CRITERIA)  # fmt: skip
    node = paths.require_node()
    built = paths.driver_libraries()
    drivers = _drivers(args, built)

    from psbench.results import rundir
    from psbench.run import drivers as driver_info
    from psbench.run import envinfo, services
    from psbench.run.criteria.context import Context

    describes = {}
    for name in drivers:
        try:
            describes[name] = driver_info.describe(node, built[name])
        except RuntimeError as exc:
            raise UserError(f"argument --drivers: {name}: {exc}") from None
    out = rundir.create(paths.results_dir(args.results), f"{rundir.utc_stamp()}-criteria")
    print(f"psbench criteria: {len(drivers)} drivers, {len(chosen)} criteria; results: {out}",
          file=sys.stderr, flush=True)  # fmt: skip
    with services.ServicePool() as pool:
        ctx = Context(drivers, {d: built[d] for d in drivers}, describes, out, envinfo.collect(),
                      ["psbench", *sys.argv[1:]], pool, args.quick, dict(built))  # fmt: skip
        record = battery.run(ctx, chosen, with_claims=not args.criteria)
    record, verdicts = battery.load(out)
    text, page = render(out, record, verdicts)
    print(text)
    print(f"report: {page}")
    print(f"results: {out}")
    return 0
