"""The rules a run's settings must keep together, written once for the command line and
the experiment files.

Each rule reads the settings from attributes (a MeasureSpec, or a run's values in a
SimpleNamespace) and returns a Problem or None. Its message begins with the setting it is
about and ends with the fix; `term` writes a setting as the caller's user writes it:
parameters.file_term (`placement: inter`) or parameters.cli_term (`--placement inter`).
"""

from collections.abc import Callable
from typing import NamedTuple

from psbench.base.options import restart_times
from psbench.run.spec import ROLES

Term = Callable[..., str]


class Problem(NamedTuple):
    blamed: str  # the setting to point at
    message: str
    # Settings whose values, as an exclude rule, leave such runs out of a matrix.
    exclude: tuple[str, ...] = ()


def _get(settings, key: str, default=None):
    value = getattr(settings, key, None)
    return default if value is None else value


def timeout_problem(settings, term: Term) -> Problem | None:
    """A run's timeout must leave room for its duration."""
    duration, timeout = _get(settings, "duration"), _get(settings, "timeout")
    if duration is None or timeout is None or duration < timeout:
        return None
    return Problem(
        "timeout",
        f"{term('timeout')} {timeout:g} s would end a {duration:g} s run early; give "
        f"{term('timeout')} more than {term('duration')}",
    )


def fan_out_problem(settings, term: Term) -> Problem | None:
    """Several subscribers, publishers or topics are several processes: not one
    intra-process node."""
    if _get(settings, "placement") != "intra":
        return None
    for key, what in (
        ("subscribers", "subscribers are"),
        ("publishers", "publishers are"),
        ("topics", "topics are run by"),
    ):
        if _get(settings, key, 1) > 1:
            return Problem(
                key,
                f"{term(key)} > 1: several {what} separate processes; use "
                f"{term('placement', 'inter')}",
                exclude=("placement", key),
            )
    return None


def relay_problem(settings, term: Term) -> Problem | None:
    """A relay run (relays: 1) forwards one topic from one writer to one reader, in three
    processes."""
    if not _get(settings, "relays"):
        return None
    relays = term("relays", 1)
    if _get(settings, "kind", "pubsub") != "pubsub":
        return Problem("relays", f"{relays} is a pubsub setting (pub -> relay -> sub)")
    for key in ("subscribers", "publishers", "topics"):
        if _get(settings, key, 1) > 1:
            return Problem(
                key,
                f"{term(key)} > 1 with {relays}: the relay forwards one topic from one "
                f"publisher to one subscriber",
            )
    if _get(settings, "placement", "inter") == "intra":
        return Problem(
            "placement", f"{relays} runs three processes; use {term('placement', 'inter')}"
        )
    if _get(settings, "echo_every"):
        return Problem(
            "echo_every",
            f"{term('echo_every')} with {relays}: the relay already carries every sample "
            f"back to the recording sub",
        )
    return None


def late_join_problem(settings, term: Term) -> Problem | None:
    """A late joiner (late_join: S) is one more subscriber, started S seconds after the
    start while publishing goes on, so the publishing must last longer than S."""
    late = _get(settings, "late_join")
    if late is None:
        return None
    name = term("late_join")
    if _get(settings, "kind", "pubsub") != "pubsub":
        return Problem("late_join", f"{name} is a pubsub setting (one more subscriber, late)")
    if _get(settings, "placement", "inter") == "intra":
        return Problem(
            "placement",
            f"{name} starts one more process; use {term('placement', 'inter')}",
        )
    for key in ("topics", "relays"):
        if _get(settings, key, 0) > (1 if key == "topics" else 0):
            return Problem(key, f"{name} with {term(key)}: the late joiner reads one plain topic")
    duration = _get(settings, "duration")
    if duration is None or late >= duration:
        return Problem(
            "late_join",
            f"{name} {late:g} s needs a {term('duration')} longer than it, so that it joins "
            f"while publishing goes on (e.g. {term('duration', late + 2.0)})",
        )
    return None


def restart_problem(settings, term: Term) -> Problem | None:
    """A broker restart (restart_broker: AT:DOWN) needs a pubsub run whose publishing
    goes on past the restart."""
    text = _get(settings, "restart_broker")
    if text is None:
        return None
    name = term("restart_broker")
    if _get(settings, "kind", "pubsub") != "pubsub":
        return Problem("restart_broker", f"{name} is a pubsub setting")
    at, down = restart_times(text)
    duration = _get(settings, "duration")
    if duration is None or duration <= at + down:
        return Problem(
            "restart_broker",
            f"{name} {text} needs a {term('duration')} longer than AT + DOWN, so that "
            f"publishing goes on after the broker is back (e.g. "
            f"{term('duration', at + down + 4.0)})",
        )
    return None


# The rules of a run's processes, in the order they are judged: the first broken one is
# the one reported.
PROCESS_RULES = (late_join_problem, restart_problem, relay_problem, fan_out_problem)


def cpu_roles(kind: str) -> tuple[str, ...]:
    """The roles a run's cpus may name; a pubsub run's relay too (relays: 1)."""
    return ROLES[kind] + (("relay",) if kind == "pubsub" else ())


def unknown_cpu_role(kind: str, role: str) -> str | None:
    roles = cpu_roles(kind)
    return None if role in roles else f"unknown role {role!r} for {kind}; use {', '.join(roles)}"


def search_bounds_problem(start_rate: float, max_rate: float | None, term: Term) -> str | None:
    """A rate search's highest rate is not below its first."""
    if max_rate is None or max_rate >= start_rate:
        return None
    return (
        f"{term('max_rate')} {max_rate:g} Hz is below {term('start_rate')} {start_rate:g} Hz; "
        f"give a higher {term('max_rate')}"
    )
