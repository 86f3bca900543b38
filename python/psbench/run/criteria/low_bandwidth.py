"""Low-bandwidth operation: a publisher on emulated host a, its subscriber on host b,
b's link at 256 kbit/s with 2% loss (a broker, where the driver has one, on a: the
default), 64 B at 50 Hz for 10 s (--quick: 5 s), reliable and keep_all where offered.
From that run:
discovery (open to matched, the slowest process), time to first sample (the sub's first
message minus its start), the samples delivered, and the protocol's overhead counted on
the link (run.json network.traffic: the bytes into b per payload byte delivered). Then a
second run back to back, as fast as the sender goes (closed loop, 5 s; --quick 3 s): the
goodput, payload bits delivered per second, against the link's rate. Emulated hosts
need root: without it, not testable here; a driver that cannot cross hosts (its
transports refuse them, a per-host daemon): not applicable, with the refusal quoted."""

from psbench.base.errors import UserError
from psbench.hosts import emulated
from psbench.run.criteria.context import Context
from psbench.run.criteria.verdict import (
    NO,
    NOT_APPLICABLE,
    NOT_TESTABLE,
    PARTIAL,
    YES,
    Verdict,
)
from psbench.run.spec import MeasureSpec

NAME = "low_bandwidth"
TITLE = "low bandwidth (256 kbit/s, 2% loss)"
LINK = {"rate": "256kbit", "loss": "2%"}
LINK_BPS = 256_000
SIZE = 64
RATE_HZ = 50.0
DURATION_S, QUICK_DURATION_S = 10.0, 5.0
GOODPUT_S, QUICK_GOODPUT_S = 5.0, 3.0
# A slow link makes discovery slow: a generous bound before a run counts as never matched.
MATCH_TIMEOUT_S = 60.0
# What was offered (64 B at 50 Hz: 25.6 kbit/s of payload, a tenth of the link; a few
# times that with every header) fits the link with room to spare, so a middleware that
# operates on it delivers nearly all of it: 2% loss costs best effort about 2%, repairs
# cost reliable nothing. Below 90% it discovered but did not carry the load.
DELIVERED_YES_PERCENT = 90.0
# The goodput run's node timeout beyond its duration (discovery, warm-up, a drain): below
# the launcher's 15 s after the publisher's end, so the sub ends and writes by itself.
GOODPUT_CUT_S = 14.0
IDLE_TIMEOUT_S = 10.0
# Statuses that say nothing of the middleware: psbench could not run it.
NO_VERDICT = ("error", "interrupted")


def spec_for(driver: str, library, reliability: str, history: str | None, duration: float,
             rate: float, timeout: float) -> MeasureSpec:  # fmt: skip
    return MeasureSpec(
        kind="pubsub",
        driver=driver,
        driver_path=library,
        size=SIZE,
        duration=duration,
        rate=rate,
        reliability=reliability,
        history=history,
        hosts={"a": {}, "b": dict(LINK)},
        place={"pub": "a", "sub": "b"},
        match_timeout=MATCH_TIMEOUT_S,
        drain_timeout=5.0,
        # Repairs over a lossy 256 kbit/s link can hold a reader's next sample for
        # seconds: more than the node's default 5 s before it gives up.
        idle_timeout=IDLE_TIMEOUT_S,
        timeout=timeout,
    )


def experiment_text(reliability: str, history: str | None, duration: float,
                    goodput_s: float) -> str:  # fmt: skip
    common = (f"--host a --host b:rate=256kbit,loss=2% --place pub=a --place sub=b --size {SIZE} "
              f"--reliability {reliability}{' --history ' + history if history else ''} "
              f"--match-timeout {MATCH_TIMEOUT_S:g} --idle-timeout {IDLE_TIMEOUT_S:g}")  # fmt: skip
    return (f"pubsub {common} --rate {RATE_HZ:g} --duration {duration:g}; then "
            f"pubsub {common} --rate 0 --duration {goodput_s:g}")  # fmt: skip


def _timing(summary: dict | None) -> dict:
    return (summary or {}).get("timing") or {}


def measured_of(outcome) -> dict:
    """The first run's figures (what judge() reads) from its summaries and run.json."""
    subs, pubs = outcome.subscriber_names, outcome.publisher_names
    sub = outcome.summaries.get(subs[0]) if subs else None
    pub = outcome.summaries.get(pubs[0]) if pubs else None
    sub_timing = _timing(sub)
    started, first = sub_timing.get("started_ns"), sub_timing.get("first_receive_ns")
    counts = (sub or {}).get("counts") or {}
    discovery = [_timing(s).get("discovery_ns") for s in outcome.summaries.values()]
    link_b = (((outcome.network or {}).get("traffic") or {}).get("hosts") or {}).get("b") or {}
    return {
        "matched": bool(sub_timing.get("matched_ns")) or bool(counts.get("received")),
        "discovery_ns": max((d for d in discovery if d is not None), default=None),
        "first_sample_ns": first - started if first and started else None,
        "sent": ((pub or {}).get("counts") or {}).get("sent"),
        "delivered": counts.get("received"),
        "warmup_delivered": counts.get("warmup"),
        "rx_bytes_b": link_b.get("rx_bytes"),
        "tx_bytes_b": link_b.get("tx_bytes"),
        "rx_packets_b": link_b.get("rx_packets"),
    }


def writes_began_by_ns(summaries: dict) -> int | None:
    """A time no later than the publisher's first write: the latest of every process's
    matched_ns (opened_ns where a driver cannot tell), as the start barrier lets the
    publisher write only once all are ready. Emulated hosts share one clock."""
    ready = [(s.get("timing") or {}).get("matched_ns") or (s.get("timing") or {}).get("opened_ns")
             for s in summaries.values()]  # fmt: skip
    return None if not ready or None in ready else max(ready)


def goodput_of(outcome) -> dict:
    """The closed-loop run's payload bits delivered per second: every message the sub
    got (warm-up included, SIZE bytes each) from when writing could begin to its last
    measured arrival. Neither the measured samples' own span (run.json throughput) nor
    one from the sub's first message: a receiver that stalls while the kernel buffers
    what crossed, or a middleware that hands over a batch only once all of it crossed,
    starts that clock after part of the data went over, and it then shows more than the
    link carries."""
    subs = outcome.subscriber_names
    sub = outcome.summaries.get(subs[0]) if subs else None
    counts = (sub or {}).get("counts") or {}
    began = writes_began_by_ns(outcome.summaries)
    last = ((sub or {}).get("throughput") or {}).get("last_arrival_ns")
    received = counts.get("received")
    bits = None
    if received == 0:
        bits = 0.0  # nothing of the measured samples arrived while the run lasted
    elif received and began and last and last > began:
        bits = (received + (counts.get("warmup") or 0)) * SIZE * 8 / ((last - began) / 1e9)
    return {"status": outcome.status, "message": outcome.message, "bits_per_s": bits,
            "received": received, "run_dir": str(outcome.run_dir)}  # fmt: skip


def _ms(ns) -> str:
    return "-" if ns is None else f"{ns / 1e6:,.0f} ms"


def _figures(m: dict, goodput: dict | None) -> dict:
    payload = ((m.get("delivered") or 0) + (m.get("warmup_delivered") or 0)) * SIZE
    bits = (goodput or {}).get("bits_per_s")
    return {
        "link": "b: rate=256kbit, loss=2%",
        "discovery_ms": None if m.get("discovery_ns") is None else round(m["discovery_ns"] / 1e6, 1),
        "first_sample_ms": None if m.get("first_sample_ns") is None
        else round(m["first_sample_ns"] / 1e6, 1),
        "sent": m.get("sent"),
        "delivered": m.get("delivered"),
        "delivered_percent": round(100 * m["delivered"] / m["sent"], 2)
        if m.get("sent") and m.get("delivered") is not None else None,
        "payload_bytes_delivered": payload,
        "wire_bytes_into_b": m.get("rx_bytes_b"),
        "wire_bytes_out_of_b": m.get("tx_bytes_b"),
        "wire_bytes_into_b_per_payload_byte": round(m["rx_bytes_b"] / payload, 2)
        if payload and m.get("rx_bytes_b") is not None else None,
        "goodput_kbit_s": None if bits is None else round(bits / 1000, 1),
        "goodput_of_link_percent": None if bits is None else round(100 * bits / LINK_BPS, 1),
        "goodput_status": (goodput or {}).get("status"),
        "goodput_run_dir": (goodput or {}).get("run_dir"),
    }  # fmt: skip


CONFINED = "the driver does not run across hosts (its capabilities: crosses_hosts false)"


def judge(driver: str, status: str, message: str | None, measured: dict | None,
          goodput: dict | None = None, run_dir: str | None = None,
          experiment: str | None = None) -> Verdict:  # fmt: skip
    """status, message: the first run's ("refused": the driver or psbench refused to run
    it across hosts; "unprivileged": no emulated hosts here); measured: measured_of()'s
    keys; goodput: goodput_of()'s keys, or None when it did not run."""
    figures = {}  # a run that decides nothing has none

    def verdict(value: str, evidence: str) -> Verdict:
        return Verdict(NAME, driver, value, evidence, experiment=experiment, figures=figures,
                       run_dir=run_dir)  # fmt: skip

    if status == "unprivileged":
        return verdict(NOT_TESTABLE, f"emulated hosts cannot be made here: {message}")
    if status == "refused":
        return verdict(NOT_APPLICABLE, f"refused across hosts: {message or '-'}")
    if status in NO_VERDICT or measured is None:
        return verdict(NOT_TESTABLE, f"the run ended {status}: {message or '-'}")
    figures.update(_figures(measured, goodput))
    if not measured.get("matched"):
        return verdict(NO, f"never matched within the {MATCH_TIMEOUT_S:g} s match timeout "
                       f"across the link; the run ended {status}: {message or '-'}")  # fmt: skip
    f = figures
    overhead = f["wire_bytes_into_b_per_payload_byte"]
    found = measured.get("discovery_ns")
    text = (f"discovery {_ms(found) if found is not None else 'not reported by the driver'}"
            f", first sample after "
            f"{_ms(measured.get('first_sample_ns'))}, delivered {f['delivered']} of "
            f"{f['sent'] if f['sent'] is not None else '?'} at {RATE_HZ:g} Hz"
            f"{' (' + format(f['delivered_percent'], 'g') + '%)' if f['delivered_percent'] is not None else ''}"
            f", {overhead if overhead is not None else '?'} wire bytes into b per payload byte")  # fmt: skip
    if f["goodput_kbit_s"] is not None:
        text += (f"; goodput {f['goodput_kbit_s']:g} kbit/s of payload, "
                 f"{f['goodput_of_link_percent']:g}% of the link's 256")  # fmt: skip
        if goodput.get("status") != "ok":
            text += f" (that run ended {goodput.get('status')}: {goodput.get('message') or '-'})"
    elif goodput is not None:
        text += f"; goodput run ended {goodput.get('status')}: {goodput.get('message') or '-'}"
    if status != "ok":
        text += f"; the run ended {status}: {message or '-'}"
    percent = f["delivered_percent"]
    if percent is not None and percent >= DELIVERED_YES_PERCENT:
        return verdict(YES, text)
    return verdict(PARTIAL, text + f" (below {DELIVERED_YES_PERCENT:g}% delivered)")


def assess(ctx: Context) -> dict[str, Verdict]:
    duration = QUICK_DURATION_S if ctx.quick else DURATION_S
    goodput_s = QUICK_GOODPUT_S if ctx.quick else GOODPUT_S
    try:
        emulated.require_privileges()
        unprivileged = None
    except UserError as exc:
        unprivileged = str(exc)

    def assess_one(driver: str) -> Verdict:
        caps = ctx.describes[driver].get("capabilities") or {}
        # Reliable where offered: the repairs it costs on a lossy link are the point. It
        # keeps every sample for repair only with keep_all: keep_last:1 (a common
        # default) lets the next write replace a lost sample before it is repaired.
        reliable = "reliable" in (caps.get("reliability") or [])
        history = "keep_all" if reliable and "keep_all" in (caps.get("history") or []) else None
        reliability = "reliable" if reliable else "best_effort"
        experiment = experiment_text(reliability, history, duration, goodput_s)
        if unprivileged is not None:
            return judge(driver, "unprivileged", unprivileged, None, experiment=experiment)
        if caps.get("crosses_hosts") is False:
            # Said by the driver itself: nothing to start on a host it cannot reach (its
            # service would be started there first and fail, which is no verdict).
            return judge(driver, "refused", CONFINED, None, experiment=experiment)
        settings = (reliability, history, duration, goodput_s)
        return _measure(ctx, driver, settings, experiment)

    return ctx.each_driver(NAME, assess_one)


def _measure(ctx: Context, driver: str, settings: tuple, experiment: str) -> Verdict:
    reliability, history, duration, goodput_s = settings
    library = ctx.libraries[driver]
    try:
        outcome = ctx.run(NAME, spec_for(driver, library, reliability, history, duration,
                                         RATE_HZ, MATCH_TIMEOUT_S + duration + 30.0))  # fmt: skip
    except UserError as exc:
        # psbench refuses it across hosts (a per-host daemon), or could not set it up
        # there (a service that failed to start on its host): no verdict of the driver's.
        refused = "host" in str(exc)
        return judge(driver, "refused" if refused else "error", str(exc), None,
                     experiment=experiment)  # fmt: skip
    measured = measured_of(outcome)
    goodput = None
    if measured["matched"]:
        # Closed loop queues far more than the link carries, in the sender, the broker
        # or the kernel: the nodes' own timeout cuts the run (each writes what it got,
        # before the launcher's grace after the publisher's end would kill the sub).
        fast = ctx.run(NAME, spec_for(driver, library, reliability, history, goodput_s, 0.0,
                                      goodput_s + GOODPUT_CUT_S))  # fmt: skip
        goodput = goodput_of(fast)
    return judge(driver, outcome.status, outcome.message, measured, goodput,
                 str(outcome.run_dir), experiment)  # fmt: skip
