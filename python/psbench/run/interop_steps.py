"""At which step two DDS implementations part, from what their participants announced on
the wire (run/rtps_wire.py): discovery (an endpoint never announced to the other side),
topic (the names differ), type match (the type names differ), QoS match (a reader asks
for more than the writer offers), or data (everything matches, yet samples do not
arrive). A ping-pong has two topics, ping's and pong's; the first step that fails on
either is the answer."""

from psbench.run.rtps_wire import Endpoint

STEPS = ("discovery", "topic", "type match", "QoS match", "data")
# Request/offer order (DDS 2.2.3: a writer must offer at least what a reader requests).
RELIABILITY_RANK = {"best_effort": 0, "reliable": 1}
DURABILITY_RANK = {"volatile": 0, "transient_local": 1, "transient": 2, "persistent": 3}


def _qos_problem(writer: Endpoint, reader: Endpoint) -> str | None:
    for policy, rank in (("reliability", RELIABILITY_RANK), ("durability", DURABILITY_RANK)):
        offered, requested = getattr(writer, policy), getattr(reader, policy)
        if rank.get(offered, -1) < rank.get(requested, -1):
            return (
                f"the reader ({reader.vendor}) requests {policy} {requested}, the writer "
                f"({writer.vendor}) offers {offered}"
            )
    return None


def _topic_step(suffix: str, endpoints: list[Endpoint]) -> tuple[str, str] | None:
    """The step at which one topic (its name ends in _SUFFIX) fails, or None."""
    ours = [e for e in endpoints if e.topic.endswith(f"_{suffix}")]
    writers = [e for e in ours if e.kind == "writer"]
    readers = [e for e in ours if e.kind == "reader"]
    if not writers and not readers:
        return "discovery", (
            f"no endpoint of the {suffix} topic was announced: the participants did not "
            f"discover each other (discovery announces endpoints only to participants found)"
        )
    if not writers or not readers:
        seen, missing = (readers, "writer") if not writers else (writers, "reader")
        return "discovery", (
            f"the {suffix} topic's {missing} was never announced; its "
            f"{seen[0].kind} ({seen[0].vendor}) was, so one participant did not discover "
            f"the other"
        )
    writer, reader = writers[0], readers[0]
    if writer.topic != reader.topic:
        return "topic", f"the writer announces topic {writer.topic!r}, the reader {reader.topic!r}"
    if writer.type_name != reader.type_name:
        return "type match", (
            f"on {writer.topic} the writer ({writer.vendor}) announces type "
            f"{writer.type_name!r}, the reader ({reader.vendor}) {reader.type_name!r}"
        )
    qos = _qos_problem(writer, reader)
    return ("QoS match", f"on {writer.topic} {qos}") if qos else None


def diagnose(
    endpoints: list[Endpoint], dropped: int = 0, topics=("ping", "pong")
) -> tuple[str, str]:
    """(step, why) for a pair whose samples did not all arrive. dropped: packets the wire
    reader missed; then an announcement not seen may have been sent, and a step found
    from one missing (discovery, data) is unknown; one found from what was seen (a topic,
    type or QoS that differs) stands."""
    found = [step for suffix in topics if (step := _topic_step(suffix, endpoints))]
    first = min(found, key=lambda s: STEPS.index(s[0])) if found else None
    if dropped and (first is None or first[0] == "discovery"):
        return "unknown", (
            f"the wire reader missed {dropped} packets (the machine was too busy), so an "
            f"announcement not seen may have been sent; run the pair again"
        )
    if first is not None:
        return first
    return "data", (
        "both topics match on the wire (topic, type and QoS), yet samples did not all "
        "arrive: the data path (locators, transports, fragments) is where they part"
    )
