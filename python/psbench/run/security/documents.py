"""The signed documents a security mode needs besides certificates, written by the module
of their kind (a driver's manifest names the kind: `[security] documents = ...`)."""

import importlib
from pathlib import Path

# kind -> its module in this package; the kinds manifests may name (base.manifests).
WRITERS = {"dds-security": "dds_documents"}


def _module(kind: str):
    return importlib.import_module(f"psbench.run.security.{WRITERS[kind]}")


def write(kind: str, folder: Path, **how) -> None:
    _module(kind).write(folder, **how)


def checks_permissions(kind: str, mode: str) -> bool:
    """Whether the mode's documents of this kind are enforced against the permissions."""
    return _module(kind).checks_permissions(mode)
