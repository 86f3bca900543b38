"""run.json's `clock` block for a run on real machines: each host's clock against the
orchestrating machine's before and after the run (psbench.hosts.clock), each against the
host of the run's first writer (offset, uncertainty, how far it moved, drift), and for
each subscriber whose clocks stamped its samples (psbench.results.clock_correction reads
it back). Emulated hosts share one clock: their network block says so instead."""

from psbench.base.errors import UserError
from psbench.hosts.clock import ROUNDS, Between, Offset
from psbench.run import placement

METHOD = (
    f"NTP-style exchange over SSH with psbench-node --clock-echo, {ROUNDS} rounds, the "
    "shortest round trip kept; before and after the run; uncertainty = half that round "
    "trip, added over the two hosts compared"
)


def read_after(network) -> tuple[dict | None, str | None]:
    """The hosts' clocks after a run, or why they could not be read (a host gone)."""
    try:
        return network.read_clocks(), None
    except UserError as exc:
        return None, f"after the run: {exc}"


def clock_record(spec, before: dict, after: dict | None, problem: str | None = None) -> dict:
    offsets = {h: Offset(before[h], (after or {}).get(h)) for h in before}
    reference = placement.first_writer_host(spec)
    hosts = {}
    for name, offset in offsets.items():
        between = Between(None, None) if name == reference else Between(offset, offsets[reference])
        span = offset.after.at_ns - offset.before.at_ns if offset.after else 0
        hosts[name] = {
            **offset.to_json(),
            "to_reference": {
                "offset_ns": between.at(offset.before.at_ns),
                "uncertainty_ns": between.uncertainty_ns,
                "moved_ns": between.moved_ns if offset.after else None,
                "drift_ppm": 1e6 * between.moved_ns / span if span else None,
                "drifted": between.drifted,
            },
        }
    receivers = {
        plan.name: {
            "host": placement.host_of(spec, plan),
            "writers": {str(k): h for k, h in placement.writer_hosts(spec, plan).items()},
        }
        for plan in spec.processes()
        if plan.roles[0] == "sub"
    }
    return {
        "method": METHOD,
        "reference": reference,
        "hosts": hosts,
        "receivers": receivers,
        "problem": problem,
    }
