"""The routing criterion: its verdicts on hand-written outcomes, and end to end across
two emulated networks joined only by a host on both (root: CI is)."""

import json
import os

import pytest

from conftest import run_cli
from psbench.base.manifests import Claim
from psbench.run.criteria import routing
from psbench.run.criteria.verdict import NO, NOT_APPLICABLE, NOT_TESTABLE, PARTIAL, YES

CLAIM = Claim(text="a routing service", source="https://example.org/router")


def test_every_round_trip_through_the_broker_is_yes():
    v = routing.judge("mw", ("ok", 200, None), 200)
    assert v.verdict == YES
    assert v.evidence.startswith("200 of 200 round trips between a and b")
    assert v.figures == {"asked": 200, "received": 200, "status": "ok"}


def test_some_round_trips_are_partial_and_none_is_no():
    assert routing.judge("mw", ("timeout", 57, "ended by timeout"), 200).verdict == PARTIAL
    no = routing.judge("mw", ("failed", 0, "no peer matched"), 200)
    assert no.verdict == NO and "no peer matched" in no.evidence


def test_a_router_is_yes_only_when_the_control_without_it_got_nothing():
    apart = routing.judge("mw", ("ok", 100, None), 100, control=("failed", 0))
    assert apart.verdict == YES and "without it (control) 0" in apart.evidence
    # The control reached b directly: the networks were not apart, nothing is shown.
    leaky = routing.judge("mw", ("ok", 100, None), 100, control=("ok", 100))
    assert leaky.verdict == NOT_TESTABLE and "not apart" in leaky.evidence


def test_without_a_router_here_the_claim_is_shown_beside_not_testable():
    v = routing.judge("mw", None, 200, why_not="no router of this middleware is installable here",
                      claim=CLAIM)  # fmt: skip
    assert v.verdict == NOT_TESTABLE
    assert v.evidence.endswith("documented: a routing service") and v.source == CLAIM.source
    daemon = routing.judge("mw", None, 200, why_not="a per-host daemon's runs stay on one host")
    assert daemon.verdict == NOT_APPLICABLE


def test_the_way_through_comes_from_the_manifest():
    assert routing.way_through("mqtt") == (None, None)  # its broker
    assert routing.way_through("zenoh") == ("client", None)  # its router
    assert routing.way_through("iceoryx")[1] == "a per-host daemon's runs stay on one host"
    assert routing.way_through("zeromq")[1] == "no router of this middleware is installable here"


@pytest.mark.skipif(os.geteuid() != 0, reason="emulated hosts need root (CI is)")
@pytest.mark.xdist_group("zenoh")
def test_a_router_and_a_broker_carry_two_networks_and_peers_do_not(driver_libs, results):
    wanted = [d for d in ("mqtt", "zenoh") if d in driver_libs]
    proc = run_cli(["criteria", "--quick", "--criteria", "routing", "--drivers",
                    ",".join(wanted)], results, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (folder,) = results.glob("*-criteria")
    found = {v["driver"]: v for v in json.loads((folder / "criteria.json").read_text())["verdicts"]}
    for driver in wanted:
        assert found[driver]["verdict"] == YES, found[driver]
        assert found[driver]["figures"]["received"] == routing.QUICK_COUNT
        run = json.loads((folder / found[driver]["run_dir"] / "run.json").read_text())
        assert run["network"]["hosts"]["r"]["link"]["networks"] == ["left", "right"]
        (service,) = run["services"]
        assert service["host"] == "r"
    if "zenoh" in wanted:
        assert found["zenoh"]["figures"]["control_received"] in (0, None)


def test_the_help_names_every_criterion_of_the_battery(results):
    from psbench.run.criteria import battery

    proc = run_cli(["criteria", "--help"], results)
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    for name in battery.CRITERIA:
        assert name in text, name
