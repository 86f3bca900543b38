"""Routing between networks: two emulated networks that share no path (host a on one,
b on the other, r on both: docs/network.md, "Networks joined through one host"), ping
on a and pong on b, the middleware's router or broker on r. Every round trip arriving
says it routes; a control run of the same driver without its router (peer to peer, a to
b) must get nothing, so that the networks are known apart.

Only what psbench can start is tried: a broker, or a router a transport goes through
(the manifest's transport_architecture). A middleware whose router is not installable
here is "not testable here", with its manifest's documented claim beside it; a
per-host daemon's cannot cross hosts at all (not applicable)."""

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

NAME = "routing"
TITLE = "routing between networks"
HOSTS = {
    "a": {"networks": ["left"]},
    "b": {"networks": ["right"]},
    "r": {"networks": ["left", "right"]},
}
PLACE = {"ping": "a", "pong": "b", "broker": "r"}
COUNT, QUICK_COUNT = 200, 100
CONTROL_MATCH_TIMEOUT_S = 5.0  # the control must find no peer: no need to wait long


def way_through(driver: str) -> tuple[str | None, str | None]:
    """(the transport that goes through something psbench starts, or None for the
    default one; why there is none), from the manifest."""
    manifest = manifests.load(driver)
    routed = [
        t for t, kind in manifest.transport_architecture.items() if kind in ("router", "broker")
    ]
    if routed:
        return routed[0], None
    if manifest.architecture == "broker":
        return None, None
    if manifest.architecture == "per-host daemon":
        return None, "a per-host daemon's runs stay on one host"
    return None, "no router of this middleware is installable here"


def judge(
    driver: str,
    routed: tuple[str, int | None, str | None] | None,
    asked: int,
    control: tuple[str, int | None] | None = None,
    why_not: str | None = None,
    claim=None,
    run_dir: str | None = None,
    experiment: str | None = None,
) -> Verdict:
    """routed: (status, round trips received, message) through r; control: (status,
    received) of a to b without the router (None: no control run); why_not: why no
    routed run was made (refused or impossible)."""

    verdict = with_claim(NAME, driver, claim, experiment, run_dir)

    if routed is None:
        daemon = why_not and "per-host daemon" in why_not
        return verdict(NOT_APPLICABLE if daemon else NOT_TESTABLE, why_not or "not run")
    status, got, message = routed
    figures = {"asked": asked, "received": got, "status": status}
    if control is not None:
        figures.update(control_status=control[0], control_received=control[1])
        if control[1]:
            return verdict(NOT_TESTABLE, f"the control run reached b without the router "
                           f"({control[1]} round trips): the networks were not apart", figures)  # fmt: skip
    through = "through its router on r" if control is not None else "through its broker on r"
    if status == "refused":
        return verdict(NOT_APPLICABLE, f"refused: {message}", figures)
    if not got:
        return verdict(NO, f"no round trip between the two networks {through}: the run "
                       f"ended {status}: {message or '-'}", figures)  # fmt: skip
    text = f"{got} of {asked} round trips between a and b, two networks, {through}"
    if control is not None:
        text += f"; without it (control) {control[1] or 0}"
    return verdict(YES if got == asked and status == "ok" else PARTIAL, text, figures)


def _spec(driver: str, library, transport: str | None, count: int, hosts, place, **more):
    return MeasureSpec(kind="ping", driver=driver, driver_path=library, size=64, count=count,
                       warmup=100, transport=transport, hosts=hosts, place=place,
                       timeout=120.0, **more)  # fmt: skip


def _received(outcome) -> int | None:
    return ((outcome.summaries.get("ping") or {}).get("counts") or {}).get("received")


def assess(ctx: Context) -> dict[str, Verdict]:
    count = QUICK_COUNT if ctx.quick else COUNT

    def assess_one(driver: str) -> Verdict:
        transport, why_not = way_through(driver)
        claim = manifests.load(driver).claims.get(NAME)
        experiment = (f"ping --count {count} --host a:networks=left --host b:networks=right "
                      f"--host r:networks=left+right --place ping=a --place pong=b "
                      f"--place broker=r" + (f" --transport {transport}" if transport else ""))  # fmt: skip
        if why_not is not None:
            return judge(driver, None, count, why_not=why_not, claim=claim)
        return _routed(ctx, driver, transport, count, claim, experiment)

    return ctx.each_driver(NAME, assess_one)


def _routed(ctx: Context, driver, transport, count, claim, experiment) -> Verdict:
    library = ctx.libraries[driver]
    try:
        outcome = ctx.run(NAME, _spec(driver, library, transport, count, HOSTS, PLACE))
    except UserError as exc:  # no privileges for namespaces, a setting refused
        return judge(driver, None, count, why_not=f"not run: {exc}", claim=claim,
                     experiment=experiment)  # fmt: skip
    routed = (outcome.status, _received(outcome), outcome.message)
    control = None
    if transport is not None:  # the same driver without its router, a to b directly
        hosts = {h: HOSTS[h] for h in ("a", "b")}
        place = {"ping": "a", "pong": "b"}
        checked = ctx.run(NAME, _spec(driver, library, None, count, hosts, place,
                                      match_timeout=CONTROL_MATCH_TIMEOUT_S))  # fmt: skip
        control = (checked.status, _received(checked))
    return judge(driver, routed, count, control, claim=claim, run_dir=str(outcome.run_dir),
                 experiment=experiment)  # fmt: skip
