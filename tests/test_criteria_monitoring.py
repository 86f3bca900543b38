"""The monitoring criterion's manifest fields for tools that need more than argv:
{build} (a tool the build makes), env, options and stop_signal are read, and refused
with one message when wrong."""

import pytest

from psbench.base import manifests
from psbench.base.errors import UserError

# The manifest's fields --------------------------------------------------------------


@pytest.fixture
def drivers_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(manifests, "DRIVERS_DIR", tmp_path)
    manifests.load.cache_clear()
    (tmp_path / "mw").mkdir()
    (tmp_path / "mw" / "CMakeLists.txt").write_text("")
    yield tmp_path
    manifests.load.cache_clear()


MONITOR = '[monitor]\nargv = ["t"]\nexpect = "x"\n'
BROKEN = {
    "env not a table": ('env = "A=1"\n', "monitor.env: must be dict"),
    "env value": ("env = { A = 1 }\n", "monitor.env.A: must be str"),
    "option without value": ('options = ["domain_id"]\n', "'domain_id': give KEY=VALUE"),
    "stop signal": ('stop_signal = "HUP"\n', "monitor.stop_signal: give one of TERM, INT"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_monitor_field_is_refused_naming_it(drivers_dir, case):
    text, words = BROKEN[case]
    (drivers_dir / "mw" / "manifest.toml").write_text('architecture = "broker"\n' + MONITOR + text)
    with pytest.raises(UserError) as refused:
        manifests.load("mw")
    assert str(refused.value).startswith(str(drivers_dir / "mw" / "manifest.toml"))
    assert words in str(refused.value) and refused.value.exit_code == 2


def test_env_options_and_stop_signal_are_read(drivers_dir):
    (drivers_dir / "mw" / "manifest.toml").write_text(
        'architecture = "broker"\n' + MONITOR + 'options = ["domain_id=229"]\n'
        'stop_signal = "INT"\nenv = { MW_URI = "file://{folder}/mw.xml" }\n'
    )
    m = manifests.load("mw").monitor
    assert m.options == ("domain_id=229",) and m.stop_signal == "INT"
    assert m.env == {"MW_URI": "file://{folder}/mw.xml"}
    from psbench.run.criteria import monitoring

    env = monitoring._env(m, drivers_dir / "mw")
    assert env["MW_URI"] == f"file://{drivers_dir}/mw/mw.xml" and env["PATH"]


def test_a_tool_the_build_makes_and_did_not_is_not_testable(drivers_dir, tmp_path, monkeypatch):
    from psbench.run.criteria import monitoring
    from psbench.run.criteria.context import Context

    monkeypatch.setenv("PSBENCH_BUILD", str(tmp_path / "no-build"))
    (drivers_dir / "mw" / "manifest.toml").write_text(
        'architecture = "broker"\n[monitor]\nargv = ["{build}/drivers/mw/bin/mw-watch"]\n'
        'expect = "psb_"\n'
    )
    ctx = Context(["mw"], {}, {"mw": {}}, tmp_path, {}, ["psbench", "criteria"])
    found = monitoring.assess(ctx)["mw"]
    assert found.verdict == "not testable here"
    assert "its monitoring tool mw-watch is not built (make build-all, or make driver-mw)" in (
        found.evidence
    )
    # Once there, it is the tool psbench runs.
    tool = tmp_path / "no-build" / "drivers" / "mw" / "bin" / "mw-watch"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert monitoring._program("{build}/drivers/mw/bin/mw-watch") == str(tool)
