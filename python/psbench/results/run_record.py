"""run.json, defined once: the record `psbench ping|pubsub|graph run` writes in each run
folder (run/measure.py) and every reader takes back. docs/run.schema.json (a JSON Schema)
and docs/run-json.md (the field list) are generated from these types
(scripts/run-json-docs), and the tests validate every run.json they make against it.

A field's Annotated string says what it holds. A block typed as a TypedDict is closed (no
other keys); one typed dict[str, Any] is another part's own record, defined where the
docstring says. NotRequired with AT_END: written when the run ended (a status of
ENDED); NotRequired alone: only in the runs that have it (a graph, real machines, ...).
Older run folders may lack fields added since: readers keep using .get for those."""

from typing import Annotated, Any, Literal, NotRequired, TypedDict, get_args

RUN_FORMAT = "psbench-run/1"

# The statuses of a run that went to its end: the AT_END fields are there. A run that
# stopped on an exception of psbench's own ("error", or "interrupted" by Ctrl-C before
# the nodes were reaped) keeps what it had then.
Status = Literal[
    "starting", "running", "ok", "failed", "crashed", "timeout", "refused", "incomplete",
    "interrupted", "error",
]  # fmt: skip
ENDED = ("ok", "failed", "crashed", "timeout", "refused", "incomplete")
STATUSES: tuple[str, ...] = get_args(Status)


class _AtEnd:
    """The marker of a field written when the run ended."""

    def __repr__(self) -> str:
        return "AT_END"


AT_END = _AtEnd()

Counted = int | None  # a count a summary may not have (an older node, a role without it)
Number = float | None


class Process(TypedDict):
    name: Annotated[str, "the output name (ping, sub-2, ping+pong for intra, a graph module)"]
    roles: Annotated[list[str], "the roles it runs"]
    argv: Annotated[list[str], "the exact command line"]
    pid: NotRequired[Annotated[int | None, "once started"]]
    exit_code: NotRequired[Annotated[int | None, "negative: the signal that ended it"]]
    killed_by_launcher: NotRequired[Annotated[bool, "psbench stopped it (a timeout)"]]
    ready: NotRequired[Annotated[bool, "it said READY"]]
    stderr_file: NotRequired[Annotated[str, "its stderr, in the run folder"]]


class Service(TypedDict):
    name: Annotated[str, "the service, as its definition names it"]
    host: Annotated[str | None, "the emulated host or machine it ran on; null: this one"]
    started_by_psbench: Annotated[bool, "false: one already running was used"]
    pid: Annotated[int | None, "its process"]
    address: Annotated[str | None, "where it listens"]
    version: Annotated[str | None, "its version, as it says"]
    argv: Annotated[list[str] | None, "how it was started"]
    log: Annotated[str | None, "its output file"]
    prepared_in_s: Annotated[Number, "time to write its configuration"]
    started_in_s: Annotated[Number, "time until it served"]
    security: Annotated[str | None, "its security mode (tls, ...)"]
    durable: Annotated[bool, "it keeps its data on disk (durability persistent)"]
    restarts: Annotated[int, "times psbench restarted it (--restart-broker)"]


class ServiceAlive(TypedDict):
    key: Annotated[str, "the pool's key of the service"]
    name: Annotated[str, "the service"]
    pid: Annotated[int | None, "its process"]


class CpuSharing(TypedDict):
    roles: Annotated[int, "roles (processes, or threads of an intra node)"]
    cpus: Annotated[int, "CPUs they run on"]
    pinned: Annotated[bool, "every role pinned"]
    oversubscribed: Annotated[float | None, "roles per CPU (on the busiest one), if over 1"]
    spinning_per_cpu: Annotated[float | None, "the same for the roles that busy-wait"]


class Security(TypedDict):
    mode: Annotated[str, "the driver's security mode"]
    fault: Annotated[str | None, "bad credentials injected (a test hook)"]
    ca_sha256: Annotated[str, "the fingerprint of the CA that vouched for the run"]


class Cleanup(TypedDict):
    argv: Annotated[list[str], "the driver's cleanup command"]
    exit_code: Annotated[int | None, "null: it could not run"]
    error: Annotated[str | None, "its stderr's tail, or why it did not run"]


class Accounting(TypedDict):
    writers: Annotated[list[str], "the publishers it heard"]
    published: Annotated[Counted, "what they say they sent"]
    received: Annotated[int, "distinct samples that arrived"]
    corrupted: Annotated[int, "arrivals whose payload failed --check-pattern"]
    duplicated: Annotated[int, "arrivals of a sample already received"]
    beyond_capacity: Annotated[int, "arrivals not kept (beyond the samples file's capacity)"]
    lost: Annotated[Counted, "published - received, when the count is complete"]
    unaccounted: Annotated[Counted, "what cannot be told lost or not (an incomplete count)"]
    complete: Annotated[bool, "every writer's count is known"]
    ended_by: Annotated[str | None, "what ended the receiver (count, end markers, ...)"]
    problems: Annotated[list[str], "counts that do not add up"]


class SubscriberThroughput(TypedDict):
    samples_per_s: Annotated[Number, "(received - 1) / (last arrival - first arrival)"]
    mbit_per_s: Annotated[Number, "the same in Mbit/s of whole messages"]
    received: Annotated[Counted, "samples received"]
    received_bytes: Annotated[Counted, "their bytes"]
    beyond_capacity: Annotated[Counted, "arrivals not kept"]
    sent: Annotated[Counted, "what its writers sent"]
    lost: Annotated[Counted, "of those, not received"]
    loss_percent: Annotated[Number, "lost / sent"]
    bin_ns: Annotated[Counted, "the per-second series' bin"]
    per_bin: Annotated[list[int] | None, "arrivals per bin"]


class PublisherThroughput(TypedDict):
    achieved_rate_hz: Annotated[Number, "its rate on its own clock"]
    offered_rate_hz: Annotated[Number, "the rate asked of it"]
    sent: Annotated[Counted, "samples written"]
    sent_bytes: Annotated[Counted, "their bytes"]
    bin_ns: Annotated[Counted, "the per-second series' bin"]
    per_bin: Annotated[list[int] | None, "writes per bin"]


class Throughput(TypedDict):
    subscribers: Annotated[dict[str, SubscriberThroughput], "per subscriber"]
    aggregate_samples_per_s: Annotated[Number, "the subscribers' rates summed"]
    aggregate_mbit_per_s: Annotated[Number, "the same in Mbit/s"]
    loss_percent: Annotated[Number, "lost / sent over all subscribers"]
    publishers: Annotated[dict[str, PublisherThroughput], "per publisher"]


class UdpDatagrams(TypedDict):
    datagrams: Annotated[int, "UDP datagrams the network namespace sent during the run"]
    messages_written: Annotated[int, "measured messages written, warm-up included"]
    per_message: Annotated[Number, "datagrams / messages_written"]
    scope: Annotated[str, "what is counted, in words"]


class Restart(TypedDict):
    at_s: Annotated[float, "seconds into the measurement window the broker was killed"]
    down_s: Annotated[float, "seconds it stayed down"]
    signal: Annotated[str, "how it was killed (SIGKILL)"]
    service: Annotated[str, "the broker"]
    done: Annotated[bool, "killed, started and serving again, without error"]
    why_not: Annotated[str | None, "why it was not killed"]
    error: Annotated[str | None, "what went wrong in the restart"]
    window_began_ns: Annotated[int | None, "CLOCK_MONOTONIC of the window's start"]
    killed_ns: Annotated[int | None, "of the kill"]
    started_ns: Annotated[int | None, "of its start again"]
    ready_ns: Annotated[int | None, "of its serving again"]
    write_errors: NotRequired[Annotated[int, "the publishers' failed writes, summed"]]
    receivers: NotRequired[
        Annotated[dict[str, dict[str, Any]], "per receiver: results/restart_figures.py"]
    ]


class Resources(TypedDict):
    measured: Annotated[bool, "false: not read (why says why)"]
    why: NotRequired[Annotated[str, "why not measured"]]
    messages: NotRequired[Annotated[int | None, "the messages the figures are per"]]
    per: NotRequired[Annotated[str, "which messages (published, round trips)"]]
    sampled_window_ns: NotRequired[Annotated[int | None, "the window psbench read over"]]
    node_window_ns: NotRequired[Annotated[int | None, "the window the nodes reported"]]
    processes: NotRequired[
        Annotated[list[dict[str, Any]], "per process: CPU, switches, peak RSS (run/resources.py)"]
    ]
    nodes: NotRequired[Annotated[dict[str, Any], "the node processes' totals"]]
    services: NotRequired[Annotated[dict[str, Any], "the services' totals"]]
    all: NotRequired[Annotated[dict[str, Any], "both together"]]


_SUMMARY = "n, min, p50, p90, p99, p99.9, p99.99, max, mean, stdev, intervals (results/stats.py)"


class SeriesStats(TypedDict):
    unit: Annotated[Literal["ns"], "the unit of every figure"]
    rtt: NotRequired[Annotated[dict[str, Any], f"ping: the round trips: {_SUMMARY}"]]
    rtt_half: NotRequired[Annotated[dict[str, Any], "ping: RTT/2, with its method"]]
    one_way: NotRequired[Annotated[dict[str, Any], "pubsub: one-way latency, with its method"]]
    one_way_uncorrected: NotRequired[
        Annotated[dict[str, Any], "real machines: before the clock correction"]
    ]
    clock: NotRequired[Annotated[dict[str, Any], "real machines: the correction applied"]]
    late: NotRequired[Annotated[dict[str, Any], "samples sent late: count, max_ns"]]
    without_late: NotRequired[Annotated[dict[str, Any], "the figures without them"]]
    nonpositive: NotRequired[Annotated[int, "latencies <= 0 (clock trouble)"]]
    stationarity: NotRequired[
        Annotated[dict[str, Any] | None, "the drift check (results/dependence); null: too few"]
    ]
    sender_lateness: NotRequired[Annotated[dict[str, Any], "the sender's lateness to schedule"]]


class RunRecord(TypedDict):
    format: Annotated[Literal["psbench-run/1"], "the format of this file"]
    run_id: Annotated[str, "10 letters and digits; also names the run's topics and files"]
    kind: Annotated[Literal["ping", "pubsub", "graph"], "the command"]
    created_utc: Annotated[str, "when the run folder was made (ISO 8601)"]
    finished_utc: Annotated[str | None, "when the run ended; null until then"]
    cli_argv: Annotated[list[str], "the command line (an experiment's runs: psbench run's)"]
    node: Annotated[str, "the measuring node's path"]
    driver: Annotated[dict[str, Any], "the measuring driver's --describe (docs/node.md)"]
    spec: Annotated[
        dict[str, Any], "every setting as run (null: the node's default; [spec](#spec))"
    ]
    auto: Annotated[dict[str, str], "settings psbench chose, and why ({} when none)"]
    placement: Annotated[str, "inter (one process per role) or intra"]
    barrier: Annotated[Literal["stdio"], "how the processes start together"]
    cpu_sharing: Annotated[CpuSharing, "how many roles share the CPUs"]
    status: Annotated[Status, "how the run went (docs/cli.md, Status)"]
    message: Annotated[str | None, "why, when not ok"]
    processes: Annotated[list[Process], "the node processes: planned, then as run"]
    network: Annotated[
        dict[str, Any] | None,
        "emulated hosts (namespaces, links, calibration, traffic: hosts/emulated.py) or "
        "real machines (hosts/ssh.py); null: this machine only",
    ]
    env: Annotated[dict[str, Any], "the `psbench env` snapshot (run/envinfo.py)"]
    security: Annotated[Security | None, "null: an unsecured run"]
    role_drivers: NotRequired[
        Annotated[dict[str, dict[str, Any]], "a driver per role: each role's --describe"]
    ]
    services: NotRequired[Annotated[list[Service], "the services the run used"]]
    services_alive: NotRequired[
        Annotated[list[ServiceAlive], "every service of psbench's alive during it"]
    ]
    remote_files_left: NotRequired[
        Annotated[list[str] | None, "real machines: what could not be removed there"]
    ]
    restart: NotRequired[Annotated[Restart, "--restart-broker: the broker's kill and restart"]]
    clock: NotRequired[
        Annotated[dict[str, Any], "real machines: each host's clock offset (run/clock_record)"]
    ]
    graph: NotRequired[
        Annotated[dict[str, Any], "a graph run: paths, modules, edges (run/graph/figures.py)"]
    ]
    exit_codes: NotRequired[Annotated[dict[str, int | None], "per process", AT_END]]
    summary_errors: NotRequired[
        Annotated[dict[str, str], "summaries missing or unreadable, per process", AT_END]
    ]
    leftovers_removed: NotRequired[
        Annotated[list[str], "files named after the run left by a killed node, removed", AT_END]
    ]
    cleanup: NotRequired[
        Annotated[Cleanup | list[Cleanup] | None, "the driver's cleanup command", AT_END]
    ]
    problems: NotRequired[Annotated[list[str], "results problems (status failed)", AT_END]]
    stats: NotRequired[
        Annotated[dict[str, SeriesStats], "per summary name, all_subs for all together", AT_END]
    ]
    accounting: NotRequired[
        Annotated[dict[str, Accounting], "pubsub: each receiver's samples reconciled", AT_END]
    ]
    late_join: NotRequired[
        Annotated[
            dict[str, dict[str, Any]] | None,
            "each late joiner's history (results/accounting.py late_join)",
            AT_END,
        ]
    ]
    udp_datagrams: NotRequired[
        Annotated[UdpDatagrams | None, "datagrams per message; null on hosts", AT_END]
    ]
    throughput: NotRequired[Annotated[Throughput | None, "pubsub; null for ping", AT_END]]
    resources: NotRequired[Annotated[Resources, "CPU, switches, memory (run/resources)", AT_END]]


UNENDED = ("starting", "running")  # a run still going, or killed before it said how it ended
_FIELDS = frozenset(RunRecord.__annotations__)


def block(record: dict | None, name: str) -> dict:
    """A block of a run.json of any age, {} where it has none (an older format, a run
    that did not end, a field null in this run). name must be a field of RunRecord: a
    misspelt key fails at once instead of reading as an empty block."""
    if name not in _FIELDS:
        raise KeyError(f"run.json has no field {name!r} (results/run_record.py)")
    value = (record or {}).get(name)
    return value if isinstance(value, dict) else {}


def driver_version(record: dict | None) -> str | None:
    """The measured middleware's version as its driver's --describe says it."""
    return block(record, "driver").get("version")
