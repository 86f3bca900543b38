"""A run of an experiment as the MeasureSpec that measure.run takes (and that the node's
check judges before anything runs)."""

from dataclasses import fields
from pathlib import Path

from psbench.hosts.links import real_hosts
from psbench.run import spec as spec_module
from psbench.run.experiment.expand import Run
from psbench.run.graph.load import load_graph
from psbench.run.graph.plans import placed, reliability_of
from psbench.run.spec import MeasureSpec

SPEC_FIELDS = {f.name for f in fields(MeasureSpec)}


def to_spec(run: Run, library: Path, per_role: dict[str, str] | None = None) -> MeasureSpec:
    """per_role: a driver per role, role -> library (run/role_drivers.py)."""
    params = run.params
    values = {k: v for k, v in params.items() if k in SPEC_FIELDS and k not in ("options", "cpus")}
    for key in ("publishers", "topics"):  # unset: one
        values.setdefault(key, 1)
    values["options"] = [
        f"{k[len('options.') :]}={v}" for k, v in params.items() if k.startswith("options.")
    ]
    if params["kind"] == "graph":
        return _graph_spec(values, params, library)
    cpus = params.get("cpus")
    if cpus is None and params.get("pin") == "none":
        cpus = "none"  # no pinning at all: not even psbench's one role per core
    if cpus is None and real_hosts(params.get("hosts") or {}):
        cpus = "none"  # this machine's CPUs say nothing of real machines'
    if cpus is None:
        # Unless the run says otherwise: one role per core (spec.default_cpus).
        cpus = spec_module.default_cpus(
            params["kind"],
            params.get("placement", "inter"),
            params.get("subscribers") or 1,
            params.get("publishers") or 1,
            params.get("topics") or 1,
            params.get("relays") or 0,
        )
    values["cpus"] = {} if cpus == "none" else dict(cpus)
    values["hosts"] = params.get("hosts") or {}
    values["place"] = params.get("place") or {}
    return MeasureSpec(driver_path=library, role_drivers=dict(per_role or {}), **values)


def _graph_spec(values: dict, params: dict, library: Path) -> MeasureSpec:
    """A graph run: its mapping places the modules (on the run's hosts when it names
    several) and pins those it gives CPUs; `cpus` adds to them; size unset keeps each
    topic's own (docs/graphs.md)."""
    graph = load_graph(Path(params["graph"]))
    mapping = graph.mappings[params.get("mapping") or next(iter(graph.mappings))]
    hosts = params.get("hosts") or {}
    place, cpus = placed(graph, mapping, hosts)
    cpus.update(params.get("cpus") if isinstance(params.get("cpus"), dict) else {})
    reliability, _ = reliability_of(graph, params.get("reliability"))  # checked: check.py
    values.update(size=params.get("size"), mapping=mapping.name, hosts=hosts, place=place,
                  cpus=cpus, reliability=reliability)  # fmt: skip
    return MeasureSpec(driver_path=library, **values)
