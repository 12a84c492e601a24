"""Confusion matrices from label codes (hard) and from probability outputs (soft).

Orientation (contract): ``m[i, j]`` counts items predicted ``i`` whose gold label is ``j``.
Labels reach this module as integer codes ``0 .. n-1`` in the task's label order; turning
strings into codes is the job of :mod:`scoring.engine.io`.
"""

from __future__ import annotations

from fractions import Fraction

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


def hard_confusions(predicted: np.ndarray, gold: np.ndarray, n_classes: int) -> np.ndarray:
    """The count matrices of many runs at once (``predicted``: runs × items, codes in the gold
    order), shape (runs, n, n): one ``np.bincount`` over every run's flat indexes, not one per run."""
    predicted = np.asarray(predicted)
    runs = len(predicted)
    if runs == 0:
        return np.zeros((0, n_classes, n_classes), dtype=np.int64)
    _check_codes(predicted.ravel(), n_classes, "predicted codes")
    gold = _check_codes(gold, n_classes, "gold codes")
    flat = predicted.astype(np.intp) * n_classes
    flat += gold[np.newaxis, :]
    flat += (np.arange(runs, dtype=np.intp) * n_classes * n_classes)[:, np.newaxis]
    return np.bincount(flat.ravel(), minlength=runs * n_classes * n_classes).reshape(runs, n_classes, n_classes)


GRID_BITS = 26
"""Bits of each part a mass is split into (see :class:`SoftCounts`)."""
EXACT_ROWS = 1 << 26
"""Rows whose parts are summed in doubles before the sums are moved into Python ints: each part
is an integer of at most 2^26 units of its grid, so 2^26 rows sum exactly below 2^53."""


def mass_parts(values: np.ndarray) -> list[np.ndarray]:
    """``values`` (masses in [0, 2)) as parts on the grids 2^-26, 2^-52, 2^-78, ...: the k-th part
    a multiple of 2^(-26 k) of magnitude at most 2^(26 - 26 k), their sum ``values`` exactly."""
    parts = []
    rest = values
    k = 1
    while True:
        anchor = 1.5 * 2.0 ** (52 - GRID_BITS * k)  # adding it rounds to a multiple of 2^(-26 k)
        part = (rest + anchor) - anchor
        parts.append(part)
        rest = rest - part
        if not rest.any():
            return parts
        k += 1


class SoftCounts:
    """A soft confusion matrix summed exactly, whatever the order of the items: each mass is
    split into parts on fixed grids (:func:`mass_parts`), every part is summed in doubles where the
    sums are exact integers of its grid, and :meth:`matrix` rounds each cell's exact total once.
    So a cell is the double nearest to the exact sum of its masses, and the same file in
    another line order, or a subset of items counted apart, gives the same doubles."""

    def __init__(self, n_classes: int) -> None:
        self.n = n_classes
        self.sums: list[np.ndarray] = []
        """Per part, the (predicted, gold) sums of the rows since the last flush."""
        self.totals: list[list[Fraction]] = [[Fraction(0)] * n_classes for _ in range(n_classes)]
        self.rows = 0

    def add(self, gold: np.ndarray, columns: list[np.ndarray]) -> None:
        """A block of items: their gold codes, and for each class ``i`` the items' masses of
        predicted ``i``."""
        if self.rows + len(gold) > EXACT_ROWS:
            self._flush()
        self.rows += len(gold)
        gold = np.asarray(gold).astype(np.intp, copy=False)
        for label, column in enumerate(columns):
            for k, part in enumerate(mass_parts(np.asarray(column, dtype=np.float64))):
                if k == len(self.sums):
                    self.sums.append(np.zeros((self.n, self.n)))
                self.sums[k][label] += np.bincount(gold, weights=part, minlength=self.n)

    def _flush(self) -> None:
        for part in self.sums:
            for i in range(self.n):
                for j in range(self.n):
                    self.totals[i][j] += Fraction(part[i, j])
            part[:] = 0.0
        self.rows = 0

    def matrix(self) -> np.ndarray:
        """Each cell the double nearest to its exact sum."""
        self._flush()
        return np.array([[cell.numerator / cell.denominator for cell in row] for row in self.totals])


def soft_confusion(probabilities: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Soft matrix m[i, j] = sum over items s with gold j of the probability of class i
    (paper 000, footnote 1), each cell the double nearest to its exact sum
    (:class:`SoftCounts`). ``probabilities`` has one row per item and one column per class.

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
    counts = SoftCounts(n_classes)
    for start in range(0, len(gold), BLOCK_ITEMS):
        block = probabilities[start : start + BLOCK_ITEMS]
        counts.add(gold[start : start + BLOCK_ITEMS], [block[:, label] for label in range(n_classes)])
    return counts.matrix()
