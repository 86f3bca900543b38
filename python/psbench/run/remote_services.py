"""Brokers on real machines: started over ssh on the run's broker host (place.broker, else
the first host), under the same guard as the nodes (psbench.hosts.ssh), so that it stops
when psbench closes its stdin or psbench is gone, and its folder there goes with it.

Its configuration is made here (the manifest's template or script, for the host's
address, a port and its folder there) and written there; the program is found there by
name (the sbin directories searched too). psbench cannot always reach the machine's
address itself (a ProxyJump), so whether the broker accepts is asked on the machine, by
the node already copied there (`psbench-node --wait-port`). The port is drawn from
psbench's range; a broker that ends before accepting, its port taken, is started again
on another, ATTEMPTS times at most. A per-host daemon (one that serves shared
memory, which never crosses machines): refused."""

import random
import secrets
import subprocess
import time
from pathlib import Path

from psbench.base.errors import UserError
from psbench.base.signals import die_with_parent
from psbench.run import keeper
from psbench.run.service_definitions import ServiceDefinition
from psbench.run.services import READY_TIMEOUT_S, RunningService, server_tls, stop

ATTEMPTS = 3
ASK_EVERY_S = 2.0  # each question's own bound: a broker that died is seen within it
PORTS = (20000, 32767)  # the range psbench's own ports come from (docs/network.md)


# Its TLS files' names in its folder there (the CA's and its own certificate are both
# cert.pem here).
TLS_NAMES = {"tls_ca": "ca.pem", "tls_cert": "cert.pem", "tls_key": "key.pem",
             "tls_bundle": "bundle.pem"}  # fmt: skip


def start(declared: ServiceDefinition, network, host: str, log_dir: Path, largest: int,
          security: str | None = None):  # fmt: skip
    """A broker running on real machine `host` of an SshNetwork, accepting clients;
    security: a secured run's mode (its TLS files made here, copied into its folder
    there, which goes with it)."""
    if not declared.broker:
        raise UserError(
            f"{declared.name} is a per-host daemon, which psbench does not start on real "
            f"machines; run this driver on one machine (no hosts)",
            2,
        )
    if declared.spec.executable or declared.spec.prepare or declared.spec.second_port:
        raise UserError(
            f"{declared.name} runs from files on this machine ({declared.program}), and "
            f"psbench does not start it on real machines; start one on host {host} and give "
            f"its address with --option broker=HOST:PORT",
            2,
        )
    address = network.addresses()[host]
    folder = network.service_dir(host, secrets.token_hex(6), declared.name)
    log = log_dir / f"service-{declared.name}.log"
    tls = _tls_there(declared, security, log_dir, network, host, folder)
    for _ in range(ATTEMPTS):
        port = random.SystemRandom().randint(*PORTS)
        text, argv = declared.render(folder, largest, port, address, declared.name, tls=tls)
        if text is not None:
            network.put(host, folder, declared.spec.config_file, text)
        with log.open("w") as out:
            proc = subprocess.Popen(
                network.command(host, folder, argv),
                stdin=subprocess.PIPE,  # closed: the guard there stops the broker
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        keeper.instance().watch_service(proc.pid)
        service = RunningService(
            declared, proc=proc, log=log, port=port, config=argv, listen=address, host=host,
            remote=True, security=security,
        )  # fmt: skip
        if _accepts_while_running(network, host, address, port, proc):
            service.version = (
                network.version(host, [declared.name, *declared.spec.version_argv[1:]])
                if declared.spec.version_argv
                else None
            )
            return service
        stop(service)
        if "in use" not in service.log_tail():
            break
    raise UserError(
        f"{declared.name} on host {host} did not accept clients at {address}:{port} within "
        f"{READY_TIMEOUT_S:g} s: {service.log_tail()}; its log: {log} (is it installed "
        f"there? psbench hosts check --driver ... says)",
        1,
    )


def _tls_there(declared, security, log_dir: Path, network, host: str, folder: str):
    """Its TLS files (made here for the host's address) copied into its folder there,
    readable by the remote user only; the template values naming them there."""
    here = server_tls(declared, security, log_dir, network.addresses()[host])
    if here is None:
        return None
    for key, name in TLS_NAMES.items():
        network.put(host, folder, name, Path(here[key]).read_bytes(), secret=True)
    return {key: f"{folder}/{name}" for key, name in TLS_NAMES.items()}


def _accepts_while_running(network, host: str, address: str, port: int, proc) -> bool:
    """Whether the broker accepts within READY_TIMEOUT_S; False as soon as it has ended
    (not installed there, its port taken)."""
    end = time.monotonic() + READY_TIMEOUT_S
    while proc.poll() is None and time.monotonic() < end:
        if network.ready(host, address, port, ASK_EVERY_S):
            return proc.poll() is None
    return False
