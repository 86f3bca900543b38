"""Roles placed on emulated hosts (`hosts`, `place`): which host each node process is on,
what its node is told (--address, --peer), and the precise errors of a placement that
cannot be run, reported at validation with the file and line."""

import subprocess
from pathlib import Path

import pytest

from conftest import LAUNCHER, REPO
from psbench.run import placement
from psbench.run.spec import MeasureSpec

LIB = Path("/nonexistent/libpsbench-x.so")


def spec(**kw) -> MeasureSpec:
    return MeasureSpec(driver="x", driver_path=LIB, size=64, **kw)


def test_a_list_spreads_a_roles_processes_over_its_hosts_in_turn():
    s = spec(
        kind="pubsub",
        subscribers=3,
        hosts={"a": {}, "b": {}, "c": {}},
        place={"pub": "a", "sub": ["b", "c"]},
    )
    on = {plan.name: placement.host_of(s, plan) for plan in s.processes()}
    assert on == {"sub-1": "b", "sub-2": "c", "sub-3": "b", "pub": "a"}
    # A process placed by its own name wins over its role.
    s2 = spec(
        kind="pubsub",
        subscribers=2,
        hosts={"a": {}, "b": {}},
        place={"pub": "a", "sub": "a", "sub-2": "b"},
    )
    assert {p.name: placement.host_of(s2, p) for p in s2.processes()}["sub-2"] == "b"


def test_each_node_gets_its_hosts_address_and_the_other_used_hosts_as_peers():
    s = spec(kind="ping", hosts={"a": {}, "idle": {}, "b": {}}, place={"ping": "a", "pong": "b"})
    args = {plan.name: placement.node_args(s, plan) for plan in s.processes()}
    # Hosts are numbered in the order given; a host without a process is no peer.
    assert args["ping"] == ["--address", "198.18.0.1", "--peer", "198.18.0.3"]
    assert args["pong"] == ["--address", "198.18.0.3", "--peer", "198.18.0.1"]
    assert placement.node_args(spec(kind="ping"), s.processes()[0]) == []


def test_peers_are_the_hosts_a_process_talks_to_its_own_included():
    # Found with zeromq: a subscriber beside its publisher was given only the other
    # host, connected there alone and never matched.
    s = spec(
        kind="pubsub",
        subscribers=3,
        hosts={"a": {}, "b": {}, "c": {}},
        place={"pub": "a", "sub-1": "a", "sub-2": "b", "sub-3": "b"},
    )
    peers = {
        p.name: [v for k, v in zip(args, args[1:]) if k == "--peer"]
        for p in s.processes()
        for args in [placement.node_args(s, p)]
    }
    # Subscribers look for their publisher only (never each other); the publisher sends
    # to every host with a subscriber; an unused host is nobody's peer.
    assert peers == {
        "sub-1": ["198.18.0.1"],
        "sub-2": ["198.18.0.1"],
        "sub-3": ["198.18.0.1"],
        "pub": ["198.18.0.1", "198.18.0.2"],
    }
    # The echo goes back from the first subscriber to the first publisher; two
    # publishers of one topic do not talk to each other.
    s2 = spec(
        kind="pubsub",
        publishers=2,
        echo_every=10,
        hosts={"a": {}, "b": {}, "c": {}},
        place={"sub": "a", "pub-1": "b", "pub-2": "c"},
    )
    talks = {
        (a.name, b.name)
        for a in s2.processes()
        for b in s2.processes()
        if a is not b and placement.talks_to(a, b)
    }
    assert talks == {("sub", "pub-1"), ("pub-1", "sub"), ("sub", "pub-2"), ("pub-2", "sub")}
    # pub -> relay -> sub: the ends talk to the relay only.
    s3 = spec(
        kind="pubsub",
        relays=1,
        hosts={"a": {}, "b": {}, "c": {}},
        place={"pub": "a", "relay": "b", "sub": "c"},
    )
    args = {p.name: placement.node_args(s3, p) for p in s3.processes()}
    assert args["sub"] == ["--address", "198.18.0.3", "--peer", "198.18.0.2"]
    assert args["relay"] == [
        "--address",
        "198.18.0.2",
        "--peer",
        "198.18.0.1",
        "--peer",
        "198.18.0.3",
    ]


@pytest.mark.parametrize(
    "kw,message",
    [
        ({"place": {"ping": "a"}}, "place needs hosts"),
        (
            {"hosts": {"a": {}}, "place": {"ping": "a", "pong": "z"}},
            "place.pong: 'z' is not one of the hosts (a)",
        ),
        ({"hosts": {"a": {}}, "place": {"ping": "a"}}, "place every role on a host: pong has none"),
        ({"hosts": {"a": {}}, "place": {"pin": "a"}}, "place.pin: not a role of this run"),
        (
            {"hosts": {"a": {}}, "place": {"ping": "a", "pong": "a"}, "placement": "intra"},
            "one process is on one host",
        ),
    ],
)
def test_a_placement_that_cannot_be_run_says_why(kw, message):
    found = placement.problem(spec(kind="ping", **kw))
    assert found is not None and message in found[1], found


def dry_run(tmp_path, text: str) -> subprocess.CompletedProcess:
    experiment = tmp_path / "lab.yaml"
    experiment.write_text(text)
    return subprocess.run(
        [str(LAUNCHER), "run", str(experiment), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )


def test_validation_points_at_the_line_of_a_bad_placement(node, tmp_path):
    out = dry_run(
        tmp_path,
        "name: lab\n"
        "defaults:\n"
        "  kind: ping\n"
        "  driver: udp\n"
        "  hosts: {a: {}, b: {rate: fast}}\n"
        "  place: {ping: a, pong: c}\n",
    )
    assert out.returncode == 2
    assert (
        "lab.yaml:5: defaults.hosts: b.rate: 'fast' is not a value; write it like 100mbit"
        in out.stderr
    )


def test_a_driver_on_one_host_is_refused_at_validation_on_the_hosts_line(node, tmp_path):
    # The node's own refusal (setting "hosts"), through --check, before anything runs.
    out = dry_run(
        tmp_path,
        "name: lab\n"
        "defaults:\n"
        "  kind: ping\n"
        "  driver: shm\n"
        "  hosts: {a: {}, b: {}}\n"
        "  place: {ping: a, pong: b}\n",
    )
    assert out.returncode == 2, out.stdout
    assert "lab.yaml:5: defaults.hosts: shm: a run across hosts is not supported" in out.stderr


def test_the_exclude_rule_a_refusal_suggests_for_hosts_can_be_pasted(node, tmp_path):
    text = (
        "name: lab\n"
        "defaults: {kind: ping, place: {ping: a, pong: b}}\n"
        "matrix:\n"
        "  driver: [shm, zeromq]\n"
        "  hosts:\n"
        "    - {a: {}, b: {rate: 1mbit}}\n"
    )
    out = dry_run(tmp_path, text)
    assert out.returncode == 2
    rule = out.stderr.split("to leave these runs out: exclude: ")[1].splitlines()[0]
    assert rule == "[{driver: shm, hosts: {a: {}, b: {rate: 1mbit}}}]"
    again = dry_run(tmp_path, text + f"exclude: {rule}\n")
    assert again.returncode == 0, again.stderr
    assert "zeromq" in again.stdout and "shm-" not in again.stdout


def test_one_place_serves_a_sweep_over_kinds_but_a_name_that_is_no_role_is_refused():
    place = {"ping": "a", "pong": "b", "pub": "a", "sub": "b"}
    for kind in ("ping", "pubsub"):
        assert placement.problem(spec(kind=kind, hosts={"a": {}, "b": {}}, place=place)) is None
    typo = spec(kind="ping", hosts={"a": {}, "b": {}}, place={**place, "pogn": "b"})
    assert placement.problem(typo) == (
        "place",
        "place.pogn: not a role of this run; use broker, ping, pong",
    )


def test_one_way_across_real_machines_is_placed_and_each_sample_knows_whose_clock_stamped_it():
    real = {"a": {"ssh": "robot1"}, "b": {"ssh": "robot2"}, "c": {"ssh": "robot3"}}
    # Two publishers on a and c, into subscribers on b and c: each record's writer id
    # names the host whose clock its send time is on.
    fan_in = spec(
        kind="pubsub",
        publishers=2,
        subscribers=2,
        hosts=real,
        place={"pub-1": "a", "pub-2": "c", "sub": ["b", "c"]},
    )
    assert placement.problem(fan_in) is None
    writers = {p.name: placement.writer_hosts(fan_in, p) for p in fan_in.processes()}
    assert writers == {
        "sub-1": {0: "a", 1: "c"},
        "sub-2": {0: "a", 1: "c"},
        "pub-1": {},
        "pub-2": {},
    }
    # Two topics: a subscriber's writers are its topic's only.
    topics = spec(kind="pubsub", topics=2, hosts=real, place={"t1-pub": "a", "t2-pub": "b",
                                                             "sub": "c"})  # fmt: skip
    assert {p.name: placement.writer_hosts(topics, p) for p in topics.processes()
            if p.roles == ["sub"]} == {"t1-sub": {0: "a"}, "t2-sub": {0: "b"}}  # fmt: skip
    # Behind a relay the stamps are the publisher's, not the relay's.
    relayed = spec(kind="pubsub", relays=1, hosts=real, place={"pub": "a", "relay": "b",
                                                              "sub": "c"})  # fmt: skip
    sub = next(p for p in relayed.processes() if p.name == "sub")
    assert placement.writer_hosts(relayed, sub) == {0: "a"}
    assert placement.first_writer_host(relayed) == "a"


def test_a_sweep_over_placements_is_a_matrix_over_place(tmp_path):
    out = dry_run(
        tmp_path,
        "name: axis\n"
        "defaults: {kind: ping, driver: zeromq, hosts: {a: {}, b: {rate: 100mbit}}}\n"
        "matrix:\n"
        "  place:\n"
        "    - {ping: a, pong: a}\n"
        "    - {ping: a, pong: b}\n",
    )
    assert out.returncode == 0, out.stderr
    assert "ping=a,pong=a" in out.stdout and "ping=a,pong=b" in out.stdout
    assert out.stdout.count("zeromq-64B-place=") == 2
