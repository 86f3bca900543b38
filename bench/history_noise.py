"""How often `history trend` calls a change where there is none, and how often it sees one
that is there: series of result sets whose runs' medians are drawn at random (log-normal
around 15 µs, a given run-to-run spread), judged by psbench.history.trend exactly as the
command judges run statistics.

    .venv/bin/python bench/history_noise.py [--trials 1500] [--spread 0.15] [--seed 1]

Prints, for result sets of 2 and 3 repetitions and 2 to 5 sets in a series, the share of
series whose last change is called (false alarms: nothing changed) and the share that
catch a step of 1.5x and 2x in the last set (power). docs/history.md quotes a run.

    .venv/bin/python bench/history_noise.py --real [--repetitions 36] [--sweep DIR]

The same false alarms on this machine's real runs, judged from their samples as `history
trend` judges sets whose samples it can read: one sweep of udp and shm pings (64 B, 1000
round trips, `repetitions` rounds; or an earlier sweep's folder), every window of
consecutive rounds cut into sets, either of consecutive rounds (sweeps made one after
another) or interleaved (round k in set k mod S, as tests/test_history.py once cut them).
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from psbench.history.trend import METRICS, Judge, Point, Series, Settings  # noqa: E402
from psbench.results.configs import build_configs  # noqa: E402
from psbench.results.load import load_results  # noqa: E402
from psbench.results.stats import nearest_rank  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SWEEP = """name: history-noise
repetitions: {repetitions}
defaults: {{kind: ping, count: 1000, warmup: 50, timeout: 60}}
matrix: {{driver: [udp, shm], size: [64]}}
"""

SHAPES = ((2, 3), (2, 5), (3, 2), (3, 3), (3, 5))  # (repetitions a set, sets in a series)


def point(n: int, p50s_ns: list[float], samples: list[np.ndarray] | None = None) -> Point:
    runs = [{"p50": v} for v in p50s_ns]
    return Point(f"2026-01-{n + 1:02d}T00:00:00+00:00", [{"set_id": n + 1}], runs, samples)


def series_of(medians_us: list[np.ndarray]) -> Series:
    points = [point(n, [v * 1000 for v in values]) for n, values in enumerate(medians_us)]
    return Series("bench", {}, "vm", points)


def called_last(points: list[Point]) -> bool:
    """Whether the last change of a series of these points is called real (p50)."""
    last = Judge(Series("bench", {}, "vm", points), Settings()).changes(METRICS["p50"])[-1]
    return last.verdict in ("regression", "improvement")


def called(rng, repetitions: int, sets: int, step: float, spread: float, trials: int) -> float:
    hits = 0
    for _ in range(trials):
        medians = [np.exp(rng.normal(np.log(15.0), spread, repetitions)) for _ in range(sets)]
        medians[-1] = medians[-1] * step
        hits += called_last(series_of(medians).points)
    return hits / trials


def real_sweep(folder: Path, repetitions: int) -> Path:
    experiment = folder / "sweep.yaml"
    experiment.write_text(SWEEP.format(repetitions=repetitions))
    store = folder / "sweep"
    argv = [str(ROOT / "psbench"), "run", str(experiment), "-o", str(store)]
    subprocess.run(argv, check=True, timeout=60 * repetitions, stdout=subprocess.DEVNULL)
    return store


def sets_of(runs: list[np.ndarray], repetitions: int, sets: int, interleaved: bool):
    """The runs of one window cut into sets (lists of runs), in the window's order."""
    if interleaved:
        return [runs[k::sets] for k in range(sets)]
    return [runs[k * repetitions : (k + 1) * repetitions] for k in range(sets)]


def real_false_alarms(runs: list[np.ndarray], repetitions: int, sets: int, interleaved: bool):
    """(windows whose last change was called, windows) over every window of consecutive runs."""
    width, hits = repetitions * sets, 0
    windows = len(runs) - width + 1
    for start in range(windows):
        cut = sets_of(runs[start : start + width], repetitions, sets, interleaved)
        points = [point(n, [nearest_rank(r, 50) for r in one], one) for n, one in enumerate(cut)]
        hits += called_last(points)
    return hits, windows


def real(args) -> None:
    with tempfile.TemporaryDirectory(prefix="psbench-history-noise-") as folder:
        store = args.sweep or real_sweep(Path(folder), args.repetitions)
        configs = build_configs(load_results(store))
        print(f"real runs: {store}; every window of consecutive rounds, judged from samples")
        print("reps  sets  cut          " + "  ".join(f"{c.label:>18}" for c in configs))
        for repetitions, sets in SHAPES:
            for interleaved in (False, True):
                cells = []
                for config in configs:
                    runs = config.rep_samples
                    hits, windows = real_false_alarms(runs, repetitions, sets, interleaved)
                    cells.append(f"{hits:>3}/{windows:<3} {hits / max(windows, 1):>7.1%}")
                cut = "interleaved" if interleaved else "consecutive"
                row = "  ".join(f"{c:>18}" for c in cells)
                print(f"{repetitions:>4}  {sets:>4}  {cut:<11}  {row}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1500)
    parser.add_argument("--spread", type=float, default=0.15, help="sd of log(run median)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--real", action="store_true", help="this machine's runs (see above)")
    parser.add_argument("--repetitions", type=int, default=36, help="rounds of the real sweep")
    parser.add_argument("--sweep", type=Path, help="a real sweep made before (psbench run -o)")
    args = parser.parse_args()
    if args.real:
        real(args)
        return
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
