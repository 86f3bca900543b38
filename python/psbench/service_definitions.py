"""The daemons and brokers psbench knows how to start: for each, its configuration
(generated into the service's own folder, bound to 127.0.0.1), how to tell it is ready,
what it must not leave behind, and what the node is told about it.

A broker listens on a free port of 127.0.0.1 chosen when it starts; the node gets its
address as the driver option `broker=127.0.0.1:PORT`. RouDi (iceoryx) has no port: its
shared-memory pools are sized for the largest message the runs will send.
"""

import getpass
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ADDRESS_OPTION = "broker"
# iceoryx: room for the chunk header (and Cyclone's own header) beside the message.
ROUDI_CHUNK_HEADROOM = 4096
# (chunk size, count): enough chunks of the small sizes for several subscribers' full
# queues (iceoryx queues hold up to 256); large chunks are costly, fewer of them.
ROUDI_POOLS = ((256, 8192), (4096, 4096), (65536, 1024),
               ((1 << 20) + ROUDI_CHUNK_HEADROOM, 256))
ROUDI_LARGEST_COUNT = 64


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    port: int | None = None      # where it accepts clients; None: no port (RouDi)


@dataclass(frozen=True)
class ServiceDefinition:
    name: str                                     # the executable, as drivers name it
    # (its folder, the largest message of the runs) -> how to start it; writes its config
    launch: Callable[[Path, int], Launch]
    ready_line: str | None = None                 # printed once clients may connect
    leftovers: tuple[str, ...] = ()               # /dev/shm names to remove after it
    version_argv: tuple[str, ...] = ()            # prints its version (first line kept)
    broker: bool = False                          # the node gets broker=127.0.0.1:PORT


def find_executable(name: str) -> str | None:
    """The program's path, or None: brokers live in /usr/sbin, which not every PATH has."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def executable(name: str) -> str:
    return find_executable(name) or name


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now (the broker binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def roudi_pools(largest_message: int) -> list[tuple[int, int]]:
    """(chunk size, count) of each mempool: the fixed pools up to the first that holds
    the largest message, and one of exactly its size if none does."""
    needed = largest_message + ROUDI_CHUNK_HEADROOM
    pools = []
    for size, count in ROUDI_POOLS:
        pools.append((size, count))
        if size >= needed:
            return pools
    size = -(-needed // 1024) * 1024
    return pools + [(size, ROUDI_LARGEST_COUNT)]


def _roudi(folder: Path, largest_message: int) -> Launch:
    lines = ["[general]", "version = 1", "", "[[segment]]"]
    for size, count in roudi_pools(largest_message):
        lines += ["", "[[segment.mempool]]", f"size = {size}", f"count = {count}"]
    config = folder / "roudi.toml"
    config.write_text("\n".join(lines) + "\n")
    return Launch([executable("iox-roudi"), "-c", str(config)])


def _mosquitto(folder: Path, largest_message: int) -> Launch:
    port = free_port()
    config = folder / "mosquitto.conf"
    # max_queued_messages 0: no limit, so a QoS 1 (reliable) subscriber that falls
    # behind is not silently dropped by the broker.
    config.write_text("\n".join([
        f"listener {port} 127.0.0.1", "allow_anonymous true", "set_tcp_nodelay true",
        "persistence false", "max_queued_messages 0", "log_dest stdout",
        "log_type error", "log_type warning", "log_type notice"]) + "\n")
    return Launch([executable("mosquitto"), "-c", str(config)], port)


def _nats(folder: Path, largest_message: int) -> Launch:
    port = free_port()
    config = folder / "nats-server.conf"
    # The default max_payload is 1 MB; allow the largest message with room to spare.
    config.write_text(f"listen: 127.0.0.1:{port}\n"
                      f"max_payload: {max(2 * largest_message, 1 << 20)}\n")
    return Launch([executable("nats-server"), "-c", str(config)], port)


def _redis(folder: Path, largest_message: int) -> Launch:
    port = free_port()
    config = folder / "redis.conf"
    # No persistence; a subscriber of large messages is not cut off at the default
    # 32 MB output buffer; the process keeps its command line (which names this run).
    config.write_text("\n".join([
        "bind 127.0.0.1", f"port {port}", "protected-mode yes", 'save ""',
        "appendonly no", "daemonize no", f"dir {folder}", 'logfile ""',
        "set-proc-title no", "client-output-buffer-limit pubsub 512mb 128mb 60"]) + "\n")
    return Launch([executable("redis-server"), str(config)], port)


KNOWN = {
    # iceoryx's shared-memory daemon (the iceoryx driver, Cyclone's shm transport);
    # it removes its shared memory on SIGTERM.
    "iox-roudi": ServiceDefinition(
        "iox-roudi", _roudi, ready_line="RouDi is ready for clients",
        leftovers=("iceoryx_mgmt", getpass.getuser()), version_argv=("iox-roudi", "-v")),
    "mosquitto": ServiceDefinition("mosquitto", _mosquitto,
                                   version_argv=("mosquitto", "-h"), broker=True),
    "nats-server": ServiceDefinition("nats-server", _nats,
                                     version_argv=("nats-server", "--version"), broker=True),
    "redis-server": ServiceDefinition("redis-server", _redis,
                                      version_argv=("redis-server", "--version"), broker=True),
}
