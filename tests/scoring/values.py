"""The engine's values of one matrix, by registry key, as the tests read them.

A metric is ``Value`` (a float, or ``None`` where undefined); a per-class measure an array with
NaN where undefined, so that numpy's comparisons apply. Both are the registry's formulas
correctly rounded (:mod:`scoring.engine.canonical`), the values a report stores.
"""

from __future__ import annotations

import numpy as np

from scoring.engine.canonical import ExactMatrix, matrix_value, rounded
from scoring.engine.exact import EXACT, Q
from scoring.engine.metrics import Quantities, Value
from scoring.engine.registry import BY_KEY, CLASS_MEASURE_BY_KEY


def metric(key: str, matrix: np.ndarray) -> Value:
    return BY_KEY[key](matrix)


def per_class(key: str, matrix: np.ndarray) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in CLASS_MEASURE_BY_KEY[key](matrix)], dtype=np.float64)


def quantities(matrix: np.ndarray) -> Quantities:
    """The exact quantities of one matrix, each cell its exact mass (the engine's own quantities
    hold the cells over a common denominator, which no formula sees)."""
    exact = ExactMatrix.of(matrix)
    cells = np.array([[Q(cell, exact.denominator) for cell in row] for row in exact.cells], dtype=object)
    return Quantities(cells, EXACT)


def numbers(values: object) -> list:
    """Exact values (an array of them, or one) as their nearest doubles, ``None`` where undefined."""
    return rounded(values) if np.ndim(values) == 0 else [rounded(value) for value in values]


def formula_value(formula, matrix: np.ndarray) -> Value:
    """A formula of :mod:`scoring.engine.metrics` of one matrix, correctly rounded."""
    return matrix_value(formula, matrix)
