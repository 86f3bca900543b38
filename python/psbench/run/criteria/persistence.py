"""Persistence for late joiners: a subscriber that joins after N samples were published
receives the last K of them. The late-joiner run of tests/test_late_join.py: 1 kHz,
reliable, transient_local, history keep_last:K; the publisher pauses 3 s before seq N
(an injected delay) and the late joiner starts in that pause, so exactly seq 0 to N-1
were written before it joined and the history it can get is known (docs/node.md, "Late
joiner"). A driver that cannot set a history depth (its --describe lists none) runs
without one, and its count is read against the number its manifest's claim documents
([claims.persistence] count). Refused (transient_local not offered): not applicable,
with the refusal quoted."""

from psbench.base import manifests
from psbench.base.errors import UserError
from psbench.run.criteria.context import Context
from psbench.run.criteria.verdict import (
    NO,
    NOT_APPLICABLE,
    NOT_TESTABLE,
    PARTIAL,
    YES,
    Verdict,
    with_claim,
)
from psbench.run.spec import LATE_JOINER, MeasureSpec

NAME = "persistence"
TITLE = "persistence (late joiner)"
WRITTEN_BEFORE = 1000  # seq 0-999: written before the late joiner joins
KEEP = 5  # history keep_last:5 where the driver can set it
LATE_JOIN_S = 2.5
PAUSE = "delay=1000:3000000"  # 3 s before seq 1000: the late joiner starts in it
TRIES = 3  # a busy machine can start the late joiner outside the pause: run again
MISSED_PAUSE = f"the late joiner did not join in the publisher's pause before seq {WRITTEN_BEFORE}"


def spec_for(driver: str, library, settable_history: bool, reliability: str) -> MeasureSpec:
    return MeasureSpec(
        kind="pubsub",
        driver=driver,
        driver_path=library,
        size=64,
        duration=6.0,
        rate=1000.0,
        reliability=reliability,
        durability="transient_local",
        history=f"keep_last:{KEEP}" if settable_history else None,
        late_join=LATE_JOIN_S,
        inject=[PAUSE],
        timeout=120.0,
    )


def experiment_text(settable_history: bool, reliability: str) -> str:
    history = f" --history keep_last:{KEEP}" if settable_history else ""
    return (f"pubsub --rate 1000 --duration 6 --late-join {LATE_JOIN_S:g} --inject {PAUSE} "
            f"--reliability {reliability} --durability transient_local{history}")  # fmt: skip


def judge(
    driver: str,
    status: str,
    message: str | None,
    late: dict | None,
    asked: int | None,
    documented=None,
    run_dir: str | None = None,
    experiment: str | None = None,
) -> Verdict:
    """status, message: the run's; late: the late joiner's late_join block (history,
    history_first_seq, history_last_seq); asked: the history depth asked (None: none
    could be); documented: the manifest's Claim of what the middleware keeps."""

    verdict = with_claim(NAME, driver, documented, experiment, run_dir)

    if status == "refused":
        return verdict(NOT_APPLICABLE, f"refused transient_local: {message}")
    if status != "ok" or late is None or late.get("history") is None:
        # A failed run decides nothing, even with the late joiner's record: its history
        # may be missing because it never got a reader.
        return verdict(NOT_TESTABLE, f"the run ended {status}: {message or '-'}")
    if late.get("in_pause") is False:
        # Only a join inside the pause makes "written before it joined" seq 0 to N-1.
        return verdict(NOT_TESTABLE, MISSED_PAUSE + " (the machine was too busy): run again")
    if late.get("before_pause_after_join"):
        # Samples written before the pause still on their way when it joined reach it as
        # live ones: its "history" then counts them too.
        return verdict(NOT_TESTABLE, f"{MISSED_PAUSE}: {late['before_pause_after_join']} "
                       f"written before the pause were still on their way to the run's "
                       f"subscriber when it joined (the machine was too busy): run again")  # fmt: skip
    got = int(late["history"])
    expected = asked if asked is not None else (documented.count if documented else None)
    where = (f"keep_last:{asked} asked" if asked is not None else
             f"no depth can be asked; {documented.count} documented" if documented and
             documented.count is not None else "no depth can be asked, none documented")  # fmt: skip
    seqs = (f" (seq {late.get('history_first_seq')}-{late.get('history_last_seq')})"
            if got else "")  # fmt: skip
    figures = {"written_before_join": WRITTEN_BEFORE, "history": got, "expected": expected,
               "first_seq": late.get("history_first_seq"),
               "last_seq": late.get("history_last_seq"),
               "first_live_seq": late.get("first_live_seq")}  # fmt: skip
    text = (f"joined after {WRITTEN_BEFORE:,} samples, got {got} of them as history{seqs}, "
            f"{where}")  # fmt: skip
    if got == 0:
        return verdict(NO, text + "; transient_local was asked", figures)
    if expected is not None and got == expected:
        return verdict(YES, text, figures)
    return verdict(PARTIAL, text, figures)


def assess(ctx: Context) -> dict[str, Verdict]:

    def assess_one(driver: str) -> Verdict:
        caps = ctx.describes[driver].get("capabilities") or {}
        settable = "keep_last" in (caps.get("history") or [])
        # Reliable where it is offered (no sample of the history lost on the way), so
        # that what is asked of the driver is its durability alone.
        reliability = "reliable" if "reliable" in (caps.get("reliability") or []) else "best_effort"
        spec = spec_for(driver, ctx.libraries[driver], settable, reliability)
        for _ in range(TRIES):
            found = _try(ctx, driver, spec, settable, reliability)
            if not found.evidence.startswith(MISSED_PAUSE):
                break
        return found

    return ctx.each_driver(NAME, assess_one)


def _try(ctx: Context, driver: str, spec: MeasureSpec, settable: bool, reliability: str):
    experiment = experiment_text(settable, reliability)
    try:
        outcome = ctx.run(NAME, spec)
    except UserError as exc:  # a setting psbench itself refuses for this driver
        return judge(driver, "refused", str(exc), None, None, experiment=experiment)
    late = outcome.late_join.get(LATE_JOINER)
    return judge(
        driver,
        outcome.status,
        outcome.message,
        late,
        KEEP if settable else None,
        manifests.load(driver).claims.get(NAME),
        str(outcome.run_dir),
        experiment,
    )
