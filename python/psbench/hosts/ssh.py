"""Real machines reached over SSH: the system's OpenSSH client (so ~/.ssh/config, agents,
ProxyJump and ControlMaster work as they do for the user), never prompting
(BatchMode=yes), with psbench's own config file when one is given (--ssh-config FILE or
$PSBENCH_SSH_CONFIG, passed as `ssh -F FILE`).

Everything runs on the remote machine as a fixed POSIX sh script (the constants below)
whose arguments are positional ("$@"): the one command string ssh needs is shlex.join of
that argv, so no word a user gave is ever read by a shell unquoted.

  probe   its architecture, OS, CPUs, home, the server address of the SSH connection
          ($SSH_CONNECTION field 3) and whether psbench's files are in its cache; run
          directories older than 7 days there are removed (what an orphaned node that
          ended by itself left: see guard)
  deploy  a tar of the node and the driver from stdin into ~/.cache/psbench/<hash>/
          (unpacked into a temporary directory, then renamed: never half there)
  guard   runs one node with its stdio passed through (the start barrier crosses SSH
          unchanged); its stdin is forwarded line by line through a FIFO, but for
          STOP_LINE, psbench stopping it (a timeout, Ctrl-C): SIGTERM, on which the node
          writes what it has, kept for fetch. When its stdin ends (the orchestrator is
          gone: its ssh client died and sshd closed the session) the node is killed
          (SIGTERM, SIGKILL after 2 s) and its output directory removed: nobody is left
          to fetch it. The FIFO stays open until that is marked (.orphaned), so a node
          that ends on its stdin's end-of-file is known orphaned.
          A node that ends by itself before its guard sees the end of its stdin (a peer
          of a killed node, told the run is over) leaves its files: the next probe
          removes them once they are 7 days old.
  clock   psbench-node --clock-echo from the cache: the far end of the clock-offset
          exchange (psbench.hosts.clock); it ends when its stdin does
  put     a file from stdin into a directory there (a broker's configuration)
  ready   psbench-node --wait-port from the cache: whether a broker there accepts
  version a program's version line there (the sbin directories searched too)
  fetch   a tar of a run's output directories on stdout, then removes them
  check   what `psbench hosts check` reports: clock sync, installed packages, and
          whether the linker there finds the libraries the node and drivers need
"""

import hashlib
import io
import os
import platform
import shlex
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from psbench.base.errors import UserError
from psbench.hosts.clock import Reading, read_clock

CONFIG_ENV = "PSBENCH_SSH_CONFIG"
CONNECT_TIMEOUT_S = 10
COMMAND_TIMEOUT_S = 60.0
DEPLOY_TIMEOUT_S = 300.0
CACHE = ".cache/psbench"  # under the remote user's home
RUNS = CACHE + "/runs"
NODE_NAME = "psbench-node"
EXIT_UNREACHABLE = 255  # ssh's own exit code for a failed connection
SECURITY_DIR = ".security"  # a node's credentials, in its output directory there
STOP_LINE = b"PSBENCH-STOP\n"  # to a guarded node's stdin: stop it, keep its files

_config_file: str | None = None


def use_config(path: str | None) -> None:
    """psbench's ssh config file (--ssh-config): passed to every ssh as -F FILE."""
    global _config_file
    if path is not None and not Path(path).is_file():
        raise UserError(f"argument --ssh-config: {path}: no such file", 2)
    _config_file = str(Path(path).resolve()) if path else None


def config_file() -> str | None:
    return _config_file or os.environ.get(CONFIG_ENV) or None


def _script(text: str) -> str:
    """One line (each line of text ends with its own separator): the remote login shell
    may be one that does not take newlines inside quotes."""
    return " ".join(line.strip() for line in text.strip().splitlines())


PROBE = _script(r"""
printf 'arch=%s\n' "$(uname -m)" ;
printf 'kernel=%s\n' "$(uname -sr)" ;
if [ -r /etc/os-release ] ; then ( . /etc/os-release ; printf 'os=%s\n' "$PRETTY_NAME" ) ; fi ;
printf 'cpus=%s\n' "$(getconf _NPROCESSORS_ONLN 2>/dev/null)" ;
printf 'home=%s\n' "$HOME" ;
printf 'connection=%s\n' "${SSH_CONNECTION:-}" ;
if [ -n "$1" ] && [ -x "$HOME/.cache/psbench/$1/psbench-node" ] ; then echo cached=yes ; fi ;
if [ -d "$HOME/.cache/psbench/runs" ] ; then find "$HOME/.cache/psbench/runs" -mindepth 1 -maxdepth 1 -mtime +7 -exec rm -rf {} + 2>/dev/null ; fi ;
true
""")

DEPLOY = _script(r"""
set -e ;
root="$HOME/.cache/psbench" ;
mkdir -p "$root" ;
tmp=$(mktemp -d "$root/.deploy.XXXXXX") ;
tar -xf - -C "$tmp" ;
chmod 755 "$tmp" ;
if mv -T "$tmp" "$root/$1" 2>/dev/null ; then echo deployed ; else rm -rf "$tmp" ; echo present ; fi
""")

GUARD = _script(r"""
PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" ; export PATH ;
out=$1 ; shift ;
mkdir -p "$out" || exit 1 ;
in="$out/.stdin" ;
rm -f "$in" ;
mkfifo "$in" || exit 1 ;
exec 3<&0 ;
"$@" <"$in" 3<&- &
node=$! ;
{ exec 4>"$in" ;
  while IFS= read -r line <&3 ; do if [ "$line" = PSBENCH-STOP ] ; then kill -TERM "$node" ; else printf '%s\n' "$line" >&4 ; fi ; done ;
  : >"$out/.orphaned" ; exec 4>&- ; kill -TERM "$node" ; sleep 2 ; kill -KILL "$node" ; } 2>/dev/null &
watcher=$! ;
exec 3<&- ;
wait "$node" ; rc=$? ;
kill "$watcher" 2>/dev/null ;
if [ -e "$out/.orphaned" ] ; then rm -rf "$out" ; rmdir "${out%/*}" 2>/dev/null ; else rm -f "$in" ; fi ;
exit "$rc"
""")

CLOCK = _script(r"""
exec "$HOME/.cache/psbench/$1/psbench-node" --clock-echo
""")

PUT = _script(r"""
mkdir -p "$1" && cat >"$1/$2"
""")

# A key or a certificate: readable by the remote user only, folder and file.
PUT_SECRET = _script(r"""
umask 077 ; mkdir -p "$1" && chmod 700 "$1" && cat >"$1/$2"
""")

READY = _script(r"""
exec "$HOME/.cache/psbench/$1/psbench-node" --wait-port "$2" "$3"
""")

VERSION = _script(r"""
PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" ; export PATH ;
"$@" 2>&1 | head -n 1
""")

FETCH = _script(r"""
cd "$HOME/.cache/psbench/runs/$1" 2>/dev/null || exit 0 ;
tar -cf - --exclude=.security . ; rc=$? ;
cd / ; rm -rf "$HOME/.cache/psbench/runs/$1" ;
rmdir "$HOME/.cache/psbench/runs" 2>/dev/null ;
exit $rc
""")

REMOVE = _script(r"""
rm -rf "$HOME/.cache/psbench/runs/$1" ;
rmdir "$HOME/.cache/psbench/runs" 2>/dev/null ;
true
""")

CHECK = _script(r"""
if command -v chronyc >/dev/null 2>&1 ; then chronyc -n tracking 2>&1 | sed 's/^/chrony: /' ; else echo 'chrony: -' ; fi ;
for p in ptp4l phc2sys chronyd ntpd systemd-timesyncd ; do if pgrep -x "$p" >/dev/null 2>&1 ; then echo "running: $p" ; fi ; done ;
libs=$( { /sbin/ldconfig -p || ldconfig -p ; } 2>/dev/null ) ;
pkgs= ; lib= ;
for a in "$@" ; do if [ "$a" = -- ] ; then lib=1 ; elif [ -n "$lib" ] ; then case "$libs" in *"$a ("*) echo "library: $a found" ;; *) echo "library: $a -" ;; esac ; else pkgs=1 ; fi ; done ;
if [ -n "$pkgs" ] ; then if command -v dpkg-query >/dev/null 2>&1 ; then for a in "$@" ; do if [ "$a" = -- ] ; then break ; fi ; dpkg-query -W -f 'package: ${Package} ${Version} ${db:Status-Status}\n' "$a" 2>/dev/null ; done ; else echo 'package: -' ; fi ; fi ;
true
""")


def remote_command(script: str, name: str, args: list[str]) -> str:
    """The command string ssh sends: `sh -c SCRIPT NAME ARGS...`, every word quoted."""
    return shlex.join(["sh", "-c", script, name, *map(str, args)])


def is_ssh(argv: list[str]) -> bool:
    """Whether a command line is one of ssh_argv's (a node on a real machine)."""
    return bool(argv) and argv[0] == "ssh"


def ssh_argv(target: str, command: str) -> list[str]:
    """ssh to target running command (a string made by remote_command)."""
    argv = ["ssh"]
    config = config_file()
    if config:
        argv += ["-F", config]
    argv += [
        "-o", "BatchMode=yes",
        "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
        "-o", "ServerAliveInterval=5",
        "-o", "ServerAliveCountMax=3",
        "-T", "-e", "none",
        "--", target, command,
    ]  # fmt: skip
    return argv


def run(target: str, script: str, name: str, args=(), input: bytes | None = None, timeout=None):
    """Runs a script on target; the CompletedProcess (bytes). A timeout or a missing ssh
    is a UserError."""
    argv = ssh_argv(target, remote_command(script, name, list(args)))
    try:
        return subprocess.run(
            argv,
            input=input,
            capture_output=True,
            timeout=timeout or COMMAND_TIMEOUT_S,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise UserError(
            "real machines need the OpenSSH client: install openssh-client", 2
        ) from None
    except subprocess.TimeoutExpired:
        raise UserError(
            f"ssh {target}: no answer within {timeout or COMMAND_TIMEOUT_S:g} s", 1
        ) from None


def _fields(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _why(target: str, done) -> str:
    said = done.stderr.decode(errors="replace").strip().splitlines()
    return f"ssh {target}: {said[-1] if said else f'exit {done.returncode}'}"


def local_arch() -> str:
    return platform.machine()


@dataclass
class Probe:
    """What a host said of itself."""

    target: str
    reachable: bool
    reason: str | None = None
    arch: str | None = None
    kernel: str | None = None
    os: str | None = None
    cpus: int | None = None
    home: str | None = None
    server_address: str | None = None  # $SSH_CONNECTION field 3
    cached: bool = False


def probe(target: str, key: str = "") -> Probe:
    done = run(target, PROBE, "psbench-probe", [key])
    if done.returncode != 0:
        return Probe(target, False, _why(target, done))
    f = _fields(done.stdout.decode(errors="replace"))
    connection = f.get("connection", "").split()
    cpus = f.get("cpus", "")
    return Probe(
        target,
        True,
        arch=f.get("arch") or None,
        kernel=f.get("kernel") or None,
        os=f.get("os") or None,
        cpus=int(cpus) if cpus.isdigit() else None,
        home=f.get("home") or None,
        server_address=connection[2] if len(connection) >= 3 else None,
        cached=f.get("cached") == "yes",
    )


def content_key(files: list[Path]) -> str:
    """The cache directory's name: a hash of the files' names and contents."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:20]


def _tar_of(files: list[Path]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in files:
            tar.add(str(path), arcname=path.name, recursive=False)
    return buffer.getvalue()


@dataclass
class RealHost:
    name: str  # the experiment's
    target: str  # what ssh is given
    given_address: str | None
    probe: Probe | None = None
    cache_dir: str | None = None
    deployed: bool | None = None  # copied this run (False: it was in the cache)
    used: bool = False  # a node of this run ran on it

    @property
    def address(self) -> str:
        return self.given_address or self.probe.server_address


class SshNetwork:
    """The real machines of one run. __enter__ reaches each (refusing one that cannot
    be reached, has another architecture, or has no address), deploy() copies the node
    and the driver where they are not cached yet, command() runs a node there, fetch()
    brings its output files back and removes them remotely."""

    kind = "ssh"

    def __init__(self, hosts: dict[str, dict]):
        self.hosts = {
            name: RealHost(name, str(link["ssh"]), link.get("address"))
            for name, link in hosts.items()
        }
        self.key: str | None = None

    def __enter__(self) -> "SshNetwork":
        mine = local_arch()
        for host in self.hosts.values():
            host.probe = probe(host.target)
            if not host.probe.reachable:
                raise UserError(f"host {host.name}: unreachable: {host.probe.reason}", 2)
            if host.probe.arch != mine:
                raise UserError(
                    f"host {host.name} ({host.target}) is {host.probe.arch}, this machine "
                    f"{mine}: psbench copies its own node there, which needs the same "
                    f"architecture",
                    2,
                )
            if not host.given_address and not host.probe.server_address:
                raise UserError(
                    f"host {host.name}: its address is unknown (no $SSH_CONNECTION there): "
                    f"give it, e.g. hosts: {{{host.name}: {{ssh: {host.target}, address: "
                    f"10.0.0.7}}}}",
                    2,
                )
            if not host.probe.home:
                raise UserError(f"host {host.name}: $HOME is not set there", 2)
        return self

    def __exit__(self, *exc) -> None:
        pass  # each run's remote files are fetched and removed by fetch()

    def addresses(self) -> dict[str, str]:
        return {name: host.address for name, host in self.hosts.items()}

    def deploy(self, files: list[Path]) -> None:
        """The files (the node first) into each host's cache, where not there yet."""
        self.key = content_key(files)
        payload = None
        for host in self.hosts.values():
            host.cache_dir = f"{host.probe.home}/{CACHE}/{self.key}"
            if probe(host.target, self.key).cached:
                host.deployed = False
                continue
            payload = payload if payload is not None else _tar_of(files)
            done = run(host.target, DEPLOY, "psbench-deploy", [self.key], payload, DEPLOY_TIMEOUT_S)
            if done.returncode != 0:
                raise UserError(f"host {host.name}: copying psbench there failed: "
                                f"{_why(host.target, done)}", 1)  # fmt: skip
            host.deployed = done.stdout.decode().strip() == "deployed"

    def remote_file(self, host: str, name: str) -> str:
        return f"{self.hosts[host].cache_dir}/{name}"

    def out_dir(self, host: str, run_id: str, process: str) -> str:
        return f"{self.hosts[host].probe.home}/{RUNS}/{run_id}/{process}"

    def command(self, host: str, out_dir: str, argv: list[str]) -> list[str]:
        """argv run on the host under the guard, its stdio passed through."""
        self.hosts[host].used = True
        return ssh_argv(self.hosts[host].target, remote_command(GUARD, "psbench-guard",
                                                                [out_dir, *argv]))  # fmt: skip

    def read_clocks(self) -> dict[str, Reading]:
        """Each host's clock against this machine's (after deploy(): the node does it)."""
        return {
            name: read_clock(
                ssh_argv(host.target, remote_command(CLOCK, "psbench-clock", [self.key])),
                f"host {name}: reading its clock",
            )
            for name, host in self.hosts.items()
        }

    def security_dir(self, host: str, run_id: str, process: str) -> str:
        """A node's credentials there: inside its output directory, so they go with it
        (fetch() removes it, the guard does when psbench is gone), but never fetched."""
        return f"{self.out_dir(host, run_id, process)}/{SECURITY_DIR}"

    def service_dir(self, host: str, token: str, name: str) -> str:
        """A service's folder there: beside the runs' (swept after 7 days like them)."""
        return f"{self.hosts[host].probe.home}/{RUNS}/service-{token}/{name}"

    def put(self, host: str, folder: str, name: str, text: str | bytes, secret=False) -> None:
        """A file there (secret: a key or certificate, for the remote user's eyes only)."""
        data = text.encode() if isinstance(text, str) else text
        script = PUT_SECRET if secret else PUT
        done = run(self.hosts[host].target, script, "psbench-put", [folder, name], data)
        if done.returncode != 0:
            raise UserError(
                f"host {host}: writing {name} there: {_why(self.hosts[host].target, done)}", 1
            )

    def ready(self, host: str, address: str, port: int, within_s: float) -> bool:
        """Whether something accepts TCP at address:port, asked on the host itself."""
        done = run(self.hosts[host].target, READY, "psbench-ready",
                   [self.key, f"{address}:{port}", f"{within_s:g}"], timeout=within_s + 30)  # fmt: skip
        return done.returncode == 0

    def version(self, host: str, argv: list[str]) -> str | None:
        try:
            done = run(self.hosts[host].target, VERSION, "psbench-version", argv)
        except UserError:
            return None
        line = done.stdout.decode(errors="replace").strip()
        return line or None

    def fetch(self, run_id: str, local_dir: Path) -> list[str]:
        """Every output file of the run's processes from each host into local_dir (a
        process's files by their own names), then removed there. Problems, as text."""
        problems = []
        for host in self.hosts.values():
            if not host.used:
                continue
            done, problem = self._ask(host.name, FETCH, "psbench-fetch", [run_id],
                                      "fetching the results", DEPLOY_TIMEOUT_S)  # fmt: skip
            if problem is not None:
                problems.append(problem)
            elif done.stdout:
                _unpack(done.stdout, local_dir)
        return problems

    def remove_run(self, run_id: str, hosts: list[str]) -> list[str]:
        """The run's directory on those hosts removed (what fetch() did not take: a run
        that ended before its nodes were stopped). Problems, as text."""
        asked = [self._ask(name, REMOVE, "psbench-remove", [run_id], "removing the run's files")
                 for name in hosts]  # fmt: skip
        return [problem for _, problem in asked if problem is not None]

    def _ask(self, name: str, script: str, label: str, args: list[str], what: str,
             timeout: float | None = None):  # fmt: skip
        """script run on host `name`: (its outcome, None), or (None, what went wrong as
        text) when ssh failed or the script did."""
        target = self.hosts[name].target
        try:
            done = run(target, script, label, args, timeout=timeout)
        except UserError as exc:
            return None, f"host {name}: {what}: {exc}"
        if done.returncode != 0:
            return None, f"host {name}: {what}: {_why(target, done)}"
        return done, None

    def describe(self) -> dict:
        """For run.json."""
        return {
            "kind": "ssh",
            "clock": "one per machine: offsets measured before and after the run (run.json clock)",
            "ssh_config": config_file(),
            "hosts": {
                h.name: {
                    "target": h.target,
                    "address": h.address,
                    "address_from": "given" if h.given_address else "ssh connection",
                    "arch": h.probe.arch,
                    "os": h.probe.os,
                    "kernel": h.probe.kernel,
                    "cpus": h.probe.cpus,
                    "cache_dir": h.cache_dir,
                    "deployed": h.deployed,
                }
                for h in self.hosts.values()
            },
        }


def _unpack(data: bytes, local_dir: Path) -> None:
    """Regular files of the tar, each under its own name in local_dir (the remote
    directories are one per process; their files' names do not collide)."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar.getmembers():
            name = Path(member.name).name
            if not member.isfile() or name.startswith(".") or not name:
                continue
            source = tar.extractfile(member)
            if source is not None:
                (local_dir / name).write_bytes(source.read())


@dataclass
class Check:
    """`psbench hosts check`: one host."""

    name: str
    target: str
    probe: Probe
    problems: list[str] = field(default_factory=list)
    clock: list[str] = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    packages: dict[str, str | None] = field(default_factory=dict)  # name -> version or None
    libraries: dict[str, bool] = field(default_factory=dict)  # soname -> in ldconfig -p


def needed_libraries(path: Path) -> list[str] | None:
    """The shared libraries an ELF file names (DT_NEEDED), None when it is not a 64-bit
    little-endian ELF file (what psbench builds here)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff = int.from_bytes(data[0x28:0x30], "little")
    size, count = (int.from_bytes(data[o : o + 2], "little") for o in (0x3A, 0x3C))

    def section(i):
        h = data[shoff + i * size : shoff + (i + 1) * size]
        kind, offset = int.from_bytes(h[4:8], "little"), int.from_bytes(h[0x18:0x20], "little")
        length, link = (
            int.from_bytes(h[0x20:0x28], "little"),
            int.from_bytes(h[0x28:0x2C], "little"),
        )
        return kind, offset, length, link

    for i in range(count):
        kind, offset, length, link = section(i)
        if kind != 6:  # SHT_DYNAMIC
            continue
        _, strings, _, _ = section(link)
        names = []
        for e in range(offset, offset + length, 16):
            tag = int.from_bytes(data[e : e + 8], "little")
            if tag == 0:  # DT_NULL
                break
            if tag == 1:  # DT_NEEDED
                start = strings + int.from_bytes(data[e + 8 : e + 16], "little")
                names.append(data[start : data.index(b"\0", start)].decode(errors="replace"))
        return names
    return []


def check(name: str, target: str, packages: list[str], libraries: list[str] = ()) -> Check:
    """libraries: sonames looked for in the host's linker cache (ldconfig -p)."""
    found = probe(target)
    result = Check(name, target, found)
    if not found.reachable:
        result.problems.append(f"unreachable: {found.reason}")
        return result
    if found.arch != local_arch():
        result.problems.append(
            f"architecture {found.arch}, this machine {local_arch()}: psbench's node cannot run there"
        )
    done = run(target, CHECK, "psbench-check", [*packages, "--", *libraries])
    installed, present = {}, set()
    for line in done.stdout.decode(errors="replace").splitlines():
        word, _, rest = line.partition(": ")
        if word == "chrony" and rest != "-":
            result.clock.append(rest)
        elif word == "running":
            result.running.append(rest)
        elif word == "library" and rest.endswith(" found"):
            present.add(rest[: -len(" found")])
        elif word == "package" and rest != "-":
            parts = rest.split()
            if len(parts) >= 3 and parts[2] == "installed":
                installed[parts[0].split(":")[0]] = parts[1]
    result.packages = {p: installed.get(p) for p in packages}
    result.libraries = {lib: lib in present for lib in libraries}
    return result
