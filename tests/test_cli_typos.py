"""A mistyped word gets the nearest valid one and the usage of the command meant."""

import pytest

from conftest import run_cli


@pytest.mark.parametrize(
    "argv,usage,hint",
    [
        (["pign"], "usage: psbench [", "did you mean 'ping'?"),
        (
            ["ping", "--driver", "udp", "--sise", "64"],
            "usage: psbench ping",
            "did you mean --size?",
        ),
        (
            ["pubsub", "--driver", "udp", "--rtae", "5"],
            "usage: psbench pubsub",
            "did you mean --rate?",
        ),
        (
            ["ping", "--driver", "udp", "--notify", "pol"],
            "usage: psbench ping",
            "did you mean 'poll'?",
        ),
        (["run", "x.yaml", "--dryrun"], "usage: psbench run", "did you mean --dry-run?"),
    ],
)
def test_the_nearest_word_and_the_commands_usage(results, argv, usage, hint):
    proc = run_cli(argv, results)
    assert proc.returncode == 2
    assert proc.stderr.startswith(usage), proc.stderr
    assert hint in proc.stderr.splitlines()[-1], proc.stderr
    assert not results.exists()  # refused before a results folder exists


def test_a_word_near_nothing_gets_no_guess(results):
    proc = run_cli(["ping", "--driver", "udp", "--zzzzzz"], results)
    assert proc.returncode == 2 and "did you mean" not in proc.stderr
    assert "unrecognized arguments: --zzzzzz" in proc.stderr
