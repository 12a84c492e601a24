"""How fast the paired bootstrap of a board is, next to a straightforward loop, in one run.

Run ``python benchmarks/bench_bootstrap.py [--replicates 1000] [--teams 100] [--items 12284]
[--loop-replicates 10] [--repeat 3]``. Stdout is a Markdown table and the machine line, ready
to paste; never asserted in tests.

Data (seeded): the SemEval-2017 Task 4A test set's size and class counts (12,284 items: 3,972
negative, 5,937 neutral, 2,375 positive), and ``--teams`` teams whose prediction is the gold
label with a team-specific probability in [0.5, 0.75], otherwise a uniformly random class.

Both sides do the same job for every replicate: every team's confusion matrix on the same
resampled items, every ranking column of the board (every ranking metric and each class's
recall, raw and prevalence-calibrated: 42 columns with 3 classes), the competition ranks of
the teams under each column, and Spearman's rho between every pair of heatmap columns; then
the percentile intervals.

* **vectorised**: :func:`scoring.engine.bootstrap.bootstrap`, as the command line runs it (a
  temporary store of replicates: the values a block of teams at a time, one matrix product per
  gold class and the batch metrics; the ranks from a sort of each block of replicates; the
  intervals a block of teams at a time; :mod:`scoring.engine.replicate_passes`).
* **loop**: per replicate, the weights by ``np.bincount`` of ``rng.integers``, then per team
  one weighted ``np.bincount`` of the item-cell indices and the registry's metric (a matrix's
  value as a report stores it) of every column on the matrix and on its exact calibration; then
  ``ranking.competition_ranks`` per column and ``ranking.spearman_matrix`` over the heatmap
  columns. It runs on ``--loop-replicates`` replicates and its time is scaled to
  ``--replicates`` (its cost is linear in the replicates); the table shows the measured count.
* **yardstick**: the one matrix product that counts the replicates' matrices, in float64: every
  replicate's resampling weights (replicates × items) times the teams' one-hot predictions
  (items × teams·classes), the weights drawn beforehand, best of ``--repeat``; once with the
  BLAS on every core, and once in a process whose BLAS has one thread. The vectorised
  bootstrap's time is given as a multiple of each (the budget: at most 8×).

Times are the best of ``--repeat`` wall-clock runs (``time.perf_counter``, after
``gc.collect()``) that follow a first run, shown on its own (a process's first bootstrap of
this size also loads the engine's compiled loops, :mod:`scoring.engine.compiled`),
with that run's CPU time (``time.process_time``, every thread of the process: on a machine
shared with other work, wall time above CPU time is time spent waiting for a core); the loop
runs once. Peak memory is the tracemalloc peak of one more vectorised run (numpy reports its
buffers to tracemalloc), at ``--replicates`` and at four times as many, to show what grows
with the replicate count.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, run from anywhere

from scoring.engine.bootstrap import BLOCK_SIZE, bootstrap
from scoring.engine.canonical import ExactMatrix
from scoring.engine.columns import paired_columns, ranking_columns
from scoring.engine.ranking import competition_ranks, spearman_matrix
from scoring.engine.replicates import ReplicateMatrices

LABELS = ("negative", "neutral", "positive")
GOLD_COUNTS = (3972, 5937, 2375)


def make_data(n_items: int, n_teams: int, seed: int = 2017) -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    shares = np.array(GOLD_COUNTS) / sum(GOLD_COUNTS)
    gold = rng.choice(len(LABELS), size=n_items, p=shares)
    teams = []
    for _ in range(n_teams):
        right = rng.random(n_items) < rng.uniform(0.5, 0.75)
        teams.append(np.where(right, gold, rng.integers(0, len(LABELS), n_items)))
    return gold, teams


def loop_bootstrap(gold: np.ndarray, teams: list[np.ndarray], *, replicates: int, seed: int) -> None:
    """The straightforward way: one bincount per team per replicate, then the scalar suite."""
    n = len(LABELS)
    columns = ranking_columns(LABELS, calibrated=None)
    heatmap = paired_columns(LABELS)
    cells = [team * n + gold for team in teams]
    rng = np.random.default_rng(seed)
    values = np.empty((replicates, len(columns), len(teams)))
    for b in range(replicates):
        weights = np.bincount(rng.integers(0, len(gold), len(gold)), minlength=len(gold))
        for t, team_cells in enumerate(cells):
            matrix = np.bincount(team_cells, weights=weights, minlength=n * n).reshape(n, n)
            exact = ExactMatrix.of(matrix)
            matrices = {False: exact, True: exact.calibrated()}
            for c, column in enumerate(columns):
                source = matrices[column.calibrated]
                if source is None:
                    value = None
                elif column.label is None:
                    value = column.metric(source)
                else:
                    value = column.metric(source)[LABELS.index(column.label)]
                values[b, c, t] = np.nan if value is None else value
        by_id = {}
        for c, column in enumerate(columns):
            row = [None if np.isnan(v) else float(v) for v in values[b, c]]
            competition_ranks(row)
            by_id[column.id] = row
        spearman_matrix({column.id: by_id[column.id] for column in heatmap})
    np.quantile(values, [0.025, 0.975], axis=0, method="inverted_cdf")


def yardstick_product(gold: np.ndarray, teams: list[np.ndarray], replicates: int) -> callable:
    """The one matrix product that counts the replicates' matrices (float64), its operands made
    beforehand: returns the product to time."""
    source = ReplicateMatrices(gold, n_classes=len(LABELS))
    rng = np.random.default_rng(1)
    weights = np.concatenate([source.weights(rng, BLOCK_SIZE) for _ in range(0, replicates, BLOCK_SIZE)])
    weights = weights[:replicates].astype(np.float64)
    one_hot = source.parts(teams)[0].astype(np.float64)

    def product() -> None:
        np.matmul(weights, one_hot)

    return product


def product_on_one_core(args: argparse.Namespace) -> float:
    """The yardstick again in a process whose BLAS has one thread (OPENBLAS_NUM_THREADS=1)."""
    command = [sys.executable, __file__, "--yardstick-only", "--replicates", str(args.replicates)]
    command += ["--teams", str(args.teams), "--items", str(args.items), "--repeat", str(args.repeat)]
    environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return float(subprocess.run(command, env=environment, capture_output=True, text=True, check=True).stdout)


def best_of(repeat: int, run: callable) -> tuple[float, float]:
    """The best wall-clock time of ``repeat`` runs and the CPU time (all threads) of that run."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        run()
        times.append((time.perf_counter() - start, time.process_time() - cpu))
    return min(times)


def peak_mib(run: callable) -> float:
    gc.collect()
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--teams", type=int, default=100)
    parser.add_argument("--items", type=int, default=sum(GOLD_COUNTS))
    parser.add_argument("--loop-replicates", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--yardstick-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.yardstick_only:
        gold, teams = make_data(args.items, args.teams)
        print(best_of(args.repeat, yardstick_product(gold, teams, args.replicates))[0])
        return
    load_before = os.getloadavg()[0]
    gold, teams = make_data(args.items, args.teams)

    def vectorised(replicates: int = args.replicates) -> None:
        bootstrap(gold, teams, labels=LABELS, replicates=replicates, seed=1)

    start = time.perf_counter()
    vectorised()  # the process's first: it also loads the compiled loops
    first = time.perf_counter() - start
    fast, fast_cpu = best_of(args.repeat, vectorised)
    product, _ = best_of(args.repeat, yardstick_product(gold, teams, args.replicates))
    one_core = product_on_one_core(args)
    start = time.perf_counter()
    loop_bootstrap(gold, teams, replicates=args.loop_replicates, seed=1)
    loop_measured = time.perf_counter() - start
    loop_scaled = loop_measured * args.replicates / args.loop_replicates
    peak = peak_mib(vectorised)
    peak_4x = peak_mib(lambda: vectorised(4 * args.replicates))
    load_after = os.getloadavg()[0]

    print(
        "| replicates | teams | items | columns | first run (s) | vectorised (s) | its CPU time (s) | the product (s)"
        " | vectorised / product | product on one core (s) | vectorised / it | loop (s) | loop measured on | speed-up"
        " | peak memory, vectorised |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|")
    print(
        f"| {args.replicates:,} | {args.teams} | {args.items:,} | {len(ranking_columns(LABELS, calibrated=None))} "
        f"| {first:.2f} | {fast:.2f} | {fast_cpu:.2f} | {product:.3f} | {fast / product:.1f}× | {one_core:.3f} "
        f"| {fast / one_core:.1f}× | {loop_scaled:.0f} (scaled) "
        f"| {args.loop_replicates} replicates in {loop_measured:.1f} s "
        f"| {loop_scaled / fast:.0f}× | {peak:.0f} MiB ({4 * args.replicates:,} replicates: {peak_4x:.0f} MiB) |"
    )
    print()
    print(
        f"Machine: Python {platform.python_version()}, numpy {np.__version__}, nproc {os.cpu_count()} ({cpu_name()}). "
        f"Vectorised: best of {args.repeat} runs, blocks of {BLOCK_SIZE} replicates; loop: one run. "
        f"Load average {load_before:.1f} at the start, {load_after:.1f} at the end."
    )


if __name__ == "__main__":
    main()
