"""Ranks of the teams in a block of bootstrap replicates, and Spearman's rho between columns
in each replicate (rules: :mod:`scoring.engine.bootstrap`).

Competition ranks (1, 2, 2, 4; equal floats tie, no tolerance) and average ranks come from one
sort of each row of values (:class:`RankOrder`), as :mod:`scoring.engine.ranking` ranks a board;
rho of a replicate is Spearman's rho on average ranks over the teams defined under both
columns, correctly rounded, undefined with fewer than two such teams or a ranking that is all
ties, as :func:`scoring.engine.ranking.spearman`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scoring.engine import compiled
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


@dataclass(frozen=True)
class Ties:
    """Where each team stands in each row of values (replicates, teams): ``better`` how many
    defined teams are strictly better, ``tied`` how many defined teams have its very value,
    itself included (both 0 where the team is undefined). Its competition rank is better + 1,
    and its average rank among the k defined teams (better + 1 + better + tied) / 2, so its
    centred doubled rank (:meth:`RankOrder.centred`) is 2 better + tied - k: integers that a
    new or re-scored run changes by one, team by team, without a sort (:meth:`changed`)."""

    better: np.ndarray
    tied: np.ndarray
    defined: np.ndarray

    @classmethod
    def of_columns(cls, values: np.ndarray, signs: np.ndarray) -> Ties:
        """The ties of a block (replicates, columns, teams), from one sort of each row of each
        column, a column at a time (its work stays in the processor's caches, and the sorts of
        the block are never all in memory at once). A column with the very values and sign of
        an earlier one takes its ties without a sort: two formulas of one quantity (accuracy
        and weighted recall; macro recall and calibrated accuracy) give the same doubles."""
        shape = values.shape
        found = cls(np.empty(shape, dtype=np.int32), np.empty(shape, dtype=np.int32), np.empty(shape, dtype=bool))
        sorted_by_start: dict[bytes, list[int]] = {}  # the sorted columns, by sign and first row (+0.0: -0 is 0)
        for column in range(shape[1]):
            start = np.float64(signs[column]).tobytes() + (values[:1, column] + 0.0).tobytes()
            alike = sorted_by_start.setdefault(start, [])
            same = next((c for c in alike if np.array_equal(values[:, c], values[:, column])), None)
            if same is None:
                alike.append(column)
                one = cls.of(values[:, column], signs[column])
            else:
                one = found.column(same)
            found.better[:, column], found.tied[:, column], found.defined[:, column] = one.better, one.tied, one.defined
        return found

    def column(self, index: int) -> Ties:
        """Column ``index``'s ties, of a block's (replicates, columns, teams)."""
        return Ties(self.better[:, index], self.tied[:, index], self.defined[:, index])

    @classmethod
    def of(cls, values: np.ndarray, sign: float | np.ndarray) -> Ties:
        """From one sort of each row of ``values`` (..., teams): ``sign`` orients them
        (:func:`scoring.engine.ranking.signs`, broadcast against ``values``)."""
        if np.isnan(values).any():
            order = RankOrder.of(values, sign)
            inside = np.take_along_axis(order.defined, order.order, axis=-1)
            through = np.cumsum(inside, axis=-1)
            before = np.take_along_axis(through - inside, order.group_start, axis=-1)
            tied = np.take_along_axis(through, order.group_end, axis=-1) - before
            better, tied = order._unsort(before), order._unsort(tied)
            return cls(np.where(order.defined, better, 0), np.where(order.defined, tied, 0), order.defined)
        loops = compiled.loops()
        if loops is not None and np.ndim(sign) == 0:  # the steps below in one loop, from the values' order
            rows = values.reshape(-1, values.shape[-1])
            better, tied = np.empty(rows.shape, dtype=np.int32), np.empty(rows.shape, dtype=np.int32)
            loops.ties(rows, np.argsort(rows, axis=-1), bool(sign > 0), better, tied)
            return cls(better.reshape(values.shape), tied.reshape(values.shape), np.ones(values.shape, dtype=bool))
        key = keys(values, sign).reshape(-1, values.shape[-1])
        rows, teams = key.shape
        flat = np.argsort(key, axis=-1).astype(np.int32) + (np.arange(rows, dtype=np.int32) * teams)[:, np.newaxis]
        ordered = key.ravel().take(flat)
        starts = np.ones(key.shape, dtype=bool)
        np.not_equal(ordered[:, 1:], ordered[:, :-1], out=starts[:, 1:])
        positions = np.arange(teams, dtype=np.int32)
        group_start = np.maximum.accumulate(np.multiply(starts, positions), axis=-1)
        ends = np.ones(key.shape, dtype=bool)
        ends[:, :-1] = starts[:, 1:]
        group_end = np.minimum.accumulate(np.where(ends, positions, np.int32(teams - 1))[:, ::-1], axis=-1)[:, ::-1]
        better = np.empty(key.shape, dtype=np.int32)
        better.ravel()[flat.ravel()] = group_start.ravel()
        tied = np.empty(key.shape, dtype=np.int32)
        tied.ravel()[flat.ravel()] = (group_end - group_start + 1).ravel()
        return cls(better.reshape(values.shape), tied.reshape(values.shape), np.ones(values.shape, dtype=bool))

    @classmethod
    def changed(
        cls,
        better: np.ndarray,
        tied: np.ndarray,
        *,
        now: np.ndarray,
        kept: np.ndarray,
        before: np.ndarray,
        removed: np.ndarray,
    ) -> Ties:
        """The ties of an earlier computation's teams (``better``, ``tied``: replicates × its
        teams), after some teams left and others came: ``now`` the keys (:func:`keys`) of the
        current teams (replicates × teams); ``kept`` the current teams that were there, at
        ``before`` in the earlier ties; ``removed`` the keys of the teams that left (replicates
        × m); every other current team is new. Each team that left or came moves the others by
        one where it was or is better, or tied; comparisons with an undefined key (NaN) are
        false, so an undefined team is never counted."""
        new = np.setdiff1d(np.arange(now.shape[-1]), kept)
        stayed = np.take(now, kept, axis=-1)
        better = np.take(better, before, axis=-1).astype(np.int32)
        tied = np.take(tied, before, axis=-1).astype(np.int32)
        for gone in removed.T:
            better -= gone[:, np.newaxis] < stayed
            tied -= gone[:, np.newaxis] == stayed
        came = now[:, new]
        for key in came.T:
            better += key[:, np.newaxis] < stayed
            tied += key[:, np.newaxis] == stayed
        new_better = (now[:, np.newaxis, :] < came[:, :, np.newaxis]).sum(axis=-1, dtype=np.int32)
        new_tied = (now[:, np.newaxis, :] == came[:, :, np.newaxis]).sum(axis=-1, dtype=np.int32)
        place = np.empty(now.shape[-1], dtype=np.intp)
        place[kept], place[new] = np.arange(len(kept)), len(kept) + np.arange(len(new))
        better = np.concatenate([better, new_better], axis=-1).take(place, axis=-1)
        tied = np.concatenate([tied, new_tied], axis=-1).take(place, axis=-1)
        defined = ~np.isnan(now)
        return cls(np.where(defined, better, 0), np.where(defined, tied, 0), defined)

    def competition(self) -> np.ndarray:
        """Competition ranks (1, 2, 2, 4), 0 where undefined."""
        return np.where(self.defined, self.better + 1, 0).astype(np.int32)

    def centred(self) -> np.ndarray:
        """Centred doubled average ranks among the defined teams, 0 for the others: integers."""
        count = self.defined.sum(axis=-1, keepdims=True, dtype=np.int32)
        return np.where(self.defined, 2 * self.better + self.tied - count, 0).astype(np.float64)

    def worse(self) -> np.ndarray:
        """How many defined teams are strictly worse (a Borda count's points), 0 where undefined."""
        count = self.defined.sum(axis=-1, keepdims=True, dtype=np.int32)
        return np.where(self.defined, count - self.better - self.tied, 0)


def keys(values: np.ndarray, sign: float | np.ndarray) -> np.ndarray:
    """The sort keys of values, best first (ascending): -goodness, an exact negation; NaN where
    undefined."""
    return values * -sign


def competition_of_totals(totals: np.ndarray, sign: float) -> np.ndarray:
    """Competition ranks of rows of integer totals (replicates, teams; higher is better when
    ``sign`` is +1, lower when -1), 0 where a total is -1 (undefined): each team's count of
    strictly better totals, from one sort of each row of keys packed with their teams (a key,
    better first, above the team's bits, in 32 bits where they fit, else 64: totals below
    2^31 and teams below 2^31 fit in 62; integers compare exactly)."""
    shape, n = np.shape(totals), np.shape(totals)[-1]
    top = int(np.max(totals, initial=0))
    bits = max(1, (n - 1).bit_length())
    kind = np.int32 if top + 1 < 2 ** (31 - bits) else np.int64
    totals = np.asarray(totals, dtype=kind).reshape(-1, n)
    key = np.where(totals >= 0, totals if sign < 0 else top - totals, top + 1)  # undefined last
    packed = (key << bits) | np.arange(n, dtype=kind)
    packed.sort(axis=-1)
    ordered = packed >> bits
    starts = np.ones(ordered.shape, dtype=bool)  # where a run of equal keys starts
    np.not_equal(ordered[:, 1:], ordered[:, :-1], out=starts[:, 1:])
    first = np.where(starts, np.arange(1, n + 1, dtype=np.int32), 0)  # 1 + the teams better
    np.maximum.accumulate(first, axis=-1, out=first)
    ranks = np.empty(totals.shape, dtype=np.int32)
    places = (packed & ((1 << bits) - 1)).astype(np.intp) + np.arange(0, totals.size, n, dtype=np.intp)[:, np.newaxis]
    ranks.ravel()[places.ravel()] = first.ravel()
    return np.where(totals >= 0, ranks, 0).reshape(shape)


def _centred(ranks: np.ndarray, subset: np.ndarray) -> np.ndarray:
    """2 r - (k + 1) over the k teams of ``subset`` (last axis), 0 outside: integers."""
    count = subset.sum(axis=-1, keepdims=True)
    return np.where(subset, np.rint(2.0 * np.where(subset, ranks, 0.0)) - (count + 1), 0.0)


def correlations_of_products(products: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """rho of each pair of columns (rows, cols) in every replicate, from the sums of products of
    centred doubled ranks (replicates, columns, columns; integers, exact in doubles): correctly
    rounded (:func:`scoring.engine.ranking.correlation`: rho of identical rankings is exactly 1)."""
    variances = np.diagonal(products, axis1=1, axis2=2)
    rows, cols = pairs
    return rounded_of_integers(correlation, products[:, rows, cols], variances[:, rows], variances[:, cols])


def restricted_rho(
    values: np.ndarray, signs: np.ndarray, heatmap: Sequence[int], pairs: Sequence[tuple[int, int]]
) -> np.ndarray:
    """Spearman's rho of ``pairs`` of heatmap columns (places in ``heatmap``, indexes of the
    columns of ``values``: replicates, columns, teams) in every replicate, over the teams
    defined under both columns, from average ranks among them: (replicates, pairs)."""
    orders: dict[int, RankOrder] = {}
    centred: dict[tuple[int, bytes], np.ndarray] = {}  # pairs often share their teams defined under both
    sums = np.empty((3, values.shape[0], len(pairs)))  # of products, then of squares: integers, exact in doubles
    for index, places in enumerate(pairs):
        for place in places:
            if place not in orders:
                orders[place] = RankOrder.of(values[:, heatmap[place]], signs[heatmap[place]])
        both = orders[places[0]].defined & orders[places[1]].defined
        mask = both.tobytes()
        if len(centred) >= 2 * len(orders):  # as much memory as the rank orders take, at most
            centred.clear()
        for place in places:
            if (place, mask) not in centred:
                centred[place, mask] = _centred(orders[place].within(both).average(), both)
        first, second = centred[places[0], mask], centred[places[1], mask]
        sums[:, :, index] = [(a * b).sum(axis=-1) for a, b in ((first, second), (first, first), (second, second))]
    return rounded_of_integers(correlation, *sums)
