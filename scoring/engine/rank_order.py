"""Ranks of the teams in a block of bootstrap replicates, and Spearman's rho between columns
in each replicate (rules: :mod:`scoring.engine.bootstrap`).

Competition ranks (1, 2, 2, 4; equal floats tie, no tolerance) and average ranks come from one
sort of each row of values (:class:`RankOrder`), as :mod:`scoring.engine.ranking` ranks a board;
rho of a replicate is Spearman's rho on average ranks over the teams defined under both
columns, correctly rounded, undefined with fewer than two such teams or a ranking that is all
ties, as :func:`scoring.engine.ranking.spearman`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from scoring.engine.canonical import rounded_of_integers
from scoring.engine.ranking import Direction, correlation, goodness


@dataclass(frozen=True)
class RankOrder:
    """One sort of each row of values (last axis = teams), best first (by the direction of
    each row's metric, :func:`scoring.engine.ranking.goodness`), undefined last; from it
    competition ranks and average ranks, restricted to any subset of the teams."""

    order: np.ndarray
    group_start: np.ndarray
    group_end: np.ndarray
    defined: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, direction: Direction | np.ndarray | float = Direction.HIGHER) -> RankOrder:
        """The sort of ``values``; ``direction`` of every row, or :func:`scoring.engine.ranking.signs`
        broadcast against ``values`` (one per column of a (replicates, columns, teams) stack)."""
        defined = ~np.isnan(values)
        key = np.where(defined, -goodness(values, direction), np.inf)
        order = np.argsort(key, axis=-1, kind="stable")
        ordered = np.take_along_axis(key, order, axis=-1)
        positions = np.arange(values.shape[-1])
        differs = ordered[..., 1:] != ordered[..., :-1]
        edge = np.ones((*values.shape[:-1], 1), dtype=bool)
        starts = np.concatenate([edge, differs], axis=-1)
        ends = np.concatenate([differs, edge], axis=-1)
        group_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=-1)
        group_end = np.flip(np.minimum.accumulate(np.flip(np.where(ends, positions, positions[-1]), -1), axis=-1), -1)
        return cls(order=order, group_start=group_start, group_end=group_end, defined=defined)

    def within(self, subset: np.ndarray) -> RankOrder:
        """The same sort, ranking only the teams of ``subset``."""
        return RankOrder(self.order, self.group_start, self.group_end, subset)

    def _unsort(self, ordered: np.ndarray) -> np.ndarray:
        out = np.empty_like(ordered)
        np.put_along_axis(out, self.order, ordered, axis=-1)
        return out

    def competition(self) -> np.ndarray:
        """Competition ranks (1, 2, 2, 4), 0 where undefined."""
        return np.where(self.defined, self._unsort(self.group_start + 1), 0)

    def average(self, subset: np.ndarray | None = None) -> np.ndarray:
        """Average ranks among the teams of ``subset`` (default: the defined ones); NaN outside."""
        subset = self.defined if subset is None else subset
        inside = np.take_along_axis(subset, self.order, axis=-1)
        through = np.cumsum(inside, axis=-1)
        before_start = np.take_along_axis(through - inside, self.group_start, axis=-1)
        through_end = np.take_along_axis(through, self.group_end, axis=-1)
        return np.where(subset, self._unsort((before_start + 1 + through_end) / 2.0), np.nan)

    def centred(self) -> np.ndarray:
        """2 r - (k + 1) for the average ranks r among the k defined teams, 0 for the others:
        integers, the terms of Spearman's rho."""
        return _centred(self.average(), self.defined)


def _centred(ranks: np.ndarray, subset: np.ndarray) -> np.ndarray:
    """2 r - (k + 1) over the k teams of ``subset`` (last axis), 0 outside: integers."""
    count = subset.sum(axis=-1, keepdims=True)
    return np.where(subset, np.rint(2.0 * np.where(subset, ranks, 0.0)) - (count + 1), 0.0)


def correlations(centred: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """rho of each pair of columns (rows, cols) in every replicate, from centred doubled ranks
    (replicates, columns, teams; integers, 0 for a team left out): correctly rounded."""
    products = np.matmul(centred, np.swapaxes(centred, 1, 2))  # integer sums: exact in doubles
    variances = np.diagonal(products, axis1=1, axis2=2)
    rows, cols = pairs
    return rounded_of_integers(correlation, products[:, rows, cols], variances[:, rows], variances[:, cols])


def spearman_replicates(centred: np.ndarray, order_of: Callable[[int], RankOrder], incomplete: set[int]) -> np.ndarray:
    """Spearman's rho between every pair of columns in every replicate, correctly rounded
    (:func:`scoring.engine.ranking.correlation`: rho of identical rankings is exactly 1).

    ``centred`` holds each column's :meth:`RankOrder.centred` (replicates, columns, teams);
    ``incomplete`` the columns under which some team is undefined in some replicate, and
    ``order_of`` gives a column's sort (replicates, teams). The result (replicates, pairs)
    follows ``numpy.triu_indices(columns)``. Pairs of complete columns take one matrix product
    of the centred ranks; a pair with an incomplete column is ranked again over the teams
    defined under both.
    """
    rows, cols = np.triu_indices(centred.shape[1])
    out = correlations(centred, (rows, cols))
    for pair in np.flatnonzero(np.isin(rows, list(incomplete)) | np.isin(cols, list(incomplete))):
        first, second = order_of(rows[pair]), order_of(cols[pair])
        both = first.defined & second.defined
        two = np.stack([_centred(part.within(both).average(), both) for part in (first, second)], axis=1)
        out[:, pair] = correlations(two, (np.array([0]), np.array([1])))[:, 0]
    return out


def rank_columns(values: np.ndarray, signs: np.ndarray, heatmap: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Competition ranks of a block of replicates' values (replicates, columns, teams; NaN where
    undefined), 0 where undefined, and rho between every pair of the ``heatmap`` columns in
    each replicate (:func:`spearman_replicates`). ``signs`` orients each column
    (:func:`scoring.engine.ranking.signs`). One column at a time, so that the sorts of the
    block are never all in memory at once."""
    ranks = np.empty(values.shape, dtype=np.int32)
    position = {column: index for index, column in enumerate(heatmap)}
    centred = np.empty((values.shape[0], len(heatmap), values.shape[2]))
    orders: dict[int, RankOrder] = {}  # the sorts of incomplete heatmap columns, kept for their pairs
    for column in range(values.shape[1]):
        order = RankOrder.of(values[:, column], signs[column])
        ranks[:, column] = order.competition()
        if column in position:
            centred[:, position[column]] = order.centred()
            if not order.defined.all():
                orders[position[column]] = order
    incomplete = set(orders)

    def order_of(index: int) -> RankOrder:
        if index not in orders:
            orders[index] = RankOrder.of(values[:, heatmap[index]], signs[heatmap[index]])
        return orders[index]

    return ranks, spearman_replicates(centred, order_of, incomplete)
