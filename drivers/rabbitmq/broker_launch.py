"""The launcher of a RabbitMQ broker for psbench's runs (manifest.toml, config_script):
prints a POSIX sh script that psbench writes into the service's folder and runs there.

Usage: broker_launch.py LARGEST_MESSAGE PORT ADDRESS; prints the script. The script
itself takes no arguments (a plain AMQP listener), or CA CERT KEY (security=tls: the
manifest's tls_argv): then its only listener is AMQPS, with mutual TLS, on the same
address and port.

Everything of the broker is in the folder the script runs from: its configuration, node
name (psbench-PORT@localhost), Erlang cookie, HOME, database (mnesia), logs and expanded
plugins; nothing of Debian's system broker (/etc/rabbitmq, /var/lib/rabbitmq) is read or
written. Erlang's distribution needs an epmd, and one that erl starts itself daemonises
and outlives the broker; so the script runs an epmd of the broker's own, in the
foreground, in the process group psbench stops, on a private port, and stops it once the
broker has ended. The broker's database is removed when it ends.
"""

import secrets
import socket
import sys

# The Debian script itself: /usr/sbin/rabbitmq-server is a wrapper that, run as root,
# switches to user rabbitmq in /var/lib/rabbitmq (the system broker's home).
SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
DEFAULT_FRAME_MAX = 131072  # RabbitMQ's own default
FRAME_OVERHEAD = 8  # type, channel, size, end octet
READY_WAIT_STEPS = 200  # x 0.05 s for the epmd to answer


def free_port(address: str) -> int:
    """A port nothing listens on now, as psbench chooses the broker's own."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((address, 0))
        return probe.getsockname()[1]


def broker_config(largest_message: int, port: int, address: str) -> str:
    # frame_max: a message of the run's largest size travels in one body frame.
    frame_max = max(DEFAULT_FRAME_MAX, largest_message + FRAME_OVERHEAD + 4096)
    return f"""\
# psbench's clients log in as guest from wherever the run's hosts are.
loopback_users = none
# TCP_NODELAY on every connection (RabbitMQ's default, stated).
tcp_listen_options.nodelay = true
tcp_listen_options.backlog = 128
# No heartbeats: on loopback and psbench's own hosts the kernel reports a broker or
# client gone at once; heartbeats would close a connection the node leaves idle.
heartbeat = 0
frame_max = {frame_max}
max_message_size = {max(largest_message + 1, 1 << 20)}
# No disk alarm: a small disk must not block publishers (nothing is persisted).
disk_free_limit.absolute = 1
# No statistics collection (there is no management plugin to show them).
collect_statistics = none
log.console = true
log.console.level = warning
log.file = false
"""


def listener_lines(port: int, address: str) -> str:
    """sh that appends the listener to rabbitmq.conf: AMQP, or (given CA CERT KEY) only
    AMQPS that requires a client certificate from the CA (README.md, "Security")."""
    return f"""\
if [ "$#" -eq 3 ]; then
  {{
    echo "listeners.tcp = none"
    echo "listeners.ssl.default = {address}:{port}"
    printf 'ssl_options.cacertfile = %s\\n' "$1"
    printf 'ssl_options.certfile = %s\\n' "$2"
    printf 'ssl_options.keyfile = %s\\n' "$3"
    echo "ssl_options.verify = verify_peer"
    echo "ssl_options.fail_if_no_peer_cert = true"
  }} >> rabbitmq.conf
else
  echo "listeners.tcp.default = {address}:{port}" >> rabbitmq.conf
fi
"""


def erlang_address(address: str) -> str:
    return "{" + ",".join(address.split(".")) + "}"


def script(largest_message: int, port: int, address: str) -> str:
    epmd_port, dist_port = free_port(address), free_port(address)
    config = broker_config(largest_message, port, address)
    return f"""\
#!/bin/sh
# A RabbitMQ broker of one psbench service (drivers/rabbitmq/broker_launch.py): on
# {address}:{port}, node psbench-{port}@localhost, an epmd of its own on port {epmd_port},
# Erlang distribution on {address}:{dist_port}; everything in this folder.
set -u
folder=$(cd "$(dirname "$0")" && pwd -P)
cd "$folder"
cat > rabbitmq.conf <<'CONFIG'
{config}CONFIG
{listener_lines(port, address)}rm -rf mnesia
(umask 077 && echo {secrets.token_hex(20)} > .erlang.cookie)
: > rabbitmq-env.conf
export HOME="$folder" ERL_EPMD_PORT={epmd_port} ERL_EPMD_ADDRESS={address}
export RABBITMQ_NODENAME=psbench-{port}@localhost
export RABBITMQ_CONF_ENV_FILE="$folder/rabbitmq-env.conf"
export RABBITMQ_CONFIG_FILE="$folder/rabbitmq.conf"
export RABBITMQ_ADVANCED_CONFIG_FILE="$folder/advanced.config"
export RABBITMQ_ENABLED_PLUGINS_FILE="$folder/enabled_plugins"
export RABBITMQ_MNESIA_BASE="$folder/mnesia" RABBITMQ_LOG_BASE="$folder/log" RABBITMQ_LOGS=-
export RABBITMQ_PLUGINS_EXPAND_DIR="$folder/plugins-expand" RABBITMQ_PID_FILE="$folder/pid"
export RABBITMQ_DIST_PORT={dist_port}
export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {erlang_address(address)}"

epmd -port {epmd_port} &
epmd_pid=$!
steps=0
until epmd -port {epmd_port} -names > /dev/null 2>&1; do
  steps=$((steps + 1))
  if [ "$steps" -gt {READY_WAIT_STEPS} ] || ! kill -0 "$epmd_pid" 2> /dev/null; then
    echo "rabbitmq: the broker's own epmd did not start on port {epmd_port}"
    kill "$epmd_pid" 2> /dev/null
    exit 1
  fi
  sleep 0.05
done

{SERVER} &
broker_pid=$!
stopping=0
# Stopped (psbench's SIGTERM to the process group): the broker keeps nothing worth a
# graceful shutdown (transient messages, non-durable queues, its database removed below),
# so beam.smp ends at once, well within the keeper's few seconds when psbench was killed.
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
rm -rf mnesia plugins-expand log .erlang.cookie pid
if [ "$stopping" = 1 ]; then
  echo "rabbitmq: stopped"
  exit 0
fi
echo "rabbitmq: the broker (beam.smp) ended by itself or was killed; its own last words are above"
exit 1
"""


if __name__ == "__main__":
    sys.stdout.write(script(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
