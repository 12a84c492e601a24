"""Tasks with several labels an item (DESIGN.md, "Tasks with several labels an item"): each item
has a label for every *output*, an output with labels of its own; an output whose labels are 0
and 1 is a *label* of a multi-label task (1: present).

Files: a gold file and a prediction file hold an ``id`` column (any case) and one column per
output, named by the header (the gold file's header names the outputs; a prediction file names
the same, in any order). The rules of single-label files hold for each column (:mod:`scoring.
engine.io`): one line an item, every id of the gold once, a label of its output, the message
naming the line and the column. An output's labels are given, or read from the gold column: a
column that holds only 0 and 1 (either or both) is a 0/1 label; any other column's labels are its
distinct values in natural order.

A run's report (:class:`OutputsReport`): each output scored under the whole suite on its own
(:func:`scoring.engine.suite.score_matrix`, raw and calibrated); for every metric of the suite
its mean over the outputs, under the same key (HatEval B's ranking score is the mean of the
three columns' ``macro_f1``), raw and calibrated; and the metrics read from the items
(:mod:`scoring.engine.label_sets`): the exact match ratio and the Hamming loss, and where every
output is a label, the label-set metrics. Every value is the double nearest to its exact value:
a mean is taken of the outputs' exact values (fractions, sums of square or n-th roots,
logarithms: :mod:`scoring.engine.exact`), then rounded once; a mean over an undefined member is
undefined, as every macro average here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from operator import add
from pathlib import Path

import numpy as np
import pyarrow as pa

from scoring.engine.canonical import ExactMatrix, rounded
from scoring.engine.confusion import hard_confusion
from scoring.engine.files.alignment import check_coverage, check_unique, gold_positions, in_gold_order
from scoring.engine.files.header import output_columns, read_header
from scoring.engine.files.labels import distinct_labels, encode_labels
from scoring.engine.files.rows import LABELS, check_values, read_rows
from scoring.engine.files.text import default_name
from scoring.engine.io import IdsFile
from scoring.engine.label_sets import ItemCounts, exact_value
from scoring.engine.metrics import Value
from scoring.engine.registry import item_metrics, suite_metrics
from scoring.engine.schemes import LABEL_VALUES, Output, outputs_are_labels
from scoring.engine.suite import Report, score_matrix

MAX_OUTPUTS = 1000
"""The most output columns a file may have (a header wider is refused by its field count)."""


@dataclass(frozen=True, eq=False, kw_only=True)
class OutputsFile(IdsFile):
    """A parsed gold file of a task with several outputs: its ids, its outputs, and every item's
    class code for every output (items × outputs, in file order)."""

    outputs: tuple[Output, ...]
    codes: np.ndarray


def _labels_of(values: pa.ChunkedArray) -> tuple[str, ...]:
    """An output's labels read from its gold column (see the module docstring)."""
    found = distinct_labels(values)
    return LABEL_VALUES if set(found) <= set(LABEL_VALUES) else found


def _widths(outputs: Sequence[str] | None) -> tuple[tuple[int, ...], str]:
    if outputs is None:
        return tuple(range(2, MAX_OUTPUTS + 2)), f"an id and 1 to {MAX_OUTPUTS:,} output columns"
    return (len(outputs) + 1,), f"{len(outputs) + 1} (id and one column per output: {', '.join(outputs)})"


def _columns(source, *, outputs: Sequence[str] | None, name: str, max_rows: int | None):
    """The header, the id column and each output's column (as ``outputs`` orders them, or the
    header does), checked for empty values."""
    widths, described = _widths(outputs)
    header, text = read_header(source, name=name, widths=widths, described=described, max_rows=max_rows)
    id_index, indexes = output_columns(header, outputs=outputs, name=name)
    columns = read_rows(header, text, name=name, kinds=dict.fromkeys(indexes, LABELS), max_rows=max_rows)
    del text
    ids = check_values(columns, id_index, header=header, name=name, what="id")
    values = [
        check_values(columns, index, header=header, name=name, what=f"value of {header.names[index]!r}")
        for index in indexes
    ]
    return ids, [header.names[index] for index in indexes], values


def read_outputs(
    source: bytes | str | Path,
    *,
    labels: Mapping[str, Sequence[str]] | None = None,
    outputs: Sequence[Output] | None = None,
    name: str | None = None,
    max_rows: int | None = None,
) -> OutputsFile:
    """Read a gold file of a task with several outputs. ``outputs`` fixes them (a stored task's:
    names, order and labels); otherwise the header names them and ``labels`` may give some
    output's labels (by name), the others read from the file."""
    name = name or default_name(source)
    names = None if outputs is None else [output.name for output in outputs]
    id_column, found, values = _columns(source, outputs=names, name=name, max_rows=max_rows)
    ids = pa.chunked_array([id_column.combine_chunks()])
    distinct = check_unique(ids, name=name)
    if outputs is None:
        given = labels or {}
        outputs = tuple(
            Output(output, tuple(given[output]) if output in given else _labels_of(column))
            for output, column in zip(found, values, strict=True)
        )
    codes = np.stack(
        [
            encode_labels(column, labels=output.labels, name=name, column=output.name)
            for output, column in zip(outputs, values, strict=True)
        ],
        axis=1,
    )
    return OutputsFile(
        name=name,
        id_array=ids,
        outputs=tuple(outputs),
        codes=codes,
        sorted_keys=distinct.sorted_keys,
        id_coder=distinct.id_coder,
        code_index=distinct.code_index,
    )


def read_output_predictions(
    source: bytes | str | Path, *, gold: OutputsFile, name: str | None = None, max_rows: int | None = None
) -> np.ndarray:
    """Read a prediction file for ``gold``: each item's code for each output, items × outputs
    in the gold file's order."""
    name = name or default_name(source)
    id_column, _, values = _columns(
        source, outputs=[output.name for output in gold.outputs], name=name, max_rows=max_rows
    )
    positions = gold_positions(id_column, gold=gold, name=name)
    codes = [
        encode_labels(column, labels=output.labels, name=name, column=output.name)
        for output, column in zip(gold.outputs, values, strict=True)
    ]
    check_coverage(positions, id_column, gold=gold, name=name)
    return np.stack([in_gold_order(column, positions) for column in codes], axis=1)


@dataclass(frozen=True)
class OutputsReport:
    """Everything the suite says about one run of a task with several outputs."""

    outputs: tuple[Output, ...]
    reports: Mapping[str, Report]
    """Each output's report, by name."""
    n_items: int
    metrics: dict[str, Value]
    """Each suite metric's mean over the outputs, then the item metrics."""
    calibrated: dict[str, Value]
    """Each suite metric's calibrated mean over the outputs."""
    counts: ItemCounts = field(repr=False)

    per_class = None
    """A report of several outputs has its classes per output (:attr:`reports`): a board column of
    one class is not among its columns."""
    calibrated_per_class = None

    @property
    def labels(self) -> bool:
        """Whether every output is a 0/1 label."""
        return outputs_are_labels(self.outputs)

    def as_json(self) -> dict:
        """The scorer's JSON object of such a run (contract: :mod:`scoring.__main__`)."""
        return {
            "n_items": self.n_items,
            "outputs": {output.name: self.reports[output.name].as_json() for output in self.outputs},
            "metrics": self.metrics,
            "calibrated": self.calibrated,
        }


def exact_mean(formula, matrices: Sequence[ExactMatrix | None]) -> Value:
    """A suite metric's mean over the outputs' exact matrices (``None``: undefined, as an output
    whose calibration is), correctly rounded."""
    values = [None if matrix is None else formula(matrix.quantities) for matrix in matrices]
    if any(value is None for value in values):
        return None
    return rounded(reduce(add, values) / len(values))


def _means(exact: Sequence[ExactMatrix | None]) -> dict[str, Value]:
    """Each suite metric's mean over the outputs' exact matrices."""
    return {metric.key: exact_mean(metric.formula, exact) for metric in suite_metrics()}


def score_outputs(gold: np.ndarray, predicted: np.ndarray, *, outputs: Sequence[Output]) -> OutputsReport:
    """The report of ``predicted`` against ``gold`` (both items × outputs codes, in the gold
    file's order) of a task of ``outputs``."""
    reports, exact, calibrated = {}, [], []
    for index, output in enumerate(outputs):
        matrix = hard_confusion(predicted[:, index], gold[:, index], len(output.labels))
        exact_matrix = ExactMatrix.of(matrix)
        exact.append(exact_matrix)
        calibrated.append(exact_matrix.calibrated())
        reports[output.name] = score_matrix(matrix, labels=output.labels, n_items=len(gold))
    counts = ItemCounts.of(gold, predicted, labels=outputs_are_labels(outputs))
    items = {metric.key: exact_value(metric.formula, counts) for metric in item_metrics(labels=counts.labels)}
    return OutputsReport(
        outputs=tuple(outputs),
        reports=reports,
        n_items=len(gold),
        metrics={**_means(exact), **items},
        calibrated=_means(calibrated),
        counts=counts,
    )


@dataclass(frozen=True)
class ScoredOutputs:
    """A run's report and its per-item predictions (items × outputs codes in the gold order)."""

    report: OutputsReport
    items: np.ndarray
    gold: OutputsFile


def score_output_files_with_items(
    gold: bytes | str | Path | OutputsFile,
    predictions: bytes | str | Path,
    *,
    outputs: Sequence[Output],
    gold_name: str | None = None,
    predictions_name: str | None = None,
) -> ScoredOutputs:
    """A run of a task of stored ``outputs``, scored, with the items it was scored from
    (``gold`` may be a gold file read already)."""
    gold_file = gold if isinstance(gold, OutputsFile) else read_outputs(gold, outputs=outputs, name=gold_name)
    items = read_output_predictions(predictions, gold=gold_file, name=predictions_name)
    return ScoredOutputs(
        report=score_outputs(gold_file.codes, items, outputs=gold_file.outputs), items=items, gold=gold_file
    )


def score_output_files(
    gold: bytes | str | Path,
    predictions: bytes | str | Path,
    *,
    labels: Mapping[str, Sequence[str]] | None = None,
    gold_name: str | None = None,
    predictions_name: str | None = None,
) -> OutputsReport:
    """Read, validate and score a run of a task with several outputs; raises
    :class:`scoring.engine.io.InputFileError` on bad input."""
    gold_file = read_outputs(gold, labels=labels, name=gold_name)
    items = read_output_predictions(predictions, gold=gold_file, name=predictions_name)
    return score_outputs(gold_file.codes, items, outputs=gold_file.outputs)
