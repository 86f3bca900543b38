"""The credentials of this psbench process's secured runs: one temporary folder of its
own (removed when psbench ends, or by the keeper when psbench is killed), one CA every
node and broker trusts, and a second CA that only a `wrong-ca` fault uses.

A node gets the options security=MODE and security_dir=DIR; DIR holds ca.pem (the CA to
trust), cert.pem and key.pem (its own), and where its driver's manifest says
`documents = ...`, the signed documents that mode needs (docs/security.md). A broker's
configuration gets {tls_ca}, {tls_cert}, {tls_key} and {tls_bundle}.
"""

import atexit
import shutil
import tempfile
from pathlib import Path

from psbench.base import manifests
from psbench.run import keeper
from psbench.run.security import documents
from psbench.run.security.credentials import Authority, Issued, issue, make_authority, verify

NONE = "none"
# Test hooks (--security-fault): the receiving processes get bad credentials.
FAULTS = ("wrong-ca", "expired", "deny")
RECEIVING_ROLES = ("pong", "sub")
MAIN_CA, OTHER_CA = "ca", "other-ca"
OPTIONS = ("security", "security_dir")  # the driver options a secured node gets


def secured(mode: str | None) -> bool:
    return mode not in (None, NONE)


class Session:
    def __init__(self):
        self._root: Path | None = None
        self._authorities: dict[str, Authority] = {}

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="psbench-security-"))
            keeper.instance().watch_path(str(self._root))
            atexit.register(self.close)
        return self._root

    def authority(self, name: str = MAIN_CA) -> Authority:
        if name not in self._authorities:
            self._authorities[name] = make_authority(self.root / "authorities", name)
        return self._authorities[name]

    def node_dir(self, run_id: str, process: str) -> Path:
        """Where a node's credentials are (a path only: a check opens nothing)."""
        return self.root / run_id / process

    def prepare_nodes(self, spec, run_id: str, documents: str | None) -> dict[str, str]:
        """Writes every process's credentials; process -> what was wrong with them on
        purpose (a fault), for the processes that got one."""
        faulty = {}
        for plan in spec.processes():
            fault = spec.security_fault if _receives(plan.roles) else None
            ca = self.authority(OTHER_CA if fault == "wrong-ca" else MAIN_CA)
            folder = self.node_dir(run_id, plan.name)
            issued = issue(ca, folder, f"psbench-{plan.name}", expired=fault == "expired")
            shutil.copyfile(ca.cert, folder / "ca.pem")
            if documents is not None:
                _write_documents(documents, folder, spec.security, issued, ca, fault == "deny")
            if fault is not None:
                faulty[plan.name] = fault
        return faulty

    def server_files(self, folder_name: str, addresses: tuple[str, ...]) -> dict[str, str]:
        """A broker's certificate (its addresses as IP subjectAltNames) and key, signed
        by the CA every node trusts: the template values of its tls_config."""
        ca = self.authority(MAIN_CA)
        folder = self.root / "services" / folder_name
        issued = issue(ca, folder, "psbench-broker", ips=addresses)
        bundle = folder / "bundle.pem"
        bundle.write_text(issued.key.read_text() + issued.cert.read_text())
        return {
            "tls_ca": str(ca.cert),
            "tls_cert": str(issued.cert),
            "tls_key": str(issued.key),
            "tls_bundle": str(bundle),
        }

    def diagnosis(self, run_id: str, faulty: dict[str, str]) -> list[str]:
        """Why the processes given bad credentials could not take part, each in openssl's
        words (an independent judge of what psbench made)."""
        lines = []
        for process, fault in faulty.items():
            if fault == "deny":
                lines.append(f"{process}'s permissions deny every topic of the run")
                continue
            cert = self.node_dir(run_id, process) / "cert.pem"
            reason = verify(self.authority(MAIN_CA).cert, cert)
            lines.append(
                f"{process}'s certificate does not verify against the CA the others "
                f"trust (openssl verify: {reason or 'it verifies'})"
            )
        return lines

    def forget_run(self, run_id: str) -> None:
        shutil.rmtree(self.root / run_id, ignore_errors=True)

    def close(self) -> None:
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            keeper.instance().release_path(str(self._root))
            self._root = None
            self._authorities.clear()


def _receives(roles) -> bool:
    return any(r in RECEIVING_ROLES for r in roles)


def _write_documents(kind: str, folder: Path, mode: str, issued: Issued, ca, deny: bool):
    """The signed documents a mode needs (the manifest's `documents`), by their kind."""
    documents.write(kind, folder, mode=mode, subject=issued.subject, ca=ca, deny=deny)


_session = Session()


def session() -> Session:
    return _session


def problem(spec, drivers: list[str]) -> tuple[str, str] | None:
    """Why the run's security cannot be had as asked: (setting, message), or None.
    drivers: the names of the drivers the run loads."""
    mode, fault = getattr(spec, "security", None), getattr(spec, "security_fault", None)
    given = [o.partition("=")[0] for o in getattr(spec, "options", None) or []]
    if set(given) & set(OPTIONS):
        return "options", (
            "security and security_dir are psbench's to give: use --security MODE "
            "(psbench makes the credentials)"
        )
    if not secured(mode):
        if fault is not None:
            return "security_fault", "--security-fault needs a security mode (--security MODE)"
        return None
    for name in drivers:
        if name not in manifests.driver_names():
            return "security", f"{name} is not a driver of drivers/: no manifest says its modes"
        manifest = manifests.load(name)
        if mode not in manifest.security_modes:
            takes = ", ".join(manifest.security_modes)
            return "security", (
                f"{name} takes security {takes} (its manifest's [security] modes), not {mode}"
                if takes
                else f"{name} takes no security mode (its manifest declares none)"
            )
        if fault == "deny" and manifest.security_documents is None:
            return "security_fault", (
                f"deny needs permissions documents, which {name}'s security has none of; "
                f"use wrong-ca or expired"
            )
        if fault == "deny" and not documents.checks_permissions(manifest.security_documents, mode):
            enforced = [m for m in manifest.security_modes
                        if documents.checks_permissions(manifest.security_documents, m)]  # fmt: skip
            return "security_fault", (
                f"deny needs a mode with access control, which {mode} has not: use "
                f"{', '.join(enforced)}"
            )
    if fault is not None and getattr(spec, "placement", "inter") == "intra":
        return "security_fault", (
            "a security fault needs a sound process and a faulty one: use placement inter"
        )
    return None
