"""psbench criteria's report from a hand-written criteria.json: the matrix's cells, the
IJRASET Table 1 comparison (agree, disagree, partly, not comparable on known inputs),
`--report DIR` rendering the files again without running anything, bad arguments and
broken manifest tables refused with one message (exit code 2)."""

import csv
import json
import os

import pytest

from conftest import refused_manifest, run_cli
from psbench.base import manifests
from psbench.reproduce import ijraset_criteria
from psbench.run.criteria.verdict import Verdict

# The IJRASET comparison -------------------------------------------------------------


def v(verdict, criterion="x", driver="d", evidence="-"):
    return Verdict(criterion, driver, verdict, evidence)


@pytest.mark.parametrize(
    "criterion,paper,ours,expected",
    [
        ("persistence", "Yes (with built in plugin)", "yes", "agree"),
        ("persistence", "Yes (with built in plugin)", "no", "disagree"),
        ("persistence", "Yes", "partial", "partly"),
        ("routing", "No", "no", "agree"),
        ("monitoring", "No", "not testable here", "not comparable"),
        ("routing", "yes", "documented, not verified", "not comparable"),
        ("interoperability", "RTPS transport", "yes", "agree"),
        ("interoperability", "RTPS transport", "no", "disagree"),
        ("architecture", "Non-Federated", "peer-to-peer", "agree"),
        ("architecture", "Non-Federated", "broker", "disagree"),
        ("architecture", "Both", "peer-to-peer", "not comparable"),
        ("licence", "Open Source with commercial support", "Apache-2.0", "agree"),
        ("licence", "commercial", "EPL-2.0 or EDL-1.0", "disagree"),
    ],
)
def test_table1_cells_are_compared_with_ours(criterion, paper, ours, expected):
    assert ijraset_criteria.compare(criterion, paper, v(ours, criterion)) == expected


def test_table1_rows_only_for_the_papers_systems_we_ran():
    published = {
        "systems": {"p": {"name": "Paper DDS", "driver": "d"},
                    "q": {"name": "Absent DDS", "driver": None}},
        "criteria": {"values": {"p": {"persistence": "Yes", "routing": "yes"}}},
    }  # fmt: skip
    verdicts = [
        v("yes", "persistence"),
        v("documented, not verified", "routing", evidence="bridge"),
    ]
    table = ijraset_criteria.table(published, verdicts, ["d"])
    rows = {r["criterion"]: r for r in table.records()}
    assert {r["system"] for r in rows.values()} == {"Paper DDS"}
    assert rows["persistence"]["agreement"] == "agree"
    assert rows["routing"]["ours"] == "documented, not verified: bridge"
    assert rows["routing"]["agreement"] == "not comparable"
    assert rows["monitoring"]["ours"] == "not run by psbench criteria"
    assert ijraset_criteria.table(published, verdicts, ["other"]) is None


# The report, rendered again ---------------------------------------------------------


def record(tmp_path):
    folder = tmp_path / "set"
    (folder / "persistence" / "run-a").mkdir(parents=True)
    verdicts = [
        Verdict("architecture", "fastdds", "peer-to-peer", "manifest"),
        Verdict("persistence", "fastdds", "yes", "got 5 of them",
                run_dir=str(folder / "persistence" / "run-a"), figures={"history": 5}),
        Verdict("architecture", "mqtt", "broker", "manifest"),
        Verdict("persistence", "mqtt", "not applicable", "refused"),
        Verdict("routing", "mqtt", "documented, not verified", "bridges",
                source="https://example.org/bridge"),
    ]  # fmt: skip
    value = {
        "format": "psbench-criteria/1",
        "created_utc": "2026-11-26T10:00:00Z",
        "finished_utc": "2026-11-26T10:01:00Z",
        "cli_argv": ["psbench", "criteria"],
        "quick": True,
        "drivers": ["fastdds", "mqtt"],
        "criteria": [{"name": "architecture", "title": "architecture"},
                     {"name": "persistence", "title": "persistence (late joiner)"},
                     {"name": "routing", "title": "routing"}],
        "verdicts": [x.to_json() for x in verdicts],
        "env": {},
    }  # fmt: skip
    (folder / "criteria.json").write_text(json.dumps(value))
    return folder


def test_report_renders_the_matrix_again_from_criteria_json(tmp_path):
    folder = record(tmp_path)
    proc = run_cli(["criteria", "--report", str(folder)], tmp_path / "results", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "Criteria matrix" in proc.stdout and "IJRASET Table 1" in proc.stdout
    out = folder / "report"
    with open(out / "criteria-matrix.csv") as f:
        rows = {r["driver"]: r for r in csv.DictReader(f)}
    assert rows["fastdds"]["persistence"] == "yes"
    assert rows["mqtt"]["persistence"] == "not applicable"
    assert rows["mqtt"]["routing"] == "documented, not verified"
    assert rows["fastdds"]["routing"] == ""  # no verdict: not run
    evidence = json.loads((out / "criteria-evidence.json").read_text())["rows"]
    run = next(r for r in evidence if r["criterion"] == "persistence" and r["driver"] == "fastdds")
    assert run["run_dir"] == "persistence/run-a" and json.loads(run["figures"]) == {"history": 5}
    beside = json.loads((out / "criteria-ijraset.json").read_text())["rows"]
    persistence = next(r for r in beside if r["criterion"] == "persistence")
    assert (persistence["driver"], persistence["ours"], persistence["agreement"]) == (
        "fastdds",
        "yes",
        "agree",
    )
    page = (out / "criteria.html").read_text()
    assert "Content-Security-Policy" in page and "<script" not in page
    assert "https://example.org/bridge" in (out / "criteria.md").read_text()


@pytest.mark.parametrize(
    "args,words",
    [
        (["--drivers", "nosuch"], "argument --drivers: nosuch is not a driver"),
        (["--criteria", "speed"], "argument --criteria: speed is not a criterion"),
        (["--criteria", ","], "argument --criteria: nothing is not a criterion"),
        (["--report", "{tmp}/missing"], "argument --report: {tmp}/missing: no such folder"),
        (["--report", "{tmp}"], "criteria.json: cannot be read"),
        (["--report", "{tmp}", "--quick"], "argument --report: it renders a result set again"),
    ],
)
def test_bad_arguments_exit_2_with_one_message(tmp_path, args, words):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    words = words.replace("{tmp}", str(tmp_path))
    proc = run_cli(["criteria", *args], tmp_path / "results", timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0], proc.stderr
    assert not (tmp_path / "results").exists()  # nothing run, nothing written


def test_report_of_another_commands_json_is_refused(tmp_path):
    (tmp_path / "criteria.json").write_text('{"format": "psbench-interop/1"}')
    proc = run_cli(["criteria", "--report", str(tmp_path)], tmp_path / "results", timeout=60)
    assert proc.returncode == 2 and "not psbench-criteria/1" in proc.stderr


# The manifest's tables --------------------------------------------------------------


BROKEN = {
    "monitor without expect": ('[monitor]\nargv = ["t"]\n', "monitor.expect: missing"),
    "monitor regex": ('[monitor]\nargv = ["t"]\nexpect = "(("\n', "monitor.expect: not a regular"),
    "monitor timeout": ('[monitor]\nargv = ["t"]\nexpect = "x"\ntimeout_s = 0\n',
                        "monitor.timeout_s: give 1 to 300"),
    "monitor field": ('[monitor]\nargv = ["t"]\nexpect = "x"\ncolour = 1\n',
                      "monitor.colour: unknown field"),
    "claim without source": ('[claims.routing]\ntext = "bridges"\n',
                             "claims.routing: give text and source"),
    "claim count": ('[claims.routing]\ntext = "a"\nsource = "b"\ncount = "one"\n',
                    "claims.routing.count: must be int"),
    "claim not a table": ('[claims]\nrouting = "yes"\n', "claims.routing: must be a table"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_monitor_or_claim_is_refused_naming_the_field(mw_drivers_dir, case):
    text, words = BROKEN[case]
    assert words in refused_manifest(mw_drivers_dir, 'architecture = "broker"\n' + text)


def test_claims_and_monitor_are_read(mw_drivers_dir):
    (mw_drivers_dir / "mw" / "manifest.toml").write_text(
        'architecture = "broker"\n[monitor]\nargv = ["t", "{broker}"]\nexpect = "psb_"\n'
        'debian = ["t-tools"]\nname = "the-tool"\n[claims.persistence]\ntext = "keeps  one"\nsource = "u"\n'
        "count = 1\n"
    )
    m = manifests.load("mw")
    assert m.monitor.argv == ("t", "{broker}") and m.monitor.timeout_s == 20
    assert m.monitor.debian == ("t-tools",) and m.monitor.name == "the-tool"
    assert (m.claims["persistence"].text, m.claims["persistence"].count) == ("keeps one", 1)


def test_the_reproduction_reads_its_documented_facts_from_the_manifests():
    from psbench.reproduce import ijraset

    for driver in ("cyclonedds", "fastdds", "mqtt"):
        found = ijraset.documented(driver)
        claims = manifests.load(driver).claims
        assert found["routing"] == claims["routing"].text and claims["routing"].source
        assert set(ijraset.DOCUMENTED_CRITERIA) <= set(found)
        assert claims["licence"].source in found["source"]


def test_a_monitoring_tool_not_installed_is_not_testable_with_its_package(mw_drivers_dir, tmp_path):
    from psbench.run.criteria import monitoring
    from psbench.run.criteria.context import Context

    (mw_drivers_dir / "mw" / "manifest.toml").write_text(
        'architecture = "broker"\n[monitor]\nargv = ["no-such-tool-psb", "{broker}"]\n'
        'expect = "psb_"\ndebian = ["no-such-tools"]\n[claims.monitoring]\n'
        'text = "an admin console"\nsource = "https://example.org/console"\n'
    )
    ctx = Context(["mw"], {}, {"mw": {}}, tmp_path, {}, ["psbench", "criteria"])
    found = monitoring.assess(ctx)["mw"]
    assert found.verdict == "not testable here"
    assert "no-such-tool-psb is not installed (Debian: no-such-tools)" in found.evidence
    assert "documented, not verified: an admin console" in found.evidence
    assert found.source == "https://example.org/console"


def test_a_monitoring_tools_home_path_is_looked_for_in_the_home_folder(mw_drivers_dir, tmp_path):
    from psbench.run.criteria import monitoring
    from psbench.run.criteria.context import Context

    (mw_drivers_dir / "mw" / "manifest.toml").write_text(
        'architecture = "broker"\n[monitor]\nargv = ["~/.cache/no-such-tool-psb", "{broker}"]\n'
        'expect = "psb_"\n'
    )
    ctx = Context(["mw"], {}, {"mw": {}}, tmp_path, {}, ["psbench", "criteria"])
    found = monitoring.assess(ctx)["mw"]
    home = os.path.expanduser("~")
    assert found.verdict == "not testable here"
    assert f"its monitoring tool {home}/.cache/no-such-tool-psb is not installed" in found.evidence


def test_setup_installs_every_monitoring_tools_package():
    import subprocess

    from conftest import REPO

    listed = subprocess.run(
        ["bash", str(REPO / "scripts" / "setup-system"), "--list", "--with", "all"],
        capture_output=True, text=True, timeout=60,
    ).stdout.split()  # fmt: skip
    wanted = {p for n in manifests.driver_names() if (m := manifests.load(n).monitor)
              for p in m.debian}  # fmt: skip
    assert "mosquitto-clients" in wanted  # known answer: mqtt's mosquitto_sub
    assert wanted <= set(listed)
