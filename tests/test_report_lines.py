"""What a run's terminal report names: discovery with several topics, and both sizes of
an acknowledged round trip (--reply-size)."""

from conftest import run_cli


def test_several_topics_keep_the_discovery_line(driver_libs, results):
    proc = run_cli(
        ["pubsub", "--driver", "cyclonedds", "--topics", "2", "--rate", "1000", "--count", "200"],
        results,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [line] = [line for line in proc.stdout.splitlines() if "discovery:" in line]
    assert "the slowest of 2 subs" in line and ("t1-sub" in line or "t2-sub" in line)


def test_an_acknowledged_round_trip_names_both_sizes(driver_libs, results):
    proc = run_cli(
        ["ping", "--driver", "udp", "--size", "1024", "--reply-size", "32", "--count", "200"],
        results,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ping udp 1024 B -> 32 B reply, inter-process: ok" in proc.stdout
    assert "1024 B out and a 32 B reply back" in proc.stdout


def _summary(role, topic, discovery_ns):
    return {"role": role, "config": {"topics": [topic]}, "timing": {"discovery_ns": discovery_ns}}


def test_the_discovery_line_over_several_topics_and_when_not_measured():
    from psbench.report.run_text import _discovery

    two = {
        "t1-sub": _summary("sub", "data1", 5e6),
        "t1-pub": _summary("pub", "data1", 4e6),
        "t2-sub": _summary("sub", "data2", 7e6),
        "t2-pub": _summary("pub", "data2", 3e6),
    }
    assert _discovery(two) == (
        "7.00 ms (t2-sub, the slowest of 2 subs on 2 topics; fastest 5.00 ms)"
    )
    one = {"sub": _summary("sub", "data", 2e6), "pub": _summary("pub", "data", 1e6)}
    assert _discovery(one) == "2.00 ms (sub)"
    # udp cannot tell when it matched: the line says so instead of going missing.
    none = {name: _summary(s["role"], "d", None) for name, s in two.items()}
    assert _discovery(none) == (
        "not measured (the driver cannot tell when readers and writers matched)"
    )


def test_a_udp_run_with_two_topics_prints_its_discovery_line(driver_libs, results):
    proc = run_cli(
        ["pubsub", "--driver", "udp", "--topics", "2", "--rate", "1000", "--count", "200"], results
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "  discovery: not measured" in proc.stdout


def test_the_report_labels_name_the_reply_size():
    from psbench.base.units import sizes_text
    from psbench.results.configs import label_keys, label_of

    class Config:
        def __init__(self, **params):
            self.params = params

    assert sizes_text(1024, 32) == "1024 B -> 32 B reply"
    assert sizes_text(64, None) == sizes_text(64, 64) == sizes_text(64, 128) == "64 B"
    acked = Config(kind="ping", driver="udp", size=1024, reply_size=32)
    echoed = Config(kind="ping", driver="udp", size=1024)
    keys = label_keys([acked, echoed])
    assert "reply_size" not in keys
    assert label_of(acked, keys) == "udp 1 KiB -> 32 B reply"
    assert label_of(echoed, keys) == "udp 1 KiB"


def _lossy(loss, reliability=None, history=None, rate=None):
    from types import SimpleNamespace

    return SimpleNamespace(
        spec=SimpleNamespace(reliability=reliability, history=history, rate=rate),
        throughput={"subscribers": {"sub": {"loss_percent": loss, "samples_per_s": 5000.0}}},
    )


def test_high_best_effort_loss_gets_one_line_naming_the_likely_cause():
    from psbench.report.run_text import loss_hint

    assert loss_hint(_lossy(0.9)) is None  # within 1%
    assert loss_hint(_lossy(40.0, reliability="reliable")) is None  # not best effort
    slow = loss_hint(_lossy(40.0, rate=20000.0))
    assert slow.startswith("40% lost under best effort") and "5,000/s, 20000/s offered" in slow
    assert "history" not in slow
    keep_last = loss_hint(_lossy(12.5, history="keep_last:1"))
    assert "back to back" in keep_last and "keep_last:1 overwrites" in keep_last


def test_a_back_to_back_pubsub_says_so_in_words(driver_libs, results):
    proc = run_cli(
        ["pubsub", "--driver", "udp", "--count", "200", "--rate", "0", "--quiet"], results
    )
    assert proc.returncode == 0, proc.stderr
    assert "  config:    back to back," in proc.stdout and "closed_loop" not in proc.stdout
