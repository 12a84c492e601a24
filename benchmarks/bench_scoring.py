"""How fast the scoring engine is, next to scikit-learn and next to pandas.read_csv.

Run ``python benchmarks/bench_scoring.py [--sizes 1000000 10000000] [--classes 3 20]
[--repeat 3]``; a quick run is ``--sizes 100000``. Progress goes to stderr, and stdout is
one Markdown table, the machine line and whether each target is met, ready to paste.

What is measured, for every (items, classes) pair, on seeded random label pairs (gold drawn
from a skewed distribution, class k having weight 1/(k+1); a prediction is the gold label
with probability 0.7, otherwise a uniformly random class):

* **ours from arrays**: ``score_matrix(hard_confusion(predicted, gold, n), labels=...)``,
  the full suite (raw, calibrated and per class) from int8 label codes already in memory,
  the same dtype :mod:`scoring.engine.io` produces.
* **sklearn subset**: what scikit-learn computes of it on the same arrays in the same run:
  ``classification_report(output_dict=True, zero_division=0)``, ``cohen_kappa_score`` and
  ``matthews_corrcoef``. Speed-up = sklearn subset / ours from arrays.
* **ours from files**: ``score_files(gold_path, pred_path)``, i.e. read, validate, align and
  score two ``id,label`` CSV files (ids like ``t0000001``, at least seven digits, labels like ``negative`` or
  ``c07``) written to a temporary directory beforehand. Once with the prediction file in the
  gold file's id order (the fast path) and once, as a separate row, with its lines shuffled
  (the path that hashes ids to align them).
* **pandas.read_csv**: ``pandas.read_csv(path, dtype=str)`` on the same two files, nothing
  else. Ratio = ours from files / pandas.read_csv.

Every time is the best of ``--repeat`` wall-clock runs (``time.perf_counter``), each after a
``gc.collect()``; the files were just written, so both readers find them in the page cache.
So that the defaults finish in about ten minutes on two cores, a measurement starts another
run only while its runs so far plus one more fit in ``--budget`` seconds (the slow
shuffled-ids path at ten million lines then gets one or two); the output lists every cell
that got fewer runs than ``--repeat``, and the load average, since a busy machine inflates
every number here.

The first run of each measurement is also a cross-check (outside the timed interval): the
file scorer must rebuild the confusion matrix of the arrays exactly, and accuracy, macro and
weighted F1, kappa and MCC must agree with scikit-learn's (whose matrices are transposed:
rows = gold).

Targets, reported and never asserted: the suite from label arrays at least 10x faster than
sklearn's subset, and the whole scorer on a 10,000,000-line CSV within 2x of pandas.read_csv
on those files.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import resource
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from sklearn.metrics import classification_report, cohen_kappa_score, matthews_corrcoef

# Run as a script from anywhere: the engine is imported from this checkout, not an install.
REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from scoring.engine.confusion import hard_confusion  # noqa: E402
from scoring.engine.scorer import score_files  # noqa: E402
from scoring.engine.suite import Report, score_matrix  # noqa: E402

DEFAULT_SIZES = (1_000_000, 10_000_000)
DEFAULT_CLASSES = (3, 20)
DEFAULT_REPEAT = 3
DEFAULT_BUDGET_S = 90.0
DEFAULT_SEED = 20_240_601
PREDICTION_ACCURACY = 0.7
"""Probability that a prediction copies the gold label (otherwise it is a random class)."""

SPEED_UP_TARGET = 10.0
READ_RATIO_TARGET = 2.0
READ_TARGET_ITEMS = 10_000_000
CHECK_TOLERANCE = 1e-9
WRITE_CHUNK_ROWS = 1_000_000
"""Rows per chunk when writing CSVs: bounds the temporary index arrays to a few hundred MB."""

GOLD_ORDER = "gold order"
SHUFFLED = "shuffled"
SENTIMENT_LABELS = ("negative", "neutral", "positive")


def log(message: str) -> None:
    """Progress on stderr, so that stdout stays a clean table."""
    print(message, file=sys.stderr, flush=True)


# --- data --------------------------------------------------------------------------------


def label_names(n_classes: int) -> tuple[str, ...]:
    """Sentiment names for three classes, ``c00``, ``c01``, ... otherwise; both already sorted,
    so they are the order the file scorer infers from the gold file.
    """
    if n_classes == len(SENTIMENT_LABELS):
        return SENTIMENT_LABELS
    width = max(2, len(str(n_classes - 1)))
    return tuple(f"c{k:0{width}d}" for k in range(n_classes))


def label_pairs(*, n_items: int, n_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (gold, predicted) int8 codes: skewed gold, predictions right with some probability."""
    rng = np.random.default_rng([seed, n_items, n_classes])
    weights = 1.0 / np.arange(1, n_classes + 1)
    gold = rng.choice(n_classes, size=n_items, p=weights / weights.sum()).astype(np.int8)
    guesses = rng.integers(0, n_classes, size=n_items, dtype=np.int8)
    predicted = np.where(rng.random(n_items) < PREDICTION_ACCURACY, gold, guesses)
    return gold, predicted


def csv_chunk(*, id_numbers: np.ndarray, codes: np.ndarray, names: Sequence[str], id_width: int) -> bytes:
    """The lines ``t<zero-padded number>,<label>\\n`` of a chunk, assembled in one byte buffer.

    Python string formatting costs seconds per ten million lines; this costs a fraction of one.
    """
    tails = [np.frombuffer(f",{name}\n".encode(), dtype=np.uint8) for name in names]
    tail_lengths = np.array([len(tail) for tail in tails])
    line_lengths = 1 + id_width + tail_lengths[codes]
    starts = np.cumsum(line_lengths) - line_lengths
    buffer = np.empty(int(line_lengths.sum()), dtype=np.uint8)
    buffer[starts] = ord("t")
    powers = 10 ** np.arange(id_width - 1, -1, -1, dtype=np.int64)
    digits = (id_numbers.astype(np.int64)[:, np.newaxis] // powers) % 10 + ord("0")
    buffer[starts[:, np.newaxis] + 1 + np.arange(id_width)] = digits
    for code, tail in enumerate(tails):
        rows = starts[codes == code]
        buffer[rows[:, np.newaxis] + 1 + id_width + np.arange(len(tail))] = tail
    return buffer.tobytes()


def write_label_csv(path: Path, *, id_numbers: np.ndarray, codes: np.ndarray, names: Sequence[str]) -> None:
    """Write an ``id,label`` CSV whose ids are ``t`` plus the zero-padded ``id_numbers``."""
    id_width = max(7, len(str(int(id_numbers.max()))))
    with path.open("wb") as out:
        out.write(b"id,label\n")
        for start in range(0, len(codes), WRITE_CHUNK_ROWS):
            chunk = slice(start, start + WRITE_CHUNK_ROWS)
            out.write(csv_chunk(id_numbers=id_numbers[chunk], codes=codes[chunk], names=names, id_width=id_width))


# --- the measured work -------------------------------------------------------------------


def ours_from_arrays(predicted: np.ndarray, gold: np.ndarray, labels: tuple[str, ...]) -> Report:
    return score_matrix(hard_confusion(predicted, gold, len(labels)), labels=labels)


def sklearn_subset(gold: np.ndarray, predicted: np.ndarray) -> dict[str, object]:
    return {
        "report": classification_report(gold, predicted, output_dict=True, zero_division=0),
        "kappa": cohen_kappa_score(gold, predicted),
        "mcc": matthews_corrcoef(gold, predicted),
    }


def read_with_pandas(gold_path: Path, pred_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_csv(gold_path, dtype=str), pd.read_csv(pred_path, dtype=str)


@dataclass(frozen=True)
class Timing:
    """The best wall time of a measurement and how many runs it took it from."""

    best_s: float
    runs: int


def best_time(
    work: Callable[[], object],
    *,
    repeat: int,
    budget_s: float,
    check: Callable[[object], None] | None = None,
) -> Timing:
    """Best wall seconds of up to ``repeat`` runs of ``work()``, fewer if they would overrun
    ``budget_s``; ``check`` sees the first run's result, outside the timed interval.
    """
    best = math.inf
    spent = 0.0
    runs = 0
    while runs < repeat:
        gc.collect()
        start = time.perf_counter()
        result = work()
        elapsed = time.perf_counter() - start
        if runs == 0 and check is not None:
            check(result)
        del result
        runs += 1
        spent += elapsed
        best = min(best, elapsed)
        if spent + elapsed > budget_s:
            break
    return Timing(best_s=best, runs=runs)


# --- cross-checks (not timed) --------------------------------------------------------------


def agreement_problems(ours: Report, theirs: dict[str, object]) -> list[str]:
    """Metrics on which our suite and scikit-learn disagree by more than rounding."""
    report = theirs["report"]
    pairs = {
        "accuracy": (ours.metrics["accuracy"], report["accuracy"]),
        "macro_f1": (ours.metrics["macro_f1"], report["macro avg"]["f1-score"]),
        "weighted_f1": (ours.metrics["weighted_f1"], report["weighted avg"]["f1-score"]),
        "kappa": (ours.metrics["kappa"], theirs["kappa"]),
        "mcc": (ours.metrics["mcc"], theirs["mcc"]),
    }
    return [
        f"{key}: ours {mine!r}, sklearn {other!r}"
        for key, (mine, other) in pairs.items()
        if mine is None or abs(mine - float(other)) > CHECK_TOLERANCE
    ]


# --- one configuration ---------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One line of the table; the array columns are ``None`` on the shuffled-ids row."""

    n_items: int
    n_classes: int
    id_order: str
    files: Timing
    read_csv: Timing
    arrays: Timing | None = None
    sklearn: Timing | None = None

    @property
    def speed_up(self) -> float | None:
        if self.arrays is None or self.sklearn is None:
            return None
        return self.sklearn.best_s / self.arrays.best_s

    @property
    def read_ratio(self) -> float:
        return self.files.best_s / self.read_csv.best_s

    def short_cells(self, repeat: int) -> list[str]:
        """Which of this row's measurements got fewer than ``repeat`` runs, and how many."""
        timings = {
            "ours from arrays": self.arrays,
            "sklearn subset": self.sklearn,
            "ours from files": self.files,
            "pandas.read_csv": self.read_csv,
        }
        return [
            f"{column} at {self.n_items:,} items, {self.n_classes} classes, {self.id_order}: "
            f"{timing.runs} run{'s' if timing.runs > 1 else ''}"
            for column, timing in timings.items()
            if timing is not None and timing.runs < repeat
        ]


def measure(
    *, n_items: int, n_classes: int, repeat: int, budget_s: float, seed: int, directory: Path
) -> tuple[list[Row], list[str]]:
    """Both rows of one (items, classes) pair, and any cross-check problems found on the way."""
    names = label_names(n_classes)
    gold, predicted = label_pairs(n_items=n_items, n_classes=n_classes, seed=seed)
    problems: list[str] = []
    tag = f"{n_items:,} items, {n_classes} classes"

    def compare_with_sklearn(theirs: object) -> None:
        problems.extend(f"{tag}: {problem}" for problem in agreement_problems(ours, theirs))

    log(f"[{tag}] timing ours from arrays and the sklearn subset")
    ours = ours_from_arrays(predicted, gold, names)
    arrays = best_time(lambda: ours_from_arrays(predicted, gold, names), repeat=repeat, budget_s=budget_s)
    sklearn_time = best_time(
        lambda: sklearn_subset(gold, predicted), repeat=repeat, budget_s=budget_s, check=compare_with_sklearn
    )

    log(f"[{tag}] writing CSVs")
    gold_path = directory / f"gold_{n_items}_{n_classes}.csv"
    pred_path = directory / f"pred_{n_items}_{n_classes}.csv"
    shuffled_path = directory / f"pred_shuffled_{n_items}_{n_classes}.csv"
    id_numbers = np.arange(1, n_items + 1, dtype=np.int64)
    write_label_csv(gold_path, id_numbers=id_numbers, codes=gold, names=names)
    write_label_csv(pred_path, id_numbers=id_numbers, codes=predicted, names=names)
    order = np.random.default_rng([seed, n_items, n_classes, 1]).permutation(n_items)
    write_label_csv(shuffled_path, id_numbers=id_numbers[order], codes=predicted[order], names=names)
    del order, id_numbers

    def same_matrix(from_files: Report) -> None:
        if from_files.labels != names or not np.array_equal(from_files.matrix, ours.matrix):
            raise RuntimeError(f"{tag}: the file scorer does not rebuild the confusion matrix of the arrays")

    rows = []
    for id_order, path in ((GOLD_ORDER, pred_path), (SHUFFLED, shuffled_path)):
        log(f"[{tag}] timing ours from files and pandas.read_csv ({id_order})")
        files = best_time(
            lambda path=path: score_files(gold_path, path), repeat=repeat, budget_s=budget_s, check=same_matrix
        )
        read_csv = best_time(lambda path=path: read_with_pandas(gold_path, path), repeat=repeat, budget_s=budget_s)
        from_arrays = {"arrays": arrays, "sklearn": sklearn_time} if id_order == GOLD_ORDER else {}
        rows.append(Row(n_items, n_classes, id_order, files=files, read_csv=read_csv, **from_arrays))
    for path in (gold_path, pred_path, shuffled_path):
        path.unlink()
    return rows, problems


# --- output ----------------------------------------------------------------------------------


def seconds_text(timing: Timing | None) -> str:
    """Three significant digits, never in exponent notation; an em dash when not measured."""
    if timing is None:
        return "—"
    seconds = timing.best_s
    decimals = min(6, max(0, 2 - math.floor(math.log10(seconds)))) if seconds > 0 else 3
    return f"{seconds:.{decimals}f}"


def factor_text(factor: float | None) -> str:
    return "—" if factor is None else f"{factor:.1f}×"


TABLE_HEADER = (
    "items",
    "classes",
    "prediction ids",
    "ours from arrays (s)",
    "sklearn subset (s)",
    "speed-up",
    "ours from files (s)",
    "pandas.read_csv (s)",
    "ratio",
)
TEXT_COLUMN = TABLE_HEADER.index("prediction ids")
"""The one left-aligned column; numbers are right-aligned."""


def markdown_table(rows: Sequence[Row]) -> str:
    cells = [
        [
            f"{row.n_items:,}",
            str(row.n_classes),
            row.id_order,
            seconds_text(row.arrays),
            seconds_text(row.sklearn),
            factor_text(row.speed_up),
            seconds_text(row.files),
            seconds_text(row.read_csv),
            factor_text(row.read_ratio),
        ]
        for row in rows
    ]
    widths = [max(len(text) for text in column) for column in zip(TABLE_HEADER, *cells, strict=True)]

    def line(texts: Sequence[str]) -> str:
        padded = [
            text.ljust(width) if i == TEXT_COLUMN else text.rjust(width)
            for i, (text, width) in enumerate(zip(texts, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rules = ["-" * (width + 2) if i == TEXT_COLUMN else "-" * (width + 1) + ":" for i, width in enumerate(widths)]
    rule = "|" + "|".join(rules) + "|"
    return "\n".join([line(TABLE_HEADER), rule, *(line(texts) for texts in cells)])


def cpu_count() -> int:
    """What ``nproc`` prints: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def cpu_model() -> str:
    try:
        for text in Path("/proc/cpuinfo").read_text().splitlines():
            if text.startswith("model name"):
                return text.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_line() -> str:
    return (
        f"Machine: Python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
        f"scikit-learn {sklearn.__version__}, nproc {cpu_count()} ({cpu_model()})."
    )


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def target_lines(rows: Sequence[Row]) -> list[str]:
    """Whether each target is met, with the numbers that decide it."""
    timed = [row for row in rows if row.speed_up is not None]
    slowest = min(timed, key=lambda row: row.speed_up)
    lines = [
        f"- Suite from label arrays ≥ {SPEED_UP_TARGET:g}× faster than sklearn's subset: "
        f"{verdict(slowest.speed_up >= SPEED_UP_TARGET)} (lowest speed-up {factor_text(slowest.speed_up)}, "
        f"at {slowest.n_items:,} items and {slowest.n_classes} classes)."
    ]
    largest = max(row.n_items for row in rows)
    target_items = READ_TARGET_ITEMS if any(row.n_items == READ_TARGET_ITEMS for row in rows) else largest
    note = "" if target_items == READ_TARGET_ITEMS else f"; not run at {READ_TARGET_ITEMS:,}, shown at {largest:,}"
    for id_order, label in ((GOLD_ORDER, "ids in gold order"), (SHUFFLED, "shuffled ids, for information")):
        at_size = [row for row in rows if row.n_items == target_items and row.id_order == id_order]
        worst = max(at_size, key=lambda row: row.read_ratio)
        lines.append(
            f"- Whole scorer on a {target_items:,}-line CSV within {READ_RATIO_TARGET:g}× of pandas.read_csv "
            f"({label}): {verdict(worst.read_ratio <= READ_RATIO_TARGET)} (worst ratio "
            f"{factor_text(worst.read_ratio)}, {worst.n_classes} classes{note})."
        )
    return lines


def load_average() -> str:
    """The 1-minute load average: other work on the machine slows every measurement."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "unknown"


def peak_memory_gib() -> float:
    """Peak resident memory of this process (Linux reports ``ru_maxrss`` in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


# --- command line ------------------------------------------------------------------------------


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="numbers of items")
    parser.add_argument("--classes", type=int, nargs="+", default=list(DEFAULT_CLASSES), help="numbers of classes")
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, help="runs per measurement; the best counts")
    parser.add_argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET_S,
        help="seconds per measurement after which no further run is started (at least one run)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the random label pairs")
    arguments = parser.parse_args(argv)
    if min(arguments.sizes) < 1 or min(arguments.classes) < 2 or arguments.repeat < 1:
        parser.error("sizes and --repeat must be at least 1, classes at least 2")
    return arguments


def main(argv: Sequence[str] | None = None) -> None:
    arguments = parse_arguments(argv)
    started = time.perf_counter()
    load_at_start = load_average()
    rows: list[Row] = []
    problems: list[str] = []
    # sklearn warns about classes that are never predicted in tiny runs; the table is the output.
    warnings.simplefilter("ignore", category=UserWarning)
    with tempfile.TemporaryDirectory(prefix="bench_scoring_") as directory:
        for n_items in arguments.sizes:
            for n_classes in arguments.classes:
                new_rows, new_problems = measure(
                    n_items=n_items,
                    n_classes=n_classes,
                    repeat=arguments.repeat,
                    budget_s=arguments.budget,
                    seed=arguments.seed,
                    directory=Path(directory),
                )
                rows += new_rows
                problems += new_problems
    elapsed = time.perf_counter() - started

    print(markdown_table(rows))
    print()
    print(machine_line())
    print(
        f"Best of {arguments.repeat} runs per cell (budget {arguments.budget:g} s per cell); whole benchmark "
        f"{elapsed:.0f} s wall, peak memory {peak_memory_gib():.1f} GiB; load average {load_at_start} at the "
        f"start, {load_average()} at the end."
    )
    short = [cell for row in rows for cell in row.short_cells(arguments.repeat)]
    if short:
        print("Fewer runs (budget reached): " + "; ".join(short) + ".")
    print()
    print("Targets:")
    print("\n".join(target_lines(rows)))
    if problems:
        print()
        print("Cross-check problems (our suite vs scikit-learn):")
        print("\n".join(f"- {problem}" for problem in problems))


if __name__ == "__main__":
    main()
