"""One table of run parameters (run/parameters.py) makes the command line's options, the
experiment files' keys and MeasureSpec: a value reads the same both ways, a bad one is
refused in the same words, and the rules between settings speak each user's words.
Parsing only: nothing runs."""

import argparse
from dataclasses import fields
from types import SimpleNamespace

import pytest

from psbench.cli.run_options import add_run_arguments
from psbench.run import parameters, run_rules
from psbench.run.experiment.params import PARAMS, BadValue
from psbench.run.spec import MeasureSpec


def test_the_table_names_every_setting_of_measure_spec():
    # Known answer: the fields psbench fills in itself are the only ones not in the table.
    table = {param.name for param in parameters.TABLE}
    assert {f.name for f in fields(MeasureSpec)} - table == {"driver_path", "role_drivers", "auto"}
    assert table - {f.name for f in fields(MeasureSpec)} == set()


def parse_cli(kind: str, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_run_arguments(parser, kind)
    return parser.parse_args(["--driver", "udp", *argv])


@pytest.mark.parametrize(
    "kind,key,text,value",
    [
        ("pubsub", "size", "16KiB", 16384),
        ("ping", "rate", "250", 250.0),
        ("pubsub", "history", "keep_last:4", "keep_last:4"),
        ("pubsub", "relays", "1", 1),
        ("pubsub", "restart_broker", "2:1", "2:1"),
        ("graph", "max_samples", "500", 500),
        ("ping", "loan", "auto", "auto"),
    ],
)
def test_a_value_reads_the_same_as_an_option_and_in_a_file(kind, key, text, value):
    param = parameters.BY_NAME[key]
    args = parse_cli(kind, param.option, text, *(["--graph", "g.yaml"] if kind == "graph" else []))
    assert getattr(args, param.attribute) == value
    assert PARAMS[key].parse(text) == value


@pytest.mark.parametrize(
    "key,text,words",
    [
        ("size", "8", "size 8 is out of range; use 32 (header only) to 4194304 bytes"),
        ("rate", "-3", "must be a finite number, 0 or more, got -3"),
        ("history", "keep_some", "'keep_some': use keep_last:N (N >= 1) or keep_all"),
        ("notify", "sometimes", "'sometimes' is not one of listener, wait, poll"),
        ("fifo", "120", "SCHED_FIFO priorities are 1..99, got 120"),
    ],
)
def test_a_bad_value_is_refused_in_the_same_words(capsys, key, text, words):
    param = parameters.BY_NAME[key]
    with pytest.raises(SystemExit) as exit_:
        argparse_parser = argparse.ArgumentParser()
        add_run_arguments(argparse_parser, "pubsub")
        argparse_parser.parse_args(["--driver", "udp", param.option, text])
    assert exit_.value.code == 2
    # argparse words a refused choice its own way; the type functions' words are shared.
    if param.choices is None:
        assert f"argument {param.option}: {words}" in capsys.readouterr().err
    with pytest.raises(BadValue, match=words.replace("(", r"\(").replace(")", r"\)")):
        PARAMS[key].parse(text)


def unknown_options(kind: str, *argv: str) -> list[str]:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser, kind)
    graph = ["--graph", "g.yaml"] if kind == "graph" else []
    return parser.parse_known_args(["--driver", "udp", *graph, *argv])[1]


def test_options_a_kind_does_not_take_are_not_offered():
    assert unknown_options("ping", "--subscribers", "2") == ["--subscribers", "2"]
    assert unknown_options("graph", "--placement", "intra") == ["--placement", "intra"]
    assert unknown_options("pubsub", "--subscribers", "2") == []
    assert parse_cli("graph", "--graph", "g.yaml").duration == parameters.GRAPH_DURATION_S
    assert parse_cli("pubsub").rate == 1000.0 and parse_cli("ping").rate is None


@pytest.mark.parametrize(
    "settings,file_words,cli_words",
    [
        (
            {"duration": 30.0, "timeout": 10.0},
            "timeout 10 s would end a 30 s run early; give timeout more than duration",
            "--timeout 10 s would end a 30 s run early; give --timeout more than --duration",
        ),
        (
            {"placement": "intra", "topics": 2},
            "topics > 1: several topics are run by separate processes; use placement: inter",
            "--topics > 1: several topics are run by separate processes; use --placement inter",
        ),
        (
            {"kind": "pubsub", "relays": 1, "echo_every": 5},
            "echo_every with relays: 1: the relay already carries",
            "--echo-every with --relays 1: the relay already carries",
        ),
        (
            {"kind": "pubsub", "late_join": 3.0, "duration": 2.0},
            "late_join 3 s needs a duration longer than it, so that it joins while publishing "
            "goes on (e.g. duration: 5)",
            "--late-join 3 s needs a --duration longer than it, so that it joins while "
            "publishing goes on (e.g. --duration 5)",
        ),
    ],
)
def test_a_rule_between_settings_speaks_each_users_words(settings, file_words, cli_words):
    said = []
    for term in (parameters.file_term, parameters.cli_term):
        problems = [
            rule(SimpleNamespace(**settings), term)
            for rule in (run_rules.timeout_problem, *run_rules.PROCESS_RULES)
        ]
        said.append(next(p.message for p in problems if p is not None))
    assert file_words in said[0] and cli_words in said[1]


def test_a_pubsub_runs_cpus_may_name_its_relay_in_a_file_as_on_the_command_line():
    assert run_rules.unknown_cpu_role("pubsub", "relay") is None
    assert (
        run_rules.unknown_cpu_role("ping", "pub") == "unknown role 'pub' for ping; use pong, ping"
    )
