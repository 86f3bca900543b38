"""Roles that busy-wait on one CPU measure the scheduler's time slice, not the
middleware (two pollers pinned together: RTT/2 about 4 ms where two CPUs give 3 us):
such a run says so in its text, run.json and every report of it; the same roles that
block while they wait, or poll on CPUs of their own, are not flagged."""

from pathlib import Path

import pytest

from conftest import only_run, run_cli
from psbench.run.spec import MeasureSpec, cpu_sharing

WARNING = "roles that busy-wait (notify poll, or a sender that spins) share one CPU"


def spec(**settings) -> MeasureSpec:
    return MeasureSpec(**{"kind": "ping", "driver": "udp", "driver_path": Path("x.so"),
                          "size": 64, **settings})  # fmt: skip


@pytest.mark.parametrize(
    "settings, spinning",
    [
        ({"notify": "poll", "cpus": {"ping": 0, "pong": 0}}, 2),
        ({"notify": "poll", "cpus": {"ping": 0, "pong": 1}}, None),
        ({"notify": "wait", "cpus": {"ping": 0, "pong": 0}}, None),
        ({"notify": "poll", "placement": "intra", "cpus": {"ping": 1, "pong": 1}}, 2),
        # pubsub: a subscriber that polls beside a publisher that sleeps to its due times
        # shares the CPU with a role that yields; one that spins to them does not.
        ({"kind": "pubsub", "notify": "poll", "rate": 1000, "cpus": {"pub": 0, "sub": 0}}, None),
        (
            {
                "kind": "pubsub",
                "notify": "wait",
                "rate": 1000,
                "send_wait": "spin",
                "cpus": {"pub": 0, "sub": 0},
            },
            None,
        ),  # fmt: skip
        (
            {
                "kind": "pubsub",
                "notify": "poll",
                "rate": 1000,
                "send_wait": "spin",
                "cpus": {"pub": 0, "sub": 0},
            },
            2,
        ),  # fmt: skip
        ({"kind": "pubsub", "notify": "poll", "subscribers": 3, "cpus": {"sub": 1, "pub": 0}}, 3),
    ],
)
def test_busy_waiting_roles_on_one_cpu_are_counted(settings, spinning):
    assert cpu_sharing(spec(**settings))["spinning_per_cpu"] == spinning


def test_two_pollers_on_one_cpu_are_flagged_in_the_run_and_its_report(driver_libs, results,
                                                                       tmp_path):  # fmt: skip
    shared = ["ping", "--driver", "udp", "--notify", "poll", "--count", "40", "--warmup", "5"]
    proc = run_cli([*shared, "--cpu", "ping=0", "--cpu", "pong=0"], results)
    assert proc.returncode == 0, proc.stderr
    assert WARNING in proc.stdout
    assert only_run(results)["cpu_sharing"]["spinning_per_cpu"] == 2

    apart = tmp_path / "apart"
    proc = run_cli([*shared, "--cpu", "ping=0", "--cpu", "pong=1"], apart)
    assert proc.returncode == 0, proc.stderr
    assert "busy-wait" not in proc.stdout
    assert only_run(apart)["cpu_sharing"]["spinning_per_cpu"] is None

    experiment = tmp_path / "shared.yaml"
    experiment.write_text(
        "name: shared\ndefaults: {kind: ping, driver: udp, notify: poll, count: 40, warmup: 5}\n"
        "matrix:\n  cpus: [{ping: 0, pong: 0}, {ping: 0, pong: 1}]\n"
    )
    sweep = tmp_path / "sweep"
    proc = run_cli(["run", str(experiment), "-o", str(sweep)], results)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = run_cli(["report", str(sweep)], results)
    assert report.returncode == 0, report.stderr
    flagged = [line for line in report.stdout.splitlines() if WARNING in line]
    assert len(flagged) == 1, report.stdout
    assert "udp 64 B cpus=ping=0,pong=0: 2 roles" in flagged[0], flagged[0]
    assert "ping=0,pong=1" not in flagged[0]
    assert WARNING in (sweep / "report" / "report.md").read_text()  # the files say it too
