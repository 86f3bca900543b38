"""How psbench starts a daemon or broker that a driver's manifest declares
(psbench.base.manifests): its configuration generated into the service's own folder (a
template with {address}, {port}, {second_port}, {folder} and {largest_message}, or a
script of the driver's that prints it), the command it needs run to completion first
(prepare), its command line, how to tell it is ready, and what it must not leave behind.

A broker listens on a free port chosen when it starts, at 127.0.0.1, or on a run across
emulated hosts at its host's address (docs/network.md); the node gets that address as
the driver option `broker=ADDRESS:PORT`.
"""

import dataclasses
import getpass
import os
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from psbench.base import manifests, paths, programs
from psbench.base.errors import UserError

ADDRESS_OPTION = "broker"
CONFIG_SCRIPT_TIMEOUT_S = 30.0


LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    port: int | None = None  # where it accepts clients; None: no port
    prepare: list[str] | None = None  # run to completion before argv


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


def _other_free_port(port: int) -> int:
    """A free port other than port (nothing binds port until the service starts)."""
    for _ in range(100):
        other = free_port()
        if other != port:
            return other
    raise UserError("no second free port of 127.0.0.1 for a service")


@dataclass(frozen=True)
class ServiceDefinition:
    spec: manifests.ServiceSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def ready_line(self) -> str | None:
        return self.spec.ready_line

    @property
    def per_host(self) -> bool:
        return self.spec.per_host

    @property
    def broker(self) -> bool:
        return self.spec.broker

    def leftovers(self, folder: Path | None = None) -> tuple[str, ...]:
        """/dev/shm names, and paths in the service's folder (none without a folder)."""
        return tuple(
            n.format(user=getpass.getuser(), folder=folder)
            for n in self.spec.leftovers
            if folder is not None or "{folder}" not in n
        )

    @property
    def program(self) -> str:
        """What argv's {executable} is here: the manifest's path, else the name found."""
        if self.spec.executable is None:
            return executable(self.name)
        # {build}: the build directory, for a program the build makes (a router).
        path = self.spec.executable.replace("{build}", str(paths.build_dir()))
        return str(self.spec.folder / os.path.expanduser(path))

    @property
    def version_argv(self) -> tuple[str, ...]:
        return tuple(a.format(executable=self.program) for a in self.spec.version_argv)

    def _config_text(
        self,
        folder: Path,
        largest_message: int,
        ports: tuple,
        address: str,
        tls: dict | None,
        durable: bool = False,
    ) -> str:
        text = self._base_config_text(folder, largest_message, ports, address, tls)
        if durable and self.spec.durable_config is not None:
            port, second_port = ports
            text += self.spec.durable_config.lstrip("\n").format(
                address=address, port=port, second_port=second_port, folder=folder,
                largest_message=largest_message, **(tls or {}),
            )  # fmt: skip
        return text

    def _base_config_text(
        self, folder: Path, largest_message: int, ports: tuple, address: str, tls: dict | None
    ) -> str:
        port, second_port = ports
        template = self.spec.tls_config if tls is not None else self.spec.config
        if template is not None:
            return template.lstrip("\n").format(
                address=address,
                port=port,
                second_port=second_port,
                folder=folder,
                largest_message=largest_message,
                **(tls or {}),
            )
        script = self.spec.folder / self.spec.config_script
        argv = [sys.executable, str(script), str(largest_message)]
        if port is not None:
            argv += [str(port), address]
        if second_port is not None:
            argv += [str(second_port)]
        out = programs.output(argv, CONFIG_SCRIPT_TIMEOUT_S)
        if out.returncode != 0:
            raise UserError(
                f"{script}: could not write {self.name}'s configuration: "
                f"{out.stderr.strip().splitlines()[-1:] or 'no message'}"
            )
        return out.stdout

    def render(
        self,
        folder,
        largest_message: int,
        port: int | None,
        address: str,
        program: str,
        second_port: int | None = None,
        tls: dict | None = None,
        durable: bool = False,
    ) -> tuple[str | None, list[str]]:
        """Its configuration's text (None: it has no configuration file) and its command
        line, for a service whose folder is `folder` (here, or on a real machine) and
        whose program is `program` (a path here; its name there). tls: the paths of its
        TLS files (security tls: its tls_config and tls_argv are used); durable: for
        runs with durability persistent (its durable_config is appended)."""
        config = f"{folder}/{self.spec.config_file}" if self.spec.config_file else None
        ports = (port, second_port)
        text = (
            self._config_text(folder, largest_message, ports, address, tls, durable)
            if config
            else None
        )
        template = self.spec.tls_argv if tls is not None and self.spec.tls_argv else self.spec.argv
        return text, self._argv(template, program, config, folder, ports, tls)

    @staticmethod
    def _argv(template, program: str, config, folder, ports: tuple, tls=None) -> list[str]:
        port, second_port = ports
        return [
            a.format(
                executable=program,
                config_file=config,
                folder=folder,
                port=port,
                second_port=second_port,
                **(tls or {}),
            )
            for a in template
        ]

    def launch(
        self,
        folder: Path,
        largest_message: int,
        address: str = LOOPBACK,
        tls: dict | None = None,
        durable: bool = False,
    ) -> Launch:
        """Writes the configuration into folder; the command line that starts it, and
        the one to run to completion before it (prepare; None when there is none).
        address: where a broker listens (127.0.0.1, or its emulated host's address);
        tls: the paths of its TLS files, for a run with security tls; durable: for runs
        with durability persistent."""
        port = free_port() if self.broker else None
        second_port = _other_free_port(port) if self.spec.second_port else None
        program = self.program
        text, argv = self.render(
            folder, largest_message, port, address, program, second_port, tls, durable
        )
        if text is not None:
            (folder / self.spec.config_file).write_text(text)
        config = f"{folder}/{self.spec.config_file}" if self.spec.config_file else None
        prepare = (
            self._argv(self.spec.prepare, program, config, folder, (port, second_port))
            if self.spec.prepare
            else None
        )
        return Launch(argv, port, prepare)


def definition(name: str, executable: str | None = None) -> ServiceDefinition | None:
    """The service a driver's manifest declares under this name, or None; executable:
    another version's program instead of the manifest's (docs/versions.md)."""
    spec = manifests.service(name)
    if spec is not None and executable is not None:
        spec = dataclasses.replace(spec, executable=executable)
    return ServiceDefinition(spec) if spec else None
