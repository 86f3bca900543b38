"""Numbers out of range anywhere are refused naming the bound, in files and on the
command line alike (one parser serves both)."""

import pytest

from experiment_files import run_experiment


@pytest.mark.parametrize(
    "setting,words",
    [
        ("count: 100000000000000000000", ["defaults.count", "at most 9,223,372,036,854,775,807"]),
        ("count: 1e20", ["defaults.count", "not a whole number"]),
        ("count: -5", ["defaults.count", "greater than 0"]),
        ("rate: .nan", ["defaults.rate", "finite"]),
        ("rate: .inf", ["defaults.rate", "finite"]),
        ("rate: 1e300", ["defaults.rate", "at most 1,000,000,000"]),
        ("timeout: 1e10", ["defaults.timeout", "at most 1,000,000,000"]),
        ("size: 8MiB", ["defaults.size", "4194304"]),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_numbers_out_of_range_name_the_bound(driver_libs, results, tmp_path, setting, words):
    path = tmp_path / "exp.yaml"
    path.write_text(f"name: x\ndefaults: {{kind: ping, driver: udp, {setting}}}\n")
    proc = run_experiment(path, results, "--dry-run", timeout=20)
    assert proc.returncode == 2, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"{path}:2: "), proc.stderr
    for word in words:
        assert word in first, proc.stderr


def test_the_largest_accepted_numbers_pass(driver_libs, results, tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(
        "name: x\ndefaults: {kind: ping, driver: udp, count: 9223372036854775807, rate: 1e9}\n"
    )
    proc = run_experiment(path, results, "--dry-run", timeout=20)
    assert proc.returncode == 0, proc.stderr
