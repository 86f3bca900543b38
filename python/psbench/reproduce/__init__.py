"""The seed studies psbench reproduces (`psbench reproduce NAME`; docs/reproductions.md).

Each study NAME has `experiments/seeds/NAME.yaml` (the paper's method), `NAME-quick.yaml`
(the same method, smaller), `NAME.published.yaml` (the paper's printed figures) and a
module `psbench.reproduce.NAME` whose `sections(results, published)` builds the paper's
own tables and figures (psbench.reproduce.common.Section). A study listed here whose
module does not exist yet is "not yet available": listed, never run.
"""

import importlib
import importlib.util
import sys
from types import ModuleType

from psbench.base.errors import UserError

# NAME -> one-line description (the paper, and what it measured).
STUDIES = {
    "zak2017": "Zak 2017, Fast DDS against other DDS: RTT/2 latency, 16 B-16 KiB, "
    "best effort and reliable, Welch t-tests",
    "eprosima2022": "eProsima 2022 (Apex.AI performance_test): 100 Hz reliable keep-last-16, "
    "1 KiB-4 MiB arrays, intra- and inter-process latency and throughput",
    "ijraset": "IJRASET middleware criteria paper: three-process echo latency 32-8192 B, "
    "throughput at 5,000-6,000 samples/s, criteria table",
    "vanderbilt2006": "Vanderbilt 2006 DDS evaluation: 4 B-16 KiB bytes and complex type, "
    "1-to-4/8/12 throughput, unicast/multicast, listener vs waitset",
    "trento2013": "Trento 2013: latency against 1-4 subscribers and size up to 1,000 B, "
    "average and worst case at SCHED_FIFO, ZeroMQ against RTPS",
    "architectures": "the three architectures the seeds describe in words (decentralized, "
    "federated, centralized), measured side by side: latency, throughput, fan-out, CPU with "
    "brokers and daemons, time to first message",
    "security": "what security costs, which no seed measured: DDS Security modes and mutual "
    "TLS against plain, latency, throughput, CPU with brokers, discovery",
}


def module_name(name: str) -> str:
    return f"{__name__}.{name}"


def available(name: str) -> bool:
    """Whether the study's module exists (it may still lack its experiment files)."""
    if name not in STUDIES:
        return False
    if module_name(name) in sys.modules:
        return True
    try:
        return importlib.util.find_spec(module_name(name)) is not None
    except (ImportError, ValueError):
        return False


def known_text() -> str:
    return ", ".join(sorted(STUDIES))


def load(name: str) -> ModuleType:
    """The study's module, or a UserError (exit code 2) naming the known studies or
    saying that this one is not available yet."""
    if name not in STUDIES:
        raise UserError(
            f"argument NAME: unknown study {name!r}; known studies: "
            f"{known_text()} (`psbench reproduce --list` describes them)"
        )
    if not available(name):
        raise UserError(
            f"study {name!r} is not yet available in this psbench (its module "
            f"{module_name(name)} does not exist yet); available: "
            f"{', '.join(n for n in sorted(STUDIES) if available(n)) or 'none'}"
        )
    return importlib.import_module(module_name(name))
