"""The full metric suite of one confusion matrix: raw, calibrated and per class.

This is what the scorer prints, what a submission stores next to its confusion matrix, and
what the leaderboard ranks. The JSON form (:meth:`Report.as_json`) is a contract: see the
standalone scorer, ``python -m scoring``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.engine import metrics as m
from scoring.engine.calibration import calibrate
from scoring.engine.metrics import Value
from scoring.engine.registry import CLASS_MEASURES, METRICS


def plain_number(x: float) -> int | float:
    """An int when the value is integral (counts), otherwise the float (soft masses)."""
    return int(x) if float(x).is_integer() else float(x)


def metric_values(matrix: np.ndarray | None) -> dict[str, Value]:
    """Every registered metric of ``matrix``; all ``None`` when there is no matrix."""
    if matrix is None:
        return {metric.key: None for metric in METRICS}
    return {metric.key: metric.compute(matrix) for metric in METRICS}


def per_class_values(matrix: np.ndarray | None, labels: tuple[str, ...]) -> dict[str, dict]:
    """The one-vs-rest measures of paper 004 per class, with support and predicted count."""
    if matrix is None:
        keys = (*(measure.key for measure in CLASS_MEASURES), "support", "predicted")
        return {label: dict.fromkeys(keys) for label in labels}
    columns = {measure.key: measure.compute(matrix) for measure in CLASS_MEASURES}
    support = m.prevalence(matrix)
    predicted = m.bias(matrix)
    return {
        label: {
            **{key: m.defined(values[i]) for key, values in columns.items()},
            "support": plain_number(support[i]),
            "predicted": plain_number(predicted[i]),
        }
        for i, label in enumerate(labels)
    }


def weighted_averages(matrix: np.ndarray, weights: np.ndarray) -> dict[str, dict[str, Value]]:
    """Micro- and macro-weighted averages of every per-class measure with class weights omega
    (paper 004, Tables 2 and 3): ``{"micro": {measure: value}, "macro": {measure: value}}``.
    """
    matrix = m.as_matrix(matrix)
    return {
        "micro": {measure.key: m.micro_weighted(matrix, measure.compute, weights) for measure in CLASS_MEASURES},
        "macro": {measure.key: m.macro_weighted(measure.compute(matrix), weights) for measure in CLASS_MEASURES},
    }


@dataclass(frozen=True)
class Report:
    """Everything the suite says about one confusion matrix."""

    labels: tuple[str, ...]
    n_items: int
    matrix: np.ndarray
    calibrated_matrix: np.ndarray | None
    metrics: dict[str, Value]
    calibrated: dict[str, Value]
    per_class: dict[str, dict]
    calibrated_per_class: dict[str, dict]

    def as_json(self) -> dict:
        """The scorer's JSON object (contract): fractions, ``None`` for undefined."""
        return {
            "n_items": self.n_items,
            "labels": list(self.labels),
            "confusion_matrix": [[plain_number(x) for x in row] for row in self.matrix],
            "metrics": self.metrics,
            "calibrated": self.calibrated,
            "per_class": self.per_class,
        }


def score_matrix(matrix: np.ndarray, *, labels: tuple[str, ...] | list[str], n_items: int | None = None) -> Report:
    """Score a confusion matrix (rows predicted, columns gold, in ``labels`` order).

    ``n_items`` is the number of scored items; it defaults to the matrix total, which is the
    same for hard labels and for probability rows that sum to 1.
    """
    matrix = m.as_matrix(matrix)
    labels = tuple(labels)
    if len(labels) != len(matrix):
        raise ValueError(f"{len(labels)} labels for a {len(matrix)}x{len(matrix)} matrix")
    calibrated = calibrate(matrix)
    return Report(
        labels=labels,
        n_items=round(float(matrix.sum())) if n_items is None else int(n_items),
        matrix=matrix,
        calibrated_matrix=calibrated,
        metrics=metric_values(matrix),
        calibrated=metric_values(calibrated),
        per_class=per_class_values(matrix, labels),
        calibrated_per_class=per_class_values(calibrated, labels),
    )
