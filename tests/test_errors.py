"""User errors: a message naming the argument, exit code 2, never a traceback."""

import pytest

from conftest import only_run, run_cli


def assert_user_error(proc, *words):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in proc.stderr, f"{word!r} not in: {proc.stderr}"


def test_refused_setting_surfaces_node_message(driver_libs, results):
    proc = run_cli(
        ["ping", "--driver", "udp", "--reliability", "reliable", "--count", "10"], results
    )
    assert_user_error(proc, "reliability", "refused")
    record = only_run(results)
    assert record["status"] == "refused"
    assert "reliability" in record["message"]
    # The node's own words reach the user unchanged.
    assert record["message"] in proc.stderr


@pytest.mark.parametrize(
    "driver, reason",
    [("nats", "JetStream"), ("zeromq", "high-water mark")],
)
def test_a_refused_qos_carries_the_drivers_reason(driver, reason, driver_libs, results):
    proc = run_cli(
        ["ping", "--driver", driver, "--reliability", "reliable", "--count", "10"], results
    )
    assert_user_error(
        proc,
        f"{driver}: reliability 'reliable' is not supported; this driver supports best_effort (",
        reason,
    )
    assert only_run(results)["status"] == "refused"


def test_size_over_the_nodes_maximum_is_refused_before_a_run_folder(driver_libs, results):
    proc = run_cli(["ping", "--driver", "udp", "--size", "64M", "--count", "10"], results)
    assert_user_error(proc, "size")
    assert "out of range" in proc.stderr and not results.exists()


@pytest.mark.parametrize(
    "args,named",
    [
        (["ping", "--driver", "udp", "--size", "abc"], "--size"),
        (["ping", "--driver", "udp", "--count", "0"], "--count"),
        (["ping", "--driver", "udp", "--count", "5", "--duration", "1"], "--duration"),
        (["ping", "--driver", "udp", "--history", "keep_last"], "--history"),
        (["ping", "--driver", "udp", "--option", "novalue"], "--option"),
        (["ping", "--driver", "udp", "--notify", "sometimes"], "--notify"),
        (["ping", "--driver", "udp", "--fifo", "100"], "--fifo"),
        (["ping", "--driver", "udp", "--cpu", "sub=0"], "--cpu"),
        (["ping", "--driver", "udp", "--cpu", "ping=4096"], "--cpu"),
        (["pubsub", "--driver", "udp", "--rate", "-5"], "--rate"),
        (["pubsub", "--driver", "udp", "--duration", "5", "--timeout", "5"], "--timeout"),
        (["ping", "--size", "64"], "--driver"),
        (["ping", "--driver", "udp", "--size", "10"], "size 10 is out of range"),
        (["ping", "--driver", "udp", "--size", "5M"], "use 32 (header only) to 4194304 bytes"),
        (["ping", "--driver", "udp", "--pin", "none", "--cpu", "ping=0"], "--pin none"),
        (["ping", "--driver", "udp", "--count", "1e20"], "--count"),
    ],
)
def test_bad_argument_is_named_before_a_results_folder_exists(driver_libs, results, args, named):
    proc = run_cli(args, results)
    assert_user_error(proc, named)
    assert not results.exists()


def test_unknown_driver_lists_built_ones(driver_libs, results):
    proc = run_cli(["ping", "--driver", "nosuchdriver", "--count", "10"], results)
    assert_user_error(proc, "--driver", "nosuchdriver", "udp", "shm")


def test_missing_build_says_make_build(results, tmp_path):
    proc = run_cli(["ping", "--driver", "udp"], results, PSBENCH_BUILD=str(tmp_path / "nb"))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "make build" in proc.stderr
