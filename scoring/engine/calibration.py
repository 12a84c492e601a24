"""Prevalence scaling and prevalence calibration (paper 000, Eq. 5 and 6).

Scaling multiplies each gold column ``j`` by ``lambda_j``: it changes how many items of each
class the data set holds while keeping the proportions of intra-class error types, so it
simulates the same classifier on data with another class distribution.
"""

from __future__ import annotations

import numpy as np

from scoring.engine.metrics import as_matrix, prevalence


def scale_prevalence(m: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """m' = m lambda with lambda = diag(scales) (paper 000, Eq. 5)."""
    m = as_matrix(m)
    scales = np.asarray(scales, dtype=np.float64)
    if scales.shape != (len(m),) or np.any(scales <= 0) or not np.all(np.isfinite(scales)):
        raise ValueError(f"need {len(m)} positive, finite column scales")
    return m * scales[np.newaxis, :]


def scale_to_distribution(m: np.ndarray, target: np.ndarray) -> np.ndarray | None:
    """Scale the gold columns so that class ``j`` holds the share ``target[j]`` of all items.

    ``target`` is a vector of positive weights (normalised here to sum to 1); the result's
    columns sum to those shares. ``None`` when some class has no gold item at all: a class
    that was never observed cannot be scaled up to any prevalence.
    """
    m = as_matrix(m)
    target = np.asarray(target, dtype=np.float64)
    if target.shape != (len(m),) or np.any(target <= 0) or not np.all(np.isfinite(target)):
        raise ValueError(f"need {len(m)} positive, finite class shares")
    gold = prevalence(m)
    if np.any(gold <= 0):
        return None
    return scale_prevalence(m, target / target.sum() / gold)


def calibrate(m: np.ndarray) -> np.ndarray | None:
    """Prevalence calibration: lambda_jj = 1 / (n prevalence(j)) (paper 000, Eq. 6).

    Every class then holds the same mass 1/n and the matrix sums to 1. ``None`` when a class
    has no gold item, for which Eq. 6 is undefined; every calibrated metric is then undefined.
    """
    m = as_matrix(m)
    return scale_to_distribution(m, np.ones(len(m)))
