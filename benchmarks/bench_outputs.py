"""A task with several labels an item against as many tasks of one label: scoring a run, and the
bootstrap of a board.

Files (seeded, written to a temporary directory): a gold file of ``--items`` items (12,284, the
SemEval-2017 Task 4A test set's size) and ``--labels`` 0/1 labels (11, SemEval-2018 Task 1
E-c's emotions), each present in a share of the items drawn between 5 % and 40 %, and a run that
flips each gold cell with probability 0.15; then, for each label, the same items as a gold file
and a run of one label column (``id,label``).

- **scoring**: ``score_output_files`` (reading, checking and scoring the multi-label run, every
  output's suite and the item metrics) against ``score_files`` of the ``--labels`` single-label
  runs one after the other, in this process, the median of ``--repeat`` timings each;
- **bootstrap**: the paired bootstrap of ``--teams`` such runs (1,000 replicates) against that of
  ``--teams`` runs of one label column, and of ``--labels`` times as many (the same number of
  confusion matrices), in this process, the engine's compiled loops loaded before.

Nothing is asserted; the target (issue: scoring a run at most 2x the time of the single-label
runs) is printed with the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.engine import compiled
from scoring.engine.bootstrap import bootstrap
from scoring.engine.outputs import score_output_files
from scoring.engine.schemes import LABEL_VALUES, Output
from scoring.engine.scorer import score_files


def csv_of(ids: list[str], header: list[str], rows: list) -> bytes:
    return (
        "\n".join(
            [",".join(["id", *header]), *(f"{i},{','.join(map(str, row))}" for i, row in zip(ids, rows, strict=True))]
        )
        + "\n"
    ).encode()


def median_time(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=12_284)
    parser.add_argument("--labels", type=int, default=11)
    parser.add_argument("--teams", type=int, default=50, help="runs of the bootstrap")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(2018)
    names = [f"emotion{k}" for k in range(args.labels)]
    gold = (rng.random((args.items, args.labels)) < rng.uniform(0.05, 0.4, args.labels)).astype(np.uint8)

    def run_of() -> np.ndarray:
        return np.where(rng.random(gold.shape) < 0.15, 1 - gold, gold).astype(np.uint8)

    run = run_of()
    ids = [f"item-{i}" for i in range(1, args.items + 1)]
    with tempfile.TemporaryDirectory(prefix="bench-outputs-") as scratch:
        folder = Path(scratch)
        (folder / "gold.csv").write_bytes(csv_of(ids, names, gold.tolist()))
        (folder / "run.csv").write_bytes(csv_of(ids, names, run.tolist()))
        for k in range(args.labels):
            (folder / f"gold{k}.csv").write_bytes(csv_of(ids, ["label"], gold[:, k, np.newaxis].tolist()))
            (folder / f"run{k}.csv").write_bytes(csv_of(ids, ["label"], run[:, k, np.newaxis].tolist()))
        several = median_time(lambda: score_output_files(folder / "gold.csv", folder / "run.csv"), args.repeat)
        singles = median_time(
            lambda: [score_files(folder / f"gold{k}.csv", folder / f"run{k}.csv") for k in range(args.labels)],
            args.repeat,
        )
    compiled.load()  # once a process, before either bootstrap (about a second; see replicate_passes)
    outputs = [Output(name, LABEL_VALUES) for name in names]
    runs = [run_of() for _ in range(args.teams)]
    several_boot = median_time(lambda: bootstrap(gold, runs, labels=(), outputs=outputs, replicates=1000, seed=1), 1)
    single = [r[:, 0] for r in runs]
    one_boot = median_time(lambda: bootstrap(gold[:, 0], single, labels=LABEL_VALUES, replicates=1000, seed=1), 1)
    many = [r[:, k] for r in runs for k in range(args.labels)]
    many_boot = median_time(lambda: bootstrap(gold[:, 0], many, labels=LABEL_VALUES, replicates=1000, seed=1), 1)
    print(f"{args.items:,} items, {args.labels} labels; median of {args.repeat} (scoring), one run (bootstrap)\n")
    print("| work | several labels | one label column | ratio |\n| --- | ---: | ---: | ---: |")
    print(f"| score a run (read, check, score) | {several * 1000:,.0f} ms | {singles * 1000:,.0f} ms "
          f"({args.labels} runs) | {several / singles:.2f}× |")  # fmt: skip
    print(f"| bootstrap, {args.teams} teams, 1,000 replicates | {several_boot:,.2f} s | {one_boot:,.2f} s "
          f"({args.teams} runs) | {several_boot / one_boot:.1f}× |")  # fmt: skip
    print(f"| the same, as many matrices | {several_boot:,.2f} s | {many_boot:,.2f} s "
          f"({len(many):,} runs) | {several_boot / many_boot:.2f}× |")  # fmt: skip
    target = "met" if several <= 2 * singles else "NOT met"
    print(f"\nTarget: a run of {args.labels} labels scored in at most 2× the time of {args.labels} single-label runs: "
          f"{target} ({several / singles:.2f}×).")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
