"""The late joiner's run as the suite frames it (tests/test_late_join.py): the publisher
pauses before seq 1000 while one more subscriber starts, so "written before it joined" is
exactly seq 0-999. Shared with the drivers' own late-join cases."""

import pytest

from conftest import only_run, run_cli
from driver_suite import expect

PAUSE = ["--rate", "1000", "--duration", "6", "--late-join", "2.5",
         "--inject", "delay=1000:3000000", "--reliability", "reliable"]  # fmt: skip


def pause_of(driver: str) -> list[str]:
    """PAUSE, with the publisher's pause its SUITE.late_join_pause_s long (the run as much
    longer, and the subscribers' idle timeout past it): a late joiner's history reaches it
    only once it has associated, and the pause must frame that."""
    pause_s = expect(driver).late_join_pause_s
    if pause_s == 3:
        return PAUSE
    longer = {"6": f"{3 + pause_s:g}", "delay=1000:3000000": f"delay=1000:{pause_s * 1e6:.0f}"}
    return [longer.get(a, a) for a in PAUSE] + ["--idle-timeout", f"{pause_s + 10:g}"]


def framed_run(driver, qos, results):
    """The run, made again (3 tries) while the pause did not frame the late joiner's
    history: a busy machine can start it outside the pause, or a broker can still hold
    samples written before it (run.json says which); the known answer needs neither."""
    for attempt in range(3):
        folder = results / f"try{attempt}"
        proc = run_cli(["pubsub", "--driver", driver, *pause_of(driver), *qos], folder, timeout=120)
        record = only_run(folder)
        if record["status"] == "refused":  # a combination the driver does not offer
            pytest.skip(record["message"])
        assert record["status"] == "ok", proc.stdout + proc.stderr
        block = record["late_join"]["late-sub"]
        if block["in_pause"] and not block["before_pause_after_join"]:
            return proc, record
    pytest.fail(f"the pause never framed the late joiner's history in 3 runs: {block}")
