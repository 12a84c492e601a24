"""From a gold file and a prediction file to the full report: the scorer's one entry point."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring.engine.confusion import hard_confusion
from scoring.engine.io import LabelFile, Predictions, read_labels, read_predictions
from scoring.engine.suite import Report, score_matrix


def confusion_of(gold: LabelFile, predictions: Predictions) -> np.ndarray:
    """The (hard or soft) confusion matrix of aligned predictions against the gold labels."""
    if predictions.is_soft:
        return predictions.soft_matrix(gold.codes)
    return hard_confusion(predictions.codes, gold.codes, len(gold.labels))


def score_files(
    gold: bytes | str | Path,
    predictions: bytes | str | Path,
    *,
    labels: Sequence[str] | None = None,
    gold_name: str | None = None,
    predictions_name: str | None = None,
    ordinal: bool = False,
) -> Report:
    """Read, validate and score; raises :class:`scoring.engine.io.InputFileError` on bad input.

    The names are what error messages call the files (default: the path, or "<upload>").
    ``ordinal``: the labels, in their order, are an ordered scale (the ordinal errors are scored).
    The per-item predictions are not aligned to the gold order: the report needs only the
    matrix, which a probability file gives without building its items (:class:`Predictions`).
    """
    gold_file = read_labels(gold, labels=labels, name=gold_name)
    predicted = read_predictions(predictions, gold=gold_file, name=predictions_name)
    return report_of(gold_file, predicted, ordinal=ordinal)


def report_of(gold_file: LabelFile, predicted: Predictions, *, ordinal: bool = False) -> Report:
    """The suite of aligned predictions against the gold labels."""
    matrix = confusion_of(gold_file, predicted)
    return score_matrix(matrix, labels=gold_file.labels, n_items=gold_file.n_items, ordinal=ordinal)


@dataclass(frozen=True)
class ScoredFile:
    """A prediction file's report and its per-item predictions, aligned to the gold file's
    order: class codes (hard) or probability rows (soft), what a paired bootstrap resamples."""

    report: Report
    items: np.ndarray
    gold_codes: np.ndarray
    """The gold file's class codes, in its order (what the items are aligned to)."""


def score_files_with_items(
    gold: bytes | str | Path | LabelFile,
    predictions: bytes | str | Path,
    *,
    labels: Sequence[str] | None = None,
    gold_name: str | None = None,
    predictions_name: str | None = None,
    ordinal: bool = False,
) -> ScoredFile:
    """:func:`score_files`, keeping the aligned predictions it built the matrix from (each file
    read once; ``gold`` may be a gold file read already, whose labels are then its own)."""
    gold_file = gold if isinstance(gold, LabelFile) else read_labels(gold, labels=labels, name=gold_name)
    predicted = read_predictions(predictions, gold=gold_file, name=predictions_name)
    report = report_of(gold_file, predicted, ordinal=ordinal)
    return ScoredFile(report=report, items=aligned_items(predicted), gold_codes=gold_file.codes)


def aligned_items(predictions: Predictions) -> np.ndarray:
    """The per-item predictions in the gold file's order: probability rows, or class codes."""
    return predictions.probabilities if predictions.is_soft else predictions.codes
