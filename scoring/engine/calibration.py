"""Prevalence scaling and prevalence calibration (paper 000, Eq. 5 and 6), as matrices to show.

Scaling multiplies each gold column ``j`` by ``lambda_j``: it changes how many items of each
class the data set holds while keeping the proportions of intra-class error types, so it
simulates the same classifier on data with another class distribution. The metrics of a scaled
or calibrated matrix are computed from its exact form
(:meth:`scoring.engine.canonical.ExactMatrix.scaled_to`); the matrices here are for display,
each cell the double nearest to its exact mass.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from scoring.engine.canonical import ExactMatrix, integer_weights
from scoring.engine.metrics import as_matrix


def scale_prevalence(m: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """m' = m lambda with lambda = diag(scales) (paper 000, Eq. 5), each cell rounded once."""
    m = as_matrix(m)
    scales = np.asarray(scales, dtype=np.float64)
    if scales.shape != (len(m),) or np.any(scales <= 0) or not np.all(np.isfinite(scales)):
        raise ValueError(f"need {len(m)} positive, finite column scales")
    factors = [Fraction(float(x)) for x in scales]
    return np.array([[float(Fraction(float(x)) * f) for x, f in zip(row, factors, strict=True)] for row in m])


def scale_to_distribution(m: np.ndarray, target: Sequence[object]) -> np.ndarray | None:
    """The gold columns scaled so that class ``j`` holds the share ``target[j]`` of all items
    (positive weights, exact: floats as the binary fractions they are, or Fractions),
    normalised; ``None`` when some class has no gold item at all."""
    try:
        shares = [Fraction(x) for x in target]
    except (ValueError, OverflowError):
        raise ValueError(f"need {len(m)} positive, finite class shares") from None
    if len(shares) != len(m) or any(share <= 0 for share in shares):
        raise ValueError(f"need {len(m)} positive, finite class shares")
    scaled = ExactMatrix.of(m).scaled_to(integer_weights(shares))
    return None if scaled is None else scaled.floats()


def calibrate(m: np.ndarray) -> np.ndarray | None:
    """Prevalence calibration: lambda_jj = 1 / (n prevalence(j)) (paper 000, Eq. 6).

    Every class then holds the same mass 1/n and the matrix sums to 1. ``None`` when a class
    has no gold item, for which Eq. 6 is undefined; every calibrated metric is then undefined.
    """
    calibrated = ExactMatrix.of(as_matrix(m) if not np.issubdtype(np.asarray(m).dtype, np.integer) else m).calibrated()
    return None if calibrated is None else calibrated.floats()
