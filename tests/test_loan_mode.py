"""`loan: auto` (and `--loan auto`): each middleware's zero-copy write where it has one,
a copy elsewhere; the choice recorded per run and named in every configuration's label.
Known answers: shm and zeromq declare loans, udp does not (`psbench drivers`)."""

import json

import pytest

from conftest import only_run, run_cli
from experiment_files import index_lines, run_experiment, write
from psbench.report.document import Settings, build_report
from psbench.results.load import load_results

SWEEP = """
    name: loans
    defaults: {kind: ping, count: 200, warmup: 20, loan: auto}
    matrix:
      driver: [udp, shm]
    runs:
      - {driver: shm, loan: false}
"""


def test_auto_loans_where_the_driver_can_and_every_label_says_so(driver_libs, results, tmp_path):
    path = write(tmp_path, SWEEP)
    store = tmp_path / "sweep"
    proc = run_experiment(path, results, "-o", str(store))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = {}
    for entry in index_lines(store):
        record = json.loads((store / entry["run_dir"] / "run.json").read_text())
        ping = json.loads((store / entry["run_dir"] / "ping.json").read_text())
        runs[(entry["params"]["driver"], entry["params"].get("loan"))] = (record, ping)
    udp, _ = runs[("udp", "auto")]
    shm_auto, shm_auto_ping = runs[("shm", "auto")]
    shm_copy, shm_copy_ping = runs[("shm", False)]
    # What the node really did, from its own summary.
    assert shm_auto_ping["config"]["loan"] is True and shm_copy_ping["config"]["loan"] is False
    assert udp["spec"]["loan"] is False and "no zero-copy" in udp["auto"]["loan"]
    assert shm_auto["spec"]["loan"] is True and "zero-copy" in shm_auto["auto"]["loan"]
    assert "loan" not in shm_copy.get("auto", {})
    labels = sorted(c.label for c in build_report(load_results(store), Settings()).configs)
    assert labels == ["shm 64 B", "shm 64 B loan", "udp 64 B"], labels


def test_a_loan_the_driver_cannot_make_is_refused_but_auto_never_is(driver_libs, results, tmp_path):
    path = write(
        tmp_path,
        """
        name: refused
        defaults: {kind: ping, count: 100}
        runs:
          - {driver: udp, loan: true}
          - {driver: udp, loan: auto}
    """,
    )
    proc = run_experiment(path, results, "--dry-run")
    assert proc.returncode == 2
    refusals = [ln for ln in proc.stderr.splitlines() if "--loan is not supported" in ln]
    assert len(refusals) == 1 and f"{path}:4:" in refusals[0], proc.stderr


@pytest.mark.parametrize("value,words", [("sometimes", "is not auto"), ("[auto]", "lists")])
def test_a_bad_loan_value_names_what_it_takes(driver_libs, results, tmp_path, value, words):
    path = write(
        tmp_path,
        f"""
        name: bad
        defaults: {{kind: ping, driver: udp, loan: {value}}}
    """,
    )
    proc = run_experiment(path, results, "--dry-run")
    assert proc.returncode == 2 and words in proc.stderr and "loan" in proc.stderr, proc.stderr


def test_the_cli_takes_loan_auto_and_says_what_the_writes_did(driver_libs, results):
    proc = run_cli(
        ["ping", "--driver", "udp", "--count", "200", "--loan", "auto", "--quiet"], results
    )
    assert proc.returncode == 0, proc.stderr
    assert "copied writes" in proc.stdout
    assert only_run(results)["spec"]["loan"] is False
