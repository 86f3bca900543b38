"""Validation problems of a file (an experiment, a graph): where in the file, what is
wrong, and the fix."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    file: str
    line: int  # 1-based; 0 when no line applies (e.g. the file cannot be read)
    where: str  # the key as a path, e.g. "matrix.driver" or "runs[2].size"
    message: str  # "problem; fix"

    def __str__(self) -> str:
        place = f"{self.file}:{self.line}" if self.line else self.file
        return (
            f"{place}: {self.where}: {self.message}" if self.where else f"{place}: {self.message}"
        )


class ProblemList:
    """Problems in the order found, each once (one bad value may spoil many runs)."""

    def __init__(self):
        self._items: dict[Problem, int] = {}

    def add(self, file: str, line: int, where: str, message: str) -> None:
        problem = Problem(file, line, where, message)
        self._items[problem] = self._items.get(problem, 0) + 1

    @property
    def items(self) -> list[Problem]:
        return list(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items)


class ExperimentError(Exception):
    """The experiment cannot run as written; every problem found is listed."""

    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems
