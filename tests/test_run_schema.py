"""run.json's one definition (results/run_record.py): the committed JSON Schema and field
list are what it generates, and the schema refuses a damaged run.json naming the field.
(conftest.py validates every run.json the other tests make against the same schema.)"""

import json

import jsonschema
import pytest

from psbench.results import run_record
from psbench.run import run_schema
from psbench.run.spec import MeasureSpec
from run_json_valid import Checker

FIX = "run scripts/run-json-docs and commit what it writes"


def test_the_committed_schema_is_the_generated_one():
    assert run_schema.SCHEMA_FILE.read_text() == run_schema.schema_text(), FIX


def test_the_committed_field_list_is_the_generated_one():
    assert run_schema.DOCS_FILE.read_text() == run_schema.markdown(), FIX


def _record() -> dict:
    """A whole run.json of an ended ping run, as measure.py writes one."""
    spec = MeasureSpec(kind="ping", driver="udp", driver_path="/x/libpsbench-udp.so", size=64)
    return {
        "format": run_record.RUN_FORMAT,
        "run_id": "AbCdEfGhIj",
        "kind": "ping",
        "created_utc": "2026-11-29T04:00:00.000+00:00",
        "finished_utc": "2026-11-29T04:00:02.000+00:00",
        "cli_argv": ["ping", "--driver", "udp"],
        "node": "/x/psbench-node",
        "driver": {"name": "udp"},
        "spec": spec.to_json(),
        "auto": {},
        "placement": "inter",
        "barrier": "stdio",
        "cpu_sharing": {
            "roles": 2,
            "cpus": 2,
            "pinned": True,
            "oversubscribed": None,
            "spinning_per_cpu": None,
        },
        "status": "ok",
        "message": None,
        "processes": [{"name": "ping", "roles": ["ping"], "argv": ["psbench-node"]}],
        "network": None,
        "env": {},
        "security": None,
        "exit_codes": {"ping": 0, "pong": 0},
        "summary_errors": {},
        "leftovers_removed": [],
        "cleanup": None,
        "problems": [],
        "stats": {"ping": {"unit": "ns", "rtt": {"n": 10}, "nonpositive": 0}},
        "accounting": {},
        "late_join": None,
        "udp_datagrams": None,
        "throughput": None,
        "resources": {"measured": False, "why": "no window"},
    }


def _refusal(record: dict) -> jsonschema.ValidationError | None:
    return jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(json.loads(run_schema.SCHEMA_FILE.read_text())).iter_errors(
            record
        )
    )


def test_a_whole_record_is_accepted():
    assert _refusal(_record()) is None


def _without(key):
    def damage(record):
        del record[key]

    return damage


def _set(path, value):
    def damage(record):
        *parents, last = path
        for p in parents:
            record = record[p]
        record[last] = value

    return damage


DAMAGES = {
    "a field always written, missing": (_without("run_id"), "$", "'run_id' is a required"),
    "a field written at the end, missing": (_without("stats"), "$", "'stats' is a required"),
    "a string where a count goes": (
        _set(["exit_codes", "ping"], "zero"),
        "$.exit_codes.ping",
        "not of type",
    ),
    "a status no run has": (_set(["status"], "fine"), "$.status", "is not one of"),
    "a key the definition lacks": (_set(["bogus"], 1), "$", "'bogus' was unexpected"),
    "a setting MeasureSpec lacks": (_set(["spec", "sizes"], 64), "$.spec", "'sizes' was"),
    "a block's field of the wrong type": (
        _set(["cpu_sharing", "pinned"], "yes"),
        "$.cpu_sharing.pinned",
        "not of type 'boolean'",
    ),
}


@pytest.mark.parametrize("damage, where, says", DAMAGES.values(), ids=DAMAGES.keys())
def test_a_damaged_record_is_refused_naming_the_field(damage, where, says):
    record = _record()
    damage(record)
    refusal = _refusal(record)
    assert refusal is not None
    assert refusal.json_path == where
    assert says in refusal.message


def test_a_run_still_starting_needs_no_end_fields():
    record = _record()
    for key in ("exit_codes", "summary_errors", "leftovers_removed", "cleanup", "problems",
                "stats", "accounting", "late_join", "udp_datagrams", "throughput", "resources"):  # fmt: skip
        del record[key]
    record.update(status="starting", finished_utc=None)
    assert _refusal(record) is None


def test_a_reader_gets_a_block_of_any_age_and_a_misspelt_one_fails():
    record = _record()
    assert run_record.block(record, "cpu_sharing")["roles"] == 2
    assert run_record.block(record, "throughput") == {}  # null in a ping run
    older = {"format": run_record.RUN_FORMAT, "run_id": "x", "status": "ok"}
    assert run_record.block(older, "resources") == {}  # written before psbench read them
    assert run_record.driver_version(older) is None
    assert run_record.driver_version({"driver": {"name": "udp", "version": "2"}}) == "2"
    with pytest.raises(KeyError, match="'resource'"):
        run_record.block(record, "resource")


@pytest.mark.run_json_by_hand  # a damaged record, on purpose
def test_the_tests_check_names_the_file_and_field_of_a_damaged_run_json(tmp_path):
    """conftest's check (tests/run_json_valid.py): a test's folder at its end, the other
    folders of the base (the fixtures') once each, a folder marked by hand left alone."""
    base = tmp_path / "base"
    good, bad = _record(), _record()
    bad["cpu_sharing"]["roles"] = "two"
    for folder, record in (("test_x0", bad), ("sweep0", bad), ("other0", good)):
        (base / folder / "run").mkdir(parents=True)
        (base / folder / "run" / "run.json").write_text(json.dumps(record))
    checker = Checker()
    (refused,) = checker.test_folder(base / "test_x0", by_hand=False)
    assert refused.startswith(f"{base / 'test_x0' / 'run' / 'run.json'}: $.cpu_sharing.roles:")
    assert checker.test_folder(base / "test_x0", by_hand=True) == []
    (refused,) = checker.fixture_folders(base)  # test_x0 is a test's: not again
    assert refused.startswith(f"{base / 'sweep0' / 'run' / 'run.json'}: $.cpu_sharing.roles:")
    assert checker.fixture_folders(base) == []  # each file once
