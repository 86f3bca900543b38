"""The signed documents a security mode needs besides certificates, written by the module
of their kind (a driver's manifest names the kind: `[security] documents = ...`)."""

import importlib
from pathlib import Path

# kind -> its module in this package; the kinds manifests may name (base.manifests).
WRITERS = {"dds-security": "dds_documents"}


def write(kind: str, folder: Path, **how) -> None:
    importlib.import_module(f"psbench.run.security.{WRITERS[kind]}").write(folder, **how)
