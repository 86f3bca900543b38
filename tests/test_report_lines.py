"""What a run's terminal report names: discovery with several topics, and both sizes of
an acknowledged round trip (--reply-size)."""

from conftest import run_cli


def test_several_topics_keep_the_discovery_line(driver_libs, results):
    proc = run_cli(["pubsub", "--driver", "cyclonedds", "--topics", "2", "--rate", "1000",
                    "--count", "200"], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [line] = [line for line in proc.stdout.splitlines() if "discovery:" in line]
    assert "the slowest of 2 subs" in line and ("t1-sub" in line or "t2-sub" in line)


def test_an_acknowledged_round_trip_names_both_sizes(driver_libs, results):
    proc = run_cli(["ping", "--driver", "udp", "--size", "1024", "--reply-size", "32",
                    "--count", "200"], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ping udp 1024 B -> 32 B reply, inter-process: ok" in proc.stdout
    assert "1024 B out and a 32 B reply back" in proc.stdout
