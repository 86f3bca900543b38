"""Every driver, back to back (the load under which samples used to go missing without a
word), best effort and reliable where it offers it: what the publisher says it sent must
equal what the subscriber received + lost + corrupted, each side counting on its own,
and the run must end with every sample accounted for. A middleware that loses samples
may lose them; it may not lose track of them."""

import json

import pytest

from conftest import only_run, run_cli

RELIABLE = {"cyclonedds", "fastdds", "iceoryx", "mqtt", "shm"}
# Drivers whose middleware queues writes (ABI drain) and counts its own losses (counters).
DRAINS = {"cyclonedds", "fastdds", "mqtt", "nats", "redis"}
DDS_LOSS = {"sample_lost", "sample_rejected"}
COUNTERS = {"cyclonedds": DDS_LOSS, "fastdds": DDS_LOSS, "nats": {"dropped"}}
ALL = ["udp", "shm", "cyclonedds", "fastdds", "iceoryx", "zeromq", "mqtt", "nats", "redis"]
CASES = [(d, "best_effort") for d in ALL] + [(d, "reliable") for d in ALL if d in RELIABLE]


@pytest.mark.parametrize("driver,reliability", CASES)
def test_publisher_sent_equals_subscriber_received_plus_lost(
    driver_libs, results, driver, reliability
):
    if driver not in driver_libs:
        pytest.skip(f"{driver} is not built")
    proc = run_cli(
        [
            "pubsub",
            "--driver",
            driver,
            "--rate",
            "0",
            "--duration",
            "1",
            "--reliability",
            reliability,
            "--match-timeout",
            "20",
            "--drain-timeout",
            "60",
        ],
        results,
        timeout=180,
    )
    record = only_run(results)
    assert record["status"] == "ok", proc.stdout + proc.stderr
    pub = json.loads((record["_dir"] / "pub.json").read_text())
    sub = json.loads((record["_dir"] / "sub.json").read_text())
    a = record["accounting"]["sub"]
    sent = pub["counts"]["sent"]
    assert sent > 0 and a["published"] == sent
    assert a["unaccounted"] == 0 and a["complete"]
    # The subscriber's own counts, beside the publisher's: what arrived is the same
    # figure on both; what was sent the sub knows only from an end marker.
    counts = sub["counts"]
    received = counts["samples"] + sub["kept"]["beyond_capacity"]
    assert received + a["lost"] + counts["corrupted"] == sent
    assert a["received"] == received == sub["throughput"]["received"]
    if sub["end_markers"]["seen"] == sub["end_markers"]["expected"]:
        assert counts["sent"] == sent and counts["lost"] == a["lost"]
    else:
        assert counts["sent"] is None and counts["lost"] is None
    if reliability == "reliable":
        assert a["lost"] == 0, f"{driver} reliable lost {a['lost']}"
    # The publisher waited for its queue to drain before its end marker (the MQTT client
    # used to discard what the broker had not taken yet), and DDS readers' own loss
    # statuses (cnats's dropped messages) are kept beside psbench's count.
    assert pub["drain"]["result"] == ("drained" if driver in DRAINS else "none")
    if driver in COUNTERS:
        assert set(sub["middleware_counters"]["reader"]) == COUNTERS[driver]
