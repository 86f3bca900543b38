"""The reconciliation rules of accounting.py on constructed summaries, each case with the
answer a reviewer would give by hand: when missing samples are lost, when unaccounted."""

from psbench.results.accounting import incomplete_message, reconcile

S = 1_000_000_000


def pub(sent, end_s, ended_by="duration", drain="none", drain_s=0.0, topic="psb_r_data"):
    return {
        "role": "pub",
        "config": {"topics": [topic]},
        "counts": {"sent": sent},
        "ended_by": ended_by,
        "timing": {"measure_end_ns": int(end_s * S)},
        "drain": {"result": drain, "ns": int(drain_s * S)},
    }


def sub(
    samples,
    end_s,
    ended_by="idle_timeout",
    seen=0,
    expected=1,
    beyond=0,
    corrupted=0,
    topic="psb_r_data",
):
    sent = None if seen < expected and ended_by != "count" else 0
    return {
        "role": "sub",
        "config": {"topics": [topic]},
        "ended_by": ended_by,
        "counts": {"samples": samples, "corrupted": corrupted, "sent": sent},
        "kept": {"beyond_capacity": beyond},
        "end_markers": {"seen": seen, "expected": expected},
        "timing": {"measure_end_ns": int(end_s * S)},
    }


def test_a_subscriber_that_outlasted_its_writers_lost_what_it_misses():
    a = reconcile({"pub": pub(2000, 3.0), "sub": sub(1316, 5.1)})["sub"]
    assert (a["published"], a["received"], a["lost"], a["unaccounted"]) == (2000, 1316, 684, 0)


def test_a_subscriber_that_stopped_before_its_writers_leaves_them_unaccounted():
    found = reconcile({"pub": pub(1000, 6.0), "sub": sub(100, 2.0)})
    assert (found["sub"]["lost"], found["sub"]["unaccounted"]) == (0, 900)
    assert "900 of 1,000 samples unaccounted" in incomplete_message(found)


def test_a_writer_that_could_not_drain_leaves_them_unaccounted():
    found = reconcile(
        {"pub": pub(700_808, 2.0, drain="timeout", drain_s=10), "sub": sub(258_942, 20.0)}
    )
    assert found["sub"]["unaccounted"] == 700_808 - 258_942


def test_a_subscriber_that_stopped_while_its_writer_drained_leaves_them_unaccounted():
    found = reconcile({"pub": pub(5000, 2.0, drain="drained", drain_s=4.0), "sub": sub(4000, 5.0)})
    assert found["sub"]["unaccounted"] == 1000


def test_end_markers_seen_make_it_exact_and_what_was_kept_is_not_lost():
    found = reconcile(
        {"pub": pub(3000, 1.0), "sub": sub(1000, 1.1, "end_marker", seen=1, beyond=1500)}
    )
    a = found["sub"]
    assert (a["received"], a["lost"], a["unaccounted"], a["beyond_capacity"]) == (
        2500,
        500,
        0,
        1500,
    )
    assert incomplete_message(found) is None


def test_each_receiver_counts_only_the_writers_of_its_topic():
    found = reconcile(
        {
            "t1-pub": pub(100, 1, topic="psb_r_data1"),
            "t2-pub": pub(200, 1, topic="psb_r_data2"),
            "t1-sub": sub(100, 2, "end_marker", seen=1, topic="psb_r_data1"),
            "t2-sub": sub(150, 2, "end_marker", seen=1, topic="psb_r_data2"),
        }
    )
    assert found["t1-sub"]["published"] == 100 and found["t1-sub"]["lost"] == 0
    assert found["t2-sub"]["published"] == 200 and found["t2-sub"]["lost"] == 50


def test_more_arrivals_than_were_sent_is_a_problem_not_a_negative_loss():
    a = reconcile({"pub": pub(10, 1), "sub": sub(12, 2, "end_marker", seen=1)})["sub"]
    assert a["lost"] == 0 and a["problems"] and "2 more than its writers" in a["problems"][0]


def test_a_missing_writer_summary_leaves_the_figures_unknown():
    a = reconcile({"sub": sub(10, 2)})["sub"]
    assert a["published"] is None and a["lost"] is None and a["unaccounted"] is None


def relay(received, sent, end_s):
    return {
        "role": "relay",
        "config": {"topics": ["psb_r_data", "psb_r_data_relay"]},
        "ended_by": "end_marker",
        "counts": {"received": received, "sent": sent},
        "timing": {"measure_end_ns": int(end_s * S)},
    }


def test_behind_a_relay_a_first_hop_loss_is_the_relays_and_the_end_marker_the_publishers():
    # pub wrote 20; the first hop lost one (the relay took and forwarded 19); the sub took
    # the 19 and the forwarded end marker, which says the publisher's 20.
    last = sub(19, 2.0, "end_marker", seen=1, topic="psb_r_data_relay")
    last["counts"]["sent"] = 20
    found = reconcile({"pub": pub(20, 1.0), "relay": relay(19, 19, 1.5), "sub": last})
    assert (found["relay"]["published"], found["relay"]["lost"]) == (20, 1)
    assert (found["sub"]["published"], found["sub"]["lost"]) == (19, 0)
    assert found["sub"]["problems"] == [] and found["relay"]["problems"] == []
    # An end marker that disagrees with the publisher is still a problem.
    last["counts"]["sent"] = 21
    found = reconcile({"pub": pub(20, 1.0), "relay": relay(19, 19, 1.5), "sub": last})
    assert found["sub"]["problems"] == ["sub's end markers say 21 sent, its writers 20"]
