"""Late joiners (`--late-join S`): one more subscriber, started while publishing goes on,
reports exactly which of the samples written before it joined it received: the history a
writer's durability keeps. The publisher pauses (an injected 3 s delay before seq 1000)
while the late joiner starts, so "written before it joined" is exactly seq 0-999 and the
expected history is known. At 1 kHz after 1,000 warm-up messages, seq 999 is written
about 2 s after the start and seq 1000 about 5 s: the late joiner starts at 2.5 s, in the
middle of the pause (at 2 s it raced seq 999 and once got 995-998 as history and 999 as
live, CI 2026-11-25): keep_last:5 with transient_local gives seq 995-999, MQTT's
retained message the last one, volatile nothing. Every driver whose --describe offers
transient_local gets a case for each history it offers and one under volatile (the driver
suite, tests/driver_suite.py); make test runs those its SUITE.late_join names, make
test-long the rest, and a combination the node refuses is skipped with its reason. A
middleware slower to associate a late joiner declares a longer pause
(SUITE.late_join_pause_s)."""

import json

import pytest

from conftest import only_run, run_cli
from driver_suite import capabilities, cases, expect
from late_join_runs import PAUSE, framed_run
from psbench.base import manifests
from psbench.results.samples import read_samples

KEEP_5 = ["--durability", "transient_local", "--history", "keep_last:5"]
WRITTEN = 1000  # seq 0-999 before the pause


def late_join_cases(name: str, caps: dict) -> list[str]:
    """What a driver offering transient_local gets (its --describe): a late joiner's
    history for each history it offers, and none under volatile."""
    if "transient_local" not in caps["durability"]:
        return []
    history = caps["history"]
    found = ["tl-keep5", "tl-keep1"] if "keep_last" in history else []
    found += ["tl-keep-all"] if "keep_all" in history else []
    return (found or ["tl"]) + ["volatile"]


def qos_of(case: str, caps: dict) -> list[str]:
    depth = ["--history", "keep_last:5"] if "keep_last" in caps["history"] else []
    return {
        "tl-keep5": KEEP_5,
        "tl-keep1": ["--durability", "transient_local", "--history", "keep_last:1"],
        "tl-keep-all": ["--durability", "transient_local", "--history", "keep_all"],
        "tl": ["--durability", "transient_local"],
        "volatile": ["--durability", "volatile", *depth],  # a depth keeps nothing for it
    }[case]


def kept(driver: str, case: str) -> tuple:
    """(history, its first seq, its last seq): the last N of seq 0-999 written before the
    late joiner joined, every one under keep_all, none under volatile; with no history to
    set, what the driver's SUITE says transient_local keeps."""
    n = {"tl-keep5": 5, "tl-keep1": 1, "tl-keep-all": WRITTEN, "volatile": 0}.get(case)
    if n is None:
        n = expect(driver).late_join_kept
        assert n is not None, f"{driver}: declare SUITE.late_join_kept (what transient_local keeps)"
    return (n, WRITTEN - n, WRITTEN - 1) if n else (0, None, None)


def long_case(driver: str, case: str) -> str | None:
    # Each case is a 6 s run: make test runs those the driver's SUITE names.
    return None if case in expect(driver).late_join else "make test runs SUITE.late_join"


@pytest.mark.parametrize(
    "driver,case", cases(manifests.driver_names(), late_join_cases, long=long_case)
)
def test_a_late_joiner_gets_exactly_the_history_its_durability_keeps(results, driver, case):
    unframed = expect(driver).late_join_unframed
    if unframed and case != "volatile":
        pytest.skip(f"{driver}: {unframed}")
    qos = qos_of(case, capabilities(driver))
    expected = kept(driver, case)
    proc, record = framed_run(driver, qos, results)
    late = json.loads((record["_dir"] / "late-sub.json").read_text())["late_join"]
    assert (late["history"], late["history_first_seq"], late["history_last_seq"]) == expected
    # After the pause it receives live; the run's own subscriber is not affected.
    assert late["first_live_seq"] is not None and late["first_live_seq"] >= WRITTEN
    assert record["late_join"]["late-sub"]["history"] == expected[0]
    assert "joined 2.5 s after the start (in the publisher's pause)" in proc.stdout
    # The run's own subscriber is accounted for as always (keep_last may lose samples in
    # the burst after the pause: counted, never unaccounted).
    a = record["accounting"]["sub"]
    assert a["unaccounted"] == 0 and a["received"] + a["lost"] == a["published"]
    assert "late-sub" not in record["accounting"]


def test_late_join_is_refused_where_it_cannot_join_while_publishing(driver_libs, results):
    proc = run_cli(["pubsub", "--driver", "udp", "--count", "100", "--late-join", "1"], results)
    assert proc.returncode == 2
    assert "--late-join" in proc.stderr and "duration" in proc.stderr


@pytest.mark.long
def test_a_late_joiner_outside_the_pause_is_said_to_be(driver_libs, results):
    # Joined 0.5 s after the start, during the warm-up: long before the pause before
    # seq 1000, so what it got "before it joined" is not the history the pause frames.
    if "cyclonedds" not in driver_libs:
        pytest.skip("cyclonedds is not built")
    early = [a if a != "2.5" else "0.5" for a in PAUSE]
    proc = run_cli(["pubsub", "--driver", "cyclonedds", *early, *KEEP_5], results, timeout=120)
    record = only_run(results)
    assert record["status"] == "ok", proc.stdout + proc.stderr
    assert record["late_join"]["late-sub"]["in_pause"] is False
    assert "joined 0.5 s after the start (NOT in the publisher's pause" in proc.stdout
    # The pause it was measured against lies between the writes of seq 999 and 1000, as
    # the run's own subscriber's samples stamp them; the late joiner came before it.
    pub = json.loads((record["_dir"] / "pub.json").read_text())
    began, ended = pub["injected"]["delay_window_ns"]
    sends = read_samples(record["_dir"] / "sub.samples").records
    stamp = {int(s): int(t) for s, t in zip(sends["seq"], sends["send_ns"])}
    before = max(t for seq, t in stamp.items() if seq < 1000)
    after = min(t for seq, t in stamp.items() if seq >= 1000)
    assert before <= began < ended <= after
    assert record["late_join"]["late-sub"]["joined_ns"] < began
