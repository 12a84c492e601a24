"""How fast the scorer is and how much memory it takes, next to pandas.read_csv and scikit-learn.

Run ``python benchmarks/bench_scoring.py [--lines 10000000] [--classes 20] [--repeat 3]``; a
quick run is ``--lines 100000``. Progress goes to stderr; stdout is two Markdown tables, the
machine line and whether each target is met, ready to paste.

**Files.** For every kind of id, seeded random gold labels (class k has weight 1/(k+1), labels
``class0``, ``class1``, …) and predictions (the gold label with probability 0.7, otherwise a
uniformly random class) are written as CSV files to a temporary directory:

* ids: *integer-like* (``1``, ``2``, … ``10000000``) or *strings* (``doc-`` and eight hex
  digits of a shuffled number, like ``doc-0093af1e``);
* prediction order: the gold file's, or shuffled (the path that must match ids);
* prediction file: *hard* (``id,label``) or *probabilities* (``id`` and one column per class,
  four decimals, each row summing to 1).

Each measurement is a fresh process, so that its peak memory is its own (``ru_maxrss`` of that
child, from ``os.wait4`` in a small launcher process): **scorer** is ``python -m scoring GOLD
PRED --format json``, the whole process (start-up, reading, validating, aligning, scoring,
printing); **read_csv** is
``pandas.read_csv(GOLD); pandas.read_csv(PRED)`` with default options, nothing else. Ratios are
scorer / read_csv, of the best wall time of ``--repeat`` runs and of the largest peak memory.
The scorer's first run is also a cross-check: its confusion matrix must be the one computed from
the arrays the files were written from.

**Arrays.** ``score_matrix(hard_confusion(...))`` (our full suite, raw, calibrated and per class,
from label codes already in memory) next to what scikit-learn computes of it on the same arrays
(``classification_report``, ``cohen_kappa_score``, ``matthews_corrcoef``), in this process; the
first run checks that accuracy, macro and weighted F1, kappa and MCC agree.

Targets (reported, never asserted): at ``--lines 10000000``, the scorer within 2x of read_csv's
time on hard files in gold order and 2.5x shuffled, for both kinds of id, with at most 1.5x its
peak memory; on probability files within 2x of its time; the suite from arrays at least 10x
faster than scikit-learn's subset.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import sklearn
from sklearn.metrics import classification_report, cohen_kappa_score, matthews_corrcoef

# Run as a script from anywhere: the engine is imported from this checkout, not an install.
REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from scoring.engine.confusion import hard_confusion, soft_confusion  # noqa: E402
from scoring.engine.cores import available_cores  # noqa: E402
from scoring.engine.suite import Report, score_matrix  # noqa: E402

DEFAULT_LINES = 10_000_000
DEFAULT_CLASSES = 20
DEFAULT_REPEAT = 3
DEFAULT_SEED = 20_240_601
PREDICTION_ACCURACY = 0.7
"""Probability that a prediction copies the gold label (otherwise it is a random class)."""
CHUNK_ROWS = 100_000
"""Rows assembled at a time when writing a file: bounds the index arrays to some 100 MB."""
DECIMALS = 4
"""Decimals of a written probability: ``0.1234``; a row's quantised values sum to exactly 1."""
CHECK_TOLERANCE = 1e-9

TARGET_ITEMS = 10_000_000
SPEED_UP_TARGET = 10.0
TIME_TARGETS = {
    ("hard", "gold order"): 2.0,
    ("hard", "shuffled"): 2.5,
    ("probabilities", "gold order"): 2.0,
    ("probabilities", "shuffled"): 2.0,
}
"""The scorer's wall time over read_csv's at most, by prediction file and order."""
MEMORY_TARGET = 1.5
"""Peak memory of the scorer over read_csv's, on hard files."""

ID_KINDS = ("integer-like", "strings")
ORDERS = ("gold order", "shuffled")
FILE_KINDS = ("hard", "probabilities")
READ_CSV = "import sys, pandas; pandas.read_csv(sys.argv[1]); pandas.read_csv(sys.argv[2])"


def log(message: str) -> None:
    """Progress on stderr, so that stdout stays clean tables."""
    print(message, file=sys.stderr, flush=True)


# --- data --------------------------------------------------------------------------------


def label_names(n_classes: int) -> tuple[str, ...]:
    """``class0`` … ``class19``: the natural order the scorer infers is the code order."""
    return tuple(f"class{k}" for k in range(n_classes))


def label_pairs(*, n_items: int, n_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (gold, predicted) int8 codes: skewed gold, predictions right with some probability."""
    rng = np.random.default_rng([seed, n_items, n_classes])
    weights = 1.0 / np.arange(1, n_classes + 1)
    gold = rng.choice(n_classes, size=n_items, p=weights / weights.sum()).astype(np.int8)
    guesses = rng.integers(0, n_classes, size=n_items, dtype=np.int8)
    predicted = np.where(rng.random(n_items) < PREDICTION_ACCURACY, gold, guesses)
    return gold, predicted


@dataclass(frozen=True)
class Field:
    """One field of every line of a chunk: its bytes left-aligned in a matrix, and how many of
    each row's bytes are used."""

    text: np.ndarray
    lengths: np.ndarray


def integer_ids(numbers: np.ndarray) -> Field:
    """``1``, ``22``, ``333``: the decimal digits of each number, as many as it has."""
    widths = np.searchsorted(10 ** np.arange(1, 19, dtype=np.int64), numbers, side="right") + 1
    width = int(widths.max())
    text = np.zeros((len(numbers), width), dtype=np.uint8)
    for place in range(width):
        power = np.maximum(widths - 1 - place, 0)
        text[:, place] = (numbers // 10**power) % 10 + ord("0")
    return Field(text, widths)


def string_ids(numbers: np.ndarray) -> Field:
    """``doc-`` and eight lower-case hex digits of each number."""
    hex_digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    shifts = np.arange(28, -1, -4, dtype=np.int64)
    text = np.empty((len(numbers), 12), dtype=np.uint8)
    text[:, :4] = np.frombuffer(b"doc-", dtype=np.uint8)
    text[:, 4:] = hex_digits[(numbers[:, np.newaxis] >> shifts) & 15]
    return Field(text, np.full(len(numbers), 12))


def label_tails(codes: np.ndarray, names: Sequence[str]) -> Field:
    """``,<label>\\n`` of each row."""
    tails = [f",{name}\n".encode() for name in names]
    table = np.zeros((len(tails), max(map(len, tails))), dtype=np.uint8)
    for code, tail in enumerate(tails):
        table[code, : len(tail)] = np.frombuffer(tail, dtype=np.uint8)
    lengths = np.array([len(tail) for tail in tails])
    return Field(table[codes], lengths[codes])


def quantised_probabilities(codes: np.ndarray, *, n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """Rows of integers summing to 10^DECIMALS: most of the mass on the row's class."""
    scale = 10**DECIMALS
    noise = rng.random((len(codes), n_classes))
    noise[np.arange(len(codes)), codes] += n_classes / 2
    quantised = np.floor(noise / noise.sum(axis=1, keepdims=True) * scale).astype(np.int64)
    quantised[np.arange(len(codes)), codes] += scale - quantised.sum(axis=1)
    return quantised


def probability_tails(quantised: np.ndarray) -> Field:
    """``,0.1234,…,1.0000\\n`` of each row: fixed width, so one matrix."""
    n_rows, n_classes = quantised.shape
    cells = np.empty((n_rows, n_classes, 3 + DECIMALS), dtype=np.uint8)
    cells[:, :, 0] = ord(",")
    cells[:, :, 1] = quantised // 10**DECIMALS + ord("0")
    cells[:, :, 2] = ord(".")
    for place in range(DECIMALS):
        cells[:, :, 3 + place] = (quantised // 10 ** (DECIMALS - 1 - place)) % 10 + ord("0")
    text = np.concatenate([cells.reshape(n_rows, -1), np.full((n_rows, 1), ord("\n"), dtype=np.uint8)], axis=1)
    return Field(text, np.full(n_rows, text.shape[1]))


def lines(fields: Sequence[Field]) -> bytes:
    """The rows of a chunk, each the concatenation of its fields, in one byte buffer."""
    line_lengths = sum(field.lengths for field in fields)
    starts = np.cumsum(line_lengths) - line_lengths
    buffer = np.empty(int(line_lengths.sum()), dtype=np.uint8)
    for field in fields:
        used = np.arange(field.text.shape[1]) < field.lengths[:, np.newaxis]
        buffer[(starts[:, np.newaxis] + np.arange(field.text.shape[1]))[used]] = field.text[used]
        starts = starts + field.lengths
    return buffer.tobytes()


@dataclass(frozen=True)
class DataSet:
    """What the files of one kind of id are written from."""

    names: tuple[str, ...]
    gold: np.ndarray
    predicted: np.ndarray
    id_numbers: np.ndarray
    shuffle: np.ndarray
    id_field: Callable[[np.ndarray], Field]


def write_file(path: Path, header: str, chunks: Iterator[list[Field]]) -> None:
    with path.open("wb") as out:
        out.write(header.encode() + b"\n")
        for fields in chunks:
            out.write(lines(fields))


def row_chunks(rows: np.ndarray) -> Iterator[np.ndarray]:
    for start in range(0, len(rows), CHUNK_ROWS):
        yield rows[start : start + CHUNK_ROWS]


def write_gold(path: Path, data: DataSet) -> None:
    chunks = (
        [data.id_field(data.id_numbers[rows]), label_tails(data.gold[rows], data.names)]
        for rows in row_chunks(np.arange(len(data.gold)))
    )
    write_file(path, "id,label", chunks)


def write_predictions(path: Path, data: DataSet, *, order: str, kind: str, seed: int) -> np.ndarray | None:
    """Write a prediction file; for probabilities, return the matrix written (in gold order)."""
    rows = data.shuffle if order == "shuffled" else np.arange(len(data.gold))
    if kind == "hard":
        chunks = (
            [data.id_field(data.id_numbers[part]), label_tails(data.predicted[part], data.names)]
            for part in row_chunks(rows)
        )
        write_file(path, "id,label", chunks)
        return None
    rng = np.random.default_rng([seed, 2])
    quantised = np.empty((len(data.gold), len(data.names)), dtype=np.int16)
    for part in row_chunks(np.arange(len(data.gold))):
        quantised[part] = quantised_probabilities(data.predicted[part], n_classes=len(data.names), rng=rng)
    chunks = ([data.id_field(data.id_numbers[part]), probability_tails(quantised[part])] for part in row_chunks(rows))
    write_file(path, "id," + ",".join(data.names), chunks)
    return quantised


# --- processes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_bytes: int
    stdout: bytes


LAUNCHER = """
import os, sys, time
report, command = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
child = os.fork()
if child == 0:
    os.execv(command[0], command)
_, status, usage = os.wait4(child, 0)
with open(report, "w") as out:
    out.write(f"{time.perf_counter() - start} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""
"""Runs a command and writes its wall time, peak memory (KiB) and exit status to a file. Linux
counts in a process's peak the memory of the process it was forked from, so the command is
forked from this small launcher, not from the benchmark, which holds the data sets."""


def run_child(arguments: Sequence[str]) -> Run:
    """Wall time, peak resident memory and output of a process (see :data:`LAUNCHER`)."""
    gc.collect()
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as report:
        subprocess.run([sys.executable, "-c", LAUNCHER, report.name, *arguments], stdout=out, cwd=REPO_ROOT, check=True)
        seconds, peak_kib, status = report.read().split()
        out.seek(0)
        stdout = out.read()
    if int(status):
        raise RuntimeError(f"{' '.join(arguments)} exited with status {status}")
    return Run(seconds=float(seconds), peak_bytes=int(peak_kib) * 1024, stdout=stdout)


@dataclass(frozen=True)
class Measured:
    """The best wall time and the largest peak memory of some runs of one command."""

    seconds: float
    peak_bytes: int


def measure(arguments: Sequence[str], *, repeat: int, check: Callable[[bytes], None] | None = None) -> Measured:
    runs = [run_child(arguments) for _ in range(repeat)]
    if check is not None:
        check(runs[0].stdout)
    return Measured(seconds=min(run.seconds for run in runs), peak_bytes=max(run.peak_bytes for run in runs))


# --- one cell ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    ids: str
    order: str
    kind: str
    scorer: Measured
    read_csv: Measured

    @property
    def time_ratio(self) -> float:
        return self.scorer.seconds / self.read_csv.seconds

    @property
    def memory_ratio(self) -> float:
        return self.scorer.peak_bytes / self.read_csv.peak_bytes


def expected_matrix(data: DataSet, quantised: np.ndarray | None) -> np.ndarray:
    if quantised is None:
        return hard_confusion(data.predicted, data.gold, len(data.names))
    return soft_confusion(quantised / 10**DECIMALS, data.gold)


def matrix_check(expected: np.ndarray, tag: str) -> Callable[[bytes], None]:
    def check(stdout: bytes) -> None:
        matrix = np.array(json.loads(stdout)["confusion_matrix"], dtype=np.float64)
        if not np.allclose(matrix, expected, rtol=CHECK_TOLERANCE, atol=CHECK_TOLERANCE):
            raise RuntimeError(f"{tag}: the scorer's confusion matrix is not the one the files were written from")

    return check


def measure_ids(data: DataSet, *, ids: str, repeat: int, seed: int, directory: Path) -> list[Row]:
    """The four rows of one kind of id: hard and probability files, in gold order and shuffled."""
    gold_path = directory / "gold.csv"
    log(f"[{ids}] writing the gold file")
    write_gold(gold_path, data)
    rows = []
    for kind in FILE_KINDS:
        for order in ORDERS:
            tag = f"{ids}, {order}, {kind}"
            log(f"[{tag}] writing the prediction file")
            pred_path = directory / "pred.csv"
            quantised = write_predictions(pred_path, data, order=order, kind=kind, seed=seed)
            files = [str(gold_path), str(pred_path)]
            log(f"[{tag}] timing the scorer and read_csv")
            scorer = measure(
                [sys.executable, "-m", "scoring", *files, "--format", "json"],
                repeat=repeat,
                check=matrix_check(expected_matrix(data, quantised), tag),
            )
            read_csv = measure([sys.executable, "-c", READ_CSV, *files], repeat=repeat)
            rows.append(Row(ids=ids, order=order, kind=kind, scorer=scorer, read_csv=read_csv))
            pred_path.unlink()
    gold_path.unlink()
    return rows


# --- arrays: our suite next to scikit-learn's subset ---------------------------------------------


def sklearn_subset(gold: np.ndarray, predicted: np.ndarray) -> dict[str, object]:
    return {
        "report": classification_report(gold, predicted, output_dict=True, zero_division=0),
        "kappa": cohen_kappa_score(gold, predicted),
        "mcc": matthews_corrcoef(gold, predicted),
    }


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


def best_seconds(work: Callable[[], object], repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def measure_arrays(data: DataSet, repeat: int) -> tuple[float, float, list[str]]:
    """Seconds of our suite and of scikit-learn's subset on the same arrays, and disagreements."""
    labels = data.names

    def ours() -> Report:
        return score_matrix(hard_confusion(data.predicted, data.gold, len(labels)), labels=labels)

    problems = agreement_problems(ours(), sklearn_subset(data.gold, data.predicted))
    return (
        best_seconds(ours, repeat),
        best_seconds(lambda: sklearn_subset(data.gold, data.predicted), repeat),
        problems,
    )


# --- output ----------------------------------------------------------------------------------


def seconds_text(seconds: float) -> str:
    """Three significant digits, never in exponent notation."""
    decimals = min(6, max(0, 2 - math.floor(math.log10(seconds)))) if seconds > 0 else 3
    return f"{seconds:.{decimals}f}"


def gib_text(peak_bytes: int) -> str:
    return f"{peak_bytes / 2**30:.2f}"


def factor_text(factor: float) -> str:
    return f"{factor:.1f}×"


def markdown_table(header: Sequence[str], cells: Sequence[Sequence[str]], *, text_columns: int) -> str:
    """A Markdown table: the first ``text_columns`` left-aligned, numbers right-aligned."""
    widths = [max(len(text) for text in column) for column in zip(header, *cells, strict=True)]

    def line(texts: Sequence[str]) -> str:
        padded = [
            text.ljust(width) if i < text_columns else text.rjust(width)
            for i, (text, width) in enumerate(zip(texts, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rules = ["-" * (width + 2) if i < text_columns else "-" * (width + 1) + ":" for i, width in enumerate(widths)]
    return "\n".join([line(header), "|" + "|".join(rules) + "|", *(line(texts) for texts in cells)])


FILE_HEADER = (
    "ids",
    "prediction order",
    "prediction file",
    "scorer (s)",
    "read_csv (s)",
    "time ratio",
    "scorer peak (GiB)",
    "read_csv peak (GiB)",
    "memory ratio",
)


def file_table(rows: Sequence[Row]) -> str:
    cells = [
        [
            row.ids,
            row.order,
            row.kind,
            seconds_text(row.scorer.seconds),
            seconds_text(row.read_csv.seconds),
            factor_text(row.time_ratio),
            gib_text(row.scorer.peak_bytes),
            gib_text(row.read_csv.peak_bytes),
            factor_text(row.memory_ratio),
        ]
        for row in rows
    ]
    return markdown_table(FILE_HEADER, cells, text_columns=3)


def arrays_table(n_items: int, n_classes: int, ours_s: float, sklearn_s: float) -> str:
    header = ("items", "classes", "ours from arrays (s)", "sklearn subset (s)", "speed-up")
    cells = [
        [
            f"{n_items:,}",
            str(n_classes),
            seconds_text(ours_s),
            seconds_text(sklearn_s),
            factor_text(sklearn_s / ours_s),
        ]
    ]
    return markdown_table(header, cells, text_columns=0)


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def target_lines(rows: Sequence[Row], *, n_items: int, speed_up: float) -> list[str]:
    """Whether each target is met, with the figures that decide it."""
    note = "" if n_items == TARGET_ITEMS else f" (targets are set at {TARGET_ITEMS:,} lines; this run has {n_items:,})"
    lines_out = []
    for (kind, order), target in TIME_TARGETS.items():
        cells = [row for row in rows if row.kind == kind and row.order == order]
        worst = max(cells, key=lambda row: row.time_ratio)
        lines_out.append(
            f"- Time, {kind} files, {order}: within {target:g}× of read_csv: {verdict(worst.time_ratio <= target)} "
            f"(worst {factor_text(worst.time_ratio)}, {worst.ids} ids){note}."
        )
    hard = [row for row in rows if row.kind == "hard"]
    worst = max(hard, key=lambda row: row.memory_ratio)
    met = worst.memory_ratio <= MEMORY_TARGET
    lines_out.append(
        f"- Peak memory, hard files: at most {MEMORY_TARGET:g}× read_csv's: {verdict(met)} "
        f"(worst {factor_text(worst.memory_ratio)}, {worst.ids} ids, {worst.order}){note}."
    )
    lines_out.append(
        f"- Suite from label arrays ≥ {SPEED_UP_TARGET:g}× faster than scikit-learn's subset: "
        f"{verdict(speed_up >= SPEED_UP_TARGET)} ({factor_text(speed_up)})."
    )
    return lines_out


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
        f"pyarrow {pa.__version__}, scikit-learn {sklearn.__version__}, nproc {available_cores()} ({cpu_model()})."
    )


def load_average() -> str:
    """The 1-minute load average: other work on the machine slows every measurement."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "unknown"


# --- command line ------------------------------------------------------------------------------


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--lines", type=int, default=DEFAULT_LINES, help="data lines per file")
    parser.add_argument("--classes", type=int, default=DEFAULT_CLASSES, help="number of classes")
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, help="runs per measurement")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the random labels")
    arguments = parser.parse_args(argv)
    if arguments.lines < 1 or arguments.classes < 2 or arguments.repeat < 1:
        parser.error("--lines and --repeat must be at least 1, --classes at least 2")
    return arguments


def data_set(ids: str, *, n_items: int, n_classes: int, seed: int) -> DataSet:
    gold, predicted = label_pairs(n_items=n_items, n_classes=n_classes, seed=seed)
    rng = np.random.default_rng([seed, 1])
    numbers = np.arange(1, n_items + 1, dtype=np.int64)
    return DataSet(
        names=label_names(n_classes),
        gold=gold,
        predicted=predicted,
        id_numbers=numbers if ids == "integer-like" else rng.permutation(numbers),
        shuffle=rng.permutation(n_items),
        id_field=integer_ids if ids == "integer-like" else string_ids,
    )


def main(argv: Sequence[str] | None = None) -> None:
    arguments = parse_arguments(argv)
    started = time.perf_counter()
    load_at_start = load_average()
    warnings.simplefilter("ignore", category=UserWarning)  # sklearn, on classes never predicted
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench_scoring_") as directory:
        for ids in ID_KINDS:
            data = data_set(ids, n_items=arguments.lines, n_classes=arguments.classes, seed=arguments.seed)
            rows += measure_ids(data, ids=ids, repeat=arguments.repeat, seed=arguments.seed, directory=Path(directory))
    log("timing the suite from arrays and scikit-learn's subset")
    ours_s, sklearn_s, problems = measure_arrays(data, arguments.repeat)
    elapsed = time.perf_counter() - started

    print(f"{arguments.lines:,} lines per file, {arguments.classes} classes.")
    print()
    print(file_table(rows))
    print()
    print(arrays_table(arguments.lines, arguments.classes, ours_s, sklearn_s))
    print()
    print(machine_line())
    print(
        f"Best of {arguments.repeat} runs per cell (time), largest peak of those runs (memory); whole benchmark "
        f"{elapsed:.0f} s wall; load average {load_at_start} at the start, {load_average()} at the end."
    )
    print()
    print("Targets:")
    print("\n".join(target_lines(rows, n_items=arguments.lines, speed_up=sklearn_s / ours_s)))
    if problems:
        print()
        print("Cross-check problems (our suite vs scikit-learn):")
        print("\n".join(f"- {problem}" for problem in problems))


if __name__ == "__main__":
    main()
