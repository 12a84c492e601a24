"""The passes of a paired bootstrap over a store of replicates (:mod:`scoring.engine.team_rows`);
the rules, and why the work goes in passes, are :mod:`scoring.engine.bootstrap`'s.

1. :meth:`Replicates.fill`: the values of the teams the store does not hold yet, a block of
   teams at a time, in every replicate, and their score intervals (a team's own: kept with
   its values).
2. :meth:`Replicates.ties_by_sort`, only without written ties or when many teams changed
   since them: each team's :class:`~scoring.engine.rank_order.Ties` in every replicate and
   column, from one sort of each block of replicates, written team after team.
3. :meth:`Replicates.by_team`, a block of teams at a time: each team's ties (the last written
   ones, moved by each team that came or left since), and from them its ranks and
   every interval of the team; per replicate, the sums of products of centred ranks that give
   rho, and each team's totals of the overall rankings. The teams that came are ranked last,
   once every other team has been compared with them.
4. :meth:`Replicates.overall`: the overall rankings' ranks in every replicate, from the totals,
   and their intervals.

Every order statistic is taken from a team's (or a pair's) replicates in the order they were
drawn, as one array of every replicate would give.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from scoring.engine import compiled
from scoring.engine.aggregate import BORDA, MEAN_RANK, Aggregate, totals_of_sums
from scoring.engine.columns import Column
from scoring.engine.cores import available_cores
from scoring.engine.rank_order import Ties, competition_of_totals, correlations_of_products, keys, restricted_rho
from scoring.engine.replicates import ReplicateMatrices
from scoring.engine.significance import BehindLeader, Differences, adjusted, leader_of
from scoring.engine.team_rows import ReplicateStore, TeamRows

BLOCK_SIZE = 200
"""Replicates drawn at a time: fixes the stream of random numbers (see the rules)."""
TEAMS_PER_BLOCK = 32
"""Teams whose values are computed, or whose intervals are taken, at a time: about 10 MB of
values for 1,000 replicates and 42 columns (fewer teams for more replicates or columns, so
that a block's values stay under :data:`VALUES_PER_TEAM_BLOCK`)."""
VALUES_PER_TEAM_BLOCK = 2**20
COMPILED_FROM = 2**16
"""From this many matrices to compute (or 2^6 times as many values to sort), a pass loads the
engine's compiled loops (:mod:`scoring.engine.compiled`, about 1 s; they save about 5 µs of a
core a matrix); one new team's values stay with numpy's arrays."""
MATRICES_PER_CHUNK = 2**14
"""Matrices whose values are computed at a time: the formulas' arrays then stay in the
processor's caches (fewer is slower for the interpreter's overhead, more for memory's)."""
VALUES_PER_BLOCK = 2**22
"""Values (32 MB) of the block of replicates a sort ranks (:meth:`Replicates.ties_by_sort`): for
100 teams and 42 columns, 200 replicates (:data:`BLOCK_SIZE`); for 10,000 teams, 9."""
FEW_ENDS = 64
"""The most values of an interval's two ends together (25 and 25 for 95% of 1,000 replicates)
that the compiled loop of :func:`order_statistics` keeps as it reads a row; for more, numpy's
sort is the faster."""
UPDATED_TEAMS = 8
"""Up to this many teams come or go since the last written ties, they are updated (each of
those teams moves the others by one) rather than sorted again."""
TIES_WRITTEN_FROM = 3
"""From this many teams come or gone since the last written ties, a computation that updates
them writes its own (every team's counts: a pass over every team's replicates) for the next
one; with fewer, the next computation moves the same last ties again, by every team that came
or went since them."""


def on_all_cores(work: Callable[[object], object], blocks: Iterable[object]) -> list:
    """``work`` of every block, on every core (numpy lets go of the interpreter lock while it
    computes), their results in the blocks' order; the first error is raised. The BLAS's own
    threads are held to one meanwhile: the blocks already take every core, and more threads
    than cores only wait for each other."""
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max_workers=available_cores()) as pool:
        return [done.result() for done in [pool.submit(work, block) for block in blocks]]


def blocks_of(count: int, size: int) -> list[range]:
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def even_blocks(count: int, most: int) -> list[range]:
    """Blocks of at most ``most`` of ``count``, as many as a multiple of the cores and of sizes
    that differ by at most one, so that every core has as much to do (100 teams in blocks of at
    most 32 on two cores: four of 25, not 32, 32, 32 and 4)."""
    cores = available_cores()
    number = min(count, -(-count // (most * cores)) * cores)  # at least count / most
    return [range(count * k // number, count * (k + 1) // number) for k in range(number)]


def order_statistics(samples: np.ndarray, bounds: tuple[int, int]) -> np.ndarray:
    """The 1-based order statistics ``bounds`` of the replicates (last axis), as a sort gives
    them (NaN last): shape (*rest, 2), float64. Numpy sorts 32- and 64-bit numbers with SIMD
    instructions, faster than it selects two order statistics; once the compiled loops are
    loaded, a row of doubles is read once instead, keeping its few values of each end
    (:func:`scoring.engine.kernels.order_statistics`, twice as fast as numpy's sort)."""
    low, high = bounds
    loops = compiled.loops()
    few = low + samples.shape[-1] - high + 1 <= FEW_ENDS
    if loops is None or samples.dtype != np.float64 or not few:
        ordered = np.sort(samples, axis=-1)
        return np.stack([ordered[..., low - 1], ordered[..., high - 1]], axis=-1).astype(np.float64)
    rows = np.ascontiguousarray(samples).reshape(-1, samples.shape[-1])
    found = np.empty((len(rows), 2))
    loops.order_statistics(rows, low, high, found)
    return found.reshape(*samples.shape[:-1], 2)


def interval_of(samples: np.ndarray, *, undefined: np.ndarray, bounds: tuple[int, int]) -> np.ndarray:
    """The interval between the 1-based order statistics ``bounds`` of the replicates (last
    axis): shape (*rest, 2); NaN where ``undefined`` (same shape) holds in any replicate."""
    return np.where(undefined.any(axis=-1)[..., np.newaxis], np.nan, order_statistics(samples, bounds))


def matching(last: Sequence[int], slots: Sequence[int]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The current teams (their ``slots``) that were among the ``last`` computation's, and where
    (twins, whose values are one slot, match in turn), and the last computation's teams that
    are gone."""
    where: dict[int, list[int]] = {}
    for index, slot in enumerate(last):
        where.setdefault(slot, []).append(index)
    kept, before = [], []
    for team, slot in enumerate(slots):
        if where.get(slot):
            kept.append(team)
            before.append(where[slot].pop(0))
    removed = sorted(index for indexes in where.values() for index in indexes)
    return np.array(kept, dtype=np.intp), np.array(before, dtype=np.intp), removed


@dataclass
class Found:
    """Every team's intervals (see :class:`scoring.engine.bootstrap.Stability`)."""

    scores: np.ndarray
    ranks: np.ndarray
    observed: np.ndarray
    behind: tuple[BehindLeader, ...]
    rho: np.ndarray
    aggregates: dict
    replicate_values: np.ndarray | None
    replicate_ranks: np.ndarray | None
    for_next: dict[str, np.ndarray]
    """What the next computation needs of this one besides its ties: how many teams are defined
    (replicates × columns), each column's leader (its slot, -1 without one) and each team's
    differences to it (:attr:`_Out.behind`)."""


class Replicates:
    """One computation over its store: the teams' ``slots``, the weights, and the passes of
    the module docstring, with the columns, their ``signs``, the ``heatmap`` columns (indexes)
    and the overall rankings ``aggregates`` (each with the indexes of its columns)."""

    def __init__(
        self,
        store: ReplicateStore,
        source: ReplicateMatrices,
        *,
        replicates: int,
        seed: int,
        columns: Sequence[Column],
        signs: np.ndarray,
        heatmap: Sequence[int],
        aggregates: Sequence[tuple[Aggregate, list[int]]],
        bounds: tuple[int, int],
    ) -> None:
        self.store, self.source, self.replicates = store, source, replicates
        self.columns, self.signs, self.heatmap, self.bounds = columns, signs, heatmap, bounds
        self.teams_per_block = max(1, min(TEAMS_PER_BLOCK, VALUES_PER_TEAM_BLOCK // ((replicates + 1) * len(columns))))
        sets = list(dict.fromkeys(tuple(indexes) for _, indexes in aggregates))  # the methods share them
        self.aggregates = [(aggregate, sets.index(tuple(indexes))) for aggregate, indexes in aggregates]
        self.membership = np.zeros((len(columns), len(sets)))
        for number, columns_of in enumerate(sets):
            self.membership[list(columns_of), number] = 1

        def draw() -> np.ndarray:
            rng = np.random.default_rng(seed)
            blocks = [source.weights(rng, len(block)) for block in blocks_of(replicates, BLOCK_SIZE)]
            counts = np.concatenate(blocks) if blocks else np.zeros((0, source.n_items), dtype=np.int64)
            return counts.astype(np.min_scalar_type(int(counts.max(initial=0))))

        self.weights = store.weights(draw)

    def fill(self, predicted: Sequence[np.ndarray], slots: Sequence[int], new: set[int], labels: Sequence[str]) -> None:
        """Pass 1: the values of the teams whose slot is in ``new`` (one team per slot)."""
        todo = sorted({slot: team for team, slot in enumerate(slots) if slot in new}.items())
        if not todo:
            return
        if len(todo) * (self.replicates + 1) * self.source.matrices_per_team >= COMPILED_FROM:
            compiled.load()

        # The weights of the full test set (each item once), then of every replicate, as the
        # products take them: converted once for every block of teams (exact below 2^24).
        weights = np.empty((self.replicates + 1, self.source.n_items), np.float32)
        weights[0], weights[1:] = 1.0, self.weights

        def work(block: list[tuple[int, int]]) -> None:
            parts = self.source.parts([predicted[team] for _, team in block])
            values = np.empty((len(block), self.replicates + 1, len(self.columns)))
            per_chunk = MATRICES_PER_CHUNK // (len(block) * self.source.matrices_per_team)
            for rows in blocks_of(self.replicates + 1, max(1, per_chunk)):
                found = self.source.values(weights[rows.start : rows.stop], parts, self.columns, labels)
                values[:, rows.start : rows.stop] = found.transpose(2, 1, 0)
            scores = self._bounds(values[:, 1:], ~(values[:, 1:] == values[:, 1:]).all(axis=1)[..., np.newaxis])
            for (slot, _), team_values, team_scores in zip(block, values, scores.transpose(1, 0, 2), strict=True):
                self.store.values.write(slot, team_values)
                self.store.scores.write(slot, team_scores.reshape(1, -1))

        on_all_cores(work, [todo[part.start : part.stop] for part in even_blocks(len(todo), TEAMS_PER_BLOCK)])

    def ties_by_sort(self, slots: Sequence[int], ties: TeamRows) -> np.ndarray:
        """Pass 2: every team's ties into ``ties``, from a sort of each block of replicates; the
        defined teams' counts (replicates × columns)."""
        n_columns = len(self.columns)
        counts = np.empty((self.replicates, n_columns), dtype=np.int32)
        if self.replicates * n_columns * len(slots) >= 2**6 * COMPILED_FROM:
            compiled.load()
        size = max(1, min(BLOCK_SIZE, VALUES_PER_BLOCK // max(1, n_columns * len(slots))))

        def work(block: range) -> None:
            by_team = self.store.values.read(slots, 1 + block.start, 1 + block.stop)
            found = Ties.of_columns(np.ascontiguousarray(by_team.transpose(1, 2, 0)), self.signs)
            counts[block.start : block.stop] = found.defined.sum(axis=-1)
            rows = np.concatenate([found.better, found.tied], axis=1).transpose(2, 0, 1).astype(ties.dtype)
            for team, team_rows in enumerate(rows):
                ties.write(team, team_rows, first_row=block.start)

        on_all_cores(work, even_blocks(self.replicates, size))
        return counts

    def by_team(
        self,
        slots: Sequence[int],
        *,
        earlier: TeamRows,
        later: TeamRows | None,
        counts: np.ndarray,
        kept: np.ndarray,
        before: np.ndarray,
        removed: Sequence[int],
        keep_replicates: bool,
        last: dict[str, np.ndarray] | None = None,
        was: np.ndarray | None = None,
    ) -> Found:
        """Pass 3: every interval of every team (see the module docstring). ``earlier``: the
        ties of the ``kept`` teams (current places) at ``before`` (their places there), before
        the teams whose slots are ``removed`` left and the other current teams came;
        ``counts``: the defined teams' counts then. ``later``: where this computation's ties
        go (``None``: they are ``earlier``'s, unchanged). ``last``: what the last computation
        kept (:attr:`Found.for_next`), whose teams are at ``was`` among them (-1: not there): a
        team's differences to a column's leader are still right while the leader is the same."""
        n_teams, n_columns, replicates = len(slots), len(self.columns), self.replicates
        new = np.setdiff1d(np.arange(n_teams), kept)
        gone_keys = keys(self.store.values.read(removed, 1), self.signs)
        new_values = self.store.values.read([slots[t] for t in new], 1)
        new_keys = keys(new_values, self.signs)
        counts = counts - (gone_keys == gone_keys).sum(axis=0, dtype=np.int32)  # a key equals itself unless NaN
        counts = counts + (new_keys == new_keys).sum(axis=0, dtype=np.int32)
        observed = self.store.values.read(slots, 0, 1)[:, 0].T.copy()  # (columns, teams)
        leaders = [leader_of(observed[c], column.direction) for c, column in enumerate(self.columns)]
        led = [c for c, leader in enumerate(leaders) if leader is not None]
        of_leaders = {leader: self.store.values.read([slots[leader]], 1)[0] for leader in {leaders[c] for c in led}}
        leader_keys = keys(np.stack([of_leaders[leaders[c]][:, c] for c in led], axis=-1), self.signs[led])
        leader_slots = np.array([-1 if leader is None else slots[leader] for leader in leaders])
        same_leader = np.zeros(n_columns, dtype=bool) if last is None else last["leaders"] == leader_slots
        out = _Out(self, n_teams, keep_replicates)
        # The sets' sums are products with their membership: integers below 2^24 in float32 (or
        # 2^53 in float64), so exact.
        exact = np.float32 if n_columns * (n_teams + 1) < 2**24 else np.float64
        membership, sizes = self.membership.astype(exact), self.membership.sum(axis=0)

        def results(
            teams: np.ndarray, values: np.ndarray, key: np.ndarray, better: np.ndarray, tied: np.ndarray
        ) -> np.ndarray:
            """Every interval of ``teams`` from their values and ties (teams × replicates ×
            columns); their part of the sums of products of centred ranks (replicates ×
            heatmap²)."""
            defined = key == key  # a key equals itself unless undefined (NaN)
            partly = not defined.all()  # else every mask below is skipped
            if later is not None:
                if partly:
                    better *= defined
                    tied *= defined
                rows = np.concatenate([better, tied], axis=-1).astype(later.dtype, copy=False)
                for team, team_rows in zip(teams, rows, strict=True):
                    later.write(team, team_rows)
            undefined = ~defined.all(axis=1)[..., np.newaxis]  # (teams, columns, 1)
            ranks = better.astype(np.int32)  # competition ranks where defined
            ranks += 1
            out.scores[:, teams] = (
                self.store.scores.read([slots[t] for t in teams])[:, 0].reshape(len(teams), -1, 2).transpose(1, 0, 2)
            )
            out.ranks[:, teams] = self._bounds(ranks, undefined)  # NaN where undefined in any replicate
            places = np.full(len(teams), -1) if was is None else was[teams]
            known = same_leader if (places >= 0).all() else np.zeros(n_columns, dtype=bool)
            if known.any():
                out.behind[np.ix_(np.flatnonzero(known), teams)] = last["behind"][known][:, places]
            todo = [j for j, c in enumerate(led) if not known[c]]
            if todo:
                # d = goodness(leader) - goodness(team) = key(team) - key(leader), the same double.
                columns = [led[j] for j in todo]
                d = key[:, :, columns] - leader_keys[:, todo]
                d_defined = ~np.isnan(d).any(axis=1)
                found = np.concatenate(
                    [
                        order_statistics(d.transpose(0, 2, 1), self.bounds),
                        np.stack([(d <= 0).sum(axis=1), d_defined], -1),
                    ],
                    axis=-1,
                )
                out.behind[np.ix_(columns, teams)] = found.transpose(1, 0, 2)
            # Each set's sums of ranks, of ties and of columns without a rank (teams·replicates ×
            # sets). A team ranked under every column of a set has as many points there
            # (Borda's) as teams it beats: sum(k - rank + 1 - tied).
            rank_sums = ranks.reshape(-1, n_columns).astype(exact) @ membership
            tied_sums = tied.reshape(-1, n_columns).astype(exact) @ membership
            missing = (~defined).reshape(-1, n_columns).astype(exact) @ membership if partly else 0
            count_sums = np.tile(counts @ self.membership, (len(teams), 1))
            totals = totals_of_sums(
                missing == 0, {MEAN_RANK: rank_sums, BORDA: count_sums - rank_sums + sizes - tied_sums}
            )
            for a, (aggregate, number) in enumerate(self.aggregates):
                out.totals[a][:, teams] = totals[aggregate.method][:, number].reshape(len(teams), replicates).T
            if keep_replicates:
                out.replicate_values[:, :, teams] = values.transpose(1, 2, 0)
                out.replicate_ranks[:, :, teams] = ranks.transpose(1, 2, 0) * defined.transpose(1, 2, 0)
            # Centred doubled ranks, 2 better + tied - k = 2 rank + tied - (k + 2), 0 where
            # undefined, replicate by replicate.
            centred = 2 * ranks
            centred += tied
            centred -= counts + 2
            if partly:
                centred *= defined
            centred = np.ascontiguousarray(centred.transpose(1, 0, 2), dtype=np.float64)
            return np.matmul(centred.transpose(0, 2, 1), centred)  # every column's: integer sums, exact

        products = np.zeros((replicates, n_columns, n_columns))
        to_new = np.zeros((2, len(new), replicates, n_columns), dtype=np.int32)
        adding = threading.Lock()

        def work(block: range) -> None:
            teams, places = kept[block.start : block.stop], before[block.start : block.stop]
            values = self.store.values.read([slots[t] for t in teams], 1)
            key = keys(values, self.signs)
            prior = earlier.read(places)
            better, tied = prior[..., :n_columns].copy(), prior[..., n_columns:].copy()
            for left in gone_keys:
                better -= left < key
                tied -= left == key
            compared = np.empty((2, len(new), replicates, n_columns), dtype=np.int32)
            for j, came in enumerate(new_keys):
                better += came < key
                tied += came == key
                compared[0, j] = (key < came).sum(axis=0)
                compared[1, j] = (key == came).sum(axis=0)
            found = results(teams, values, key, better, tied)
            with adding:  # integer sums: exact in any order
                np.add(products, found, out=products)
                np.add(to_new, compared, out=to_new)

        on_all_cores(work, even_blocks(len(kept), self.teams_per_block))
        if len(new):
            better, tied = to_new
            for came in new_keys:  # the new teams among themselves (a team ties with itself)
                better += came < new_keys
                tied += came == new_keys
            products += results(new, new_values, new_keys, better, tied)
        products = products[:, self.heatmap][:, :, self.heatmap]
        return out.found(self, observed, leaders, products, counts, leader_slots)

    def _bounds(self, samples: np.ndarray, undefined: np.ndarray) -> np.ndarray:
        """The intervals of ``samples`` (teams × replicates × columns) between the order
        statistics :attr:`bounds`: (columns, teams, 2), NaN where ``undefined`` (teams ×
        columns × 1)."""
        found = order_statistics(samples.transpose(0, 2, 1), self.bounds)
        return np.where(undefined, np.nan, found).transpose(1, 0, 2)

    def overall(self, totals: list[np.ndarray]) -> dict[Aggregate, tuple[np.ndarray, np.ndarray]]:
        """Pass 4: each overall ranking's value and rank intervals, from its totals (replicates
        × teams): the teams ranked by it in every replicate."""

        def work(index: int) -> tuple[np.ndarray, np.ndarray]:
            aggregate, total = self.aggregates[index][0], totals[index]
            places = competition_of_totals(total, aggregate.direction.value)  # the value increases with the total
            by_team = np.ascontiguousarray(total.T)
            bounds = interval_of(by_team, undefined=by_team < 0, bounds=self.bounds)
            places = np.ascontiguousarray(places.T)
            return (
                aggregate.of_totals(np.nan_to_num(bounds, nan=-1).astype(np.int64)),
                interval_of(places, undefined=places == 0, bounds=self.bounds),
            )

        found = on_all_cores(work, range(len(self.aggregates)))
        return {aggregate: intervals for (aggregate, _), intervals in zip(self.aggregates, found, strict=True)}

    def restricted(self, slots: Sequence[int], pairs: Sequence[tuple[int, int]]) -> np.ndarray:
        """rho of ``pairs`` of heatmap columns (places in the heatmap) under which some team is
        undefined in some replicate, over the teams defined under both, in every replicate:
        (replicates, pairs), a block of replicates at a time."""
        found = np.empty((self.replicates, len(pairs)))
        columns = sorted({self.heatmap[index] for pair in pairs for index in pair})
        size = max(1, min(BLOCK_SIZE, VALUES_PER_BLOCK // max(1, len(columns) * len(slots))))

        def work(block: range) -> None:
            values = self.store.values.read(slots, 1 + block.start, 1 + block.stop).transpose(1, 2, 0)
            found[block.start : block.stop] = restricted_rho(values, self.signs, self.heatmap, pairs)

        on_all_cores(work, even_blocks(self.replicates, size))
        return found


class _Out:
    """The arrays pass 3 fills, a block of teams at a time."""

    def __init__(self, passes: Replicates, n_teams: int, keep_replicates: bool) -> None:
        n_columns, replicates = len(passes.columns), passes.replicates
        self.scores = np.empty((n_columns, n_teams, 2))
        self.ranks = np.empty((n_columns, n_teams, 2))
        self.behind = np.zeros((n_columns, n_teams, 4))
        """Each team's difference to each column's leader: [lo, hi, replicates where not
        behind, defined] (:func:`scoring.engine.significance.differences`)."""
        self.totals = [np.empty((replicates, n_teams), dtype=np.int32) for _ in passes.aggregates]
        shape = (replicates, n_columns, n_teams)
        self.replicate_values = np.empty(shape) if keep_replicates else None
        self.replicate_ranks = np.empty(shape, np.int16 if n_teams < 2**15 else np.int32) if keep_replicates else None

    def found(self, passes: Replicates, observed, leaders, products, counts, leader_slots) -> Found:
        n_columns = len(passes.columns)
        behind = tuple(
            adjusted(
                leaders[c],
                Differences(self.behind[c, :, :2], self.behind[c, :, 2].astype(np.int64), self.behind[c, :, 3] > 0),
                passes.replicates,
            )
            for c in range(n_columns)
        )
        rows, cols = np.triu_indices(len(passes.heatmap))
        rho = np.concatenate(  # a block of replicates at a time: rounding takes a few arrays of each value
            on_all_cores(
                lambda r: correlations_of_products(products[r.start : r.stop], (rows, cols)),
                even_blocks(len(products), BLOCK_SIZE),
            )
        )
        return Found(
            scores=self.scores,
            ranks=self.ranks,
            observed=observed,
            behind=behind,
            rho=rho,
            aggregates=passes.overall(self.totals),
            replicate_values=self.replicate_values,
            replicate_ranks=self.replicate_ranks,
            for_next={"counts": counts, "leaders": leader_slots, "behind": self.behind},
        )
