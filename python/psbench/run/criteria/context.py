"""What every criterion's experiment is given: the drivers, their libraries and what
each says of itself, the result set's folder, the service pool, and how short to be."""

import sys
from dataclasses import dataclass, field
from pathlib import Path

from psbench.base import manifests
from psbench.run import measure


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

    def progress(self, criterion: str, driver: str, text: str) -> None:
        """A progress line of one driver's assessment: "[criteria NAME n/N] driver" + text."""
        number = self.drivers.index(driver) + 1
        self.say(f"[criteria {criterion} {number}/{len(self.drivers)}] {driver}{text}")

    def each_driver(self, criterion: str, assess_one) -> dict:
        """{driver: assess_one(driver)} for every driver in turn, each after stopping the
        services its runs do not use, with a progress line of its verdict."""
        found = {}
        for driver in self.drivers:
            self.measuring(driver)
            found[driver] = assess_one(driver)
            self.progress(criterion, driver, f": {found[driver].verdict}")
        return found

    def run(self, criterion: str, spec, folder: Path | None = None) -> measure.MeasureOutcome:
        """One run of a criterion's experiment, its files under out/<criterion>/ (or
        folder). Raises UserError where psbench refuses the spec for the driver."""
        outcome = measure.run(spec, folder or self.folder(criterion), self.env, self.cli_argv,
                              self.pool)  # fmt: skip
        self.stop_if_interrupted(outcome.status)
        return outcome
