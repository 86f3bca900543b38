"""Vanderbilt 2006 (Parsons, Xiong, Schmidt, Edmondson, Nguyen, Ajiboye, "Evaluating the
Performance of Pub/Sub Platforms for Tactical Information Management", slides of July
2006), reproduced: average round-trip latency and jitter against sequence length for a
sequence of bytes and a sequence of the complex type (1-to-1, an acknowledgement back),
throughput in KB/s of 1-to-4/8/12 subscribers over unicast and multicast, and listener
against waitset throughput.

The slides plot every result without printing its values, so the published side is the
method and the statements the slides make about their plots
(experiments/seeds/vanderbilt2006.published.yaml), each checked against our runs in the
section *The paper's statements*.

Latency is the round trip (the paper's "avg. round-trip latency"), message out and a
32-byte acknowledgement back, on ping's clock; jitter is its standard deviation; every
sample of a configuration pooled over repetitions. A sequence of L bytes is a message of
L + 32 bytes (psbench's header first). Throughput is on the subscribers' clocks: each
subscriber's received messages per second of receiving times the sequence length; KB/s =
1000 bytes per second; "per subscriber" is the mean over the N subscribers.
"""

import numpy as np

from psbench.report.plots import PANEL_INCHES, STYLE, Drawing, _panels
from psbench.report.tables import Column, Table
from psbench.reproduce.common import Section, not_testable, published_marker, where_measured
from psbench.results.configs import Config, build_configs
from psbench.results.load import ResultSet

NAMES = {"cyclonedds": "Cyclone DDS", "fastdds": "Fast DDS"}
HEADER = 32  # psbench's header: a sequence of L bytes is a message of L + 32
ORDER = ("cyclonedds", "fastdds")
CAST = {"udp": "unicast", "multicast": "multicast"}
NOTIFY = {"listener": "listener", "wait": "waitset"}


def _name(driver: str) -> str:
    return NAMES.get(driver, driver)


def _paper_system(driver: str, published: dict, transport: str = "") -> str:
    """The paper's system a driver stands for; over unicast the slides compare DDS1 with
    DDS3 (DDS2 had no unicast), hence systems_unicast."""
    if transport == "udp":
        return (published.get("systems_unicast") or {}).get(driver) or "-"
    return (published.get("systems") or {}).get(driver) or "-"


def _sequence(size) -> int:
    """The byte sequence a message of `size` carries after psbench's header."""
    return int(size) - HEADER


def _rank(driver: str) -> tuple:
    return (ORDER.index(driver) if driver in ORDER else len(ORDER), driver)


def _usable(configs: list[Config], kind: str) -> list[Config]:
    return [c for c in configs if c.kind == kind and c.ok_runs]


def _is_complex(config: Config) -> bool:
    return str(config.params.get("options.type", "bytes")) == "complex"


def _elements(config: Config) -> int:
    return int(config.params.get("options.elements", 16))


# Latency ------------------------------------------------------------------------------


def _rtt(config: Config) -> dict:
    """n, average, jitter (stdev), min, max of the round trip in ns (RTT/2 doubled back),
    every sample of the configuration pooled; lost and corrupted summed."""
    values = config.pooled_ns * 2.0
    found = {
        "n": int(values.size),
        "mean": None,
        "stdev": None,
        "min": None,
        "max": None,
        "lost": config.counts.get("lost", 0),
        "corrupted": config.counts.get("corrupted", 0),
    }
    if values.size:
        found.update(
            mean=float(values.mean()),
            min=float(values.min()),
            max=float(values.max()),
            stdev=float(values.std(ddof=1)) if values.size > 1 else None,
        )
    return found


def latency_series(
    configs: list[Config], complex_type: bool
) -> dict[str, list[tuple[int, Config]]]:
    """driver -> [(sequence length, config)] sorted: bytes by sequence bytes (the message
    less psbench's header), the complex type by Outer elements."""
    found: dict[str, list[tuple[int, Config]]] = {}
    for config in _usable(configs, "ping"):
        if _is_complex(config) != complex_type or not config.pooled_ns.size:
            continue
        length = _elements(config) if complex_type else _sequence(config.size)
        found.setdefault(config.driver, []).append((length, config))
    return {
        d: sorted(p, key=lambda item: item[0])
        for d, p in sorted(found.items(), key=lambda item: _rank(item[0]))
    }


LATENCY_COLUMNS = [
    Column("n", "n", "count"),
    Column("avg round trip µs", "mean_ns", "us"),
    Column("jitter (stdev) µs", "stdev_ns", "us"),
    Column("min µs", "min_ns", "us"),
    Column("max µs", "max_ns", "us"),
    Column("lost", "lost", "count"),
    Column("corrupted", "corrupted", "count"),
]


def _latency_table(
    name: str, title: str, length: Column, series: dict, published: dict, note: str
) -> Table:
    columns = [
        Column("middleware", "middleware"),
        Column("paper's", "paper_system"),
        length,
        *LATENCY_COLUMNS,
    ]
    rows = []
    for driver, points in series.items():
        for value, config in points:
            f = _rtt(config)
            rows.append(
                [
                    _name(driver),
                    _paper_system(driver, published),
                    value,
                    f["n"],
                    f["mean"],
                    f["stdev"],
                    f["min"],
                    f["max"],
                    f["lost"],
                    f["corrupted"],
                ]
            )
    notes = [
        "round trip: the message out, the acknowledgement back, on ping's clock; "
        "jitter = standard deviation of the round trip; every sample of the "
        "configuration pooled",
        note,
    ]
    return Table(name, title, columns, rows, notes)


def _latency_drawing(bytes_series: dict, complex_series: dict, published: dict) -> Drawing:
    import matplotlib

    with matplotlib.rc_context(STYLE):
        figure, axes = _panels(2, PANEL_INCHES, 2)
        for ax, (series, what) in zip(
            axes,
            (
                (bytes_series, "sequence of bytes (bytes)"),
                (complex_series, "complex type (elements)"),
            ),
        ):
            for index, (driver, points) in enumerate(series.items()):
                xs = [value for value, _ in points]
                for stat, style in (("mean", "-"), ("stdev", ":")):
                    ys = [(_rtt(c)[stat] or np.nan) / 1000.0 for _, c in points]
                    ax.plot(
                        xs,
                        ys,
                        style,
                        marker="o",
                        color=f"C{index % 10}",
                        label=f"{_name(driver)} ({_paper_system(driver, published)}) "
                        f"{'average' if stat == 'mean' else 'jitter'}",
                    )
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel(what)
            ax.set_ylabel("round trip (µs)")
            ax.set_title(f"latency and jitter, {what.split(' (')[0]}")
            if series:
                ax.legend(fontsize=7)
    return Drawing(
        "vanderbilt2006-latency-plot",
        "Latency and jitter against sequence length",
        "Average round trip (solid) and jitter (standard deviation, dotted) of "
        "each middleware against the sequence length, log-log like the paper's "
        "plots; left a sequence of bytes (its length, psbench's header not counted), right "
        "the complex type (Outer elements). Published: plots without values.",
        figure,
    )


# Throughput -----------------------------------------------------------------------------


def _kbps(config: Config) -> dict:
    """Total and per-subscriber KB/s (1000 B/s of sequence bytes) on the subscribers'
    clocks, and loss %."""
    n = int(config.params.get("subscribers") or 1)
    rate = config.rate.get("samples_per_s")
    total = rate * _sequence(config.size) / 1000.0 if rate is not None else None
    return {
        "subscribers": n,
        "total": total,
        "per_sub": total / n if total is not None else None,
        "loss": config.rate.get("loss_percent"),
    }


def throughput_points(configs: list[Config], notify: str = "listener") -> dict[tuple, Config]:
    """(driver, transport, subscribers, size) -> config, pubsub runs in one notify mode."""
    found = {}
    for config in _usable(configs, "pubsub"):
        if config.params.get("notify") != notify:
            continue
        key = (
            config.driver,
            str(config.params.get("transport")),
            int(config.params.get("subscribers") or 1),
            int(config.size),
        )
        found[key] = config
    return found


def _throughput_drawing(points: dict[tuple, Config], published: dict) -> Drawing:
    import matplotlib

    with matplotlib.rc_context(STYLE):
        figure, axes = _panels(2, PANEL_INCHES, 2)
        for ax, transport in zip(axes, ("udp", "multicast")):
            lines = sorted(
                {(k[0], k[2]) for k in points if k[1] == transport},
                key=lambda item: (_rank(item[0]), item[1]),
            )
            for index, (driver, n) in enumerate(lines):
                keys = sorted(k for k in points if k[:3] == (driver, transport, n))
                xs = [_sequence(k[3]) for k in keys]
                ys = [_kbps(points[k])["per_sub"] or np.nan for k in keys]
                ax.plot(
                    xs,
                    ys,
                    "-",
                    marker="o",
                    color=f"C{index % 10}",
                    label=f"{_name(driver)} ({_paper_system(driver, published, transport)})"
                    f", {n} subscribers",
                )
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("sequence of bytes (bytes)")
            ax.set_ylabel("KB/s per subscriber")
            ax.set_title(CAST[transport])
            if lines:
                ax.legend(fontsize=7)
    return Drawing(
        "vanderbilt2006-throughput-plot",
        "Throughput against sequence length",
        "KB/s per subscriber (1000 bytes/s of sequence bytes, each subscriber on "
        "its own clock) against the sequence length, one line per middleware "
        "and subscriber count, unicast left and multicast right, log-log like "
        "the paper's 'Scaling Up Subscribers' plots. Published: plots without "
        "values.",
        figure,
    )


def _throughput_table(
    points: dict[tuple, Config], published: dict, where: str = "over loopback (one host)"
) -> Table:
    columns = [
        Column("middleware", "middleware"),
        Column("paper's", "paper_system"),
        Column("cast", "cast"),
        Column("subscribers", "subscribers", "count"),
        Column("sequence B", "sequence", "count"),
        Column("message B", "size", "count"),
        Column("KB/s per subscriber", "kb_per_s_per_subscriber", "rate"),
        Column("KB/s all subscribers", "kb_per_s_total", "rate"),
        Column("loss %", "loss_percent", "percent_value"),
    ]
    rows = []
    for (driver, transport, subs, size), config in sorted(
        points.items(), key=lambda item: (_rank(item[0][0]), item[0][1] != "udp", *item[0][2:])
    ):
        f = _kbps(config)
        rows.append(
            [
                _name(driver),
                _paper_system(driver, published, transport),
                CAST.get(transport, transport),
                subs,
                _sequence(size),
                size,
                _round(f["per_sub"]),
                _round(f["total"]),
                _round(f["loss"], 2),
            ]
        )
    return Table(
        "vanderbilt2006-throughput",
        "Throughput 1-to-N, unicast and multicast (slides 'Scaling Up Subscribers')",
        columns,
        rows,
        [
            "KB/s = 1000 bytes/s of sequence bytes (the message less psbench's "
            "32-byte header) received, each "
            "subscriber on its own clock; per subscriber = the mean over the N, a "
            "subscriber that received fewer than 2 messages counting 0; "
            "published back to back (rate 0), best effort, KEEP_LAST 1, listener",
            "unicast = the driver's udp transport, multicast = its multicast "
            f"transport, {where}; paper's: over unicast the "
            "slides compare DDS1 with DDS3 (DDS2 had no unicast)",
            "the publisher sends exactly its count (it does not oversend as the "
            "paper's did); loss is counted from sequence numbers",
        ],
    )


def _round(value, digits: int = 1):
    return None if value is None else round(float(value), digits)


def _waitset_table(configs: list[Config], published: dict) -> Table:
    listener = throughput_points(configs, "listener")
    wait = throughput_points(configs, "wait")
    columns = [
        Column("middleware", "middleware"),
        Column("paper's", "paper_system"),
        Column("cast", "cast"),
        Column("subscribers", "subscribers", "count"),
        Column("sequence B", "sequence", "count"),
        Column("listener KB/s per subscriber", "listener_kb_per_s", "rate"),
        Column("waitset KB/s per subscriber", "waitset_kb_per_s", "rate"),
        Column("waitset / listener", "ratio", "stat"),
        Column("listener loss %", "listener_loss", "percent_value"),
        Column("waitset loss %", "waitset_loss", "percent_value"),
    ]
    rows = []
    for key in sorted(wait, key=lambda k: (_rank(k[0]), *k[1:])):
        driver, transport, subs, size = key
        w = _kbps(wait[key])
        lst = _kbps(listener[key]) if key in listener else {"per_sub": None, "loss": None}
        ratio = (w["per_sub"] / lst["per_sub"]) if w["per_sub"] and lst["per_sub"] else None
        rows.append(
            [
                _name(driver),
                _paper_system(driver, published, transport),
                CAST.get(transport, transport),
                subs,
                _sequence(size),
                _round(lst["per_sub"]),
                _round(w["per_sub"]),
                _round(ratio, 2),
                _round(lst["loss"], 2),
                _round(w["loss"], 2),
            ]
        )
    return Table(
        "vanderbilt2006-listener-waitset",
        "Listener against waitset throughput (slide 'Impl Comparison: Listener vs. Waitset')",
        columns,
        rows,
        [
            "listener: the middleware's thread calls on_data_available and the node "
            "takes there; waitset: the node's thread blocks, then takes (Cyclone: a "
            "waitset on a read condition; Fast DDS: "
            "DataReader::wait_for_unread_message); psbench's notify listener and "
            "wait, same runs otherwise",
            "over multicast, the one transport the paper's DDS1 and DDS2 both had",
        ],
    )


# The paper's statements -------------------------------------------------------------------


def _check_multicast_above(claim: dict, points: dict) -> tuple[str, str]:
    n = int(claim["subscribers"])
    need = float(claim.get("min_fraction") or 0.75)
    parts, verdicts = [], []
    for driver in claim.get("systems") or ORDER:
        sizes = sorted({k[3] for k in points if k[0] == driver and k[2] == n})
        pairs = [
            (s, points.get((driver, "udp", n, s)), points.get((driver, "multicast", n, s)))
            for s in sizes
        ]
        pairs = [
            (_sequence(s), _kbps(u)["per_sub"], _kbps(m)["per_sub"]) for s, u, m in pairs if u and m
        ]
        # A run whose every subscriber got fewer than 2 messages has no rate.
        pairs = [(s, u, m) for s, u, m in pairs if u is not None and m is not None]
        if not pairs:
            parts.append(f"{_name(driver)}: not measured")
            continue
        above = sum(1 for _, u, m in pairs if m > u)
        parts.append(
            f"{_name(driver)} multicast above unicast at {above} of {len(pairs)} "
            f"sizes (" + ", ".join(f"{s} B {m:.0f}/{u:.0f}" for s, u, m in pairs) + ")"
        )
        verdicts.append(above / len(pairs) >= need)
    ours = f"1-to-{n}, KB/s per subscriber multicast/unicast: " + "; ".join(parts)
    if not verdicts:
        return ours, "not measured"
    return ours, "agrees" if all(verdicts) else "differs"


def _ratio_at(points: dict, driver: str, n: int) -> float | None:
    """The mean over sizes of multicast KB/s / unicast KB/s at n subscribers."""
    ratios = []
    for (d, transport, subs, size), config in points.items():
        if d == driver and transport == "multicast" and subs == n:
            other = points.get((driver, "udp", n, size))
            m, u = _kbps(config)["per_sub"], _kbps(other)["per_sub"] if other else None
            if m and u:
                ratios.append(m / u)
    return float(np.mean(ratios)) if ratios else None


def _check_gap_grows(claim: dict, points: dict) -> tuple[str, str]:
    fewer, more = int(claim["fewer"]), int(claim["more"])
    parts, verdicts = [], []
    for driver in claim.get("systems") or ORDER:
        a, b = _ratio_at(points, driver, fewer), _ratio_at(points, driver, more)
        if a is None or b is None:
            parts.append(f"{_name(driver)}: not measured")
            continue
        parts.append(f"{_name(driver)} x{a:.2f} at {fewer}, x{b:.2f} at {more}")
        verdicts.append(b > a)
    ours = "multicast/unicast KB/s (mean over sizes): " + "; ".join(parts)
    if not verdicts:
        return ours, "not measured"
    return ours, "agrees" if all(verdicts) else "differs"


def _levels_off(points: dict, driver: str, transport: str, n: int) -> tuple | None:
    """KB/s per subscriber at the largest sequence over that at a quarter of it: how much
    throughput still grows at the top of the size range (1 = levelled off)."""
    sizes = sorted(k[3] for k in points if k[:3] == (driver, transport, n))
    if len(sizes) < 2:
        return None
    top = sizes[-1]
    lower = [s for s in sizes if _sequence(s) <= _sequence(top) // 4] or sizes[:1]
    a, b = (
        _kbps(points[(driver, transport, n, lower[-1])])["per_sub"],
        _kbps(points[(driver, transport, n, top)])["per_sub"],
    )
    if not a or not b:
        return None
    return _sequence(lower[-1]), _sequence(top), b / a


def _check_levels_off_less(claim: dict, points: dict) -> tuple[str, str]:
    parts, verdicts = [], []
    for driver in claim.get("systems") or ORDER:
        for n in claim.get("subscribers") or (4,):
            uni, multi = (_levels_off(points, driver, t, int(n)) for t in ("udp", "multicast"))
            if uni is None or multi is None:
                parts.append(f"{_name(driver)} 1-to-{n}: not measured")
                continue
            parts.append(
                f"{_name(driver)} 1-to-{n} KB/s at {multi[1]} B / at {multi[0]} B: "
                f"multicast x{multi[2]:.2f}, unicast x{uni[2]:.2f}"
            )
            verdicts.append(multi[2] > uni[2])
    ours = "; ".join(parts)
    if not verdicts:
        return ours, "not measured"
    return ours, "agrees" if all(verdicts) else ("differs" if not any(verdicts) else "partly")


def _claims_table(points: dict, published: dict, where: str = "over loopback (one host)") -> Table:
    columns = [
        Column("claim", "id"),
        Column("source", "source"),
        Column("the paper says", "text"),
        Column("paper's setup", "setup"),
        Column("ours", "ours"),
        Column("verdict", "verdict"),
    ]
    rows = []
    for claim in published.get("claims") or []:
        kind = claim.get("kind")
        if kind == "multicast_above":
            ours, verdict = _check_multicast_above(claim, points)
        elif kind == "gap_grows":
            ours, verdict = _check_gap_grows(claim, points)
        elif kind == "levels_off_less":
            ours, verdict = _check_levels_off_less(claim, points)
        elif kind == "not_testable":
            ours, verdict = "-", not_testable(claim.get("reason"))
        else:
            ours, verdict = "-", f"not checked (unknown kind {kind!r})"
        rows.append(
            [
                claim.get("id"),
                claim.get("source"),
                " ".join(str(claim.get("text") or "").split()),
                claim.get("setup"),
                ours,
                verdict,
            ]
        )
    notes = [
        published_marker(published),
        "The slides plot every result without values; these statements are what they "
        f"print about the plots. Ours: {where}, every subscriber sharing this machine's "
        "cores; the paper's testbed was blades on Gigabit Ethernet.",
    ]
    notes += [
        f"{c.get('id')}: {' '.join(str(c['note']).split())}"
        for c in published.get("claims") or []
        if c.get("note")
    ]
    return Table(
        "vanderbilt2006-claims",
        "The paper's statements against our measurements",
        columns,
        rows,
        notes,
    )


# Method and runs --------------------------------------------------------------------------


def _method_table(results: ResultSet, published: dict) -> Table:
    method = published.get("method") or {}
    pings = [r for r in results.runs if r.kind == "ping"]
    pubs = [r for r in results.runs if r.kind == "pubsub"]

    def values(runs, key):
        found = {r.params.get(key) for r in runs if r.params.get(key) is not None}
        ordered = sorted(found, key=lambda v: (0, float(v), "") if _number(v) else (1, 0, str(v)))
        return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in ordered) or "-"

    rows = [
        ["primer samples", method.get("primer_samples"), values(pings, "warmup")],
        ["stats samples", method.get("stats_samples"), values(pings, "count")],
        [
            "acknowledgement bytes",
            method.get("ack_bytes"),
            values(pings, "reply_size") + " (psbench's header; complex: the whole sample)",
        ],
        [
            "sequence lengths",
            method.get("sequence_lengths"),
            "bytes: "
            + ", ".join(
                str(_sequence(s))
                for s in sorted(
                    {int(r.params["size"]) for r in pings if "options.type" not in r.params}
                )
            )
            + " B; complex: "
            + values([r for r in pings if r.params.get("options.type")], "options.elements")
            + " elements",
        ],
        [
            "subscribers",
            ", ".join(map(str, method.get("subscribers") or [])),
            values(pubs, "subscribers"),
        ],
        [
            "throughput settings",
            method.get("dds1_throughput_settings"),
            f"notify {values(pubs, 'notify')}; history {values(pubs, 'history')}; "
            f"{values(pubs, 'reliability')}; rate {values(pubs, 'rate')} (back to back); "
            f"{values(pubs, 'count')} samples",
        ],
        [
            "transports",
            "DDS1 unicast and multicast, DDS2 broadcast and multicast",
            values(pubs, "transport"),
        ],
    ]
    return Table(
        "vanderbilt2006-method",
        "The paper's method against this run",
        [Column("what", "what"), Column("paper", "paper"), Column("ours", "ours")],
        rows,
        [
            "a sequence of L bytes is a message of L + 32 bytes: psbench's "
            "32-byte header, then the sequence"
        ],
    )


def _number(value) -> bool:
    try:
        float(value)
        return True
    except (TypeError, ValueError):
        return False


def _runs_table(results: ResultSet) -> tuple[Table, list[str]]:
    columns = [
        Column("run", "run", "count"),
        Column("label", "label"),
        Column("middleware", "middleware"),
        Column("version", "version"),
        Column("status", "status"),
    ]
    rows, notes = [], []
    for run in results.runs:
        version = ((run.run_record or {}).get("driver") or {}).get("version")
        rows.append([run.number, run.label, _name(run.driver), version, run.status])
        if run.status != "ok":
            notes.append(
                f"run {run.number} ({run.label}) is {run.status}, left out of every "
                f"table: {run.message or 'no message'}"
            )
    return Table("vanderbilt2006-runs", "Runs and versions", columns, rows, []), notes


# The sections -----------------------------------------------------------------------------


def sections(results: ResultSet, published: dict) -> list[Section]:
    configs = build_configs(results)
    bytes_series = latency_series(configs, complex_type=False)
    complex_series = latency_series(configs, complex_type=True)
    points = throughput_points(configs, "listener")
    marker = published_marker(published)

    method = Section(
        "Method",
        [_method_table(results, published)],
        [],
        [
            "Paper: DDS1, DDS2, DDS3 (anonymised products of 2006) on ISISlab "
            "blades; ours: Cyclone DDS for DDS1 and Fast DDS for DDS2 on this "
            "host (experiments/seeds/vanderbilt2006.yaml says why); DDS3 and the "
            "non-DDS services (CORBA Notification, SOAP, JMS) are not reproduced.",
            marker,
        ],
    )
    latency_notes = [
        "Paper: slides 'Latency' and 'Jitter', simple and complex data type, "
        "1-to-1 on one blade, 100 primer and 10,000 stats samples, a 4-byte "
        "ack; log-log plots, no values printed.",
        "Ours: a 32-byte ack (psbench's header) for bytes; for the complex "
        "type the answer is the whole complex sample (the driver builds every "
        "sample of N elements), so it is marshalled both ways: our complex "
        "round trip does about twice the paper's work.",
        marker,
    ]
    latency = Section(
        "Latency and jitter: sequence of bytes and complex type",
        [
            _latency_table(
                "vanderbilt2006-latency-bytes",
                "Round-trip latency and jitter, sequence of bytes",
                Column("sequence B", "sequence", "count"),
                bytes_series,
                published,
                "sequence: the bytes after psbench's 32-byte header (the message is "
                "32 bytes longer)",
            ),
            _latency_table(
                "vanderbilt2006-latency-complex",
                "Round-trip latency and jitter, sequence of the complex type",
                Column("elements", "elements", "count"),
                complex_series,
                published,
                "elements: Outer elements of sequence<Outer{long length; "
                "sequence<Inner{string info; long index}>}>, 4 Inner each (psbench's "
                "choice; the slides give the IDL only); the answer is the whole "
                "complex sample, not the paper's 4-byte ack: both directions carry "
                "N elements",
            ),
        ],
        [_latency_drawing(bytes_series, complex_series, published)]
        if bytes_series or complex_series
        else [],
        latency_notes
        if bytes_series or complex_series
        else latency_notes + ["no ok latency runs: nothing to show"],
    )
    throughput = Section(
        "Scaling up subscribers: throughput 1-to-N over unicast and multicast",
        [_throughput_table(points, published, where_measured(results))],
        [_throughput_drawing(points, published)] if points else [],
        [
            "Paper: slides 'Scaling Up Subscribers', KB/s against bytes for 4, 8 and 12 "
            "subscribers, DDS1 unicast and multicast, DDS2 broadcast and multicast, DDS3 "
            "unicast; plots, no values printed.",
            f"Ours: every subscriber a process, {where_measured(results)}, all on this "
            "machine's cores; with more processes than cores the run is oversubscribed "
            "(run.json's cpu_sharing).",
            marker,
        ],
    )
    waitset = Section(
        "Listener against waitset",
        [_waitset_table(configs, published)],
        [],
        [
            "Paper: DDS1 and DDS2, listener and waitset, KB/s (the x axis is "
            "not given in the text); plot, no values printed, and no statement "
            "about which is higher.",
            marker,
        ],
    )
    claims = Section(
        "The paper's statements",
        [_claims_table(points, published, where_measured(results))],
        [],
        [
            "Each statement the slides make about their plots, with our figure "
            "for it and whether they agree."
        ],
    )
    runs, run_notes = _runs_table(results)
    return [
        method,
        latency,
        throughput,
        waitset,
        claims,
        Section("Runs and versions", [runs], [], run_notes),
    ]
