"""The launcher of a RabbitMQ broker for psbench's runs (manifest.toml): a POSIX sh script
that psbench writes into the service's folder and runs there.

Usage: broker_launch.py LARGEST_MESSAGE PORT ADDRESS prints a plaintext run's script (the
manifest's config_script); broker_launch.py --tls-template prints the manifest's
tls_config, whose only listener is AMQPS with mutual TLS (tests/test_security_tls.py checks
the two agree). Both are TEMPLATE, of psbench's fields ({address}, {port},
{largest_message}, the TLS files'), which a plaintext run's fills in here with the ports of
the broker's epmd and Erlang distribution, chosen here (its script may run on a real host
over SSH, without python3); a TLS run's broker runs on this machine, and its script
chooses them with python3 when it starts.

Everything of the broker is in the folder the script runs from: its configuration, node
name (psbench-PORT@localhost), Erlang cookie, HOME, database and message store (data/),
logs and expanded plugins; nothing of Debian's system broker (/etc/rabbitmq,
/var/lib/rabbitmq) is read or written. data/ is removed when the broker ends, and when the
script starts, except for runs with durability persistent: psbench appends the manifest's
durable_config, the line DURABLE_MARKER, and the script then keeps data/ from one start to
the next (a broker psbench killed and restarts finds its durable queues and persistent
messages again). Erlang's distribution needs an epmd, and one that erl starts itself
daemonises and outlives the broker; so the script runs an epmd of the broker's own, in the
foreground, in the process group psbench stops, on a private port, and stops it once the
broker has ended.
"""

import errno
import socket
import sys

# The manifest's durable_config: appended to the script for runs with durability
# persistent, which the script finds in itself ("$0") since the appended text runs last.
DURABLE_MARKER = "# psbench: durability persistent, keep data/ across a restart"

# psbench's template: {address}, {port}, {largest_message} (and the TLS files') are its
# fields, {{ and }} sh's braces. @ABOUT@, @PORTS@ (sets ERL_EPMD_PORT and
# RABBITMQ_DIST_PORT) and @LISTENER@ (rabbitmq.conf's listener lines) differ by run.
# The Debian script itself runs, not /usr/sbin/rabbitmq-server, a wrapper that, run as
# root, switches to user rabbitmq in /var/lib/rabbitmq (the system broker's home).
TEMPLATE = """\
#!/bin/sh
# A RabbitMQ broker of one psbench service (drivers/rabbitmq/broker_launch.py): @ABOUT@
# on {address}:{port}, node psbench-{port}@localhost; everything in this folder.
set -u
folder=$(cd "$(dirname "$0")" && pwd -P)
cd "$folder"
@PORTS@# A message of the run's largest size travels in one body frame: frame_max holds it, a
# frame's 8 bytes (type, channel, size, end octet) and 4096 for the method and header
# frames' fields, and is at least RabbitMQ's default.
frame_max=$(({largest_message} + 4104))
[ "$frame_max" -ge 131072 ] || frame_max=131072
max_message_size=$(({largest_message} + 1))
[ "$max_message_size" -ge 1048576 ] || max_message_size=1048576
cookie=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \\n')
cat > rabbitmq.conf <<CONFIG
@LISTENER@# psbench's clients log in as guest from wherever the run's hosts are.
loopback_users = none
# TCP_NODELAY on every connection (RabbitMQ's default, stated).
tcp_listen_options.nodelay = true
tcp_listen_options.backlog = 128
# No heartbeats: on loopback and psbench's own hosts the kernel reports a broker or
# client gone at once; heartbeats would close a connection the node leaves idle.
heartbeat = 0
frame_max = $frame_max
max_message_size = $max_message_size
# No disk alarm: a small disk must not block publishers (a volatile run persists
# nothing; a persistent one writes its messages until they are taken).
disk_free_limit.absolute = 1
# No statistics collection (there is no management plugin to show them).
collect_statistics = none
log.console = true
log.console.level = warning
log.file = false
CONFIG
# Durability persistent (broker_launch.py, DURABLE_MARKER): the data of the broker that
# ran here before (killed, then started again by psbench) is kept.
grep -qxF '@DURABLE_MARKER@' "$0" || rm -rf data
(umask 077 && echo $cookie > .erlang.cookie)
# The port of its epmd, for rabbitmqctl beside it (manifest.toml, [monitor]).
echo $ERL_EPMD_PORT > epmd.port
: > rabbitmq-env.conf
export HOME="$folder" ERL_EPMD_PORT ERL_EPMD_ADDRESS={address}
export RABBITMQ_NODENAME=psbench-{port}@localhost
export RABBITMQ_CONF_ENV_FILE="$folder/rabbitmq-env.conf"
export RABBITMQ_CONFIG_FILE="$folder/rabbitmq.conf"
export RABBITMQ_ADVANCED_CONFIG_FILE="$folder/advanced.config"
export RABBITMQ_ENABLED_PLUGINS_FILE="$folder/enabled_plugins"
export RABBITMQ_MNESIA_BASE="$folder/data" RABBITMQ_LOG_BASE="$folder/log" RABBITMQ_LOGS=-
export RABBITMQ_PLUGINS_EXPAND_DIR="$folder/plugins-expand" RABBITMQ_PID_FILE="$folder/pid"
export RABBITMQ_DIST_PORT
export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {{$(echo {address} | tr . ,)}}"

epmd -port $ERL_EPMD_PORT &
epmd_pid=$!
steps=0
until epmd -port $ERL_EPMD_PORT -names > /dev/null 2>&1; do
  steps=$((steps + 1))
  if [ "$steps" -gt 200 ] || ! kill -0 "$epmd_pid" 2> /dev/null; then
    echo "rabbitmq: the broker's own epmd did not start on port $ERL_EPMD_PORT"
    kill "$epmd_pid" 2> /dev/null
    exit 1
  fi
  sleep 0.05
done

/usr/lib/rabbitmq/bin/rabbitmq-server &
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

# AMQPS only (no plaintext listener), requiring a client certificate from the CA.
TLS_LISTENER = """\
listeners.tcp = none
listeners.ssl.default = {address}:{port}
ssl_options.cacertfile = {tls_ca}
ssl_options.certfile = {tls_cert}
ssl_options.keyfile = {tls_key}
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = true
"""

TLS_PORTS = """\
free_port() {{
  python3 -c 'import socket, sys; s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' "$1"
}}
ERL_EPMD_PORT=$(free_port {address}) && RABBITMQ_DIST_PORT=$(free_port {address}) || {{
  echo "rabbitmq: no free ports of {address} for the broker's epmd and distribution"
  exit 1
}}
"""


def launcher(about: str, ports: str, listener: str) -> str:
    text = TEMPLATE.replace("@DURABLE_MARKER@", DURABLE_MARKER)
    for marker, value in (("@ABOUT@", about), ("@PORTS@", ports), ("@LISTENER@", listener)):
        text = text.replace(marker, value)
    return text


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


def script(largest_message: int, port: int, address: str) -> str:
    """A plaintext run's launcher: the template filled in, its ports chosen now."""
    ports = f"ERL_EPMD_PORT={free_port(address)} RABBITMQ_DIST_PORT={free_port(address)}\n"
    text = launcher("AMQP", ports, "listeners.tcp.default = {address}:{port}\n")
    return text.format(address=address, port=port, largest_message=largest_message)


def tls_template() -> str:
    """The manifest's tls_config: the template with an AMQPS-only listener, its epmd and
    distribution ports chosen when it starts."""
    return launcher("AMQPS only, mutual TLS (security=tls)", TLS_PORTS, TLS_LISTENER)


if __name__ == "__main__":
    if sys.argv[1:] == ["--tls-template"]:
        sys.stdout.write(tls_template())
    else:
        sys.stdout.write(script(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
