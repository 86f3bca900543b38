"""Durability across a broker restart: a reliable, durability-persistent pub/sub run at
200 Hz for 20 s whose broker is killed (SIGKILL, a crash) mid-stream and started again on its
port, configuration and data (`--restart-broker AT:DOWN`, run/broker_restart.py). What
the publisher wrote (its writes the client accepted) is counted at the subscriber: lost,
duplicated, and when deliveries came back after the kill.

yes: nothing the publisher wrote was lost and deliveries came back; partial: they came
back, some was lost (counted, with the ranges); no: nothing came after the restart (the
run's message says why, e.g. a reader that did not survive the broker). Writes the
client refused while the broker was down are the application's to retry: counted beside,
not lost. A driver that refuses durability persistent, or a middleware with no broker,
is not applicable, with its manifest's documented claim ([claims.restart]) beside."""

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
from psbench.run.spec import MeasureSpec

NAME = "restart"
TITLE = "durability across a broker restart"
RATE_HZ = 200
DURATION_S, QUICK_DURATION_S = 20.0, 12.0  # long past a broker slow to start again
RESTART, QUICK_RESTART = "4:1", "2:1"  # killed AT s into the measurement, DOWN s down


def spec_for(driver: str, library, quick: bool) -> MeasureSpec:
    return MeasureSpec(
        kind="pubsub",
        driver=driver,
        driver_path=library,
        size=64,
        duration=QUICK_DURATION_S if quick else DURATION_S,
        rate=float(RATE_HZ),
        reliability="reliable",
        durability="persistent",
        restart_broker=QUICK_RESTART if quick else RESTART,
        # The idle timeout is left to psbench: past the downtime and the broker's start.
        timeout=180.0,
    )


def experiment_text(quick: bool) -> str:
    return (f"pubsub --rate {RATE_HZ} --duration {QUICK_DURATION_S if quick else DURATION_S:g} "
            f"--reliability reliable --durability persistent --restart-broker "
            f"{QUICK_RESTART if quick else RESTART}")  # fmt: skip


def judge(
    driver: str,
    status: str,
    message: str | None,
    restart: dict | None,
    claim=None,
    run_dir: str | None = None,
    experiment: str | None = None,
) -> Verdict:
    """status, message: the run's ("no broker": none was run, message says why);
    restart: its run.json restart block (None: no run)."""

    verdict = with_claim(NAME, driver, claim, experiment, run_dir)

    if status == "no broker":
        return verdict(NOT_APPLICABLE, f"no broker to restart: {message}")
    if status == "refused":
        return verdict(NOT_APPLICABLE, f"refused durability persistent: {message}")
    if restart is None or not restart.get("done") or not restart.get("receivers"):
        why = (restart or {}).get("error") or (restart or {}).get("why_not") or message or "-"
        return verdict(NOT_TESTABLE, f"the restart was not measured (the run ended "
                       f"{status}): {why}")  # fmt: skip
    r = next(iter(restart["receivers"].values()))
    figures = {k: r.get(k) for k in ("published", "received", "lost", "duplicated",
                                     "recovery_s", "reconnect_s", "missing_ranges",
                                     "written_before_kill_arrived_after")}  # fmt: skip
    figures |= {"write_errors": restart.get("write_errors"), "status": status,
                "down_s": round((restart["ready_ns"] - restart["killed_ns"]) / 1e9, 3)}  # fmt: skip
    refused = (f"; {restart['write_errors']:,} writes refused while it was down"
               if restart.get("write_errors") else "")  # fmt: skip
    if r.get("recovery_s") is None:
        return verdict(NO, f"nothing arrived after the broker served again (run ended "
                       f"{status}: {message or '-'}){refused}", figures)  # fmt: skip
    if r.get("published") is None or r.get("lost") is None:
        return verdict(NOT_TESTABLE, f"deliveries came back {r['recovery_s']:.2f} s after "
                       f"the kill, but what was written is not known (run ended {status}: "
                       f"{message or '-'})", figures)  # fmt: skip
    text = (f"broker killed (SIGKILL) mid-stream: {r['received']:,} of {r['published']:,} "
            f"written arrived, {r['lost']:,} lost, {r['duplicated']:,} duplicated; deliveries "
            f"again {r['recovery_s']:.2f} s after the kill{refused}")  # fmt: skip
    if r["lost"]:
        ranges = ", ".join(f"{a}-{b}" for a, b in r["missing_ranges"])
        return verdict(PARTIAL, f"{text} (missing seq {ranges})", figures)
    return verdict(YES, text, figures)


def assess(ctx: Context) -> dict[str, Verdict]:

    def assess_one(driver: str) -> Verdict:
        manifest = manifests.load(driver)
        claim = manifest.claims.get(NAME)
        if manifest.architecture != "broker":
            return judge(driver, "no broker", f"its architecture is {manifest.architecture}",
                         None, claim)  # fmt: skip
        return _measured(ctx, driver, claim)

    return ctx.each_driver(NAME, assess_one)


def _measured(ctx: Context, driver: str, claim) -> Verdict:
    experiment = experiment_text(ctx.quick)
    try:
        outcome = ctx.run(NAME, spec_for(driver, ctx.libraries[driver], ctx.quick))
    except UserError as exc:  # a setting psbench itself refuses for this driver
        return judge(driver, "refused", str(exc), None, claim, experiment=experiment)
    return judge(driver, outcome.status, outcome.message, outcome.restart, claim,
                 str(outcome.run_dir), experiment)  # fmt: skip
