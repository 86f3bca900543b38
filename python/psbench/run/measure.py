"""One measurement end to end: result directory, node processes, run.json, statistics."""

import re
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from psbench.base import manifests, paths
from psbench.base.errors import UserError
from psbench.base.options import restart_times
from psbench.hosts.calibrate import calibrate
from psbench.hosts.emulated import EmulatedNetwork
from psbench.hosts.ssh import SshNetwork
from psbench.results import accounting as samples_accounting
from psbench.results import restart_figures, rundir
from psbench.results.clock_correction import correct
from psbench.results.dependence import run_drift
from psbench.results.late_join_settled import still_on_their_way
from psbench.results.rates import span_mbit, span_rate
from psbench.results.run_record import RUN_FORMAT
from psbench.results.samples import SamplesFileError, read_samples
from psbench.results.stats import latency_stats, summarize_ns
from psbench.run import (
    drivers,
    keeper,
    node_check,
    placement,
    remote_services,
    resources,
    role_drivers,
    runner,
)
from psbench.run.broker_restart import NO_BROKER_TO_RESTART, BrokerRestart, broker_of
from psbench.run.clock_record import clock_record, read_after
from psbench.run.graph.figures import graph_figures
from psbench.run.graph.plans import graph_of, largest_message
from psbench.run.security import session as security
from psbench.run.services import (
    ServicePool,
    broker_options,
    broker_placeholder,
    broker_ready_timeout,
    needed,
)
from psbench.run.spec import MeasureSpec, cpu_of, cpu_sharing, node_argv

DEFAULT_MATCH_TIMEOUT_S = 30.0  # the node's default --match-timeout (docs/node.md)
DEFAULT_IDLE_TIMEOUT_S = 5.0  # the node's default --idle-timeout
DEFAULT_DRAIN_TIMEOUT_S = 10.0  # the node's default --drain-timeout
START_MARGIN_S = 15.0  # beyond the match timeout, for process start-up
PROGRESS_ARGV = ["--progress", "1"]  # the measuring nodes' interval line, every second
RESTART_IDLE_MARGIN_S = 5.0  # past the broker's ready timeout, for its clients to reconnect
# The senders say when their window begins (and wait until every process's resources
# are read: psbench.run.resources) and ends, the receivers when theirs ends; the reading at
# the end waits for the last of them, so that it never competes with a measurement.
WINDOW_ARGV = ["--window-lines"]
WINDOW_ROLES = {"ping", "pub", "sub", "relay"}
# The stats key of all subscribers' samples together, when a run has several.
ALL_SUBSCRIBERS = "all_subs"


@dataclass
class MeasureOutcome:
    spec: MeasureSpec
    run_id: str
    run_dir: Path
    status: str
    message: str | None
    summaries: dict = field(default_factory=dict)  # output name -> node summary
    stats: dict = field(default_factory=dict)  # output name -> latency statistics
    problems: list[str] = field(default_factory=list)
    cpu_sharing: dict = field(default_factory=dict)
    throughput: dict | None = None  # run.json's throughput block
    udp_datagrams: dict | None = None  # run.json's: datagrams per message
    accounting: dict = field(default_factory=dict)  # run.json's: receiver -> reconciled
    resources: dict = field(default_factory=dict)  # run.json's: CPU, switches, memory
    network: dict | None = None  # run.json's: emulated hosts, links, calibration
    graph: dict | None = None  # run.json's: a graph run's paths, modules and edges
    restart: dict | None = None  # run.json's: a broker killed and restarted mid-stream
    late_join: dict = field(default_factory=dict)  # run.json's: each late joiner's history

    @property
    def subscriber_names(self) -> list[str]:
        return subscriber_names(self.summaries)

    @property
    def publisher_names(self) -> list[str]:
        return publisher_names(self.summaries)

    @property
    def receiver_key(self) -> str:
        """Whose statistics sum the run up: ping, sub, or all subscribers together."""
        return receiver_key(self.spec.kind, self.summaries)


def _start_order(name: str):
    """t2-sub-10 after t2-sub-2, t10-... after t9-...: numbers compared as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def role_names(summaries: dict, role: str) -> list[str]:
    """The summaries written by processes of one role, in start order."""
    return sorted(
        (name for name, s in summaries.items() if s.get("role") == role), key=_start_order
    )


def subscriber_names(summaries: dict) -> list[str]:
    """The summaries written by sub processes, in start order (sub-2 before sub-10); a
    late joiner is not one of them (its samples include history: accounting.late_join)."""
    return [n for n in role_names(summaries, "sub") if not summaries[n].get("late_join")]


def publisher_names(summaries: dict) -> list[str]:
    return role_names(summaries, "pub")


def receiver_key(kind: str, summaries: dict) -> str:
    if kind == "ping":
        return "ping"
    return ALL_SUBSCRIBERS if len(subscriber_names(summaries)) > 1 else "sub"


def run_dir_name(spec: MeasureSpec, run_id: str) -> str:
    if spec.kind == "graph":
        what = f"{graph_of(spec).name}-{spec.mapping}"
    else:
        what = f"{spec.size}B"
    return f"{rundir.utc_stamp()}-{spec.kind}-{spec.driver}-{what}-{run_id}"


def _timeouts(spec: MeasureSpec) -> dict:
    match = spec.match_timeout if spec.match_timeout is not None else DEFAULT_MATCH_TIMEOUT_S
    idle = spec.idle_timeout if spec.idle_timeout is not None else DEFAULT_IDLE_TIMEOUT_S
    drain = spec.drain_timeout if spec.drain_timeout is not None else DEFAULT_DRAIN_TIMEOUT_S
    return {
        "start_timeout": match + START_MARGIN_S,
        "run_timeout": spec.timeout + runner.EXIT_GRACE_S,
        # A subscriber that ends on its count may leave before it acknowledged the last
        # samples: the publisher's drain then waits its whole timeout before it ends.
        "peer_grace": max(15.0, idle + 10.0, drain + 10.0),
    }


def _analyse(run_dir: Path, summaries: dict, clock: dict | None = None) -> tuple[dict, list[str]]:
    """Statistics of every samples file, checked against the summary that names it; a
    subscriber's one-way latency between real machines corrected for their clocks'
    offset (clock: run.json's block), the uncorrected figures kept beside it."""
    stats, problems, one_way = {}, [], []
    for role, summary in summaries.items():
        name = summary.get("samples_file")
        if not name:
            continue
        try:
            samples = read_samples(run_dir / name)
        except SamplesFileError as exc:
            problems.append(str(exc))
            continue
        expected = (summary.get("counts") or {}).get("samples")
        if expected is not None and expected != len(samples):
            problems.append(
                f"{name} has {len(samples)} records but {role}.json says "
                f"counts.samples = {expected}"
            )
        latency_from = ((summary.get("config") or {}).get("latency_from")) or "intended"
        corrected, applied = correct(samples, clock, role)
        stats[role] = latency_stats(corrected, latency_from)
        if applied is not None:
            stats[role]["one_way"]["method"] += (
                f", corrected for the clocks' offset (±{applied['uncertainty_ns'] / 1000:.1f} µs)"
            )
            stats[role]["clock"] = applied
            stats[role]["one_way_uncorrected"] = summarize_ns(samples.latency_ns)
        samples = corrected
        if summary.get("role") == "sub" and not summary.get("late_join"):
            one_way.append(samples.latency_ns)
    if len(one_way) > 1:
        # Fan-out: the run's latency is every subscriber's samples together.
        method = next(s["one_way"]["method"] for s in stats.values() if "one_way" in s)
        stats[ALL_SUBSCRIBERS] = {
            "unit": "ns",
            "one_way": {
                "method": f"{method}, all subscribers together",
                **summarize_ns(np.concatenate(one_way)),
            },
            # each subscriber's own series checked (at DRIFT_ALPHA / subscribers each)
            "stationarity": run_drift(one_way) or {"drifts": False, "receivers": len(one_way)},
        }
        clocks = [s["clock"] for s in stats.values() if "clock" in s]
        if clocks:  # the together figures are as uncertain as the least certain one
            stats[ALL_SUBSCRIBERS]["clock"] = max(
                clocks, key=lambda c: (c["flagged"], c["uncertainty_ns"])
            )
    return stats, problems


def loan_mode(spec: MeasureSpec, capabilities: dict) -> MeasureSpec:
    """`loan: auto`: the driver's zero-copy write where it has one, else a copy; the
    choice is recorded in spec.auto and the resolved value in spec.loan."""
    if spec.loan != "auto":
        return spec
    has = bool(capabilities.get("loan"))
    return replace(
        spec,
        loan=has,
        auto={
            **spec.auto,
            "loan": "auto: the driver has a zero-copy (loaned) write"
            if has
            else "auto: the driver has no zero-copy write; it copies",
        },
    )


def flow_control(spec: MeasureSpec, capabilities: dict) -> MeasureSpec:
    """As fast as possible and reliable with history unset: keep_all where the driver has
    it, so that a writer ahead of its readers blocks (flow control) instead of
    overwriting samples they have not taken yet, which a reliable run would report as
    lost. Recorded in spec.auto (run.json: spec.history, and auto says why)."""
    if (
        spec.kind == "pubsub"
        and not spec.rate
        and spec.reliability == "reliable"
        and spec.history is None
        and "keep_all" in (capabilities.get("history") or [])
    ):
        return replace(
            spec,
            history="keep_all",
            auto={
                **spec.auto,
                "history": "keep_all: as fast as possible (rate 0) and reliable, "
                "history not set; the writer blocks instead of "
                "overwriting samples not yet taken",
            },
        )
    return spec


def restart_idle(spec: MeasureSpec, driver: dict) -> MeasureSpec:
    """A broker restart with the idle timeout unset: the subscribers wait out the
    broker's downtime and its start (its manifest's ready timeout) before they give up,
    instead of the node's default of a few seconds. Recorded in spec.auto."""
    if spec.restart_broker is None or spec.idle_timeout is not None:
        return spec
    _, down = restart_times(spec.restart_broker)
    ready = max(
        [broker_ready_timeout(n) for n in needed(driver, spec.transport, spec.options)] or [0]
    )
    idle = down + ready + RESTART_IDLE_MARGIN_S
    return replace(spec, idle_timeout=idle, auto={
        **spec.auto,
        "idle_timeout": f"{idle:g} s: a broker restart ({spec.restart_broker}) with the idle "
        f"timeout unset; the subscribers wait out its {down:g} s down and up to {ready:g} s "
        f"for it to serve again",
    })  # fmt: skip


def _percent(part, whole) -> float | None:
    return None if not whole or part is None else 100.0 * part / whole


def throughput(summaries: dict, accounting: dict | None = None) -> dict | None:
    """run.json's throughput block from the nodes' throughput accounting: per subscriber
    samples/s and Mbit/s on its own clock ((received - 1) / (last arrival - first arrival);
    Mbit/s counts whole messages, header included), its counts and loss, and its
    per-second series; the subscribers together; per publisher the achieved rate on its
    own clock. None when no summary has a throughput block (an older node)."""
    subs, pubs = subscriber_names(summaries), publisher_names(summaries)
    if not any("throughput" in summaries[n] for n in subs + pubs):
        return None
    result = {
        "subscribers": {},
        "aggregate_samples_per_s": None,
        "aggregate_mbit_per_s": None,
        "loss_percent": None,
        "publishers": {},
    }
    total_sent = total_lost = 0
    accounting = accounting if accounting is not None else samples_accounting.reconcile(summaries)
    for name in subs:
        tp = summaries[name].get("throughput") or {}
        counts = summaries[name].get("counts") or {}
        first, last = tp.get("first_arrival_ns"), tp.get("last_arrival_ns")
        received = tp.get("received", counts.get("received"))
        rate = span_rate(received, first, last)
        mbit = span_mbit(tp.get("received_bytes"), received, first, last)
        # What its writers say they sent: the sub alone knows it only from end markers.
        reconciled = accounting.get(name) or {}
        sent = reconciled.get("published", counts.get("sent"))
        lost = reconciled.get("lost", counts.get("lost"))
        total_sent += sent or 0
        total_lost += lost or 0
        result["subscribers"][name] = {
            "samples_per_s": rate,
            "mbit_per_s": mbit,
            "received": received,
            "received_bytes": tp.get("received_bytes"),
            "beyond_capacity": tp.get("beyond_capacity"),
            "sent": sent,
            "lost": lost,
            "loss_percent": _percent(lost, sent),
            "bin_ns": tp.get("bin_ns"),
            "per_bin": tp.get("per_bin"),
        }
    each = list(result["subscribers"].values())
    for key, total in (
        ("samples_per_s", "aggregate_samples_per_s"),
        ("mbit_per_s", "aggregate_mbit_per_s"),
    ):
        if each and all(e[key] is not None for e in each):
            result[total] = sum(e[key] for e in each)
    result["loss_percent"] = _percent(total_lost, total_sent)
    for name in pubs:
        tp = summaries[name].get("throughput") or {}
        sent = tp.get("sent", (summaries[name].get("counts") or {}).get("sent"))
        result["publishers"][name] = {
            "achieved_rate_hz": span_rate(sent, tp.get("first_send_ns"), tp.get("last_send_ns")),
            "offered_rate_hz": tp.get("offered_rate_hz"),
            "sent": sent,
            "sent_bytes": tp.get("sent_bytes"),
            "bin_ns": tp.get("bin_ns"),
            "per_bin": tp.get("per_bin"),
        }
    return result


def udp_datagrams_sent() -> int | None:
    """UDP datagrams this network namespace has sent (/proc/net/snmp OutDatagrams)."""
    try:
        lines = [line.split() for line in open("/proc/net/snmp") if line.startswith("Udp:")]
        return int(lines[1][lines[0].index("OutDatagrams")])
    except (OSError, IndexError, ValueError):
        return None


def datagrams_per_sample(before, after, summaries: dict) -> dict | None:
    """UDP datagrams sent during the run, per measured message written (a middleware that
    sends several per sample, heartbeats or acknowledgements, shows here). Counted over
    the whole network namespace: anything else sending UDP meanwhile is included, so it
    is an upper bound on a busy machine."""
    if before is None or after is None:
        return None
    written = sum(
        ((s.get("counts") or {}).get("sent") or 0) + ((s.get("counts") or {}).get("warmup") or 0)
        for s in summaries.values()
        if s.get("role") in ("pub", "ping", "pong", "relay")
    )
    return {
        "datagrams": after - before,
        "messages_written": written,
        "per_message": (after - before) / written if written else None,
        "scope": "network namespace (/proc/net/snmp Udp OutDatagrams); messages "
        "written include warm-up; handshakes, discovery and other processes' "
        "datagrams are in the count",
    }


def _commands(
    node: Path,
    spec: MeasureSpec,
    run_id: str,
    run_dir: Path,
    progress: bool = False,
    network: EmulatedNetwork | SshNetwork | None = None,
) -> list:
    # Always the stdio barrier, also for one intra-process node: the launcher then sees
    # every run reach its start the same way, and bounds that wait the same way.
    # progress: the measuring processes (ping, sub) print an interval line every second;
    # what the terminal shows only, never part of the spec or the results.
    def argv(plan):
        extra = PROGRESS_ARGV if progress and {"ping", "sub"} & set(plan.roles) else []
        window = WINDOW_ARGV if WINDOW_ROLES & set(plan.roles) else []
        if isinstance(network, SshNetwork):
            return _remote_argv(node, spec, plan, run_id, network) + window + extra
        argv = node_argv(node, spec, plan, run_id, run_dir, "stdio") + window + extra
        # On an emulated host: run inside its namespace (stdio, the barrier, pass through).
        return network.argv(placement.host_of(spec, plan), argv) if network else argv

    def wrapped(plan):
        if isinstance(network, SshNetwork):
            host = placement.host_of(spec, plan)
            return network.command(host, network.out_dir(host, run_id, plan.name), argv(plan))
        return argv(plan)

    return [(plan.name, plan.roles, wrapped(plan)) for plan in spec.processes()]


def _send_credentials(spec: MeasureSpec, run_id: str, network: SshNetwork, sent_to: list):
    """Each node's credentials (made here) to its machine, readable there by the remote
    user only, in the folder its security_dir names (gone with its output directory).
    sent_to: the machines written to, as they are."""
    for plan in spec.processes():
        host = placement.host_of(spec, plan)
        there = network.security_dir(host, run_id, plan.name)
        if host not in sent_to:
            sent_to.append(host)
        for file in sorted(security.session().node_dir(run_id, plan.name).iterdir()):
            network.put(host, there, file.name, file.read_bytes(), secret=True)


def _remote_argv(node: Path, spec: MeasureSpec, plan, run_id: str, network: SshNetwork):
    """A node's argv on a real machine: the node and the driver from that machine's
    cache, its output into a directory of its own there (fetched after the run), and the
    hosts' addresses as reached (each host's `address:`, else its SSH connection's)."""
    host = placement.host_of(spec, plan)
    resolved = {
        name: {**link, "address": network.addresses()[name]} for name, link in spec.hosts.items()
    }
    remote = replace(
        spec,
        driver_path=Path(network.remote_file(host, Path(spec.driver_path).name)),
        role_drivers={
            role: network.remote_file(host, Path(library).name)
            for role, library in spec.role_drivers.items()
        },
        hosts=resolved,
    )
    out = Path(network.out_dir(host, run_id, plan.name))
    credentials = network.security_dir(host, run_id, plan.name)
    return node_argv(Path(network.remote_file(host, node.name)), remote, plan, run_id, out,
                     "stdio", credentials)  # fmt: skip


def run(
    spec: MeasureSpec,
    parent: Path,
    env: dict,
    cli_argv: list[str],
    services: ServicePool | None = None,
    on_progress=None,
) -> MeasureOutcome:
    """Runs spec with its results in a new directory under parent. Result files are
    kept whatever happens; run.json records the status. services: the pool that starts
    (or reuses) the daemons the driver needs; without one they must already run.
    on_progress(label, fields): interval lines while it measures (progress_lines).
    With hosts, the run's emulated hosts are made for it and gone after it, and so are
    the brokers it needs, started on their host (placement.broker_host). With real
    machines (hosts with ssh:) each node runs there over SSH, from psbench's cache on
    that machine, and its files are fetched back (psbench.hosts.ssh)."""
    placed = placement.problem(spec)
    if placed is not None:
        raise UserError(f"{placed[0]}: {placed[1]}" if placed[0] != "place" else placed[1], 2)
    network = None
    if spec.hosts and placement.real(spec):
        with SshNetwork(spec.hosts) as real:
            pool = ServicePool(largest_message(spec), network=real,
                               host=placement.broker_host(spec),
                               start_remote=remote_services.start, outer=services)  # fmt: skip
            with pool:
                return _run(spec, parent, env, cli_argv, pool, on_progress, real)
    if spec.hosts:
        watcher = keeper.instance()
        network = EmulatedNetwork(
            placement.shapes(spec), watch=watcher.watch_netns, release=watcher.release_netns
        )
    with network if network is not None else nullcontext():
        if network is None:
            return _run(spec, parent, env, cli_argv, services, on_progress, network)
        pool = ServicePool(
            largest_message(spec), network=network, host=placement.broker_host(spec), outer=services
        )
        with pool:  # stopped before the network goes
            return _run(spec, parent, env, cli_argv, pool, on_progress, network)


def _run(spec, parent, env, cli_argv, services, on_progress, network) -> MeasureOutcome:
    node = paths.require_node()
    spec, described, clocks_before = _prepare(spec, node, network)
    run_id = rundir.new_run_id()
    run_dir = rundir.create(parent, run_dir_name(spec, run_id))
    progress = on_progress is not None
    faulty = {}
    if security.secured(spec.security):
        documents = {manifests.load(d["name"]).security_documents for d in described.values()}
        faulty = security.session().prepare_nodes(
            spec, run_id, next(iter(documents - {None}), None)
        )
    commands = _commands(node, spec, run_id, run_dir, progress, network)
    record = _first_record(spec, run_id, cli_argv, node, described, commands, network, env)
    run_json = run_dir / "run.json"
    rundir.write_json(run_json, record)

    def on_started(procs):
        record["status"] = "running"
        record["processes"] = [p.to_json() for p in procs]
        rundir.write_json(run_json, record)

    used = []
    try:
        refused = services is not None and _refused_anyway(spec, described, run_id, network)
        if refused:
            # The node refuses it before it would connect: it says why, no broker started.
            commands = _commands(node, refused, run_id, run_dir, progress, network)
            record["processes"] = _planned(commands)
        elif services is not None:
            used = _start_services(spec, described, services, run_dir, record)
            if broker_options(used):
                # The node learns where the broker psbench started listens.
                with_broker = replace(spec, options=spec.options + broker_options(used))
                commands = _commands(node, with_broker, run_id, run_dir, progress, network)
                record["processes"] = _planned(commands)
            rundir.write_json(run_json, record)
        measured = _measure(spec, run_id, run_dir, commands, described, services, used, network,
                            record, on_started, on_progress, clocks_before)  # fmt: skip
    except BaseException as exc:
        # The processes are stopped by now; record why we did not get further.
        interrupted = isinstance(exc, KeyboardInterrupt)
        record.update(
            status="interrupted" if interrupted else "error",
            message="interrupted" if interrupted else f"{type(exc).__name__}: {exc}",
            finished_utc=rundir.utc_now(),
        )
        rundir.write_json(run_json, record)
        raise
    outcome = _verdict(spec, run_id, run_dir, measured, record, faulty, services, used)
    _final_record(record, spec, outcome, measured, network)
    rundir.write_json(run_json, record)
    return outcome


def _prepare(spec: MeasureSpec, node: Path, network):
    """What the drivers say of themselves (recorded beside the results they produced;
    with a driver per role, what each says: the measuring role's is `driver`), the run
    refused if they cannot make it, and the settings psbench chooses (spec.auto).
    Real machines: the node and the drivers deployed there, their clocks read."""
    described = {library: drivers.describe(node, Path(library)) for library in spec.libraries()}
    driver = described[str(spec.driver_path)]
    clocks_before = None
    if isinstance(network, SshNetwork):
        _check_cpus(spec, network)
        network.deploy([node, *map(Path, spec.libraries())])
        clocks_before = network.read_clocks()
    refused = security.problem(spec, [d.get("name", "") for d in described.values()])
    if refused is not None:
        raise UserError(f"{refused[0]}: {refused[1]}", 2)
    capabilities = role_drivers.common_capabilities(
        [d.get("capabilities") or {} for d in described.values()]
    )
    spec = flow_control(spec, capabilities)
    spec = loan_mode(spec, capabilities)
    spec = restart_idle(spec, driver)
    if spec.restart_broker is not None and not broker_placeholder(
        driver, spec.transport, spec.options
    ):
        raise UserError(f"restart_broker: {NO_BROKER_TO_RESTART}", 2)
    return spec, described, clocks_before


def _first_record(spec, run_id, cli_argv, node, described, commands, network, env) -> dict:
    """run.json as written when the run folder is made (status starting): the run as
    planned (results/run_record.py, the fields present always)."""
    driver = described[str(spec.driver_path)]
    links = network.describe() if network is not None else None
    if isinstance(network, EmulatedNetwork):  # real machines: not calibrated yet
        with_broker = bool(broker_placeholder(driver, spec.transport, spec.options))
        links["calibration"] = [
            calibrate(network, a, b) for a, b in placement.calibration_pairs(spec, with_broker)
        ]
    record = {
        "format": RUN_FORMAT,
        "run_id": run_id,
        "kind": spec.kind,
        "created_utc": rundir.utc_now(),
        "finished_utc": None,
        "cli_argv": cli_argv,
        "node": str(node),
        "driver": driver,
        "spec": spec.to_json(),
        "auto": spec.auto,
        "placement": spec.placement,
        "barrier": "stdio",
        "cpu_sharing": cpu_sharing(spec),
        "status": "starting",
        "message": None,
        "processes": _planned(commands),
        "network": links,
        "env": env,
        "security": _security_record(spec),
    }
    if spec.role_drivers:
        record["role_drivers"] = {
            role: described[str(library)] for role, library in spec.role_drivers.items()
        }
    return record


def _refused_anyway(spec, described, run_id, network) -> MeasureSpec | None:
    """The run as the node would get it (a placeholder for its broker's address) if the
    node refuses it so: a refused run then costs the node's milliseconds, not a broker's
    start (seconds for a JVM's or an Erlang VM's). Local runs of one driver whose broker psbench
    starts; not a daemon's: a driver may refuse a run while its (per-host) daemon is
    not up, which the run would start."""
    if network is not None or len(described) != 1:
        return None
    driver = described[str(spec.driver_path)]
    if not broker_placeholder(driver, spec.transport, spec.options):
        return None
    as_run = node_check.as_run(spec, driver)
    return as_run if node_check.refuses(as_run, run_id) else None


def _start_services(spec, described, services, run_dir, record) -> list:
    """The services the drivers need, started (or reused) from the pool; recorded with
    those alive beside them."""
    used = [
        service
        for d in described.values()
        for service in services.ensure(
            d,
            spec.transport,
            run_dir,
            spec.options,
            spec.security,
            durable=spec.durability == "persistent",
        )
    ]
    record["services"] = [s.to_json() for s in used]
    # Also those the run does not use (a sweep stops them once no later run needs
    # them): what shared the machine with it.
    record["services_alive"] = services.alive()
    return used


@dataclass
class _Measured:
    """What the node processes left, read: their outcome, the statistics of their
    samples and the problems found, the resources sampler, the UDP counters around."""

    result: runner.RunResult
    stats: dict
    problems: list[str]
    sampler: "_Sampler"
    datagrams: tuple


def _measure(spec, run_id, run_dir, commands, described, services, used, network, record,
             on_started, on_progress, clocks_before) -> _Measured:  # fmt: skip
    """The node processes launched and ended (a broker restarted meanwhile if asked),
    the network's and clocks' figures recorded, the samples read."""
    cleanups = [
        c for d in described.values() if (c := manifests.cleanup_command(d.get("name", "")))
    ]
    datagrams_before = udp_datagrams_sent()
    links_before = network.traffic() if isinstance(network, EmulatedNetwork) else None
    sampler = _Sampler(used)
    restarter = _restarter(spec, services, used)
    sent_to = []  # the machines this run's credentials were copied to
    result = None
    try:
        if security.secured(spec.security) and isinstance(network, SshNetwork):
            _send_credentials(spec, run_id, network, sent_to)
        result = _launch(run_id, run_dir, commands, spec, on_started, cleanups,
                         on_progress, sampler, restarter, network)  # fmt: skip
    finally:
        if sent_to:  # fetched and removed by now, unless the run broke off first
            record["remote_files_left"] = network.remove_run(run_id, sent_to) or None
        if restarter is not None:
            if result is not None and result.status == "interrupted":
                restarter.abandon()  # Ctrl-C: nothing started behind its back
            record["restart"] = restarter.finish()
            record["services"] = [s.to_json() for s in used]  # its new pid
    datagrams_after = udp_datagrams_sent()
    if links_before is not None:
        record["network"]["traffic"] = link_traffic(links_before, network.traffic())
    if isinstance(network, SshNetwork):
        record["clock"] = clock_record(spec, clocks_before, *read_after(network))
    stats, problems = _analyse(run_dir, result.summaries, record.get("clock"))
    if spec.kind == "graph" and result.status != "refused":
        record["graph"], unread = graph_figures(
            graph_of(spec), spec.mapping, run_dir, result.summaries,
            record.get("clock"), spec.place,
        )  # fmt: skip
        problems += unread
    return _Measured(result, stats, problems, sampler, (datagrams_before, datagrams_after))


def _verdict(spec, run_id, run_dir, measured: _Measured, record, faulty, services,
             used) -> MeasureOutcome:  # fmt: skip
    """The run's status and message from the nodes' own and every check of the results:
    samples that disagree, counts that do not add up, a security fault that was not
    refused, a broker restart that failed, a service that died."""
    result, problems = measured.result, measured.problems
    status, message = result.status, result.message
    accounting = samples_accounting.reconcile(result.summaries) if spec.kind == "pubsub" else {}
    late_joiners = _settled(
        samples_accounting.late_join(result.summaries), run_dir, result.summaries
    )
    problems += [p for a in accounting.values() for p in a["problems"]]
    if status == "ok" and problems:
        status, message = "failed", "; ".join(problems)
    unaccounted = samples_accounting.incomplete_message(accounting)
    if status == "ok" and unaccounted:
        status, message = "incomplete", unaccounted
    if faulty:
        status, message = _faulted(status, message, result.summaries, faulty, run_id)
    if security.secured(spec.security):
        security.session().forget_run(run_id)
    if record.get("restart") is not None:
        record["restart"] = _restart_record(record["restart"], run_dir, result.summaries,
                                            accounting)  # fmt: skip
        if record["restart"]["error"] and status not in ("interrupted", "refused"):
            status, message = "failed", f"the broker restart failed: {record['restart']['error']}"
    died = services.casualties(used) if services is not None else []
    if died and status != "interrupted":
        # Whatever the nodes made of it, a run whose broker died is not a measurement.
        status = "failed"
        message = "; ".join(died + ([message] if message else []))
    return MeasureOutcome(
        spec=spec,
        run_id=run_id,
        run_dir=run_dir,
        status=status,
        message=message,
        summaries=result.summaries,
        stats=measured.stats,
        problems=problems,
        cpu_sharing=record["cpu_sharing"],
        accounting=accounting,
        network=record["network"],
        graph=record.get("graph"),
        restart=record.get("restart"),
        late_join=late_joiners,
    )


def _final_record(record: dict, spec: MeasureSpec, outcome: MeasureOutcome,
                  measured: _Measured, network) -> None:  # fmt: skip
    """run.json's fields written at the end (results/run_record.py AT_END), and the
    outcome's copies of those it carries."""
    result, summaries = measured.result, outcome.summaries
    record.update(
        status=outcome.status,
        message=outcome.message,
        finished_utc=rundir.utc_now(),
        processes=[p.to_json() for p in result.processes],
        exit_codes=result.exit_codes,
        summary_errors=result.summary_errors,
        leftovers_removed=result.leftovers_removed,
        cleanup=result.cleanup,
        problems=outcome.problems,
        stats=outcome.stats,
        accounting=outcome.accounting,
        late_join=outcome.late_join or None,
        # The kernel's counters are per network namespace: this one's say nothing of hosts'.
        udp_datagrams=None
        if network is not None
        else datagrams_per_sample(*measured.datagrams, summaries),
        throughput=(throughput(summaries, outcome.accounting) if spec.kind == "pubsub" else None),
        resources=measured.sampler.result(*resources.window_messages(spec.kind, summaries))
        if not isinstance(network, SshNetwork)
        else {
            "measured": False,
            "why": "the nodes ran on real machines; psbench reads the resources of its "
            "own machine's processes only",
        },
    )
    outcome.throughput = record["throughput"]
    outcome.udp_datagrams = record["udp_datagrams"]
    outcome.resources = record["resources"]


def link_traffic(before: dict, after: dict) -> dict:
    """What each emulated host's link carried while the run's processes lived (their
    discovery, warm-up, measurement and end markers; a broker's traffic too where one
    serves from a host): bytes and packets each way, headers and all."""
    return {
        "counted": "from the nodes' start to their end, on each host's interface",
        "hosts": {
            host: {key: after[host][key] - before[host][key] for key in before[host]}
            for host in before
        },
    }


def _security_record(spec: MeasureSpec) -> dict | None:
    """What run.json keeps of the run's security: its mode, a fault injected, and which
    CA vouched for it (a fingerprint; no key or certificate is kept with the results)."""
    if not security.secured(spec.security):
        return None
    return {
        "mode": spec.security,
        "fault": spec.security_fault,
        "ca_sha256": security.session().authority().fingerprint,
    }


def _faulted(status, message, summaries: dict, faulty: dict, run_id: str):
    """A run given bad credentials on purpose must fail with its receivers empty-handed:
    its status says which way it went, and why in openssl's words."""
    why = "; ".join(security.session().diagnosis(run_id, faulty))
    received = {n: (summaries.get(n) or {}).get("counts", {}).get("received") for n in faulty}
    got = {n: r for n, r in received.items() if r}
    if status == "ok" or got:
        leak = ", ".join(f"{n} received {r}" for n, r in got.items()) or "the run succeeded"
        return "failed", (
            f"security fault {', '.join(sorted(set(faulty.values())))} injected but "
            f"{leak}: bad credentials were not refused ({why})"
        )
    return status, f"{message or status}; security fault (test hook): {why}"


def _launch(run_id, run_dir, commands, spec, on_started, cleanups, on_progress, sampler,
            restarter, network):  # fmt: skip
    def on_window(edge, proc, procs):
        sampler.on_window(edge, proc, procs)
        if restarter is not None:
            restarter.on_window(edge)

    return runner.launch(
        run_id,
        run_dir,
        commands,
        barrier=True,
        start_after={
            plan.name: plan.start_after for plan in spec.processes() if plan.start_after is not None
        },
        on_started=on_started,
        cleanup_commands=cleanups,
        on_progress=on_progress,
        on_window=on_window,
        on_stopped=(lambda: network.fetch(run_id, run_dir))
        if isinstance(network, SshNetwork)
        else None,
        **_timeouts(spec),
    )


def _settled(late_joiners: dict, run_dir: Path, summaries: dict) -> dict:
    """Each late joiner that joined in the publisher's pause: how many samples written
    before the pause were still on their way to the run's own subscribers when it joined
    (results/late_join_settled.py); any, and the pause does not frame its history."""
    windows = [(s.get("injected") or {}).get("delay_window_ns") for s in summaries.values()]
    began = min((w[0] for w in windows if w), default=None)
    subscribers = {n: summaries[n] for n in subscriber_names(summaries)}
    for block in late_joiners.values():
        if block.get("in_pause") and began is not None:
            block["before_pause_after_join"] = still_on_their_way(
                run_dir, subscribers, block["joined_ns"], began
            )
    return late_joiners


def _restarter(spec: MeasureSpec, services, used) -> BrokerRestart | None:
    if spec.restart_broker is None:
        return None
    if services is None:
        raise UserError(f"restart_broker: {NO_BROKER_TO_RESTART}", 2)
    return BrokerRestart(services, broker_of(used), *restart_times(spec.restart_broker))


def _restart_record(restart: dict, run_dir: Path, summaries: dict, accounting: dict) -> dict:
    """run.json's restart block with each receiver's side of it and the writers' errors."""
    restart = dict(restart)
    restart["write_errors"] = sum(
        (summaries[n].get("counts") or {}).get("write_errors") or 0
        for n in publisher_names(summaries)
    )
    restart["receivers"] = {}
    if not restart["done"]:
        return restart
    for name, a in accounting.items():
        path = run_dir / f"{name}.samples"
        if not path.exists():
            continue
        latency_from = (summaries[name].get("config") or {}).get("latency_from", "intended")
        restart["receivers"][name] = restart_figures.figures(
            read_samples(path), latency_from, restart, a["published"]
        ) | {"lost": a["lost"], "duplicated": a["duplicated"], "received": a["received"],
             "published": a["published"]}  # fmt: skip
    return restart


def _check_cpus(spec: MeasureSpec, network: SshNetwork) -> None:
    """A CPU pinned on a real machine is one it has (its count, as it said)."""
    for plan in spec.processes():
        host = network.hosts[placement.host_of(spec, plan)]
        cpu = cpu_of(spec, plan.name, plan.roles[0])
        if cpu is not None and host.probe.cpus and cpu >= host.probe.cpus:
            raise UserError(
                f"cpus: {plan.name} is pinned to CPU {cpu}, but host {host.name} "
                f"({host.target}) has CPUs 0-{host.probe.cpus - 1}",
                2,
            )


class _Sampler:
    """The resources sampler of one run: its node processes as the runner knows them
    at each WINDOW line, and the services it uses."""

    def __init__(self, services):
        self.services = [
            resources.service_to_watch(s.definition.name, s.proc.pid if s.proc else None)
            for s in services
        ]
        self.nodes: list = []
        self.window = resources.WindowSampler(
            lambda: (
                [
                    resources.Watched(p.label, "node", p.popen.pid)
                    for p in self.nodes
                    if p.popen is not None
                ]
                + self.services
            )
        )

    def on_window(self, edge: str, proc, procs) -> None:
        self.nodes = procs
        # The end is read once every process that says when its window ends has said so.
        announcing = sum(1 for p in procs if p.popen is not None and WINDOW_ARGV[0] in p.argv)
        self.window.on_window(edge, ends_expected=announcing)

    def result(self, messages, unit, node_window_ns) -> dict:
        return self.window.result(messages, unit, node_window_ns)


def _planned(commands) -> list[dict]:
    return [{"name": n, "roles": r, "argv": a} for n, r, a in commands]
