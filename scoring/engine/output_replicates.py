"""The values of a task with several outputs on resampled test sets (the paired bootstrap's
replicates, :mod:`scoring.engine.bootstrap`), a block of teams at a time: the counterpart of
:mod:`scoring.engine.replicates` for a run of items × outputs.

A replicate weighs item ``k`` by how often it was drawn, ``w_k``, and every count a value is made
of is a weighted count, so the counts of a block of teams in every replicate come from one matrix
product of the weights ``W`` (replicates × items) with the block's indicator columns (items ×
columns), exact in floating point (every sum an integer below 2^24 in single precision, below
2^53 in double):

- each output's confusion matrix: the cells of its predictions but the last, one indicator
  column each per (gold, predicted) pair; the last row is the gold class's weighted count (one
  product for every team) less the others;
- the items with every output right and the wrong item-output cells;
- where every output is a 0/1 label, the sums over items of |P ∩ G| / |P ∪ G| and of
  2 |P ∩ G| / (|P| + |G|) (:mod:`scoring.engine.label_sets`): each item's fraction scaled by the
  least common multiple L of the denominators a team's items have (an integer column), so the
  sum is an exact integer over L (with several such columns when one L would pass 2^53 over
  the items).

The values are then the board's, computed the same way: each suite metric's mean over the
outputs from the outputs' matrices, raw and calibrated, and the item metrics from the weighted
counts, each formula written once (:mod:`scoring.engine.metrics`, :mod:`scoring.engine.label_sets`)
and evaluated as pairs of doubles with error bounds, rounded to the nearest double, with an exact
evaluation wherever the bounds leave the rounding open. So a replicate's value is the double
nearest to its exact value, as a board's is, and the full test set (every weight 1) gives the
board's values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from operator import add

import numpy as np

from scoring.engine.canonical import ExactMatrix, StackValues
from scoring.engine.columns import Column
from scoring.engine.exact import EXACT, Q
from scoring.engine.label_sets import PRESENT, ItemCounts, exact_value, item_ratios
from scoring.engine.outputs import exact_mean
from scoring.engine.replicates import EXACT_FLOAT32_COUNTS, resampling_weights
from scoring.engine.schemes import Output, outputs_are_labels
from scoring.engine.twofold import VECTOR, Approx

EXACT_DOUBLE = 2**53
"""Integer sums below this are exact in double precision."""


@dataclass(frozen=True)
class _Sums:
    """Where a block's sums of one item fraction are: per team, its columns of the double
    product and the scale L of each."""

    columns: list[list[int]]
    scales: list[list[int]]


@dataclass(frozen=True)
class _Parts:
    counts: np.ndarray
    """Items × teams·width indicator columns (each output's cells but the last row, then the
    items all right)."""
    wide: np.ndarray
    """Items × columns in double precision: each team's wrong cells, then its fraction sums."""
    teams: int
    wrong: list[int]
    """Each team's column of wrong cells in :attr:`wide`."""
    overlap: _Sums | None
    agreement: _Sums | None


def _groups(denominators: np.ndarray, n_items: int) -> list[tuple[list[int], int]]:
    """The distinct ``denominators`` in groups whose least common multiple L keeps n·L below
    2^53, each with its L (one group but for very wide label sets)."""
    groups: list[tuple[list[int], int]] = []
    for den in np.unique(denominators).tolist():
        if groups and math.lcm(groups[-1][1], den) * n_items < EXACT_DOUBLE:
            groups[-1][0].append(den)
            groups[-1] = (groups[-1][0], math.lcm(groups[-1][1], den))
        else:
            groups.append(([den], den))
    return groups


class OutputReplicates:
    """Resampling weights of the items of ``gold`` (items × outputs codes) of a task of
    ``outputs``, and the values of any block of teams under them."""

    def __init__(self, gold: np.ndarray, outputs: Sequence[Output]) -> None:
        self.gold = np.asarray(gold, dtype=np.int64)  # stored codes are small unsigned integers
        self.outputs = tuple(outputs)
        self.n_items = len(self.gold)
        self.sizes = [len(output.labels) for output in self.outputs]
        self.labels = outputs_are_labels(self.outputs)
        self.matrices_per_team = len(self.outputs)
        self.dtype = np.float32 if self.n_items < EXACT_FLOAT32_COUNTS else np.float64
        self.gold_classes = np.concatenate(
            [np.eye(n)[self.gold[:, k]] for k, n in enumerate(self.sizes)], axis=1
        )  # items × Σ n: each output's gold class, one-hot
        self.width = sum(n * (n - 1) for n in self.sizes) + 1

    def weights(self, rng: np.random.Generator, n_replicates: int) -> np.ndarray:
        """Multinomial resampling weights (replicates × items), items in the gold file's order."""
        return resampling_weights(rng, n_replicates, self.n_items)

    def parts(self, predicted: Sequence[np.ndarray]) -> _Parts:
        """The indicator columns of a block of teams (each items × outputs codes)."""
        teams = len(predicted)
        # Column-major: each column's items side by side, as the products read them (twice as fast).
        counts = np.zeros((self.n_items, teams * self.width), dtype=self.dtype, order="F")
        wide: list[np.ndarray] = []
        wrong: list[int] = []
        sums: dict[str, _Sums] = {name: _Sums([], []) for name in ("overlap", "agreement")}
        rows = np.arange(self.n_items)
        for team, codes in enumerate(predicted):
            codes = np.asarray(codes, dtype=np.int64)
            start = team * self.width
            for k, n in enumerate(self.sizes):
                kept = codes[:, k] < n - 1  # the last row is the rest of each gold column
                counts[rows[kept], start + self.gold[kept, k] * (n - 1) + codes[kept, k]] = 1
                start += n * (n - 1)
            right = codes == self.gold
            counts[:, start] = right.all(axis=1)
            wrong.append(len(wide))
            wide.append((~right).sum(axis=1))
            if self.labels:
                p, g = codes == PRESENT, self.gold == PRESENT
                for name, (numerators, denominators) in item_ratios((p & g).sum(axis=1), (p | g).sum(axis=1)).items():
                    sums[name].columns.append([])
                    sums[name].scales.append([])
                    for dens, scale in _groups(denominators, self.n_items):
                        inside = np.isin(denominators, dens)
                        sums[name].columns[-1].append(len(wide))
                        sums[name].scales[-1].append(scale)
                        wide.append(np.where(inside, numerators * (scale // np.maximum(denominators, 1)), 0))
        return _Parts(
            counts=counts,
            wide=np.asfortranarray(np.stack(wide, axis=1), dtype=np.float64),
            teams=teams,
            wrong=wrong,
            overlap=sums["overlap"] if self.labels else None,
            agreement=sums["agreement"] if self.labels else None,
        )

    def matrices(self, counts: np.ndarray, totals: np.ndarray) -> dict[int, np.ndarray]:
        """The outputs' matrices from a block's weighted ``counts`` (replicates, teams, width) and
        the gold classes' weighted ``totals``: per number of labels n, the matrices of the
        outputs of n labels (outputs, replicates, teams, n, n; rows predicted), in their order,
        so that each formula is evaluated once for all of them."""
        found: dict[int, list[np.ndarray]] = {}
        start, first = 0, 0
        for n in self.sizes:
            cells = counts[..., start : start + n * (n - 1)].reshape(*counts.shape[:2], n, n - 1)
            matrix = np.empty((*counts.shape[:2], n, n))
            matrix[..., : n - 1, :] = np.swapaxes(cells, -1, -2)
            matrix[..., n - 1, :] = totals[:, np.newaxis, first : first + n] - cells.sum(axis=-1)
            found.setdefault(n, []).append(matrix)
            start, first = start + n * (n - 1), first + n
        return {n: np.stack(group) for n, group in found.items()}

    def values(self, weights: np.ndarray, parts: _Parts, columns: Sequence[Column], labels=None) -> np.ndarray:
        """Each column's value for each team of the block under each row of ``weights``:
        shape (columns, replicates, teams), NaN where undefined."""
        b, teams = len(weights), parts.teams
        counts = (weights.astype(self.dtype, copy=False) @ parts.counts).reshape(b, teams, self.width)
        weights = weights.astype(np.float64, copy=False)
        wide = weights @ parts.wide
        groups = self.matrices(counts.astype(np.float64), weights @ self.gold_classes)
        all_right, wrong = counts[..., -1], wide[:, parts.wrong]
        binary = groups.get(2)  # every output's, where every output is a 0/1 label
        vector = _item_counts(
            self, VECTOR, all_right=all_right, wrong=wrong, binary=binary,
            overlap=_fraction_sums(parts.overlap, wide), agreement=_fraction_sums(parts.agreement, wide),
        )  # fmt: skip

        def exact(replicate: int, team: int) -> ItemCounts:
            return _item_counts(
                self, EXACT, all_right=all_right[replicate, team], wrong=wrong[replicate, team],
                binary=None if binary is None else binary[:, replicate, team],
                overlap=_exact_sum(parts.overlap, wide[replicate], team),
                agreement=_exact_sum(parts.agreement, wide[replicate], team),
            )  # fmt: skip

        stacks = [StackValues(group) for group in groups.values()]
        out = np.empty((len(columns), b, teams))
        for index, column in enumerate(columns):
            if column.has_twin:
                out[index] = _mean(column, stacks, len(self.sizes))
                continue
            formula = column.metric.formula
            out[index], undecided = formula(vector).rounded()
            for replicate, team in zip(*np.nonzero(undecided), strict=True):
                out[index, replicate, team] = exact_value(formula, exact(replicate, team))
        return out


def _mean(column: Column, stacks: Sequence[StackValues], n_outputs: int) -> np.ndarray:
    """A suite metric's mean over the outputs (``stacks``: the outputs' matrices, by number of
    labels), correctly rounded (NaN where an output's value is undefined)."""
    formula, scaled = column.metric.formula, column.calibrated
    total = reduce(add, [(stack.scaled if scaled else stack.raw).of(formula).sum(axis=0) for stack in stacks])
    values, undecided = (total / n_outputs).rounded()
    if scaled:
        defined = np.logical_and.reduce([stack.scaling_defined.all(axis=0) for stack in stacks])
        values, undecided = np.where(defined, values, np.nan), undecided & defined
    for index in zip(*np.nonzero(undecided), strict=True):
        exact = [ExactMatrix.of(matrix) for stack in stacks for matrix in stack.matrices[(slice(None), *index)]]
        value = exact_mean(formula, [m.calibrated() if scaled else m for m in exact])
        values[index] = np.nan if value is None else value
    return values


def _item_counts(source: OutputReplicates, xp, *, all_right, wrong, binary, overlap, agreement) -> ItemCounts:
    """The weighted counts of one team and replicate (Python integers, ``xp`` exact) or of a
    block (arrays as :class:`Approx`, ``xp`` :data:`VECTOR`) as the formulas read them;
    ``binary``: the outputs' matrices where every output is a 0/1 label (outputs first)."""

    def number(counts: np.ndarray):  # weighted counts, exact integers held as doubles
        found = xp.integers(np.asarray(counts).astype(np.int64))
        return found.item() if xp is EXACT and found.ndim == 0 else found

    found = {"n_items": source.n_items, "n_outputs": len(source.sizes), "xp": xp}
    found |= {"all_right": number(all_right), "wrong_cells": number(wrong)}
    if not source.labels:
        return ItemCounts(**found)
    return ItemCounts(
        **found,
        true_positives=number(binary[..., PRESENT, PRESENT]),
        false_positives=number(binary[..., PRESENT, 1 - PRESENT]),
        false_negatives=number(binary[..., 1 - PRESENT, PRESENT]),
        overlap=overlap,
        agreement=agreement,
    )


def _fraction_sums(sums: _Sums | None, wide: np.ndarray) -> Approx | None:
    """A fraction's sum over items (see the module docstring), every team's: its integer
    columns of ``wide`` (replicates × columns) over their scales."""
    if sums is None:
        return None
    total = None
    for g in range(max(len(columns) for columns in sums.columns)):  # each team's g-th group, if any
        has = np.array([g < len(columns) for columns in sums.columns])
        columns = [columns[g] if g < len(columns) else 0 for columns in sums.columns]
        scales = np.array([scales[g] if g < len(scales) else 1 for scales in sums.scales], dtype=np.float64)
        part = Approx.integers(np.where(has, wide[:, columns], 0.0)) / Approx(scales)
        total = part if total is None else total + part
    return total


def _exact_sum(sums: _Sums | None, wide: np.ndarray, team: int) -> Q | None:
    """One team's fraction sum of one replicate's ``wide`` row, exact."""
    if sums is None:
        return None
    pairs = zip(sums.columns[team], sums.scales[team], strict=True)
    return reduce(add, (Q(int(wide[column]), scale) for column, scale in pairs))
