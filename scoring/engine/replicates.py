"""The teams' confusion matrices and values on resampled test sets (the paired bootstrap's
replicates, :mod:`scoring.engine.bootstrap`), a block of teams at a time.

A replicate's matrix of a team is a weighted count: item ``k`` drawn ``w_k`` times adds ``w_k``
to the cell (predicted, gold), or, for a probability output, ``w_k`` times its row of
probabilities to the gold column (paper 000, footnote 1). So the matrices of a block of teams
in every replicate come from one matrix product per gold class, ``W[:, items of class g] @
P[items of class g]``, of the resampling weights ``W`` (replicates × items) with the block's
prediction masses ``P`` (items × teams·n: one-hot rows for hard labels, probability rows for
soft ones); then every column, raw and calibrated, is computed for all of them at once
(:class:`scoring.engine.canonical.StackValues`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scoring.engine.canonical import StackValues, nearest_sums
from scoring.engine.columns import Column
from scoring.engine.confusion import mass_parts

MAX_SOFT_ITEMS = 2**27
"""Items up to which the weighted sums of probability parts are exact in doubles."""
EXACT_FLOAT32_COUNTS = 2**24
"""Below this many items, float32 holds every weighted count of hard labels exactly (the
weights are integers summing to N), so hard-label products run in single precision."""


def prediction_masses(predicted: np.ndarray, n_classes: int) -> np.ndarray:
    """Each item's prediction as a row of class masses: one-hot for a vector of class codes,
    the probability rows themselves for a (items × classes) matrix."""
    predicted = np.asarray(predicted)
    if predicted.ndim == 2:
        if predicted.shape[1] != n_classes:
            raise ValueError(f"probability rows need {n_classes} columns, got {predicted.shape[1]}")
        return predicted.astype(np.float64)
    return one_hot(predicted[:, np.newaxis], n_classes, np.float64)


def one_hot(codes: np.ndarray, n_classes: int, dtype: type) -> np.ndarray:
    """Class codes (items × teams) as one-hot rows of masses (items × teams·n), each team's n
    columns side by side; a code outside 0 … n - 1 is refused."""
    if codes.size and not 0 <= codes.min() <= codes.max() < n_classes:
        raise ValueError(f"class codes run from 0 to {n_classes - 1}")
    masses = np.zeros((codes.shape[0], codes.shape[1] * n_classes), dtype=dtype)
    np.put_along_axis(masses, codes + np.arange(codes.shape[1]) * n_classes, 1.0, axis=1)
    return masses


def resampling_weights(rng: np.random.Generator, n_replicates: int, n_items: int) -> np.ndarray:
    """Multinomial resampling weights (replicates × items, int32): how often each item is drawn
    in N draws with replacement. The draws are numpy's bounded integers (32-bit ones whatever
    the output type, for fewer than 2^31 items: int32 output gives the int64 draws' values, in
    half the time)."""
    draws = rng.integers(0, n_items, size=(n_replicates, n_items), dtype=np.int32)
    counts = np.empty(draws.shape, dtype=np.int32)
    for row, drawn in zip(counts, draws, strict=True):  # a row's counts stay in the cache
        row[:] = np.bincount(drawn, minlength=n_items)
    return counts


class ReplicateMatrices:
    """Resampling weights of the items of ``gold`` (their gold codes), and the matrices of any
    block of teams under them."""

    def __init__(self, gold: np.ndarray, *, n_classes: int) -> None:
        gold = np.asarray(gold)
        self.n_items = len(gold)
        self.n_classes = n_classes
        # Items sorted by gold class, so that each class's items are one contiguous slice.
        self.order = np.argsort(gold, kind="stable")
        bounds = np.searchsorted(gold[self.order], np.arange(n_classes + 1))
        self.slices = [slice(int(bounds[g]), int(bounds[g + 1])) for g in range(n_classes)]

    matrices_per_team = 1

    def weights(self, rng: np.random.Generator, n_replicates: int) -> np.ndarray:
        """Multinomial resampling weights (:func:`resampling_weights`), items numbered in
        :attr:`order` (sorted by gold class), which changes nothing in the distribution and
        saves a permutation per block."""
        return resampling_weights(rng, n_replicates, self.n_items)

    def parts(self, predicted: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The prediction masses of a block of teams (items in :attr:`order` × teams·n), in
        parts whose weighted sums are exact: one part in float32 for hard labels (counts below
        2^24), else parts on fixed grids in float64 (:mod:`scoring.engine.confusion`), so that a
        soft cell is the double nearest to its exact sum, as in a scored file."""
        hard = all(np.asarray(p).ndim == 1 for p in predicted)
        if hard and self.n_items < EXACT_FLOAT32_COUNTS:
            codes = np.stack([np.asarray(p)[self.order] for p in predicted], axis=1)  # items × teams
            return [one_hot(codes, self.n_classes, np.float32)]
        masses = np.stack([prediction_masses(p, self.n_classes)[self.order] for p in predicted], axis=1)
        masses = masses.reshape(self.n_items, len(predicted) * self.n_classes)
        if not hard and self.n_items >= MAX_SOFT_ITEMS:
            raise ValueError(f"a bootstrap of probability rows sums exactly up to {MAX_SOFT_ITEMS:,} items")
        return [np.ascontiguousarray(part) for part in mass_parts(masses)]

    def values(self, weights: np.ndarray, parts: list[np.ndarray], columns: Sequence[Column], labels) -> np.ndarray:
        """Each column's value (:func:`column_values`) of every team of the block of ``parts``
        under each row of ``weights``: shape (columns, replicates, teams)."""
        return column_values(self.of_weights(weights, parts), columns, labels)

    def of_weights(self, weights: np.ndarray, parts: list[np.ndarray]) -> np.ndarray:
        """Every team's matrix of the block of ``parts`` under each row of ``weights`` (items in
        :attr:`order`): shape (replicates, teams, n, n)."""
        n, b = self.n_classes, len(weights)
        teams = parts[0].shape[1] // n
        weights = weights.astype(parts[0].dtype, copy=False)
        out = np.empty((n, b, teams, n))
        for g, items in enumerate(self.slices):
            sums = [weights[:, items] @ part[items] for part in parts]
            out[g] = (sums[0] if len(sums) == 1 else nearest_sums(sums)).reshape(b, teams, n)
        return np.moveaxis(out, 0, -1)


def column_values(matrices: np.ndarray, columns: Sequence[Column], labels: Sequence[str]) -> np.ndarray:
    """Each column's value for each matrix (..., n, n), correctly rounded: shape (columns, ...);
    NaN where undefined (every calibrated value of a matrix whose calibration is undefined). A
    prevalence-invariant metric's calibrated values are its raw ones (the same exact values,
    so the same doubles), where calibration is defined."""
    stack = StackValues(matrices)
    out = np.empty((len(columns), *matrices.shape[:-2]))
    raw = {column: index for index, column in enumerate(columns) if not column.calibrated}
    for index, column in enumerate(columns):
        same = raw.get(column.counterpart()) if column.calibrated and column.prevalence_invariant else None
        if same is not None and same < index:
            out[index] = np.where(stack.scaling_defined, out[same], np.nan)
            continue
        label = None if column.label is None else list(labels).index(column.label)
        out[index] = stack.values(column.metric.formula, scaled=column.calibrated, label=label)
    return out
