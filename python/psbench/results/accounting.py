"""Every sample of a pub/sub run accounted for, from both sides' own counts.

A subscriber alone cannot know what was sent when an end marker never reached it (a
lossy or overloaded run, a writer whose queued messages died with it), and guessing from
the highest sequence number it saw hides everything after it. So each receiver (sub or
relay) is reconciled here with the writers of the topic it reads, from their summaries:

    published = what those writers say they sent (successful writes)
    lost      = published - distinct arrivals - corrupted
                (distinct arrivals = samples kept + beyond_capacity: what the store
                 could not keep is counted separately, never as lost)

A receiver that did not see every end marker still knows its losses exactly when it
kept listening until after its writers had finished (sent, drained, end markers out) and
then heard nothing for its idle timeout: nothing was on its way any more, and the end
markers were lost like the data (a lossy best-effort fan-out). Otherwise (it stopped
before its writers finished, on the run's timeout or an interrupt, or a writer could not
drain what it queued) what it misses may still have been on its way or been discarded
by psbench's own shutdown: that is `unaccounted`, not lost, and the run is not ok
(measure.py: status "incomplete").
"""

WRITERS_DONE = ("count", "duration")  # a writer that ended by itself


def _topic_written(summary: dict) -> str | None:
    topics = (summary.get("config") or {}).get("topics") or []
    role = summary.get("role")
    if role == "pub":
        return topics[0] if topics else None
    if role == "relay":
        return topics[1] if len(topics) > 1 else None
    return None


def _topic_read(summary: dict) -> str | None:
    topics = (summary.get("config") or {}).get("topics") or []
    return topics[0] if summary.get("role") in ("sub", "relay") and topics else None


def _distinct(summary: dict) -> int:
    """Distinct measured arrivals: the samples kept plus those past --max-samples. A
    relay keeps none and does not deduplicate: it counts what it took."""
    counts = summary.get("counts") or {}
    if summary.get("role") == "relay":
        return counts.get("received") or 0
    beyond = (summary.get("kept") or {}).get("beyond_capacity")
    if beyond is None:  # an older node: the throughput block had it
        beyond = (summary.get("throughput") or {}).get("beyond_capacity") or 0
    return (counts.get("samples") or 0) + beyond


def _saw_the_end(summary: dict) -> bool:
    """Whether the receiver ended knowing what was sent: every end marker (sub), the end
    marker (relay), or --count reached."""
    if summary.get("role") == "relay":
        return summary.get("ended_by") == "end_marker"
    markers = summary.get("end_markers")
    if markers is None:  # an older node: it ended on its end markers or its count
        return summary.get("ended_by") in ("end_marker", "count")
    return markers.get("seen") == markers.get("expected") or summary.get("ended_by") == "count"


def _outlasted(summary: dict, writers: list[dict]) -> bool:
    """Whether the receiver went quiet (idle timeout) only after every writer had ended by
    itself and delivered what it queued: then nothing was still on its way (one host,
    one clock: CLOCK_MONOTONIC)."""
    end = (summary.get("timing") or {}).get("measure_end_ns")
    if summary.get("ended_by") != "idle_timeout" or end is None or not writers:
        return False
    for w in writers:
        done = (w.get("timing") or {}).get("measure_end_ns")
        drain = (w.get("drain") or {}).get("result", "none")
        if (
            w.get("ended_by") not in WRITERS_DONE
            or done is None
            or drain in ("timeout", "error")
            or end < done + (w.get("drain") or {}).get("ns", 0)
        ):
            return False
    return True


def _origin_published(summaries: dict, sources: list[str], writers: dict) -> int | None:
    """What the writers whose counts an end marker carries sent: the sources themselves,
    or behind relays the writers of what the relays read."""
    if not sources:
        return None
    if not all(summaries[w].get("role") == "relay" for w in sources):
        sent = [(summaries[w].get("counts") or {}).get("sent") for w in sources]
        known = [s for s in sent if s is not None]
        return sum(known) if len(known) == len(sent) else None
    upstream = sorted({u for r in sources for u in writers.get(_topic_read(summaries[r]), [])})
    return _origin_published(summaries, upstream, writers)


def reconcile(summaries: dict) -> dict:
    """name -> the accounting of each receiver (sub, relay) of a pub/sub run; {} for a
    ping run. Each: published (None when a writer's summary is missing), received,
    corrupted, duplicated, beyond_capacity, lost, unaccounted, complete, ended_by,
    writers (their names), and problems (counts that do not add up)."""
    writers: dict[str, list[str]] = {}
    for name, summary in summaries.items():
        topic = _topic_written(summary)
        if topic is not None:
            writers.setdefault(topic, []).append(name)
    result = {}
    for name, summary in summaries.items():
        topic = _topic_read(summary)
        if topic is None or summary.get("late_join"):
            continue  # a late joiner is not expected to receive everything: late_join()
        counts = summary.get("counts") or {}
        sources = sorted(writers.get(topic, []))
        expected = (
            (summary.get("end_markers") or {}).get("expected")
            if summary.get("role") == "sub"
            else 1
        )
        sent = [(summaries[w].get("counts") or {}).get("sent") for w in sources]
        counted = [s for s in sent if s is not None]
        known = (
            bool(sources)
            and len(counted) == len(sent)
            and (expected is None or len(sources) == expected)
        )
        published = sum(counted) if known else None
        received, corrupted = _distinct(summary), counts.get("corrupted") or 0
        complete = _saw_the_end(summary) or _outlasted(summary, [summaries[w] for w in sources])
        missing = None if published is None else published - received - corrupted
        problems = []
        if missing is not None and missing < 0:
            problems.append(
                f"{name} has {received + corrupted:,} distinct arrivals, "
                f"{-missing:,} more than its writers say they sent ({published:,})"
            )
        # A sub's sent is what its end markers say; a relay's is what it forwarded.
        said = counts.get("sent") if summary.get("role") == "sub" else None
        # Behind a relay the end marker is the publisher's, forwarded: it counts what the
        # publisher wrote, not what the relay forwarded (a first-hop loss is the relay's).
        origin = _origin_published(summaries, sources, writers) if said is not None else None
        if complete and said is not None and origin is not None and said != origin:
            problems.append(f"{name}'s end markers say {said:,} sent, its writers {origin:,}")
        gap = max(missing, 0) if missing is not None else None
        result[name] = {
            "writers": sources,
            "published": published,
            "received": received,
            "corrupted": corrupted,
            "duplicated": counts.get("duplicated") or 0,
            "beyond_capacity": (summary.get("kept") or {}).get("beyond_capacity") or 0,
            "lost": gap if complete else 0 if gap is not None else None,
            "unaccounted": 0 if complete else gap,
            "complete": complete,
            "ended_by": summary.get("ended_by"),
            "problems": problems,
        }
    return result


def late_join(summaries: dict) -> dict:
    """name -> what each late joiner received: the history (samples written before its
    reader existed, which only a writer's or broker's durability could give it), the
    first sample it got live, and what its writers sent while it listened."""
    found = {}
    pauses = _pauses(summaries)
    for name, summary in summaries.items():
        block = summary.get("late_join")
        if not block:
            continue
        counts = summary.get("counts") or {}
        joined = block.get("joined_ns")
        found[name] = {
            **block,
            "received": _distinct(summary),
            "samples": counts.get("samples"),
            "ended_by": summary.get("ended_by"),
            # Whether it joined inside a publisher's injected pause (None: no pause), so
            # that "written before it joined" is the samples before the pause.
            "in_pause": (
                any(began < joined < ended for began, ended in pauses)
                if pauses and joined is not None
                else None
            ),
        }
    return found


def _pauses(summaries: dict) -> list[tuple[int, int]]:
    """The publishers' injected pauses, (began_ns, ended_ns) on the clock of send_ns."""
    windows = ((s.get("injected") or {}).get("delay_window_ns") for s in summaries.values())
    return [tuple(w) for w in windows if w]


def incomplete_message(accounting: dict) -> str | None:
    """Why a run is not ok because samples are unaccounted for, or None."""
    parts = []
    for name, a in accounting.items():
        if a["complete"] or not a["unaccounted"]:
            continue
        parts.append(
            f"{name}: {a['unaccounted']:,} of {a['published']:,} samples unaccounted for "
            f"(received {a['received']:,}); it stopped on {a['ended_by'] or 'an error'} "
            f"without every end marker, before its writers had finished and delivered "
            f"what they queued, so they may have been lost or still on their way"
        )
    return "; ".join(parts) or None
