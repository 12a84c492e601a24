"""The paired bootstrap as the engine computed it before its replicates went to disk (every
replicate's value and rank of every column and team kept in memory): an oracle for
:mod:`scoring.engine.bootstrap`, which must give the same numbers (tests/scoring/engine/
test_bootstrap_reference.py, tests/leaderboard/test_stability_reference.py). Kept as it was,
with the overall rankings' and behind-the-leader's computations of that time inlined; only
the value formulas (:class:`scoring.engine.canonical.StackValues`, the correctly rounded
values every route shares) are imported."""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from scoring.engine.aggregate import MEAN_RANK, METHODS, Aggregate, beaten, column_sets
from scoring.engine.canonical import StackValues, nearest_sums, rounded_of_integers
from scoring.engine.columns import Column, paired_columns, ranking_columns
from scoring.engine.confusion import mass_parts
from scoring.engine.ranking import Direction, competition_ranks, correlation, goodness, signs
from scoring.engine.significance import BehindLeader, holm_step_down

BLOCK_SIZE = 200
CONFIDENCE = 0.95
MAX_SOFT_ITEMS = 2**27
EXACT_FLOAT32_COUNTS = 2**24


def of_ranks(aggregate: Aggregate, ranks: np.ndarray) -> np.ndarray:
    """The overall values of competition ranks, as :meth:`Aggregate.of_ranks` computed them."""
    ranks = np.asarray(ranks, dtype=np.int64)
    complete = np.all(ranks > 0, axis=-2)
    if aggregate.method == MEAN_RANK:
        values = ranks.sum(axis=-2) / len(aggregate.columns)  # an exact integer sum, divided once
    else:
        values = beaten(ranks).sum(axis=-2).astype(np.float64)
    return np.where(complete, values, np.nan)


def prediction_masses(predicted: np.ndarray, n_classes: int) -> np.ndarray:
    """Each item's prediction as a row of class masses: one-hot for a vector of class codes,
    the probability rows themselves for a (items × classes) matrix."""
    predicted = np.asarray(predicted)
    if predicted.ndim == 2:
        if predicted.shape[1] != n_classes:
            raise ValueError(f"probability rows need {n_classes} columns, got {predicted.shape[1]}")
        return predicted.astype(np.float64)
    masses = np.zeros((len(predicted), n_classes))
    masses[np.arange(len(predicted)), predicted] = 1.0
    return masses


class ReplicateMatrices:
    """The teams' confusion matrices on resampled test sets, a block of replicates at a time.

    ``gold`` holds the items' gold codes; ``predicted`` one entry per team, class codes (hard)
    or probability rows (soft), aligned to ``gold``.
    """

    def __init__(self, gold: np.ndarray, predicted: Sequence[np.ndarray], *, n_classes: int) -> None:
        gold = np.asarray(gold)
        self.n_items = len(gold)
        self.n_classes = n_classes
        self.n_teams = len(predicted)
        hard = all(np.asarray(p).ndim == 1 for p in predicted)
        self.dtype = np.float32 if hard and self.n_items < EXACT_FLOAT32_COUNTS else np.float64
        # Items sorted by gold class, so that each class's items are one contiguous slice.
        self.order = np.argsort(gold, kind="stable")
        bounds = np.searchsorted(gold[self.order], np.arange(n_classes + 1))
        self.slices = [slice(int(bounds[g]), int(bounds[g + 1])) for g in range(n_classes)]
        masses = np.stack([prediction_masses(p, n_classes)[self.order] for p in predicted], axis=1)
        masses = masses.reshape(self.n_items, self.n_teams * n_classes)
        # Probability masses in parts on fixed grids (scoring.engine.confusion): each product of
        # integer weights with a part sums exactly, so a replicate's soft cell is the double
        # nearest to its exact sum, as in a scored file, whatever the order of the items.
        if not hard and self.n_items >= MAX_SOFT_ITEMS:
            raise ValueError(f"a bootstrap of probability rows sums exactly up to {MAX_SOFT_ITEMS:,} items")
        parts = [masses] if hard else mass_parts(masses)
        self.parts = [np.ascontiguousarray(part, dtype=self.dtype) for part in parts]

    def weights(self, rng: np.random.Generator, n_replicates: int) -> np.ndarray:
        """Multinomial resampling weights (replicates × items): how often each item is drawn in
        N draws with replacement. Items are numbered in :attr:`order` (sorted by gold class),
        which changes nothing in the distribution and saves a permutation per block."""
        draws = rng.integers(0, self.n_items, size=(n_replicates, self.n_items))
        draws += np.arange(n_replicates)[:, None] * self.n_items
        counts = np.bincount(draws.ravel(), minlength=n_replicates * self.n_items)
        return counts.reshape(n_replicates, self.n_items).astype(self.dtype)

    def of_weights(self, weights: np.ndarray) -> np.ndarray:
        """Every team's matrix under each row of weights (items in :attr:`order`): shape
        (replicates, teams, n, n)."""
        n, b = self.n_classes, len(weights)
        out = np.empty((n, b, self.n_teams, n))
        for g, items in enumerate(self.slices):
            sums = [weights[:, items] @ part[items] for part in self.parts]
            out[g] = (sums[0] if len(sums) == 1 else nearest_sums(sums)).reshape(b, self.n_teams, n)
        return np.moveaxis(out, 0, -1)


def column_values(matrices: np.ndarray, columns: Sequence[Column], labels: Sequence[str]) -> np.ndarray:
    """Each column's value for each matrix (..., n, n), correctly rounded: shape (columns, ...);
    NaN where undefined (every calibrated value of a matrix whose calibration is undefined)."""
    stack = StackValues(matrices)
    out = np.empty((len(columns), *matrices.shape[:-2]))
    for index, column in enumerate(columns):
        label = None if column.label is None else list(labels).index(column.label)
        out[index] = stack.values(column.metric.formula, scaled=column.calibrated, label=label)
    return out


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
    def of(cls, values: np.ndarray, direction: Direction | np.ndarray = Direction.HIGHER) -> RankOrder:
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

    def columns(self, index: Sequence[int] | int) -> RankOrder:
        """The sort of the chosen columns only (axis 1 of a (replicates, columns, teams) sort)."""
        return RankOrder(*(part[:, index] for part in (self.order, self.group_start, self.group_end, self.defined)))

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


def _correlations(centred: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """rho of each pair of columns (rows, cols) in every replicate, from centred doubled ranks
    (replicates, columns, teams; integers, 0 for a team left out): correctly rounded."""
    products = np.matmul(centred, np.swapaxes(centred, 1, 2))  # integer sums: exact in doubles
    variances = np.diagonal(products, axis1=1, axis2=2)
    rows, cols = pairs
    return rounded_of_integers(correlation, products[:, rows, cols], variances[:, rows], variances[:, cols])


def _centred(ranks: np.ndarray, subset: np.ndarray) -> np.ndarray:
    """2 r - (k + 1) over the k teams of ``subset`` (last axis), 0 outside: integers."""
    count = subset.sum(axis=-1, keepdims=True)
    return np.where(subset, np.rint(2.0 * np.where(subset, ranks, 0.0)) - (count + 1), 0.0)


def spearman_replicates(order: RankOrder, columns: Sequence[int] | None = None) -> np.ndarray:
    """Spearman's rho between every pair of ``columns`` (default: all) in every replicate,
    correctly rounded (:func:`scoring.engine.ranking.correlation`: rho of identical rankings is
    exactly 1).

    ``order`` sorts values of shape (replicates, columns, teams); the result (replicates, pairs)
    follows ``numpy.triu_indices(len(columns))``. Columns defined for every team take one matrix
    product of their centred doubled ranks; a pair with an undefined team is ranked again over
    the teams defined under both.
    """
    columns = np.arange(order.order.shape[1]) if columns is None else np.asarray(columns)
    defined = order.defined[:, columns]
    centred = _centred(order.average()[:, columns], defined)
    rows, cols = np.triu_indices(len(columns))
    out = _correlations(centred, (rows, cols))
    complete = defined.all(axis=(0, 2))
    for pair in np.flatnonzero(~(complete[rows] & complete[cols])):
        first, second = order.columns(columns[rows[pair]]), order.columns(columns[cols[pair]])
        both = first.defined & second.defined
        two = np.stack([_centred(part.within(both).average(), both) for part in (first, second)], axis=1)
        out[:, pair] = _correlations(two, (np.array([0]), np.array([1])))[:, 0]
    return out


def order_statistics(replicates: int, confidence: float | Fraction) -> tuple[int, int]:
    """The 1-based ranks of the order statistics that bound the central ``confidence`` interval
    of ``replicates`` values (Hyndman and Fan's type 1, numpy's ``inverted_cdf``): the
    ceil(B·a)-th and ceil(B·(1 - a))-th with a = (1 - confidence)/2, in exact arithmetic (a
    confidence is read as the decimal it is written as: 0.95 is 19/20), so that 1,000
    replicates give the 25th and the 975th."""
    level = Fraction(repr(confidence)) if isinstance(confidence, float) else Fraction(confidence)
    tail = (1 - level) / 2
    low = max(1, math.ceil(replicates * tail))
    high = max(1, math.ceil(replicates * (1 - tail)))
    return low, high


def percentile_interval(samples: np.ndarray, *, undefined: np.ndarray, confidence: float = CONFIDENCE) -> np.ndarray:
    """The central ``confidence`` percentile interval over axis 0 (:func:`order_statistics`):
    shape (*rest, 2); NaN where ``undefined`` (same shape as ``samples``) holds in any
    replicate."""
    low, high = order_statistics(len(samples), confidence)
    ordered = np.partition(samples, [low - 1, high - 1], axis=0)
    bounds = np.stack([ordered[low - 1], ordered[high - 1]], axis=-1).astype(np.float64)
    return np.where(undefined.any(axis=0)[..., None], np.nan, bounds)


def _by_column(samples: np.ndarray) -> list[np.ndarray]:
    """The (replicates, teams) slices of (replicates, columns, teams) samples."""
    return [samples[:, column] for column in range(samples.shape[1])]


@dataclass(frozen=True)
class Stability:
    """Bootstrap intervals of a board: per column and team, of the score and of the rank; per
    pair of heatmap columns, of rho. Intervals are (lo, hi) pairs, NaN where undefined."""

    replicates: int
    seed: int
    confidence: float
    columns: tuple[Column, ...]
    scores: np.ndarray
    """(columns, teams, 2) score intervals."""
    ranks: np.ndarray
    """(columns, teams, 2) rank intervals: [best, worst]."""
    heatmap: tuple[Column, ...]
    rho: np.ndarray
    """(heatmap, heatmap, 2) rho intervals, symmetric."""
    replicate_values: np.ndarray | None = field(default=None, repr=False, compare=False)
    """(replicates, columns, teams) every replicate's values, NaN where undefined."""
    replicate_ranks: np.ndarray | None = field(default=None, repr=False, compare=False)
    """(replicates, columns, teams) every replicate's competition ranks, 0 where undefined."""
    observed: np.ndarray | None = field(default=None, repr=False, compare=False)
    """(columns, teams) the values on the full test set (each item once), NaN where undefined:
    the board's values."""
    behind: tuple[BehindLeader, ...] = field(default=(), repr=False, compare=False)
    """Per column, the comparisons with its leader (:mod:`scoring.engine.significance`)."""

    def behind_leader(self, column: Column) -> BehindLeader:
        """The column's leader, and each team's difference to it and adjusted p-value."""
        return self.behind[self.index(column)]

    def index(self, column: Column) -> int:
        return self.columns.index(column)

    def aggregate_intervals(self, aggregate: Aggregate) -> tuple[np.ndarray, np.ndarray]:
        """The overall ranking's intervals from the same replicates (rules in
        :mod:`scoring.engine.aggregate`): its value in every replicate from the replicate's
        competition ranks under the aggregate's columns, its rank among the teams in that
        replicate; (teams, 2) value intervals and (teams, 2) rank intervals [best, worst], NaN
        where undefined."""
        ranks = self.replicate_ranks[:, [self.index(column) for column in aggregate.columns]]
        values = of_ranks(aggregate, ranks)
        overall = RankOrder.of(values, aggregate.direction).competition()
        return (
            percentile_interval(values, undefined=np.isnan(values), confidence=self.confidence),
            percentile_interval(overall, undefined=overall == 0, confidence=self.confidence),
        )

    def tied_with_leader(self, column: Column) -> list[int]:
        """The teams (indexes) whose rank interval includes 1 (see the module's rules)."""
        best = self.ranks[self.index(column), :, 0]
        return [int(team) for team in np.flatnonzero(best == 1)]

    def groups(self, column: Column) -> list[list[int]]:
        """Teams (indexes) that cannot be told apart: connected components of overlapping rank
        intervals, by best rank; teams with an undefined rank interval are in no group."""
        intervals = self.ranks[self.index(column)]
        ranked = [t for t in range(len(intervals)) if not np.isnan(intervals[t, 0])]
        ranked.sort(key=lambda t: (intervals[t, 0], intervals[t, 1], t))
        groups: list[list[int]] = []
        reach = -np.inf
        for team in ranked:
            if not groups or intervals[team, 0] > reach:
                groups.append([])
            groups[-1].append(team)
            reach = max(reach, intervals[team, 1])
        return groups


def _unfinished(jobs: list[Future]) -> list[Future]:
    """The jobs still running; a finished one's error is raised here."""
    finished = [job for job in jobs if job.done()]
    for job in finished:
        job.result()
    return [job for job in jobs if job not in finished]


def bootstrap(
    gold: np.ndarray,
    predicted: Sequence[np.ndarray],
    *,
    labels: Sequence[str],
    replicates: int,
    seed: int,
    confidence: float = CONFIDENCE,
    columns: Sequence[Column] | None = None,
    heatmap: Sequence[Column] | None = None,
) -> Stability:
    """Paired bootstrap intervals of every ranking column (default: raw and calibrated, as the
    board ranks them) and of rho between every pair of ``heatmap`` columns (default: the site's
    heatmap). ``gold`` holds gold codes; ``predicted`` one entry per team, codes or probability
    rows aligned to ``gold``."""
    if replicates < 1:
        raise ValueError("the bootstrap needs at least one replicate")
    labels = list(labels)
    columns = tuple(ranking_columns(labels, calibrated=None) if columns is None else columns)
    heatmap = tuple(paired_columns(labels) if heatmap is None else heatmap)
    heatmap_index = [columns.index(column) for column in heatmap]
    column_signs = signs([column.direction for column in columns])[:, np.newaxis]
    source = ReplicateMatrices(gold, predicted, n_classes=len(labels))
    rng = np.random.default_rng(seed)
    n_teams = len(predicted)
    values = np.empty((replicates, len(columns), n_teams))
    ranks = np.empty((replicates, len(columns), n_teams), dtype=np.int16 if n_teams < 2**15 else np.int32)
    rho = np.empty((replicates, len(heatmap) * (len(heatmap) + 1) // 2))
    observed = np.empty((len(columns), n_teams))

    def evaluate(start: int, weights: np.ndarray) -> None:
        """A block's values, ranks and rhos into their rows; the first block's weights begin
        with the full test set (each item once), whose values are the observed ones."""
        block = np.moveaxis(column_values(source.of_weights(weights), columns, labels), 0, 1)
        if start == 0:
            observed[:], block = block[0], block[1:]
        order = RankOrder.of(block, column_signs)
        values[start : start + len(block)] = block
        ranks[start : start + len(block)] = order.competition()
        rho[start : start + len(block)] = spearman_replicates(order, heatmap_index)

    # The weights are drawn in block order from one stream (the draws are the rules'); the
    # blocks are evaluated on the other cores meanwhile, each into its own rows (numpy leaves
    # the interpreter lock while it computes), so the numbers are those of one thread.
    cores = 2
    with ThreadPoolExecutor(max_workers=cores) as pool:
        pending: list[Future] = []
        for start in range(0, replicates, BLOCK_SIZE):
            weights = source.weights(rng, min(start + BLOCK_SIZE, replicates) - start)
            if start == 0:
                weights = np.concatenate([np.ones((1, source.n_items), dtype=source.dtype), weights])
            while len(pending) >= cores:  # at most a block in flight per core: bounded memory
                wait(pending, return_when=FIRST_COMPLETED)
                pending = _unfinished(pending)
            pending.append(pool.submit(evaluate, start, weights))
        wait(pending)
        _unfinished(pending)
    # One column (or a few pairs) at a time, so that the quantiles copy a slice, not the whole.
    score_intervals = np.stack(
        [percentile_interval(v, undefined=np.isnan(v), confidence=confidence) for v in _by_column(values)]
    )
    rank_intervals = np.stack(
        [percentile_interval(r, undefined=r == 0, confidence=confidence) for r in _by_column(ranks)]
    )
    pair_intervals = np.concatenate(
        [percentile_interval(r, undefined=np.isnan(r), confidence=confidence) for r in np.array_split(rho, 32, axis=1)]
    )
    rows, cols = np.triu_indices(len(heatmap))
    rho_intervals = np.empty((len(heatmap), len(heatmap), 2))
    rho_intervals[rows, cols] = pair_intervals
    rho_intervals[cols, rows] = pair_intervals
    bounds = order_statistics(replicates, confidence)
    behind = tuple(
        behind_leader(observed[c], values[:, c], direction=column.direction, bounds=bounds)
        for c, column in enumerate(columns)
    )
    return Stability(
        replicates=replicates,
        seed=seed,
        confidence=confidence,
        columns=columns,
        scores=score_intervals,
        ranks=rank_intervals,
        heatmap=heatmap,
        rho=rho_intervals,
        replicate_values=values,
        replicate_ranks=ranks,
        observed=observed,
        behind=behind,
    )


def behind_leader(
    observed: np.ndarray,
    replicates: np.ndarray,
    *,
    direction: Direction,
    bounds: tuple[int, int],
) -> BehindLeader:
    """One column's :class:`BehindLeader` (the method of the module docstring): ``observed``
    the teams' values on the full test set (NaN where undefined), ``replicates`` their values
    in every replicate (replicates × teams), ``bounds`` the 1-based order statistics of the
    interval (:func:`scoring.engine.bootstrap.order_statistics`)."""
    count, teams = replicates.shape
    difference = np.full((teams, 2), np.nan)
    p_holm = np.full(teams, np.nan)
    ranks = competition_ranks([None if np.isnan(v) else float(v) for v in observed], direction)
    leader = next((t for t, rank in enumerate(ranks) if rank == 1), None)
    if leader is None:
        return BehindLeader(leader=None, difference=difference, p_holm=p_holm)
    by_team = np.ascontiguousarray(goodness(replicates, direction).T)  # teams × replicates, one row each
    d = by_team[leader] - by_team  # the leader's row is 0
    defined = ~np.isnan(d).any(axis=1)
    defined[leader] = False
    if defined.any():
        low, high = bounds
        d = d[defined]
        difference[defined] = np.partition(d, [low - 1, high - 1], axis=1)[:, [low - 1, high - 1]]
        not_better = np.count_nonzero(d <= 0, axis=1)
        adjusted = holm_step_down((1 + not_better).astype(np.int64), 1 + count)
        p_holm[defined] = adjusted / (1 + count)  # exact integers, divided once
    return BehindLeader(leader=leader, difference=difference, p_holm=p_holm)


# --- the stored result and the CLI's JSON, as they were built -----------------------------------


def interval_json(bounds: np.ndarray, *, integral: bool = False) -> list[float] | list[int] | None:
    if np.isnan(bounds).any():
        return None
    return [int(b) for b in bounds] if integral else [float(b) for b in bounds]


def behind_leader_json(behind: BehindLeader, teams: Sequence[str]) -> dict:
    return {
        team: {
            "difference": interval_json(behind.difference[t]),
            "p_holm": None if np.isnan(behind.p_holm[t]) else float(behind.p_holm[t]),
        }
        for t, team in enumerate(teams)
        if t != behind.leader
    }


def stability_json(stability: Stability, teams: Sequence[str], raw: Sequence[Column]) -> dict:
    def sections(of_column) -> dict:
        return {
            "raw": {column.id: of_column(column) for column in raw},
            "calibrated": {column.id: of_column(column.counterpart()) for column in raw},
        }

    def intervals(column: Column) -> dict:
        index = stability.index(column)
        return {
            team: {
                "score": interval_json(stability.scores[index, t]),
                "rank": interval_json(stability.ranks[index, t], integral=True),
            }
            for t, team in enumerate(teams)
        }

    return {
        "bootstrap": {
            "replicates": stability.replicates,
            "seed": stability.seed,
            "confidence": stability.confidence,
            "percentile_method": "inverted_cdf",
            "block_size": BLOCK_SIZE,
        },
        "intervals": sections(intervals),
        "tied_with_leader": sections(lambda c: [teams[t] for t in stability.tied_with_leader(c)]),
        "indistinguishable": sections(lambda c: [[teams[t] for t in g] for g in stability.groups(c)]),
        "behind_leader": sections(lambda c: behind_leader_json(stability.behind_leader(c), teams)),
        "spearman_intervals": [[interval_json(cell) for cell in row] for row in stability.rho],
    }


def stability_result(
    *,
    gold: np.ndarray,
    labels: Sequence[str],
    teams: dict[int, str],
    items: dict[int, np.ndarray],
    replicates: int,
    seed: int,
    keep: np.ndarray | None = None,
    ordinal: bool = False,
    primary: str = "macro_f1",
) -> dict:
    """The result the site stored for a phase (``leaderboard.stability.stability_result``),
    before ``skipped`` was added."""
    labels = list(labels)
    heatmap = paired_columns(labels, ordinal=ordinal)
    team_ids = [str(team) for team in items]
    gold_codes = gold if keep is None else gold[keep]
    result = {
        "teams": {str(team): name for team, name in teams.items()},
        "n_items": len(gold_codes),
        "spearman_columns": [column.id for column in heatmap],
        "columns": [column.id for column in ranking_columns(labels, calibrated=False, ordinal=ordinal)],
    }
    if not items:
        return result
    stability = bootstrap(
        gold_codes,
        [found if keep is None else found[keep] for found in items.values()],
        labels=labels,
        replicates=replicates,
        seed=seed,
        columns=ranking_columns(labels, calibrated=None, ordinal=ordinal),
        heatmap=heatmap,
    )
    raw = ranking_columns(labels, calibrated=False, ordinal=ordinal)
    overall: dict[str, dict] = {}
    for method in METHODS:
        for name, columns in column_sets(labels, primary=primary, ordinal=ordinal).items():
            values, ranks = stability.aggregate_intervals(Aggregate(method, tuple(columns)))
            overall.setdefault(method, {})[name] = {
                team: {"value": interval_json(values[t]), "rank": interval_json(ranks[t], integral=True)}
                for t, team in enumerate(team_ids)
            }
    return {**result, **stability_json(stability, team_ids, raw), "aggregate_intervals": overall}
