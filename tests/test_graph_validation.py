"""Graph files through `psbench graph check`: the shipped graphs are valid, and every
kind of mistake is reported as FILE:LINE: where: problem; fix, all of them at once,
with exit 2 and no traceback (docs/graphs.md, "Validation")."""

import subprocess
import textwrap

import pytest

from conftest import LAUNCHER, REPO

GOOD = """\
name: tiny
modules:
  sensor: {period: 10ms, work: 100us, publishes: [raw]}
  filter: {on: any, work: [50us, 150us], subscribes: [raw], publishes: [clean]}
  control: {period: 10ms, subscribes: [clean, raw], publishes: [command]}
  actuator: {on: all, subscribes: [command]}
topics:
  raw: {size: 256}
  clean: {size: 256}
  command: {size: 128, reliability: reliable}
paths:
  sensor_to_actuator: {from: sensor, to: actuator, deadline: 20ms}
mappings:
  together: {hosts: {a: [sensor, filter, control, actuator]}, cpus: {sensor: 0}}
  apart: {hosts: {a: [sensor, filter], b: [control, actuator]}}
"""


def check(tmp_path, text: str) -> subprocess.CompletedProcess:
    path = tmp_path / "g.yaml"
    path.write_text(textwrap.dedent(text))
    return subprocess.run(
        [str(LAUNCHER), "graph", "check", str(path)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip


@pytest.mark.parametrize("graph", ["graphs/cwalker.yaml", "graphs/reference-system.yaml"])
def test_the_shipped_graphs_are_valid(graph):
    done = subprocess.run([str(LAUNCHER), "graph", "check", graph], capture_output=True,
                          text=True, timeout=60, cwd=REPO)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_the_cwalker_is_the_papers_eight_modules_with_its_two_stated_periods():
    done = subprocess.run([str(LAUNCHER), "graph", "check", "graphs/cwalker.yaml"],
                          capture_output=True, text=True, timeout=60, cwd=REPO)  # fmt: skip
    assert "graph cwalker: 8 modules" in done.stdout
    assert "module PT: every 100 ms; source; writes people" in done.stdout
    assert "module LOC: every 10 ms; source; writes pose" in done.stdout
    # The paper's mappings: AVI alone on board a in the third.
    assert "mapping mapping3: a: AVI; b: BC, HC, PT, LOC, STP, HM, LTP" in done.stdout


def test_a_good_graph_is_described(tmp_path):
    done = check(tmp_path, GOOD)
    assert done.returncode == 0, done.stderr
    assert "graph tiny: 4 modules, 3 topics, 1 paths, 2 mappings" in done.stdout
    assert "module filter: on any input; reads raw; writes clean" in done.stdout
    assert "path sensor_to_actuator: sensor -> actuator, deadline 20 ms" in done.stdout


@pytest.mark.parametrize(
    ("change", "said"),
    [
        # Unknown names, with the near miss.
        (
            ("subscribes: [clean, raw]", "subscribes: [cleen, raw]"),
            ":5: modules.control.subscribes: cleen is not one of the topics; did you mean clean?",
        ),
        (
            ("{from: sensor, to: actuator", "{from: sensor, to: actuatr"),
            ":12: paths.sensor_to_actuator.to: actuatr is not one of the modules; did you mean actuator?",
        ),
        (
            ("work: 100us, publishes", "wrok: 100us, publishes"),
            ":3: modules.sensor.wrok: unknown key; did you mean work?",
        ),
        # A topic nobody writes; one nobody uses.
        (
            (
                "  sensor: {period: 10ms, work: 100us, publishes: [raw]}\n",
                "  sensor: {period: 10ms, work: 100us, publishes: [clean]}\n",
            ),
            ":4: modules.filter.subscribes: no module publishes raw; add it to a module's publishes",
        ),
        # Triggers.
        (
            ("filter: {on: any, work", "filter: {on: timer, work"),
            ":4: modules.filter.on: on: timer needs a period, e.g. period: 10ms",
        ),
        (
            ("sensor: {period: 10ms, work", "sensor: {work"),
            ":3: modules.sensor: a module without inputs needs a period, e.g. period: 10ms",
        ),
        (
            ("actuator: {on: all,", "actuator: {on: all, period: 5ms,"),
            ":6: modules.actuator.on: on: all is activated by its inputs, not a period",
        ),
        # Values.
        (
            ("period: 10ms, work: 100us", "period: 10, work: 100us"),
            ":3: modules.sensor.period: '10' is not a duration; give a number and a unit",
        ),
        (
            ("work: [50us, 150us]", "work: [150us, 50us]"),
            ":4: modules.filter.work: the range's first duration is the shorter",
        ),
        (
            ("reliability: reliable", "reliability: sure"),
            ":10: topics.command.reliability: 'sure' is not one of best_effort, reliable",
        ),
        # One reliability for every topic of a run.
        (
            ("clean: {size: 256}", "clean: {size: 256, reliability: best_effort}"),
            ":10: topics.command.reliability: reliable, but clean is best_effort: every topic of "
            "a run has one reliability",
        ),
        # Sizes: 48 bytes of headers and 32 per source (one here).
        (
            ("raw: {size: 256}", "raw: {size: 64}"),
            ":8: topics.raw.size: 64 bytes cannot hold a graph message's headers and one origin "
            "entry per source (1): at least 80",
        ),
        # Paths.
        (
            ("{from: sensor, to: actuator", "{from: filter, to: actuator"),
            ":12: paths.sensor_to_actuator.from: filter subscribes to topics: a path starts at a "
            "source",
        ),
        (
            ("{from: sensor, to: actuator", "{from: actuator, to: sensor"),
            ":12: paths.sensor_to_actuator.from: actuator subscribes to topics",
        ),
        # Mappings.
        (
            ("b: [control, actuator]", "b: [control]"),
            ":15: mappings.apart.hosts: actuator on no host; place every module",
        ),
        (
            ("b: [control, actuator]", "b: [control, actuator, filter]"),
            ":15: mappings.apart.hosts.b: filter is on a already; place each module once",
        ),
        (
            ("cpus: {sensor: 0}", "cpus: {sensor: -1}"),
            ":14: mappings.together.cpus.sensor: expected a whole number 0 to 4095",
        ),
    ],
)
def test_each_mistake_is_named_with_its_line_and_fix(tmp_path, change, said):
    old, new = change
    assert old in GOOD
    done = check(tmp_path, GOOD.replace(old, new, 1))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"g.yaml{said}" in done.stderr, done.stderr
    assert "problem" in done.stderr.splitlines()[-1]


def test_a_cycle_of_input_driven_modules_is_refused_and_a_timer_breaks_it(tmp_path):
    looped = GOOD.replace(
        "filter: {on: any, work: [50us, 150us], subscribes: [raw], publishes: [clean]}",
        "filter: {on: any, subscribes: [raw, echo], publishes: [clean]}\n"
        "  echo: {on: any, subscribes: [clean], publishes: [echo]}",
    ).replace("  raw: {size: 256}", "  raw: {size: 256}\n  echo: {size: 256}")
    looped = looped.replace(
        "[sensor, filter, control, actuator]", "[sensor, filter, echo, control, actuator]"
    )
    looped = looped.replace("a: [sensor, filter]", "a: [sensor, filter, echo]")
    done = check(tmp_path, looped)
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "echo -> filter -> echo is a cycle of modules activated only by their inputs; give one "
        "of them a period (on: timer)" in done.stderr
    )
    timed = looped.replace("echo: {on: any, subscribes", "echo: {period: 5ms, subscribes")
    assert check(tmp_path, timed).returncode == 0


def test_an_unreachable_sink_is_refused(tmp_path):
    apart = GOOD.replace("  control: {period: 10ms, subscribes: [clean, raw], publishes: [command]}\n",
                         "  control: {period: 10ms, subscribes: [clean, raw], publishes: [other]}\n"
                         "  source2: {period: 10ms, publishes: [command]}\n")  # fmt: skip
    apart = apart.replace("  command: {size: 128", "  other: {size: 128}\n  command: {size: 128")
    apart = apart.replace(
        "[sensor, filter, control, actuator]", "[sensor, filter, control, actuator, source2]"
    )
    apart = apart.replace("b: [control, actuator]", "b: [control, actuator, source2]")
    done = check(tmp_path, apart)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "paths.sensor_to_actuator: no data from sensor reaches actuator" in done.stderr
    assert "topics.other: no module uses it" not in done.stderr  # control writes it


def test_every_problem_of_a_kind_is_listed_at_once(tmp_path):
    # What is written wrong, all of it; then (once all is readable) what does not fit.
    done = check(tmp_path, GOOD.replace("raw: {size: 256}", "raw: {size: 8}").replace(
        "work: 100us, publishes", "wrok: 100us, publishes"))  # fmt: skip
    assert done.returncode == 2
    assert "topics.raw.size" in done.stderr and "modules.sensor.wrok" in done.stderr
    assert "psbench graph check: 2 problems in" in done.stderr
    done = check(tmp_path, GOOD.replace("b: [control, actuator]", "b: [control]").replace(
        "subscribes: [clean, raw]", "subscribes: [cleen, raw]"))  # fmt: skip
    assert "actuator on no host" in done.stderr and "cleen is not one of the topics" in done.stderr
    assert "psbench graph check: 2 problems in" in done.stderr


def test_a_file_that_is_not_a_graph_is_refused_plainly(tmp_path):
    for text, said in (
        ("", "the file is empty; start from graphs/cwalker.yaml"),
        (
            "- a\n- b\n",
            "the file must be a mapping of keys (name, modules, topics, paths, mappings)",
        ),
        ("name: x\nmodules: {a: {period: 1ms, publishes: [t]}}\n", ": topics: missing"),
        ("name: [unclosed\n", "not valid YAML"),
    ):
        done = check(tmp_path, text)
        assert done.returncode == 2, (text, done.stderr)
        assert said in done.stderr and "Traceback" not in done.stderr
    missing = subprocess.run([str(LAUNCHER), "graph", "check", str(tmp_path / "none.yaml")],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert missing.returncode == 2 and "cannot read the graph file" in missing.stderr
