"""psbench criteria, discovery and low bandwidth: each verdict from hand-written inputs
whose answer is known (yes, partial, no, not applicable, not testable), and the figures
read from hand-written node summaries and link counters, without running anything."""

from types import SimpleNamespace

from psbench.report import criteria_tables
from psbench.reproduce import ijraset_criteria
from psbench.run.criteria import discovery, low_bandwidth
from psbench.run.criteria.context import Context
from psbench.run.criteria.verdict import Verdict

# Discovery --------------------------------------------------------------------------

MS = 1_000_000


def level(n, all_ms=10, slowest_ms=8, status="ok", message=None, delivered=None,
          least=None, by="matched"):  # fmt: skip
    expected = discovery.COUNT * n
    delivered = expected if delivered is None else delivered
    return {"subscribers": n, "processes": n + 1, "status": status, "message": message,
            "all_matched_ns": None if all_ms is None else all_ms * MS, "matched_by": by,
            "slowest_open_to_matched_ns": None if slowest_ms is None else slowest_ms * MS,
            "delivered": delivered, "least_delivered": discovery.COUNT if least is None else least,
            "expected": expected, "run_dir": f"/runs/{n}"}  # fmt: skip


def test_discovery_yes_when_every_level_matched_and_delivered_with_the_growth():
    v = discovery.judge("d", (1, 10, 50), [level(1, 12), level(10, 85), level(50, 610)])
    assert v.verdict == "yes" and v.run_dir == "/runs/50"
    assert "1: 12 ms, 10: 85 ms, 50: 610 ms" in v.evidence
    assert [lv["all_matched_ms"] for lv in v.figures["levels"]] == [12, 85, 610]
    assert [lv["processes"] for lv in v.figures["levels"]] == [2, 11, 51]
    assert v.figures["asked"] == [1, 10, 50]


def test_discovery_partial_says_up_to_where_and_why_the_next_failed():
    failed = level(50, None, None, "failed", "sub-37: no message from pub", 9000, 0)
    v = discovery.judge("d", (1, 10, 50), [level(1, 12), level(10, 85), failed])
    assert v.verdict == "partial"
    assert v.evidence.startswith("up to 10 subscribers: ")
    assert "1: 12 ms, 10: 85 ms" in v.evidence and "sub-37: no message from pub" in v.evidence
    assert "9000 of 10000 samples delivered" in v.evidence
    assert v.figures["levels"][2]["status"] == "failed"


def test_discovery_a_level_works_when_every_subscriber_got_samples():
    # Some samples lost (reliable keep_last overwrites at 1 kHz): matched all the same.
    v = discovery.judge("d", (1, 10), [level(1), level(10, 85, delivered=1460, least=120)])
    assert v.verdict == "yes" and v.figures["levels"][1]["delivered"] == 1460
    # ... but a subscriber that got nothing did not match.
    starved = level(10, 85, delivered=1800, least=0)
    v = discovery.judge("d", (1, 10), [level(1), starved])
    assert v.verdict == "partial" and "1800 of 2000" in v.evidence


def test_discovery_no_when_even_one_subscriber_did_not_match():
    v = discovery.judge("d", (1, 10), [level(1, None, None, "failed", "sub: match timeout", 0, 0)])
    assert v.verdict == "no" and "sub: match timeout" in v.evidence
    assert "1 subscriber(s) ended failed with 0 of 200" in v.evidence


def test_discovery_refusal_of_several_subscribers_is_not_applicable_and_quoted():
    refusal = "d: --subscribers 10 is not supported; this driver has at most 1 reader(s) per topic"
    refused = {"subscribers": 10, "status": "refused", "message": refusal}
    v = discovery.judge("d", (1, 10), [level(1, 12), refused])
    assert v.verdict == "not applicable" and refusal in v.evidence
    assert "1: 12 ms" in v.evidence  # what it did below the refusal is kept


def test_discovery_a_run_psbench_could_not_run_is_not_testable():
    v = discovery.judge("d", (1, 10), [level(1, None, None, "error", "OSError: no space", 0, 0)])
    assert v.verdict == "not testable here" and "OSError: no space" in v.evidence


def test_discovery_driver_that_cannot_tell_matched_is_read_by_first_message():
    v = discovery.judge("d", (1,), [level(1, 266, None, by="first message")])
    assert v.verdict == "yes" and "first message" in v.evidence


def timing(opened, matched, first=None, started=None):
    return {"opened_ns": opened, "matched_ns": matched, "first_receive_ns": first,
            "started_ns": started, "discovery_ns": None if matched is None else matched - opened}  # fmt: skip


def test_all_matched_is_the_latest_match_after_the_earliest_open():
    summaries = {
        "sub-1": {"role": "sub", "timing": timing(100, 900)},
        "sub-2": {"role": "sub", "timing": timing(300, 1200)},
        "pub": {"role": "pub", "timing": timing(500, 1500)},
    }
    assert discovery.all_matched_ns(summaries) == (1400, "matched")
    assert discovery.slowest_open_to_matched_ns(summaries) == 1000
    # A driver that cannot tell: the subscribers' first message ends it.
    blind = {
        "sub": {"role": "sub", "timing": timing(100, None, first=700)},
        "pub": {"role": "pub", "timing": timing(200, None)},
    }
    assert discovery.all_matched_ns(blind) == (600, "first message")
    assert discovery.slowest_open_to_matched_ns(blind) is None
    never = {"sub": {"role": "sub", "timing": timing(100, None)}, "pub": blind["pub"]}
    assert discovery.all_matched_ns(never)[0] is None


# Low bandwidth ----------------------------------------------------------------------


def measured(matched=True, sent=500, delivered=500, warmup=50, rx=60_000, discovery_ms=40,
             first_ms=90):  # fmt: skip
    return {"matched": matched, "discovery_ns": None if discovery_ms is None else discovery_ms * MS,
            "first_sample_ns": None if first_ms is None else first_ms * MS, "sent": sent,
            "delivered": delivered, "warmup_delivered": warmup, "rx_bytes_b": rx,
            "tx_bytes_b": 20_000, "rx_packets_b": 600}  # fmt: skip


GOODPUT = {"status": "ok", "message": None, "bits_per_s": 128_000.0, "received": 1000,
           "run_dir": "/runs/fast"}  # fmt: skip


def test_low_bandwidth_yes_with_every_figure():
    v = low_bandwidth.judge("d", "ok", None, measured(), GOODPUT, "/runs/slow")
    assert v.verdict == "yes" and v.run_dir == "/runs/slow"
    f = v.figures
    # 550 messages of 64 B delivered (warm-up included): 35,200 payload bytes.
    assert f["payload_bytes_delivered"] == 35_200
    assert f["wire_bytes_into_b_per_payload_byte"] == round(60_000 / 35_200, 2) == 1.7
    assert f["delivered_percent"] == 100.0 and f["goodput_kbit_s"] == 128.0
    assert f["goodput_of_link_percent"] == 50.0 and f["goodput_run_dir"] == "/runs/fast"
    assert (f["discovery_ms"], f["first_sample_ms"]) == (40.0, 90.0)
    assert "discovery 40 ms, first sample after 90 ms, delivered 500 of 500" in v.evidence
    assert "1.7 wire bytes into b per payload byte" in v.evidence
    assert "goodput 128 kbit/s of payload, 50% of the link's 256" in v.evidence


def test_low_bandwidth_threshold_is_90_percent_delivered():
    assert low_bandwidth.judge("d", "ok", None, measured(delivered=450)).verdict == "yes"
    v = low_bandwidth.judge("d", "ok", None, measured(delivered=449))
    assert v.verdict == "partial" and v.figures["delivered_percent"] == 89.8
    assert "below 90% delivered" in v.evidence


def test_low_bandwidth_discovered_but_delivered_little_is_partial_even_if_the_run_failed():
    v = low_bandwidth.judge("d", "failed", "sub: idle timeout", measured(delivered=20))
    assert v.verdict == "partial" and "the run ended failed: sub: idle timeout" in v.evidence


def test_low_bandwidth_no_when_it_never_matched():
    v = low_bandwidth.judge("d", "failed", "sub: no message from pub",
                            measured(matched=False, delivered=0, discovery_ms=None))  # fmt: skip
    assert v.verdict == "no" and "never matched within the 60 s match timeout" in v.evidence
    assert "no message from pub" in v.evidence


def test_low_bandwidth_of_a_driver_confined_to_one_host_is_not_applicable_without_a_run(
    monkeypatch, tmp_path
):
    # A driver whose capabilities say it does not cross hosts (ORTE, OpenSplice 5's
    # daemon): nothing is started on the emulated hosts, where its service would only
    # fail to start (no verdict); one that crosses them is measured.
    monkeypatch.setattr(low_bandwidth.emulated, "require_privileges", lambda: None)
    measured = []
    monkeypatch.setattr(low_bandwidth, "_measure", lambda ctx, d, *_: measured.append(d) or
                        low_bandwidth.judge(d, "error", "stub", None))  # fmt: skip
    caps = {"confined": {"crosses_hosts": False}, "crossing": {"crosses_hosts": True}}
    ctx = Context(list(caps), {}, {d: {"capabilities": c} for d, c in caps.items()}, tmp_path,
                  {}, ["psbench", "criteria"], quick=True)  # fmt: skip
    found = low_bandwidth.assess(ctx)
    assert found["confined"].verdict == "not applicable"
    assert "crosses_hosts false" in found["confined"].evidence
    assert measured == ["crossing"]


def test_low_bandwidth_refused_across_hosts_is_not_applicable_and_quoted():
    refusal = "d: a run across hosts is not supported; this driver runs on one host"
    v = low_bandwidth.judge("d", "refused", refusal, None)
    assert v.verdict == "not applicable" and refusal in v.evidence


def test_low_bandwidth_without_privileges_or_run_is_not_testable():
    why = "emulated hosts need CAP_NET_ADMIN (network namespaces, links, shaping)"
    v = low_bandwidth.judge("d", "unprivileged", why, None)
    assert v.verdict == "not testable here" and why in v.evidence
    v = low_bandwidth.judge("d", "error", "OSError: boom", None)
    assert v.verdict == "not testable here" and "OSError: boom" in v.evidence


def test_low_bandwidth_a_driver_that_cannot_tell_matched_and_a_failed_goodput_run():
    cut = {**GOODPUT, "status": "timeout", "bits_per_s": None, "message": "sub: timeout"}
    v = low_bandwidth.judge("d", "ok", None, measured(discovery_ms=None), cut)
    assert v.verdict == "yes" and "discovery not reported by the driver" in v.evidence
    assert "goodput run ended timeout: sub: timeout" in v.evidence
    assert v.figures["goodput_kbit_s"] is None
    # A stalled stream: nothing arrived in the closed-loop run, said with how it ended.
    stalled = {**GOODPUT, "status": "incomplete", "bits_per_s": 0.0, "message": "idle_timeout"}
    v = low_bandwidth.judge("d", "ok", None, measured(), stalled)
    assert v.verdict == "yes" and v.figures["goodput_kbit_s"] == 0.0
    assert (
        "goodput 0 kbit/s of payload, 0% of the link's 256 (that run ended incomplete" in v.evidence
    )


def test_low_bandwidth_figures_from_summaries_and_link_counters():
    outcome = SimpleNamespace(
        subscriber_names=["sub"], publisher_names=["pub"],
        summaries={
            "sub": {"role": "sub", "timing": timing(1_000, 5_000, first=9_000, started=500),
                    "counts": {"received": 240, "warmup": 10}},
            "pub": {"role": "pub", "timing": timing(2_000, 8_000), "counts": {"sent": 250}},
        },
        network={"traffic": {"hosts": {"a": {"rx_bytes": 1}, "b": {
            "rx_bytes": 40_000, "tx_bytes": 9_000, "rx_packets": 300}}}},
    )  # fmt: skip
    m = low_bandwidth.measured_of(outcome)
    assert m["matched"] and m["discovery_ns"] == 6_000 and m["first_sample_ns"] == 8_500
    assert (m["sent"], m["delivered"], m["warmup_delivered"]) == (250, 240, 10)
    assert (m["rx_bytes_b"], m["tx_bytes_b"]) == (40_000, 9_000)
    # Goodput: 900 measured + 100 warm-up messages of 64 B from when both were ready
    # (the pub matched at 1 s; the sub cannot tell, opened at 0.5 s) to the last arrival
    # at 3 s: 64,000 B in 2 s, 256,000 bit/s, whenever its first message came (2.5 s).
    sub = {
        "role": "sub",
        "timing": timing(500_000_000, None, first=2_500_000_000),
        "counts": {"received": 900, "warmup": 100},
        "throughput": {"first_arrival_ns": 2_900_000_000, "last_arrival_ns": 3_000_000_000},
    }
    pub = {"role": "pub", "timing": timing(100_000_000, 1_000_000_000)}
    fast = SimpleNamespace(status="timeout", message="sub: timeout", run_dir="/r",
                           subscriber_names=["sub"], summaries={"sub": sub, "pub": pub})  # fmt: skip
    assert low_bandwidth.writes_began_by_ns(fast.summaries) == 1_000_000_000
    assert low_bandwidth.goodput_of(fast)["bits_per_s"] == 256_000.0
    # Nothing measured arrived while the run lasted: goodput 0, not unknown.
    sub["counts"] = {"received": 0, "warmup": 7}
    sub["throughput"] = {"first_arrival_ns": None, "last_arrival_ns": None}
    assert low_bandwidth.goodput_of(fast)["bits_per_s"] == 0.0


# The report and IJRASET Table 1 ------------------------------------------------------


def test_table1_low_bandwidth_cells_are_compared_with_ours():
    published = {
        "systems": {"fastrtps": {"name": "eProsima Fast RTPS", "driver": "d"}},
        "criteria": {"values": {"fastrtps": {"low_bandwidth": "yes"}}},
    }
    for ours, agreement in (("yes", "agree"), ("partial", "partly"), ("no", "disagree"),
                            ("not applicable", "not comparable")):  # fmt: skip
        found = Verdict("low_bandwidth", "d", ours, "-")
        table = ijraset_criteria.table(published, [found], ["d"])
        row = next(r for r in table.rows if r[2] == "low_bandwidth")
        assert (row[3], row[4], row[5]) == ("yes", ours, agreement)
        assert "256 kbit/s with 2% loss" in row[6]  # the scope says what ours measured


def test_matrix_shows_the_new_columns_and_says_what_quick_shortened():
    record = {"quick": True, "drivers": ["d"],
              "criteria": [{"name": "discovery", "title": discovery.TITLE},
                           {"name": "low_bandwidth", "title": low_bandwidth.TITLE}]}  # fmt: skip
    verdicts = [Verdict("discovery", "d", "yes", "-"), Verdict("low_bandwidth", "d", "no", "-")]
    table = criteria_tables.matrix(record, verdicts)
    assert [c.key for c in table.columns] == ["driver", "discovery", "low_bandwidth"]
    assert table.rows == [["d", "yes", "no"]]
    quick = next(n for n in table.notes if n.startswith("--quick"))
    assert "1 and 10 subscribers" in quick and "5 s at 50 Hz" in quick
    assert "interop" not in quick
