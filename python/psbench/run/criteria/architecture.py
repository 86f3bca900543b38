"""Architecture: read from the driver's manifest (`architecture`, and
`transport_architecture` for a transport whose runs go another way), not measured."""

from psbench.base import manifests
from psbench.run.criteria.context import Context
from psbench.run.criteria.verdict import Verdict

NAME = "architecture"
TITLE = "architecture"


def judge(driver: str, architecture: str, per_transport: dict) -> Verdict:
    others = "; ".join(f"{kind} on transport {t}" for t, kind in sorted(per_transport.items()))
    return Verdict(
        NAME,
        driver,
        architecture + (f" ({others})" if others else ""),
        "the driver's manifest: architecture"
        + (", transport_architecture" if per_transport else ""),
        experiment="manifest",
        figures={"architecture": architecture, "transport_architecture": dict(per_transport)},
        source=f"drivers/{driver}/manifest.toml",
    )


def assess(ctx: Context) -> dict[str, Verdict]:
    found = {}
    for driver in ctx.drivers:
        manifest = manifests.load(driver)
        found[driver] = judge(driver, manifest.architecture, manifest.transport_architecture)
    return found
