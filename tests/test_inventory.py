"""Ansible inventories (INI and YAML) read into psbench's real hosts: known answers for
hosts, users, ports, group variables and children, and a precise error for what is
wrong. Nothing is connected to."""

import pytest

from psbench.base.errors import UserError
from psbench.hosts import inventory

INI = """
# the lab
bench0 ansible_host=10.0.0.5

[robots]
robot1 ansible_host=10.0.0.7 ansible_user=pi
robot2 ansible_port=2222

[robots:vars]
ansible_user=ops

[lab:children]
robots
"""

YAML = """
all:
  hosts:
    bench0: {ansible_host: 10.0.0.5}
  children:
    robots:
      vars: {ansible_user: ops}
      hosts:
        robot1: {ansible_host: 10.0.0.7, ansible_user: pi}
        robot2: {ansible_port: 2222}
"""

EXPECTED = {
    "bench0": {"ssh": "10.0.0.5", "address": "10.0.0.5"},
    # A host's own ansible_user wins over its group's.
    "robot1": {"ssh": "pi@10.0.0.7", "address": "10.0.0.7"},
    # No ansible_host: ssh is given the name (~/.ssh/config may resolve it); a port makes
    # an ssh:// destination, which OpenSSH takes.
    "robot2": {"ssh": "ssh://ops@robot2:2222"},
}


@pytest.mark.parametrize("name,text", [("lab.ini", INI), ("lab", INI), ("lab.yml", YAML)])
def test_both_forms_give_the_same_hosts(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert inventory.load(path) == EXPECTED


@pytest.mark.parametrize(
    "name,text,message",
    [
        ("a.ini", "[robots]\nrobot1 ansible_port=ssh\n", "host robot1: ansible_port 'ssh'"),
        ("a.ini", "[robots]\nrobot1 ansible_host\n", "a.ini:2: 'ansible_host': write KEY=VALUE"),
        ("a.ini", "[robots:bogus]\nx\n", "a.ini:2: unknown section kind [robots:bogus]"),
        ("a.ini", "# nothing\n", "the inventory names no host"),
        ("a.yaml", "- robot1\n", "a YAML inventory is a mapping of groups"),
        ("a.yaml", "all: [robot1]\n", "group all: expected hosts:, vars: or children:"),
    ],
)
def test_a_bad_inventory_says_where_and_what(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        inventory.load(path)
    assert message in str(caught.value) and caught.value.exit_code == 2
