"""Scalability of discovery: how long one publisher and N subscribers, each its own
process, take until all of them match, for N = 1, 10, 50 (--quick: 1, 10). Each level is
a short pubsub run (200 samples at 1 kHz, reliable where offered); it worked when every
process matched and every subscriber received samples. Time until all
matched: the latest process's matched_ns minus the earliest process's opened_ns
(CLOCK_MONOTONIC, docs/node.md; the publisher matches only once all N readers are
there); beside it the slowest process's own open to matched (results/costs.startup's
figure). As many as the machine allows, recorded: the first level that fails stops the
climb, with its message. Refused (a driver with at most one reader per topic): not
applicable, with the refusal quoted."""

from psbench.base.errors import UserError
from psbench.run import measure
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

NAME = "discovery"
TITLE = "discovery (1 to 50 subscribers)"
LEVELS = (1, 10, 50)
QUICK_LEVELS = (1, 10)
COUNT = 200  # samples per subscriber: enough to see delivery, short at 1 kHz
RATE_HZ = 1000.0
MATCH_TIMEOUT_S = 60.0  # 50 node processes starting on two cores take seconds
# Statuses that say nothing of the middleware: psbench could not run it.
NO_VERDICT = ("error", "interrupted")


def spec_for(driver: str, library, subscribers: int, reliability: str) -> MeasureSpec:
    return MeasureSpec(
        kind="pubsub",
        driver=driver,
        driver_path=library,
        size=64,
        count=COUNT,
        rate=RATE_HZ,
        reliability=reliability,
        subscribers=subscribers,
        match_timeout=MATCH_TIMEOUT_S,
        timeout=MATCH_TIMEOUT_S + 60.0,
    )


def experiment_text(levels, reliability: str) -> str:
    return (f"pubsub --subscribers {{{','.join(map(str, levels))}}} --count {COUNT} --rate "
            f"{RATE_HZ:g} --reliability {reliability} --match-timeout {MATCH_TIMEOUT_S:g}")  # fmt: skip


def all_matched_ns(summaries: dict) -> tuple[int | None, str]:
    """The latest matched_ns minus the earliest opened_ns over the run's processes, and
    what marked each end: "matched", or "first message" where the driver cannot tell
    when its peers matched (matched_ns null): then a subscriber's end is its first
    message (handshake or warm-up), which comes once it is matched and a writer reaches
    it. None when a subscriber has neither."""
    opened, ends, by = [], [], "matched"
    for summary in summaries.values():
        timing = summary.get("timing") or {}
        opened.append(timing.get("opened_ns"))
        end = timing.get("matched_ns")
        if end is None and summary.get("role") == "sub":
            end, by = timing.get("first_receive_ns"), "first message"
            if end is None:
                return None, by
        if end is not None:
            ends.append(end)
    opened = [o for o in opened if o]
    if not ends or not opened:
        return None, by
    return max(ends) - min(opened), by


def slowest_open_to_matched_ns(summaries: dict) -> int | None:
    """The slowest process's own open to matched (its timing.discovery_ns)."""
    found = [(s.get("timing") or {}).get("discovery_ns") for s in summaries.values()]
    found = [f for f in found if f is not None]
    return max(found) if found else None


def level_of(subscribers: int, outcome) -> dict:
    """One level's figures from its run: what judge() reads."""
    subs = measure.subscriber_names(outcome.summaries)
    each = [((outcome.summaries[n].get("counts") or {}).get("received") or 0) for n in subs]
    all_matched = all_matched_ns(outcome.summaries)
    return {
        "subscribers": subscribers,
        "processes": len(outcome.summaries),
        "status": outcome.status,
        "message": outcome.message,
        "all_matched_ns": all_matched[0],
        "matched_by": all_matched[1],
        "slowest_open_to_matched_ns": slowest_open_to_matched_ns(outcome.summaries),
        "delivered": sum(each),
        "least_delivered": min(each) if len(each) == subscribers else 0,
        "expected": COUNT * subscribers,
        "run_dir": str(outcome.run_dir),
    }


def _ms(ns) -> str:
    return "-" if ns is None else f"{ns / 1e6:,.0f} ms"


def _worked(level: dict) -> bool:
    """Every process matched and every subscriber got samples. Not necessarily every
    sample: reliable with the driver's default history (keep_last) lets a writer at 1 kHz
    overwrite samples a reader has not taken yet, which says nothing of discovery."""
    return (level["status"] == "ok" and level.get("all_matched_ns") is not None
            and (level.get("least_delivered") or 0) > 0)  # fmt: skip


def judge(driver: str, asked, levels: list[dict], experiment: str | None = None) -> Verdict:
    """asked: the subscriber counts asked for, in order; levels: one dict per level run,
    in order (level_of's keys; a refused one: status "refused" and its message), the
    climb stopped after the first that did not work."""
    figures = {
        "asked": list(asked),
        "levels": [
            {"subscribers": lv["subscribers"], "processes": lv.get("processes"),
             "status": lv["status"], "message": lv.get("message"),
             "matched_by": lv.get("matched_by"),
             "all_matched_ms": None if lv.get("all_matched_ns") is None
             else round(lv["all_matched_ns"] / 1e6, 3),
             "slowest_open_to_matched_ms": None if lv.get("slowest_open_to_matched_ns") is None
             else round(lv["slowest_open_to_matched_ns"] / 1e6, 3),
             "delivered": lv.get("delivered"), "least_delivered": lv.get("least_delivered"),
             "expected": lv.get("expected"),
             "run_dir": lv.get("run_dir")}
            for lv in levels
        ],
    }  # fmt: skip
    run_dir = next((lv.get("run_dir") for lv in reversed(levels) if lv.get("run_dir")), None)

    def verdict(value: str, evidence: str) -> Verdict:
        return Verdict(NAME, driver, value, evidence, experiment=experiment, figures=figures,
                       run_dir=run_dir)  # fmt: skip

    worked = []
    for level in levels:
        if not _worked(level):
            break
        worked.append(level)
    growth = ", ".join(f"{lv['subscribers']}: {_ms(lv['all_matched_ns'])}" for lv in worked)
    slowest = ", ".join(f"{lv['subscribers']}: {_ms(lv['slowest_open_to_matched_ns'])}"
                        for lv in worked)  # fmt: skip
    by_first = any(lv.get("matched_by") == "first message" for lv in worked)
    measured = (f"time until all matched, by subscribers: {growth}"
                + (" (the subscribers' first message: the driver cannot tell when it matched)"
                   if by_first else f" (slowest process's own open to matched: {slowest})")
                ) if worked else ""  # fmt: skip
    failed = levels[len(worked)] if len(worked) < len(levels) else None
    if failed is not None and failed["status"] == "refused":
        where = f"; below it {measured}" if measured else ""
        return verdict(NOT_APPLICABLE, f"{failed['subscribers']} subscriber(s) refused: "
                       f"{failed.get('message') or '-'}{where}")  # fmt: skip
    if failed is not None and failed["status"] in NO_VERDICT and not worked:
        return verdict(NOT_TESTABLE, f"the run of {failed['subscribers']} subscriber(s) ended "
                       f"{failed['status']}: {failed.get('message') or '-'}")  # fmt: skip
    if len(worked) == len(asked):
        return verdict(YES, measured)
    if failed is None:  # the climb stopped without a failure: levels not run
        missing = [n for n in asked if n not in {lv["subscribers"] for lv in levels}]
        return verdict(PARTIAL, f"{measured}; not run: {missing}")
    why = (f"{failed['subscribers']} subscriber(s) ended {failed['status']}"
           f" with {failed.get('delivered') or 0} of {failed.get('expected')} samples delivered"
           f": {failed.get('message') or 'not every process matched'}")  # fmt: skip
    if not worked:
        return verdict(NO, why)
    return verdict(PARTIAL, f"up to {worked[-1]['subscribers']} subscribers: {measured}; {why}")


def assess(ctx: Context) -> dict[str, Verdict]:
    asked = QUICK_LEVELS if ctx.quick else LEVELS
    return ctx.each_driver(NAME, lambda driver: _climb(ctx, driver, asked))


def _climb(ctx: Context, driver: str, asked) -> Verdict:
    caps = ctx.describes[driver].get("capabilities") or {}
    # Reliable where offered: a subscriber left with nothing then did not match.
    reliability = "reliable" if "reliable" in (caps.get("reliability") or []) else "best_effort"
    levels = []
    for subscribers in asked:
        spec = spec_for(driver, ctx.libraries[driver], subscribers, reliability)
        try:
            outcome = ctx.run(NAME, spec)
        except UserError as exc:  # a setting psbench itself refuses for this driver
            levels.append({"subscribers": subscribers, "status": "refused",
                           "message": str(exc)})  # fmt: skip
            break
        levels.append(level_of(subscribers, outcome))
        ctx.progress(NAME, driver, f" {subscribers} subscriber(s): {outcome.status}, all "
                     f"matched after {_ms(levels[-1]['all_matched_ns'])}")  # fmt: skip
        if not _worked(levels[-1]):
            break  # as many as the machine allows: no higher level after a failure
    return judge(driver, asked, levels, experiment_text(asked, reliability))
