"""What security costs (`psbench reproduce security`): each secured configuration is read
against its plain twin and no other, the verdicts on hand-made intervals, the seed's
claim judged on what ran; end to end, the quick file on every built driver that takes
security, each row's medians those of its runs' samples files. Timings never asserted."""

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from psbench.base import paths
from psbench.reproduce import security
from psbench.results.samples import read_samples
from reproduce_runs import check_paper_written, paper_table, reproduce_quick, runs_by_label

STUDY = "security"
SECTIONS = ["What security costs"]


def _config(ok: bool = True, **params):
    return SimpleNamespace(params={"kind": "ping", "size": 64, **params}, ok_runs=[1] if ok else [],
                           driver=params.get("driver"))  # fmt: skip


def test_a_secured_configuration_is_paired_with_its_plain_twin_only():
    plain = _config(driver="a", security="none")
    plain_16k = _config(driver="a", size=16384)  # no security given: plain too
    secured = _config(driver="a", security="tls")
    secured_16k = _config(driver="a", security="tls", size=16384)
    other = _config(driver="b", security="tls")  # no plain twin ran
    failed_plain = _config(ok=False, driver="c", security="none")
    orphan = _config(driver="c", security="tls")  # its twin has no ok run
    found = security.pairs([plain, plain_16k, secured, secured_16k, other, failed_plain, orphan])
    assert found == [(plain, secured), (plain_16k, secured_16k)]


@pytest.mark.parametrize(
    "low,high,verdict",
    [(1.2, 1.4, "costs more"), (0.5, 0.9, "costs less"), (0.97, 1.2, "within noise"),
     (1.04, 1.30, "within noise")],
)  # fmt: skip
def test_a_cost_is_called_only_when_its_whole_interval_is_outside_the_noise(low, high, verdict):
    assert security._cost(low, high) == verdict


CLAIM = {
    "claims": {
        "c": {"source": "s", "text": "t", "check": "open-source-dds-secured", "mode": "encrypt"}
    }
}


def test_the_commercial_dds_claim_differs_only_when_an_open_source_dds_ran_secured():
    ran = [_config(driver="cyclonedds", security="encrypt")]
    (row,) = security._commercial_claim(ran, CLAIM).rows
    assert row[-1] == "differs" and row[-2].startswith("Cyclone DDS (open source) ran encrypt")
    failed = [_config(ok=False, driver="cyclonedds", security="encrypt")]
    (row,) = security._commercial_claim(failed, CLAIM).rows
    assert row[-1].startswith("not testable: no DDS run with security encrypt ended ok")
    broker = [_config(driver="mqtt", security="tls")]
    assert security._commercial_claim(broker, CLAIM).rows[0][-1].startswith("not testable")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    return reproduce_quick(STUDY, tmp_path_factory.mktemp(STUDY), timeout=1500)


@pytest.mark.long
@pytest.mark.host_wide
def test_every_secured_configuration_is_against_its_own_plain_runs(quick):
    root, paper = check_paper_written(quick, STUDY, SECTIONS)
    rows = paper_table(paper, "security-latency")["rows"]
    lines = runs_by_label(root).values()
    built = set(paths.driver_libraries())
    secured = {
        (line["params"]["driver"], line["params"].get("transport") or "default",
         line["params"]["security"], line["params"]["size"])
        for line in lines
        if line["params"]["kind"] == "ping" and line["params"]["security"] != "none"
        and line["params"]["driver"] in built and line["status"] == "ok"
    }  # fmt: skip
    names = {v: k for k, v in security.NAMES.items()}
    assert {(names[r["driver"]], r["transport"], r["mode"], r["size"]) for r in rows} == secured

    def p50_us(driver, transport, mode, size) -> float:
        (line,) = [
            line for line in lines
            if line["params"]["kind"] == "ping" and line["params"]["driver"] == driver
            and (line["params"].get("transport") or "default") == transport
            and line["params"]["security"] == mode and line["params"]["size"] == size
        ]  # fmt: skip
        samples = read_samples(root / line["run_dir"] / "ping.samples")
        ordered = np.sort(samples.latency_ns)  # the median by nearest rank, as tables take it
        return float(ordered[math.ceil(ordered.size / 2) - 1]) / 2000.0

    for row in rows:
        driver = names[row["driver"]]
        # Rounded to 2 decimals (1 above 100 µs).
        where = (driver, row["transport"])
        assert row["plain"] == pytest.approx(p50_us(*where, "none", row["size"]), abs=0.051)
        assert row["secured"] == pytest.approx(p50_us(*where, row["mode"], row["size"]), abs=0.051)
        assert row["low"] <= row["ratio"] <= row["high"]
    # Every secured run really ran secured: its record says so, with the CA's fingerprint.
    for line in lines:
        record = json.loads((root / line["run_dir"] / "run.json").read_text())
        mode = line["params"]["security"]
        if mode == "none":
            assert record["security"] is None
        else:
            assert record["security"]["mode"] == mode and len(record["security"]["ca_sha256"]) == 95
