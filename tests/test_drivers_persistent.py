"""Every driver with a broker and durability persistent (its manifest and `--describe`;
the suite: tests/driver_suite.py) across a broker crash: `./psbench pubsub --durability
persistent --reliability reliable --restart-broker AT:DOWN` kills psbench's broker with
SIGKILL in the middle of the stream and starts it again on its port, configuration (the
manifest's durable_config) and data. Known answers: the run ends ok; every message
written arrives, none lost (once, or at least once where the driver declares that a
message may come twice); the writes while the broker is down are
queued or fail as the driver declares; the reader recovers; the counters the driver's
nodes keep say so; afterwards nothing of the broker remains, its data neither. The
cases (notify mode, security), rates and times are each driver's (SUITE.restart)."""

import time
from pathlib import Path

import pytest

from driver_checks import check_samples_file
from driver_suite import broker, broker_drivers, broker_gone, cases, expect, measured


def persistent(driver: str, caps: dict) -> list[str]:
    if "persistent" not in caps["durability"]:
        return []
    return [f"{notify}-{security}" for notify, security in expect(driver).restart.cases]


@pytest.mark.parametrize("driver,case", cases(broker_drivers(), persistent))
def test_persistent_loses_nothing_across_a_broker_killed_mid_stream(driver, case, results):
    plan = expect(driver).restart
    notify, security = case.split("-")
    idle = []
    if plan.idle_timeout_s:
        idle = [
            "--idle-timeout",
            str(plan.idle_timeout_s),
            "--drain-timeout",
            str(plan.idle_timeout_s),
        ]
    record, s = measured(
        driver, results, "pubsub", "--durability", "persistent", "--reliability", "reliable",
        "--notify", notify, "--security", security, "--rate", str(plan.rate),
        "--duration", str(plan.duration_s), "--restart-broker", plan.at_down, *idle,
        "--check-pattern",
    )  # fmt: skip
    [service] = record["services"]
    assert service["durable"] and service["restarts"] == 1, service
    restart = record["restart"]
    assert restart["done"] and restart["error"] is None and restart["signal"] == "SIGKILL"
    pub, sub = s["pub"], s["sub"]
    assert pub["error"] is None and sub["error"] is None
    if plan.write_errors == "none":
        assert restart["write_errors"] == pub["counts"]["write_errors"] == 0, restart
    else:
        assert pub["counts"]["write_errors"] == restart["write_errors"] > 0, restart
    side, counts = restart["receivers"]["sub"], sub["counts"]
    # None lost; a message is missing only where its write failed.
    assert side["lost"] == 0 and side["missing"] <= restart["write_errors"], side
    assert side["received_after_ready"] > 0 and side["recovery_s"] is not None, side
    # Every message written arrived: exactly once, all those due in the window less those
    # a busy sender had no time left for (its schedule counts them as not sent); or at
    # least once, those whose write did not fail.
    schedule, sent = pub["schedule"], pub["counts"]["sent"]
    assert schedule["due"] == plan.rate * plan.duration_s, schedule
    assert counts["sent"] == sent > plan.sent_fraction * schedule["due"], (counts, schedule)
    assert counts["samples"] == sent and counts["lost"] == 0, counts
    assert counts["corrupted"] == counts["late"] == 0, counts
    if plan.all_written:
        assert sent == schedule["due"] - schedule["not_sent"], schedule
        assert side["published"] == side["received"] == sent and side["missing"] == 0, side
    if not plan.duplicates:
        assert side["duplicated"] == counts["duplicated"] == 0, side
    check_samples_file(record["_dir"], sub, "one_way")
    for (role, end), values in plan.counters.items():
        kept = s[role]["middleware_counters"][end]
        assert {k: kept.get(k) for k in values} == values, kept
    if plan.check is not None:
        plan.check(record, s)
    # The broker ran with the manifest's durable_config, and nothing of it is left.
    spec = broker(driver)
    folder = Path(service["log"]).with_suffix("")
    config = (folder / spec.config_file).read_text() if spec.config_file else ""
    for line in (spec.durable_config or "").splitlines():
        if line.strip() and "{" not in line and spec.config_file:
            assert line.strip() in config, (line, config)
    assert "psbench: started again after" in Path(service["log"]).read_text()
    end = time.monotonic() + 10
    while broker_gone(service) and time.monotonic() < end:
        time.sleep(0.1)
    assert broker_gone(service) == []
