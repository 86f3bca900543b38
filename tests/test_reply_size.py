"""`--reply-size`: pong answers with the first bytes of each message (an acknowledgement,
header intact), ping expects that length. Real runs over udp and one DDS; ping counts any
echo of another length as corrupted, so corrupted 0 with every sample recorded proves
the ack was that short, and a ping not told of it counts every measured echo corrupted."""

import json
import subprocess

import pytest

from conftest import only_run, run_cli
from psbench.base import paths

COUNT = 300


def load(run_dir, role):
    return json.loads((run_dir / f"{role}.json").read_text())


@pytest.mark.parametrize(
    "driver,extra",
    [
        ("udp", []),
        ("cyclonedds", ["--transport", "udp"]),
    ],
)
def test_ack_of_32_bytes_is_what_ping_expects(driver_libs, results, driver, extra):
    if driver not in driver_libs:
        pytest.skip(f"{driver} is not built here")
    proc = run_cli(
        [
            "ping",
            "--driver",
            driver,
            *extra,
            "--size",
            "4096",
            "--count",
            str(COUNT),
            "--warmup",
            "20",
            "--reply-size",
            "32",
            "--check-pattern",
        ],
        results,
    )
    assert proc.returncode == 0, proc.stderr
    record = only_run(results)
    assert record["status"] == "ok", record.get("message")
    assert record["spec"]["reply_size"] == 32
    for process in record["processes"]:
        assert process["argv"][process["argv"].index("--reply-size") + 1] == "32"
    ping, pong = load(record["_dir"], "ping"), load(record["_dir"], "pong")
    assert ping["config"]["reply_size"] == pong["config"]["reply_size"] == 32
    assert ping["config"]["size"] == 4096
    counts = ping["counts"]
    assert counts["sent"] == COUNT and counts["corrupted"] == 0
    assert counts["samples"] + counts["lost"] + counts["late"] == COUNT
    assert counts["samples"] > 0


def test_without_the_flag_the_whole_message_comes_back(driver_libs, results):
    proc = run_cli(
        [
            "ping",
            "--driver",
            "udp",
            "--size",
            "1024",
            "--count",
            "100",
            "--warmup",
            "10",
            "--check-pattern",
        ],
        results,
    )
    assert proc.returncode == 0, proc.stderr
    ping = load(only_run(results)["_dir"], "ping")
    assert ping["config"]["reply_size"] is None
    assert ping["counts"]["samples"] == 100 and ping["counts"]["corrupted"] == 0


def test_a_ping_not_told_counts_the_short_echoes_corrupted(driver_libs, tmp_path):
    node, lib = paths.node_path(), driver_libs["udp"]
    common = [
        "--driver",
        str(lib),
        "--run-id",
        "replyMismatch",
        "--size",
        "1024",
        "--count",
        "50",
        "--warmup",
        "5",
        "--timeout",
        "60",
    ]
    pong = subprocess.Popen(
        [str(node), *common, "--role", "pong", "--out", str(tmp_path), "--reply-size", "32"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ping = subprocess.run(
            [
                str(node),
                *common,
                "--role",
                "ping",
                "--out",
                str(tmp_path),
                "--sample-timeout",
                "0.2",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        pong.wait(timeout=30)
    assert ping.returncode == 0, ping.stderr
    counts = load(tmp_path, "ping")["counts"]
    assert counts["corrupted"] == 50 and counts["samples"] == 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["ping", "--driver", "udp", "--reply-size", "16"], "below psbench's 32-byte header"),
        (["pubsub", "--driver", "udp", "--reply-size", "32"], "unrecognized arguments"),
    ],
)
def test_bad_reply_sizes_are_refused(node, results, args, message):
    proc = run_cli(args, results)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_experiment_key_is_validated_like_the_option(node, tmp_path):
    from psbench.run.experiment.params import PARAMS, BadValue

    param = PARAMS["reply_size"]
    assert param.kinds == ("ping",)
    assert param.parse("32") == 32 and param.parse("1KiB") == 1024
    with pytest.raises(BadValue, match="32-byte header"):
        param.parse(8)
