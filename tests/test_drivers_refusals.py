"""Every driver refuses what it does not offer, in its own words, through `./psbench
ping` (the suite: tests/driver_suite.py): each reliability, durability, history and
transport its `--describe` leaves out, a loan where it has no zero-copy write, an option
it does not know, a message one byte over its largest; with a broker (its manifest),
an address that is not one, and
durability persistent without reliability reliable where it offers persistent. A node
reports every refusal of a run at once, so a driver's refusals take one run (two where a
dimension lacks two values): exit code 2, status refused, each message with the reason
the driver's test file declares (SUITE.refusals), and nothing left running of a broker
psbench started for it."""

import time

import pytest

from conftest import only_run, run_cli
from driver_suite import broker, broker_gone, broker_transport, capabilities, cases, expect
from psbench.base import manifests
from psbench.base.options import NODE_SIZE_RANGE

DIMENSIONS = {
    "reliability": ("best_effort", "reliable"),
    "durability": ("volatile", "transient_local", "persistent"),
    "history": ("keep_last", "keep_all"),
}
ARGUMENT = {"keep_last": "keep_last:1"}  # what --history takes for the value
TRANSPORTS = ("udp", "tcp")  # the first the driver does not offer is asked for
UNKNOWN_OPTION = "colour"


def supported(values) -> str:
    return "|".join(values) or "(none)"


def refusals(driver: str, caps: dict) -> list[list[tuple[str, list[str], str]]]:
    """The runs of a driver's refusals: each a list of (key, argv, message)."""
    runs: list[list[tuple[str, list[str], str]]] = [[]]
    for dimension, values in DIMENSIONS.items():
        missing = [v for v in values if v not in caps[dimension]]
        for i, value in enumerate(missing):
            while len(runs) <= i:
                runs.append([])
            message = (f"{driver}: {dimension} '{value}' is not supported; this driver "
                       f"supports {supported(caps[dimension])}")  # fmt: skip
            runs[i].append(
                (f"{dimension} {value}", [f"--{dimension}", ARGUMENT.get(value, value)], message)
            )
    transport = next(t for t in TRANSPORTS if t not in caps["transports"])
    message = (f"{driver}: transport '{transport}' is not supported; this driver supports "
               f"{supported(caps['transports'])}")  # fmt: skip
    runs[0].append((f"transport {transport}", ["--transport", transport], message))
    if not caps["loan"]:
        runs[0].append(("loan", ["--loan"], f"{driver}: --loan is not supported"))
    largest = caps["max_payload"]
    if largest < NODE_SIZE_RANGE[1]:  # else the CLI refuses it, before any run
        message = (f"{driver}: size {largest + 1} bytes is over this driver's largest message "
                   f"of {largest} bytes")  # fmt: skip
        runs[0].append(("size", ["--size", str(largest + 1)], message))
    message = (f"{driver}: option '{UNKNOWN_OPTION}' is not known; this driver takes "
               f"{'|'.join(caps['option_keys'])}")  # fmt: skip
    runs[0].append(("option", ["--option", f"{UNKNOWN_OPTION}=red"], message))
    # The next run names a broker of its own: psbench starts none for it.
    if broker(driver) is not None:
        if len(runs) == 1:
            runs.append([])
        syntax = expect(driver).broker_syntax
        message = f"{driver}: option broker='nowhere' is not {syntax}"
        runs[1].append(("broker", [*broker_transport(driver), "--option", "broker=nowhere"], message))  # fmt: skip
    if {"persistent", "best_effort"} <= set(caps["durability"]) | set(caps["reliability"]):
        message = f"{driver}: durability persistent needs reliability reliable: "
        runs[-1].append(("persistent best_effort",
                         ["--durability", "persistent", "--reliability", "best_effort"], message))  # fmt: skip
    return runs


def runs_of(driver: str, caps: dict) -> list[int]:
    return list(range(len(refusals(driver, caps))))


@pytest.mark.parametrize("driver,run", cases(manifests.driver_names(), runs_of))
def test_what_a_driver_does_not_offer_is_refused_in_its_words(driver, run, results):
    planned = refusals(driver, capabilities(driver))[run]
    argv = [a for _, args, _ in planned for a in args]
    proc = run_cli(["ping", "--driver", driver, "--count", "10", *argv], results)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    record = only_run(results)
    assert record["status"] == "refused", record["message"]
    reasons = expect(driver).refusals
    for key, _, message in planned:
        assert message in proc.stderr, (key, message, proc.stderr)
        # A reason in parentheses follows its message, as the SDK writes it.
        reason = reasons.get(key, "")
        said = f"{message} {reason}" if reason.startswith("(") else reason
        assert said in proc.stderr, (key, said, proc.stderr)
    # The node refuses before it would connect: psbench started no broker for the run.
    if broker(driver) is not None:
        assert not record.get("services"), record["services"]
    end = time.monotonic() + 10
    started = [s for s in record.get("services") or [] if s["started_by_psbench"]]
    while any(broker_gone(s) for s in started) and time.monotonic() < end:
        time.sleep(0.1)
    assert [broker_gone(s) for s in started] == [[]] * len(started)
    if run == 0 and capabilities(driver)["max_payload"] == NODE_SIZE_RANGE[1]:
        over = NODE_SIZE_RANGE[1] + 1
        proc = run_cli(["ping", "--driver", driver, "--size", str(over)], results / "size")
        assert proc.returncode == 2 and f"size {over} is out of range" in proc.stderr
