"""The launcher of a RabbitMQ broker for psbench's runs (manifest.toml): a POSIX sh script
that psbench writes into the service's folder and runs there.

Usage: broker_launch.py LARGEST_MESSAGE PORT ADDRESS prints the script of a plaintext run
(the manifest's config_script). broker_launch.py --tls-template prints the manifest's
tls_config: the same script as a template of psbench's service values, whose only
listener is AMQPS with mutual TLS (tests/test_security_tls.py checks the two agree).

Everything of the broker is in the folder the script runs from: its configuration, node
name (psbench-PORT@localhost), Erlang cookie, HOME, database and message store (data/), logs and expanded
plugins; nothing of Debian's system broker (/etc/rabbitmq, /var/lib/rabbitmq) is read or
written. The database and message store (data/) are removed when the broker ends, and
when the script starts, except for runs with durability persistent: psbench appends the
manifest's durable_config, the line DURABLE_MARKER, to the script, and the script then
keeps data/ from one start to the next (psbench restarting a broker it killed finds its
durable queues and persistent messages again). Erlang's distribution needs an epmd, and one that erl starts itself daemonises
and outlives the broker; so the script runs an epmd of the broker's own, in the
foreground, in the process group psbench stops, on a private port, and stops it once the
broker has ended. The broker's database is removed when it ends.
"""

import errno
import secrets
import socket
import sys
from dataclasses import dataclass

# The Debian script itself: /usr/sbin/rabbitmq-server is a wrapper that, run as root,
# switches to user rabbitmq in /var/lib/rabbitmq (the system broker's home).
SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
DEFAULT_FRAME_MAX = 131072  # RabbitMQ's own default
FRAME_OVERHEAD = 8  # type, channel, size, end octet
FRAME_SPARE = 4096  # room for the method and header frames' fields
MIN_MAX_MESSAGE_SIZE = 1 << 20
READY_WAIT_STEPS = 200  # x 0.05 s for the epmd to answer
# The manifest's durable_config: appended to the script for runs with durability
# persistent, which the script finds in itself ("$0") since the appended text runs last.
DURABLE_MARKER = "# psbench: durability persistent, keep data/ across a restart"


def free_port(address: str) -> int:
    """A port nothing listens on now, as psbench chooses the broker's own. An emulated
    host's address is not this namespace's (the script runs outside the host): a port
    free here is then taken, the host's own namespace having nothing else listening."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError as exc:
            if exc.errno != errno.EADDRNOTAVAIL:
                raise
            probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class Values:
    """What the script is made of, as sh text: numbers (a plaintext run's script) or sh
    expansions and psbench's template fields (the TLS template)."""

    address: str
    port: str
    epmd_port: str
    dist_port: str
    erlang_address: str  # {127,0,0,1}
    cookie: str
    frame_max: str
    max_message_size: str
    listener: str  # rabbitmq.conf's listener lines
    prelude: str = ""  # sh that sets what the others expand


def tcp_listener(address: str, port: str) -> str:
    return f"listeners.tcp.default = {address}:{port}\n"


def tls_listener(address: str, port: str, ca: str, cert: str, key: str) -> str:
    """AMQPS only (no plaintext listener), requiring a client certificate from the CA."""
    return f"""\
listeners.tcp = none
listeners.ssl.default = {address}:{port}
ssl_options.cacertfile = {ca}
ssl_options.certfile = {cert}
ssl_options.keyfile = {key}
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = true
"""


def broker_config(v: Values) -> str:
    # frame_max: a message of the run's largest size travels in one body frame.
    return f"""\
{v.listener}# psbench's clients log in as guest from wherever the run's hosts are.
loopback_users = none
# TCP_NODELAY on every connection (RabbitMQ's default, stated).
tcp_listen_options.nodelay = true
tcp_listen_options.backlog = 128
# No heartbeats: on loopback and psbench's own hosts the kernel reports a broker or
# client gone at once; heartbeats would close a connection the node leaves idle.
heartbeat = 0
frame_max = {v.frame_max}
max_message_size = {v.max_message_size}
# No disk alarm: a small disk must not block publishers (a volatile run persists
# nothing; a persistent one writes its messages until they are taken).
disk_free_limit.absolute = 1
# No statistics collection (there is no management plugin to show them).
collect_statistics = none
log.console = true
log.console.level = warning
log.file = false
"""


def launcher(v: Values, about: str) -> str:
    # The configuration's here-document expands: the TLS template's sizes are sh
    # variables (nothing else in it holds $, ` or \).
    return f"""\
#!/bin/sh
# A RabbitMQ broker of one psbench service (drivers/rabbitmq/broker_launch.py): {about}
set -u
folder=$(cd "$(dirname "$0")" && pwd -P)
cd "$folder"
{v.prelude}cat > rabbitmq.conf <<CONFIG
{broker_config(v)}CONFIG
# Durability persistent (broker_launch.py, DURABLE_MARKER): the data of the broker that
# ran here before (killed, then started again by psbench) is kept.
grep -qxF '{DURABLE_MARKER}' "$0" || rm -rf data
(umask 077 && echo {v.cookie} > .erlang.cookie)
# The port of its epmd, for rabbitmqctl beside it (manifest.toml, [monitor]).
echo {v.epmd_port} > epmd.port
: > rabbitmq-env.conf
export HOME="$folder" ERL_EPMD_PORT={v.epmd_port} ERL_EPMD_ADDRESS={v.address}
export RABBITMQ_NODENAME=psbench-{v.port}@localhost
export RABBITMQ_CONF_ENV_FILE="$folder/rabbitmq-env.conf"
export RABBITMQ_CONFIG_FILE="$folder/rabbitmq.conf"
export RABBITMQ_ADVANCED_CONFIG_FILE="$folder/advanced.config"
export RABBITMQ_ENABLED_PLUGINS_FILE="$folder/enabled_plugins"
export RABBITMQ_MNESIA_BASE="$folder/data" RABBITMQ_LOG_BASE="$folder/log" RABBITMQ_LOGS=-
export RABBITMQ_PLUGINS_EXPAND_DIR="$folder/plugins-expand" RABBITMQ_PID_FILE="$folder/pid"
export RABBITMQ_DIST_PORT={v.dist_port}
export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {v.erlang_address}"

epmd -port {v.epmd_port} &
epmd_pid=$!
steps=0
until epmd -port {v.epmd_port} -names > /dev/null 2>&1; do
  steps=$((steps + 1))
  if [ "$steps" -gt {READY_WAIT_STEPS} ] || ! kill -0 "$epmd_pid" 2> /dev/null; then
    echo "rabbitmq: the broker's own epmd did not start on port {v.epmd_port}"
    kill "$epmd_pid" 2> /dev/null
    exit 1
  fi
  sleep 0.05
done

{SERVER} &
broker_pid=$!
stopping=0
# Stopped (psbench's SIGTERM to the process group): the broker keeps nothing worth a
# graceful shutdown (its database and message store are removed below, also a persistent
# run's: psbench stops a broker after the runs that used it), so beam.smp ends at once,
# well within the keeper's few seconds when psbench was killed.
stop() {{
  stopping=1
  [ -s pid ] && kill -KILL "$(cat pid 2> /dev/null)" 2> /dev/null
  kill -TERM "$broker_pid" 2> /dev/null
}}
trap stop TERM INT HUP
while kill -0 "$broker_pid" 2> /dev/null; do
  wait "$broker_pid"
done
# Ignored from here on, also by rm: when psbench was killed, its parent-death signal and
# then the keeper's SIGTERM to the whole group both come, and the second must not cut the
# removal short.
trap '' TERM INT HUP
kill -TERM "$epmd_pid" 2> /dev/null
wait "$epmd_pid" 2> /dev/null
rm -rf data plugins-expand log .erlang.cookie epmd.port pid
if [ "$stopping" = 1 ]; then
  echo "rabbitmq: stopped"
  exit 0
fi
echo "rabbitmq: the broker (beam.smp) ended by itself or was killed; its own last words are above"
exit 1
"""


def erlang_address(address: str) -> str:
    return "{" + ",".join(address.split(".")) + "}"


def script(largest_message: int, port: int, address: str) -> str:
    """A plaintext run's launcher: every value computed here."""
    epmd_port, dist_port = free_port(address), free_port(address)
    frame_max = max(DEFAULT_FRAME_MAX, largest_message + FRAME_OVERHEAD + FRAME_SPARE)
    values = Values(
        address=address,
        port=str(port),
        epmd_port=str(epmd_port),
        dist_port=str(dist_port),
        erlang_address=erlang_address(address),
        cookie=secrets.token_hex(20),
        frame_max=str(frame_max),
        max_message_size=str(max(largest_message + 1, MIN_MAX_MESSAGE_SIZE)),
        listener=tcp_listener(address, str(port)),
    )
    about = (
        f"on\n# {address}:{port}, node psbench-{port}@localhost, an epmd of its own on port "
        f"{epmd_port},\n# Erlang distribution on {address}:{dist_port}; everything in this folder."
    )
    return launcher(values, about)


# The TLS template's own fields, replaced by psbench's {name} once braces are escaped.
_FIELDS = ("address", "port", "largest_message", "tls_ca", "tls_cert", "tls_key")


def _field(name: str) -> str:
    return f"@@{name}@@"


def tls_template() -> str:
    """The manifest's tls_config: the launcher with psbench's template fields, its epmd
    and distribution ports chosen when it starts (by python3: a TLS run's broker runs on
    this machine, never on a real host over SSH), an AMQPS-only listener."""
    address, port, largest = _field("address"), _field("port"), _field("largest_message")
    floor = MIN_MAX_MESSAGE_SIZE
    prelude = f"""\
free_port() {{
  python3 -c 'import socket, sys; s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' "$1"
}}
epmd_port=$(free_port {address}) && dist_port=$(free_port {address}) || {{
  echo "rabbitmq: no free ports of {address} for the broker's epmd and distribution"
  exit 1
}}
frame_max=$(({largest} + {FRAME_OVERHEAD + FRAME_SPARE}))
[ "$frame_max" -ge {DEFAULT_FRAME_MAX} ] || frame_max={DEFAULT_FRAME_MAX}
max_message_size=$(({largest} + 1))
[ "$max_message_size" -ge {floor} ] || max_message_size={floor}
cookie=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \\n')
"""
    values = Values(
        address=address,
        port=port,
        epmd_port="$epmd_port",
        dist_port="$dist_port",
        erlang_address="{$(echo " + address + " | tr . ,)}",
        cookie="$cookie",
        frame_max="$frame_max",
        max_message_size="$max_message_size",
        listener=tls_listener(
            address, port, _field("tls_ca"), _field("tls_cert"), _field("tls_key")
        ),
        prelude=prelude,
    )
    about = (
        f"security=tls, AMQPS\n# only on {address}:{port} (mutual TLS), node "
        f"psbench-{port}@localhost; everything in this folder."
    )
    text = launcher(values, about).replace("{", "{{").replace("}", "}}")
    for name in _FIELDS:
        text = text.replace(_field(name), "{" + name + "}")
    return text


if __name__ == "__main__":
    if sys.argv[1:] == ["--tls-template"]:
        sys.stdout.write(tls_template())
    else:
        sys.stdout.write(script(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
