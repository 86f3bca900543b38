"""Experiment files expanded into runs: matrix, exclude, runs, repetitions, precedence,
driver options, labels, --filter. Planned only (the driver checks ask the built node);
nothing runs here."""

from dataclasses import fields

import pytest

from experiment_files import plan_of
from psbench.base.errors import UserError
from psbench.run.experiment.params import DERIVED_FIELDS, PARAMS
from psbench.run.spec import MeasureSpec


def test_every_measure_setting_is_a_run_parameter():
    # A setting added to MeasureSpec must be settable from an experiment file too.
    assert set(PARAMS) == {f.name for f in fields(MeasureSpec)} - DERIVED_FIELDS


def summary(plan, *keys):
    return [tuple(run.get(k) for k in keys) for run in plan.runs]


def test_matrix_is_the_cartesian_product_first_key_slowest(driver_libs, tmp_path):
    plan = plan_of(
        tmp_path,
        """
        defaults: {kind: ping, count: 100}
        matrix:
          driver: [udp, shm]
          size: [64, 16KiB, 1MiB]
          notify: [wait, poll]
    """,
    )
    assert len(plan.runs) == 12
    assert summary(plan, "driver", "size", "notify")[:4] == [
        ("udp", 64, "wait"),
        ("udp", 64, "poll"),
        ("udp", 16384, "wait"),
        ("udp", 16384, "poll"),
    ]
    assert [run.number for run in plan.runs] == list(range(1, 13))
    assert all(run.get("count") == 100 and run.get("kind") == "ping" for run in plan.runs)
    assert len({run.identity for run in plan.runs}) == 12
    assert len({run.label for run in plan.runs}) == 12


def test_exclude_drops_runs_matching_every_key_of_a_rule(driver_libs, tmp_path):
    plan = plan_of(
        tmp_path,
        """
        defaults: {kind: ping}
        matrix:
          driver: [udp, shm]
          reliability: [best_effort, reliable]
          size: [64, 256, 1024]
        exclude:
          - {driver: udp, reliability: reliable}
          - {driver: shm, size: [256, 1024]}    # a list: any of these values
    """,
    )
    combos = summary(plan, "driver", "reliability", "size")
    assert len(combos) == 2 * 2 * 3 - 3 - 4
    assert ("udp", "reliable", 64) not in combos
    assert {c for c in combos if c[0] == "shm"} == {
        ("shm", "best_effort", 64),
        ("shm", "reliable", 64),
    }
    assert plan.expansion.points == 12 and plan.expansion.excluded == 7
    assert plan.expansion.notes == []


def test_exclude_values_are_read_like_the_matrix(driver_libs, tmp_path):
    # 16KiB in a rule is the same size as 16384 in the matrix.
    plan = plan_of(
        tmp_path,
        """
        defaults: {kind: ping, driver: udp}
        matrix: {size: [64, 16384]}
        exclude: [{size: 16KiB}, {notify: poll}]
    """,
    )
    assert summary(plan, "size") == [(64,)]
    assert len(plan.expansion.notes) == 1
    assert "exclude[1] matches no run" in plan.expansion.notes[0]
    assert plan.expansion.notes[0].startswith("exp.yaml:3:")


def test_repetitions_are_rounds_of_separate_runs(driver_libs, tmp_path):
    plan = plan_of(
        tmp_path,
        """
        defaults: {kind: ping}
        matrix: {driver: [udp, shm]}
        repetitions: 3
    """,
    )
    assert [(r.number, r.get("driver"), r.rep) for r in plan.runs] == [
        (1, "udp", 1),
        (2, "shm", 1),
        (3, "udp", 2),
        (4, "shm", 2),
        (5, "udp", 3),
        (6, "shm", 3),
    ]
    assert plan.runs[0].params == plan.runs[2].params
    assert plan.runs[0].identity != plan.runs[2].identity
    assert plan.runs[2].label.endswith("-rep2")


def test_explicit_runs_join_the_matrix_and_exclude_leaves_them(driver_libs, tmp_path):
    plan = plan_of(
        tmp_path,
        """
        defaults: {kind: ping, driver: udp}
        matrix: {size: [64, 128]}
        exclude: [{size: 2048}]
        runs:
          - {size: 2048, notify: poll}
          - {kind: pubsub, driver: shm, rate: 500}
    """,
    )
    assert summary(plan, "kind", "driver", "size", "notify", "rate") == [
        ("ping", "udp", 64, None, None),
        ("ping", "udp", 128, None, None),
        ("ping", "udp", 2048, "poll", None),
        ("pubsub", "shm", 64, None, 500.0),
    ]
    assert [r.source for r in plan.runs] == ["matrix", "matrix", "runs[0]", "runs[1]"]


def test_runs_without_a_matrix_and_a_single_run_from_defaults(driver_libs, tmp_path):
    only_runs = plan_of(
        tmp_path,
        """
        defaults: {kind: ping}
        runs: [{driver: udp}, {driver: shm}]
    """,
    )
    assert summary(only_runs, "driver") == [("udp",), ("shm",)]
    single = plan_of(tmp_path, "defaults: {kind: pubsub, driver: shm, size: 1MiB}\n")
    assert summary(single, "kind", "driver", "size", "rate") == [
        ("pubsub", "shm", 1 << 20, 1000.0)
    ]  # psbench pubsub's default rate


def test_precedence_and_psbench_defaults(driver_libs, tmp_path):
    plan = plan_of(
        tmp_path,
        """
        defaults: {kind: ping, driver: udp, count: 500, notify: poll, size: 128}
        matrix: {notify: [wait]}
        runs:
          - {duration: 2}       # a duration replaces the count of defaults
          - {size: null}        # null: back to psbench's default (64)
    """,
    )
    matrix, with_duration, reset = plan.runs
    assert matrix.get("notify") == "wait" and matrix.get("count") == 500
    assert with_duration.get("duration") == 2.0 and with_duration.get("count") is None
    assert with_duration.get("notify") == "poll"
    assert reset.get("size") == 64
    for run in plan.runs:
        assert run.get("placement") == "inter" and run.get("timeout") == 600.0
    spec = plan.specs[2]
    assert spec.duration == 2.0 and spec.count is None and spec.notify == "poll"


def test_driver_options_pass_through_and_matrix_over_an_option(driver_libs, tmp_path):
    plan = plan_of(
        tmp_path,
        """
        defaults:
          kind: ping
          driver: cyclonedds
          size: 32             # a complex sample is sized by elements=N, not bytes
          options: {domain_id: 07}
        matrix:
          options.type: [bytes, complex]
    """,
    )
    assert [plan.specs[r.number].options for r in plan.runs] == [
        ["domain_id=07", "type=bytes"],
        ["domain_id=07", "type=complex"],
    ]
    assert [r.label for r in plan.runs] == [
        "cyclonedds-32B-type=bytes",
        "cyclonedds-32B-type=complex",
    ]
    mapping_axis = plan_of(
        tmp_path,
        """
        defaults: {kind: ping, driver: fastdds, size: 32}
        matrix:
          options: [{type: bytes}, {type: complex, elements: 64}]
    """,
    )
    assert [mapping_axis.specs[r.number].options for r in mapping_axis.runs] == [
        ["type=bytes"],
        ["elements=64", "type=complex"],
    ]
    nested = plan_of(
        tmp_path,
        """
        defaults: {kind: ping, driver: fastdds, size: 32}
        matrix:
          options: {type: [bytes, complex], domain_id: [1, 2]}
    """,
    )
    assert [nested.specs[r.number].options for r in nested.runs] == [
        ["domain_id=1", "type=bytes"],
        ["domain_id=2", "type=bytes"],
        ["domain_id=1", "type=complex"],
        ["domain_id=2", "type=complex"],
    ]


def test_cpus_default_pinning_explicit_and_none(driver_libs, tmp_path):
    plan = plan_of(
        tmp_path,
        """
        defaults: {kind: ping, driver: udp}
        matrix:
          cpus: [none, {ping: 0, pong: 0}]
        runs: [{size: 128}]
    """,
    )
    specs = [plan.specs[r.number] for r in plan.runs]
    assert specs[0].cpus == {}
    assert specs[1].cpus == {"ping": 0, "pong": 0}
    assert set(specs[2].cpus) == {"ping", "pong"}  # spec.default_cpus: one role per core


def test_kind_specific_defaults_apply_where_they_mean_something(driver_libs, tmp_path):
    plan = plan_of(
        tmp_path,
        """
        defaults: {driver: shm, sample_timeout: 2, idle_timeout: 3}
        matrix: {kind: [ping, pubsub]}
    """,
    )
    ping, pubsub = plan.runs
    assert ping.get("sample_timeout") == 2.0 and ping.get("idle_timeout") is None
    assert pubsub.get("idle_timeout") == 3.0 and pubsub.get("sample_timeout") is None


def test_filter_selects_and_keeps_run_numbers(driver_libs, tmp_path):
    text = """
        defaults: {kind: ping}
        matrix: {driver: [udp, shm], size: [64, 16KiB]}
        repetitions: 2
    """
    plan = plan_of(tmp_path, text, ["size=16KiB"])
    assert len(plan.runs) == 8
    assert [r.number for r in plan.selected] == [2, 4, 6, 8]
    assert sorted(plan.specs) == [2, 4, 6, 8]
    either = plan_of(tmp_path, text, ["driver=shm", "rep=2", "size=64", "size=16384"])
    assert [r.number for r in either.selected] == [7, 8]
    assert [r.number for r in plan_of(tmp_path, text, ["run=3"]).selected] == [3]


@pytest.mark.parametrize(
    "bad,words",
    [
        ("colour=red", ["unknown key 'colour'"]),
        ("size=huge", ["'huge' is not a size"]),
        ("driver=sctp", ["selects none of the 4 runs"]),
        ("novalue", ["use KEY=VALUE"]),
    ],
)
def test_bad_filter(driver_libs, tmp_path, bad, words):
    with pytest.raises(UserError) as caught:
        plan_of(
            tmp_path,
            "defaults: {kind: ping}\nmatrix: {driver: [udp, shm], size: [64, 128]}\n",
            [bad],
        )
    assert caught.value.exit_code == 2
    for word in words:
        assert word in str(caught.value)


def test_identity_depends_on_parameters_not_on_how_they_are_written(driver_libs, tmp_path):
    a = plan_of(tmp_path, "defaults: {kind: ping, driver: udp, size: 16KiB}\n")
    b = plan_of(
        tmp_path,
        """
        matrix:
          size: [16384]
        defaults:
          driver: udp
          kind: ping
    """,
    )
    assert a.runs[0].identity == b.runs[0].identity
    c = plan_of(tmp_path, "defaults: {kind: ping, driver: udp, size: 16KiB, count: 5}\n")
    assert c.runs[0].identity != a.runs[0].identity
