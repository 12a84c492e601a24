"""The full metric suite of one confusion matrix: raw, calibrated and per class.

This is what the scorer prints, what a submission stores next to its confusion matrix, and
what the leaderboard ranks. The JSON form (:meth:`Report.as_json`) is a contract: see the
standalone scorer, ``python -m scoring``.

Canonical values: everything a report stores (``metrics``, ``calibrated``, ``per_class``,
``calibrated_per_class``) is the registry's formula evaluated in exact arithmetic
(:mod:`scoring.engine.canonical`) on the confusion matrix, and on its exactly calibrated form,
rounded once to the nearest double. Values equal as exact fractions are therefore the same
double, so the board, the exports, the rank chart and every Spearman rho see ties as ties by
comparing floats (:mod:`scoring.engine.ranking`). Supports and predicted counts are exact sums
too: ints for counts, correctly rounded floats for soft and calibrated masses.

Ordinal tasks: a report of labels declared an ordered scale (``ordinal=True``) also holds the
errors of :data:`scoring.engine.registry.ORDINAL_METRICS` (``macro_mae``, ``mae``), raw and
calibrated, each after the other metrics; other reports do not have these keys at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from scoring.engine import metrics as m
from scoring.engine.canonical import ExactMatrix, exact_values
from scoring.engine.exact import EXACT
from scoring.engine.metrics import Value
from scoring.engine.registry import CLASS_MEASURES, suite_metrics


def plain_number(x: float) -> int | float:
    """An int when the value is integral (counts), otherwise the float (soft masses)."""
    return int(x) if float(x).is_integer() else float(x)


def metric_values(matrix: np.ndarray | ExactMatrix | None, *, ordinal: bool = False) -> dict[str, Value]:
    """Every metric of the suite (:func:`scoring.engine.registry.suite_metrics`) of ``matrix``,
    each the double nearest to its exact value; all ``None`` when there is no matrix."""
    metrics = suite_metrics(ordinal=ordinal)
    if matrix is None:
        return {metric.key: None for metric in metrics}
    quantities = ExactMatrix.of(matrix).quantities
    return {metric.key: exact_values(metric.formula, quantities) for metric in metrics}


def per_class_values(matrix: np.ndarray | ExactMatrix | None, labels: tuple[str, ...]) -> dict[str, dict]:
    """The one-vs-rest measures of paper 004 per class (canonical values), with support and
    predicted count."""
    if matrix is None:
        keys = (*(measure.key for measure in CLASS_MEASURES), "support", "predicted")
        return {label: dict.fromkeys(keys) for label in labels}
    exact = ExactMatrix.of(matrix)
    columns = {measure.key: exact_values(measure.formula, exact.quantities) for measure in CLASS_MEASURES}
    return {
        label: {
            **{key: values[i] for key, values in columns.items()},
            "support": exact.mass(exact.prevalence[i]),
            "predicted": exact.mass(exact.bias[i]),
        }
        for i, label in enumerate(labels)
    }


def weighted_averages(matrix: np.ndarray, weights: Sequence[float]) -> dict[str, dict[str, Value]]:
    """Micro- and macro-weighted averages of every per-class measure with class weights omega
    (paper 004, Tables 2 and 3), each the double nearest to its exact value (the weights read as
    the binary fractions they are): ``{"micro": {measure: value}, "macro": {measure: value}}``.
    """
    quantities = ExactMatrix.of(m.as_matrix(matrix)).quantities
    exact_weights = [Fraction(np.asarray(weight).item()) for weight in weights]
    if len(exact_weights) != quantities.n or any(w < 0 for w in exact_weights) or not any(exact_weights):
        raise ValueError("class weights must be a vector of non-negative numbers, not all zero, one a class")

    def micro(measure):
        return lambda q: m.micro_weighted(q, measure.of_counts, exact_weights)

    def macro(measure):
        return lambda q: m.macro_weighted(EXACT, q.of(measure.formula), exact_weights)

    return {
        "micro": {measure.key: exact_values(micro(measure), quantities) for measure in CLASS_MEASURES},
        "macro": {measure.key: exact_values(macro(measure), quantities) for measure in CLASS_MEASURES},
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
    ordinal: bool = False
    """Whether the labels were scored as an ordered scale (the suite then holds the ordinal errors)."""

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


def score_matrix(
    matrix: np.ndarray, *, labels: tuple[str, ...] | list[str], n_items: int | None = None, ordinal: bool = False
) -> Report:
    """Score a confusion matrix (rows predicted, columns gold, in ``labels`` order).

    ``n_items`` is the number of scored items; it defaults to the matrix total, which is the
    same for hard labels and for probability rows that sum to 1. ``ordinal``: the labels, in
    their order, are an ordered scale, and the ordinal errors are scored too. Stored values are
    canonical (see the module docstring); ``calibrated_matrix`` is the calibrated matrix, each
    cell the double nearest to its exact mass, for display.
    """
    exact = ExactMatrix.of(matrix)  # before the float conversion: integer counts of any size
    matrix = m.as_matrix(matrix)
    labels = tuple(labels)
    if len(labels) != len(matrix):
        raise ValueError(f"{len(labels)} labels for a {len(matrix)}x{len(matrix)} matrix")
    exact_calibrated = exact.calibrated()
    return Report(
        labels=labels,
        n_items=round(float(matrix.sum())) if n_items is None else int(n_items),
        matrix=matrix,
        calibrated_matrix=None if exact_calibrated is None else exact_calibrated.floats(),
        metrics=metric_values(exact, ordinal=ordinal),
        calibrated=metric_values(exact_calibrated, ordinal=ordinal),
        per_class=per_class_values(exact, labels),
        calibrated_per_class=per_class_values(exact_calibrated, labels),
        ordinal=ordinal,
    )
