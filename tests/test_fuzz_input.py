"""Property-based fuzzing of what users type and write: random bytes and random YAML
structures fed to the experiment loader, random argument lists to the CLI's parser and
its argument checks. Every case ends in a valid experiment or psbench's own error
(ExperimentError / UserError, or argparse's exit 2), never another exception, within a
deadline. Nothing is ever run: only loading, checking and parsing."""

import contextlib
import io
import string

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from psbench.base.errors import UserError
from psbench.cli import cmd_measure
from psbench.cli.main import build_parser
from psbench.run.experiment import ExperimentError, prepare

CASE = settings(
    max_examples=150,
    deadline=2000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
KEYS = [
    "name",
    "description",
    "defaults",
    "matrix",
    "runs",
    "exclude",
    "repetitions",
    "search",
    "kind",
    "driver",
    "size",
    "count",
    "duration",
    "rate",
    "warmup",
    "reliability",
    "history",
    "notify",
    "options",
    "cpus",
    "loan",
    "pin",
    "subscribers",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(string.printable, max_size=12),
    st.sampled_from(
        ["ping", "pubsub", "udp", "shm", "64", "16KiB", "keep_last:5", "auto", "none", "1e20", "-1"]
    ),
)
TREES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.sampled_from(KEYS), st.text(string.ascii_letters, max_size=6)),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=25,
)


def load_only(path):
    """prepare() ends in a plan or psbench's own error; anything else fails the test."""
    try:
        prepare(path, path.name)
    except (ExperimentError, UserError):
        pass


@CASE
@given(data=st.binary(max_size=400))
def test_random_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "bytes.yaml"
    path.write_bytes(data)
    load_only(path)


@CASE
@given(tree=TREES)
def test_random_yaml_structures(tmp_path_factory, tree):
    path = tmp_path_factory.mktemp("fuzz") / "tree.yaml"
    path.write_text(yaml.safe_dump(tree, allow_unicode=True))
    load_only(path)


@CASE
@given(tree=st.dictionaries(st.sampled_from(KEYS[7:]), SCALARS, max_size=6))
def test_random_defaults_of_a_real_experiment(tmp_path_factory, tree):
    path = tmp_path_factory.mktemp("fuzz") / "defaults.yaml"
    path.write_text(
        yaml.safe_dump({"name": "fuzz", "defaults": {"kind": "ping", "driver": "udp", **tree}})
    )
    load_only(path)


OPTIONS = [
    "--driver",
    "--size",
    "--count",
    "--duration",
    "--rate",
    "--warmup",
    "--cpu",
    "--fifo",
    "--pin",
    "--loan",
    "--history",
    "--reliability",
    "--option",
    "--timeout",
    "--max-samples",
    "--reply-size",
    "--subscribers",
    "--quiet",
    "--send-spin-us",
    "--inject",
    "--late-join",
    "--sise",
    "-x",
]
VALUES = st.one_of(
    st.sampled_from(
        [
            "udp",
            "64",
            "0",
            "-1",
            "1e20",
            "nan",
            "inf",
            "auto",
            "ping=0",
            "role",
            "keep_last:0",
            "x=y",
            "16KiB",
            "",
        ]
    ),
    st.text(string.printable, max_size=8),
)


@CASE
@given(
    command=st.sampled_from(["ping", "pubsub", "pign", "ratesearch"]),
    argv=st.lists(st.one_of(st.sampled_from(OPTIONS), VALUES), max_size=8),
)
def test_random_command_lines_parse_or_exit_2(command, argv):
    parser = build_parser()
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            args = parser.parse_args([command, *argv])
        except SystemExit as exc:
            assert exc.code in (0, 2)
            return
    if command in ("ping", "pubsub"):
        try:
            cmd_measure.spec_from_args(args)
        except UserError as exc:
            assert exc.exit_code == 2


@pytest.mark.parametrize(
    "text,words",
    [
        ("name: x\x00\n", "NUL byte"),
        (
            "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
            "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
            "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
            "more than 100,000 values",
        ),
        ("name: d\ndefaults: " + "[" * 3000 + "]" * 3000 + "\n", "nested more than 64 deep"),
    ],
)
def test_hostile_files_get_one_message_at_once(tmp_path, text, words):
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    with pytest.raises(ExperimentError) as caught:
        prepare(path, path.name)
    assert words in str(caught.value.problems[0])


def test_a_matrix_too_large_is_refused_from_its_size_alone(tmp_path):
    sizes = "[" + ",".join(str(64 + i) for i in range(1000)) + "]"
    counts = "[" + ",".join(str(1 + i) for i in range(1000)) + "]"
    path = tmp_path / "big.yaml"
    path.write_text(
        f"name: big\ndefaults: {{kind: ping, driver: udp}}\nmatrix:\n"
        f"  size: {sizes}\n  count: {counts}\nrepetitions: 3\n"
    )
    with pytest.raises(ExperimentError) as caught:
        prepare(path, path.name)
    message = str(caught.value.problems[0])
    assert "up to 3,000,000 runs" in message and "--max-runs" in message
