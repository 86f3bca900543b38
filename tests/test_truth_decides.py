"""bench/truth's decisions, without running anything: when a comparison asks for more
rounds (--until-decided), and the order in which a round runs its tools."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import truth  # noqa: E402  (bench/ is not a package; bench/truth puts it on the path too)


def pairs(ratio: float, rounds: int, spread: float = 0.0) -> list:
    """Rounds of (psbench's (p50, p99), instrument's (p50, p99)) whose medians are in the
    given ratio, each tool's rounds spread by +-spread, not in step."""
    out = []
    for i in range(rounds):
        ps = ratio * 100.0 * (1 + spread * (i % 3 - 1))
        inst = 100.0 * (1 + spread * ((i + 1) % 3 - 1))
        out.append(((ps, 2 * ps), (inst, 2 * inst)))
    return out


@pytest.mark.parametrize(
    "ratio, rounds, spread, expected",
    [
        (1.0, 5, 0.0, False),  # within 10%, decided
        (1.5, 5, 0.0, False),  # not within 10%, decided
        (1.0, 2, 0.0, True),  # too few rounds to decide
        (1.09, 5, 0.2, True),  # rounds spread too much for a ratio this near the edge
    ],
)
def test_undecided_asks_for_more_rounds_only_while_a_p50_verdict_is_undecided(
    ratio, rounds, spread, expected
):
    rows = {"rtt": {("udp", "sockperf", 64): pairs(ratio, rounds, spread)}, "throughput": {}}
    assert truth.undecided(rows, "rtt", "udp", 64) is expected
    # A driver with two instruments is decided only when both rows are.
    rows["rtt"][("cyclonedds", "ddsperf", 64)] = pairs(1.0, 5)
    assert truth.undecided(rows, "rtt", "cyclonedds", 64) is True  # no probe row yet
    rows["rtt"][("cyclonedds", "cyclonedds_probe", 64)] = pairs(ratio, rounds, spread)
    assert truth.undecided(rows, "rtt", "cyclonedds", 64) is expected


def test_each_tool_takes_each_place_in_turn():
    tools = ["psbench", "ddsperf", "cyclonedds_probe"]
    orders = [truth.rotated(tools, r) for r in range(3)]
    assert orders[0] == tools
    for place in range(3):
        assert sorted(o[place] for o in orders) == sorted(tools)
    assert truth.rotated(["psbench", "sockperf"], 1) == ["sockperf", "psbench"]
