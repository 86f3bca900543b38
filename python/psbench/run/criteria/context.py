"""What every criterion's experiment is given: the drivers, their libraries and what
each says of itself, the result set's folder, the service pool, and how short to be."""

import sys
from dataclasses import dataclass, field
from pathlib import Path

from psbench.base import manifests


@dataclass
class Context:
    drivers: list[str]
    libraries: dict[str, Path]
    describes: dict[str, dict]  # driver -> its --describe
    out: Path  # the result set folder: each criterion's runs go under out/<criterion>/
    env: dict  # envinfo.collect(), recorded in every run.json
    cli_argv: list[str]
    pool: object = None  # services.ServicePool
    quick: bool = False
    built: dict[str, Path] = field(default_factory=dict)  # every built driver (interop pairs)

    def folder(self, criterion: str) -> Path:
        path = self.out / criterion
        path.mkdir(parents=True, exist_ok=True)
        return path

    @staticmethod
    def stop_if_interrupted(status: str) -> None:
        """A run stopped by Ctrl-C or SIGTERM (the runner records it "interrupted" and
        returns) stops the whole battery: it is no verdict."""
        if status == "interrupted":
            raise KeyboardInterrupt

    def measuring(self, *drivers: str) -> None:
        """Before these drivers' runs: stops the pool's services that none of them uses,
        so that another middleware's idle broker never sits beside their runs (theirs
        stay for their later runs)."""
        if self.pool is None:
            return
        names = {s.name for d in drivers for s in manifests.load(d).services}
        self.pool.stop_unneeded(
            {key for key, s in self.pool.services.items() if s.definition.name in names}
        )

    def say(self, line: str) -> None:
        """A progress line on stderr, like other long commands."""
        print(line, file=sys.stderr, flush=True)
