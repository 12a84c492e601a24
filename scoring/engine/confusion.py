"""Confusion matrices from label codes (hard) and from probability outputs (soft).

Orientation (contract): ``m[i, j]`` counts items predicted ``i`` whose gold label is ``j``.
Labels reach this module as integer codes ``0 .. n-1`` in the task's label order; turning
strings into codes is the job of :mod:`scoring.engine.io`.
"""

from __future__ import annotations

import numpy as np

BLOCK_ITEMS = 1 << 16
"""Items counted at a time."""


def _check_codes(codes: np.ndarray, n_classes: int, what: str) -> np.ndarray:
    codes = np.asarray(codes)
    if codes.ndim != 1 or not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"{what} must be a 1-d array of integer class codes")
    if codes.size and (codes.min() < 0 or codes.max() >= n_classes):
        raise ValueError(f"{what} must lie in 0..{n_classes - 1}")
    return codes


def hard_confusion(predicted: np.ndarray, gold: np.ndarray, n_classes: int) -> np.ndarray:
    """Count matrix of shape (n, n) from predicted and gold codes, in one ``np.bincount``."""
    predicted = _check_codes(predicted, n_classes, "predicted codes")
    gold = _check_codes(gold, n_classes, "gold codes")
    if predicted.shape != gold.shape:
        raise ValueError("predicted and gold codes must have the same length")
    counts = np.zeros(n_classes * n_classes, dtype=np.int64)
    # One flat index per item, a block at a time: a block's indexes (intp arithmetic, so small
    # code dtypes cannot overflow) stay in the processor's cache instead of being new memory
    # the size of ten million items.
    for start in range(0, len(gold), BLOCK_ITEMS):
        flat = predicted[start : start + BLOCK_ITEMS].astype(np.intp) * n_classes
        flat += gold[start : start + BLOCK_ITEMS]
        counts += np.bincount(flat, minlength=n_classes * n_classes)
    return counts.reshape(n_classes, n_classes)


def soft_confusion(probabilities: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Soft matrix m[i, j] = sum over items s with gold j of the probability of class i
    (paper 000, footnote 1). ``probabilities`` has one row per item and one column per class.

    Each item weighs its row's sum: rows that sum to 1 give a matrix whose total is the number
    of items and whose column sums are the gold counts. :mod:`scoring.engine.io` divides every
    row of a probability file by its sum after validation, so files printed with few decimals
    (rows summing to 0.999) weigh one item per row too.
    """
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if probabilities.ndim != 2:
        raise ValueError("probabilities must be a 2-d array (items x classes)")
    n_classes = probabilities.shape[1]
    gold = _check_codes(gold, n_classes, "gold codes")
    if len(gold) != len(probabilities):
        raise ValueError("probabilities and gold codes must have the same length")
    # Item s adds its probability of class i to cell (i, gold_s), at i * n + gold_s of the
    # flat matrix: one weighted count of a block's cells at a time, each block read in the
    # order it lies in memory.
    cell_of_class = np.arange(n_classes, dtype=np.intp) * n_classes
    rows = max(1, BLOCK_ITEMS // n_classes)
    flat = np.zeros(n_classes * n_classes)
    for start in range(0, len(gold), rows):
        cells = gold[start : start + rows, np.newaxis].astype(np.intp) + cell_of_class
        flat += np.bincount(cells.ravel(), weights=probabilities[start : start + rows].ravel(), minlength=flat.size)
    return flat.reshape(n_classes, n_classes)
