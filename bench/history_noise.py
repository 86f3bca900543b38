"""How often `history trend` calls a change where there is none, and how often it sees one
that is there: series of result sets whose runs' medians are drawn at random (log-normal
around 15 µs, a given run-to-run spread), judged by psbench.history.trend exactly as the
command judges run statistics.

    .venv/bin/python bench/history_noise.py [--trials 1500] [--spread 0.15] [--seed 1]

Prints, for result sets of 2 and 3 repetitions and 2 to 5 sets in a series, the share of
series whose last change is called (false alarms: nothing changed) and the share that
catch a step of 1.5x and 2x in the last set (power). docs/history.md quotes a run.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from psbench.history.trend import METRICS, Judge, Point, Series, Settings  # noqa: E402

SHAPES = ((2, 3), (2, 5), (3, 2), (3, 3), (3, 5))  # (repetitions a set, sets in a series)


def series_of(medians_us: list[np.ndarray]) -> Series:
    points = [
        Point(
            f"2026-01-{n + 1:02d}T00:00:00+00:00",
            [{"set_id": n + 1, "driver_version": "1"}],
            [{"p50": v * 1000} for v in values],
        )
        for n, values in enumerate(medians_us)
    ]
    return Series("bench", {}, "vm", points)


def called(rng, repetitions: int, sets: int, step: float, spread: float, trials: int) -> float:
    metric = METRICS["p50"]
    hits = 0
    for _ in range(trials):
        medians = [np.exp(rng.normal(np.log(15.0), spread, repetitions)) for _ in range(sets)]
        medians[-1] = medians[-1] * step
        last = Judge(series_of(medians), Settings()).changes(metric)[-1]
        hits += last.verdict in ("regression", "improvement")
    return hits / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1500)
    parser.add_argument("--spread", type=float, default=0.15, help="sd of log(run median)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"run-to-run spread {args.spread:.0%} (sd of log median), {args.trials} series each")
    print("reps  sets  false alarms  caught 1.5x  caught 2x")
    for repetitions, sets in SHAPES:
        none = called(rng, repetitions, sets, 1.0, args.spread, args.trials)
        half = called(rng, repetitions, sets, 1.5, args.spread, args.trials // 4)
        double = called(rng, repetitions, sets, 2.0, args.spread, args.trials // 4)
        print(f"{repetitions:>4}  {sets:>4}  {none:>12.2%}  {half:>11.0%}  {double:>9.0%}")


if __name__ == "__main__":
    main()
