"""Ranks with ties, rank correlations between metrics, and the teams that swap places.

Conventions (contract): rank 1 is always the best. Every metric has a :class:`Direction`
(the registry's ``direction``): the suite's scores are higher-is-better, error measures (the
MAE of ordinal tasks) and mean ranks lower-is-better. Display ranks are competition ranks
(1, 2, 2, 4); rank correlations use average ranks for ties. An undefined value (``None``)
never ranks: it gets no rank, sorts last, and is left out of every correlation that involves
its metric (each correlation reports how many teams it rests on).

Direction (one rule, :func:`goodness`): every function here that orders values takes the
direction of each metric it orders (higher-is-better when not given) and orders the values
turned so that higher is better: as they are, or negated. A negation is exact for doubles, so
it keeps every tie and every strict order; nothing else in the engine reads a direction to
order values. Rank correlations therefore compare who is *better* under each metric, not raw
values: Spearman's rho between an error and a score that agree on every team is +1.

Ties (contract, "equal is equal"): two teams tie under a metric exactly when their values are
equal as exact fractions, raw and calibrated. The rule is kept where the values are made, not
here: the suite stores canonical values (:mod:`scoring.engine.exact`), computed in exact
rational arithmetic from the confusion matrix (integer counts, or float masses read as the
exact binary fractions they are) and rounded once; an irrational metric (MCC, DP, GmacR) is a
fixed, monotone float function of one exact quantity. Equal exact values are therefore the
very same double, whatever order the classes or the operations come in, so every function
here compares floats with ``==`` and ``<`` and **no tolerance**: a tolerance would make ties
intransitive (a ~ b, b ~ c, a !~ c) and merge values that genuinely differ. Two values that
differ only below half an ulp, which exact arithmetic cannot tell apart after rounding, are the
one accepted loss. The board, the exports, the rank chart and every Spearman rho all rank
through this module, so they all see the same ties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from scoring.engine.canonical import rounded, rounded_of_integers
from scoring.engine.exact import EXACT, Q
from scoring.engine.metrics import Value


class Direction(Enum):
    """Which values of a metric are better; its value is the sign that turns them into
    higher-is-better values (:func:`goodness`)."""

    HIGHER = 1.0
    LOWER = -1.0

    @property
    def higher_is_better(self) -> bool:
        return self is Direction.HIGHER


HIGHER, LOWER = Direction.HIGHER, Direction.LOWER


def signs(directions: Sequence[Direction]) -> np.ndarray:
    """One sign per metric (+1 higher-is-better, -1 lower-is-better), for :func:`goodness` of a
    stack of metrics: broadcast it along the metrics' axis."""
    return np.array([direction.value for direction in directions], dtype=np.float64)


def goodness(values: np.ndarray | Sequence[float], direction: Direction | np.ndarray = HIGHER) -> np.ndarray:
    """The one rule of direction: ``values`` (doubles, NaN where undefined) turned so that a
    higher value is a better one, the values as they are for a higher-is-better metric and
    negated for a lower-is-better one (``direction`` a :class:`Direction`, or :func:`signs`
    broadcast against ``values``). A negation is exact, so equal values stay equal and no order
    between two values is lost."""
    sign = direction.value if isinstance(direction, Direction) else direction
    return np.asarray(values, dtype=np.float64) * sign


def _oriented(values: Sequence[Value], direction: Direction) -> list[Value]:
    """Values as :func:`goodness` turns them, ``None`` kept."""
    return [None if value is None else value * direction.value for value in values]


def sort_key(value: Value, direction: Direction = HIGHER) -> tuple[bool, float]:
    """Key that sorts better values first (higher ones, or lower ones of a lower-is-better
    metric) and undefined values last."""
    return (value is None, -value * direction.value if value is not None else 0.0)


def name_places(names: Sequence[str]) -> np.ndarray:
    """Each name's place among ``names`` in alphabetical order, case-insensitive (equal names in
    their given order): the tie-breaker of a board's order, for :func:`numpy.lexsort`."""
    order = np.argsort(np.array([name.lower() for name in names], dtype=object), kind="stable")
    places = np.empty(len(order), dtype=np.int64)
    places[order] = np.arange(len(order))
    return places


def competition_ranks(values: Sequence[Value], direction: Direction = HIGHER) -> list[int | None]:
    """Competition ranks, best = 1 (the highest value, or the lowest of a lower-is-better
    metric), ties share the better rank (1, 2, 2, 4); None stays None."""
    defined = goodness([v for v in values if v is not None], direction)
    ranks = _rankdata(-defined, method="min").astype(int) if defined.size else []
    it = iter(ranks)
    return [int(next(it)) if v is not None else None for v in values]


def rank_among(values: Sequence[Value], value: Value, direction: Direction = HIGHER) -> int | None:
    """The competition rank ``value`` would take among ``values`` without taking a place from
    any of them: 1 + how many defined values are strictly better (an equal value ties); ``None``
    for an undefined ``value``. How a row that is never ranked (an ensemble of the teams)
    compares with the ranked ones."""
    if value is None:
        return None
    mine = value * direction.value
    return 1 + sum(1 for other in _oriented(values, direction) if other is not None and other > mine)


def competition_rank_matrix(values: np.ndarray, directions: Sequence[Direction] | None = None) -> np.ndarray:
    """Competition ranks (1, 2, 2, 4; best = 1 by each column's direction, higher-is-better
    when ``directions`` is not given) of every column of ``values`` (teams × columns) at once,
    0 where a value is undefined (NaN). Equal doubles tie, as :func:`competition_ranks` ranks
    them."""
    if directions is not None:
        values = goodness(values, signs(directions)[np.newaxis, :])
    # Each column sorted best first (NaN last): a value's rank is 1 + the place of the first
    # value equal to it. One sort of all columns at once, each a contiguous row.
    worst_first = np.ascontiguousarray(-np.asarray(values, dtype=np.float64).T)
    order = np.argsort(worst_first, axis=1)
    ordered = np.take_along_axis(worst_first, order, axis=1)
    first_equal = np.zeros(ordered.shape, dtype=np.int32)
    places = np.arange(1, ordered.shape[1], dtype=np.int32)
    first_equal[:, 1:] = np.where(ordered[:, 1:] != ordered[:, :-1], places, 0)
    np.maximum.accumulate(first_equal, axis=1, out=first_equal)
    ranks = np.empty(ordered.shape, dtype=np.int32)
    np.put_along_axis(ranks, order, first_equal + 1, axis=1)
    ranks[np.isnan(worst_first)] = 0
    return ranks.T


def average_ranks(values: Sequence[float], direction: Direction = HIGHER) -> np.ndarray:
    """Average ranks (ties share the mean of their positions), best = 1 by ``direction``."""
    return _rankdata(-goodness(values, direction), method="average")


def _rankdata(values: np.ndarray, *, method: str) -> np.ndarray:
    """Ranks from 1 for the smallest of ``values`` (none NaN), as ``scipy.stats.rankdata`` gives
    them: equal values take the lowest of their positions (``"min"``) or their mean
    (``"average"``). One sort and the runs of equal values in it, with numpy alone: scipy.stats
    took 0.6 s to import, which a command line that ranks, or the first page of a process,
    waited for."""
    order = np.argsort(values)
    ordered = values[order]
    first = np.empty(len(values), dtype=bool)  # where each run of equal values starts
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    run = np.cumsum(first) - 1
    last = np.append(starts[1:], len(values))  # a run's positions: start + 1 to the next start
    found = (starts + 1)[run] if method == "min" else ((starts + 1 + last) / 2)[run]
    ranks = np.empty(len(values), dtype=found.dtype)
    ranks[order] = found
    return ranks


def correlation(xp, covariance, variance_x, variance_y):
    """Pearson's r = cov / sqrt(var_x var_y), undefined when a variance is 0: Spearman's rho when
    x and y are ranks. Written once for the board and for the bootstrap's replicates; given
    the doubled centred ranks (integers), the rounding is the one of the exact value, so rho of
    two identical rankings is exactly 1."""
    return xp.ratio_or_undefined(covariance, xp.sqrt(variance_x * variance_y))


def centred_doubled_ranks(ranks: np.ndarray) -> np.ndarray:
    """2 r - (k + 1) for k average ranks r: integers (average ranks are halves) summing to 0."""
    return np.rint(2.0 * ranks).astype(np.int64) - (len(ranks) + 1)


@dataclass(frozen=True)
class Correlation:
    """Spearman's rho between two rankings and the number of teams it rests on."""

    rho: float | None
    n_teams: int


def spearman(
    a: Sequence[Value] | np.ndarray,
    b: Sequence[Value] | np.ndarray,
    *,
    directions: tuple[Direction, Direction] = (HIGHER, HIGHER),
) -> Correlation:
    """Spearman's rho over the teams defined under both metrics (average ranks for ties), each
    metric ranked best first by its direction: rho is +1 when the two agree on who is better,
    whether each is a score or an error. Undefined values are ``None`` (or NaN in an array).

    ``rho`` is ``None`` when fewer than two teams remain or one ranking is all ties.
    """
    a, b = as_array(a), as_array(b)
    both = ~np.isnan(a) & ~np.isnan(b)
    n = int(both.sum())
    if n < 2:
        return Correlation(rho=None, n_teams=n)
    da = centred_doubled_ranks(average_ranks(a[both], directions[0]))
    db = centred_doubled_ranks(average_ranks(b[both], directions[1]))
    # Exact in int64: |d| < n, so each sum is below n**3 (n under two million teams).
    terms = [Q(int(np.dot(u, v))) for u, v in ((da, db), (da, da), (db, db))]
    return Correlation(rho=rounded(correlation(EXACT, *terms)), n_teams=n)


def as_array(values: Sequence[Value] | np.ndarray) -> np.ndarray:
    """Values as doubles, NaN where undefined."""
    if isinstance(values, np.ndarray):
        return values.astype(np.float64, copy=False)
    return np.array([np.nan if value is None else value for value in values], dtype=np.float64)


def spearman_matrix(
    columns: Mapping[str, Sequence[Value]], *, directions: Mapping[str, Direction] | None = None
) -> dict[str, dict[str, Correlation]]:
    """Spearman's rho for every pair of metrics; ``columns`` maps a metric to its team values,
    ``directions`` a metric to its direction (higher-is-better when absent): each ranked best
    first, as :func:`spearman` ranks them.

    Columns defined for the same teams (most of a board's) are ranked once each and their rhos
    come from one product of their doubled centred ranks (integers, exact in doubles below
    2**53), each correctly rounded as :func:`spearman` rounds it; a pair of columns defined for
    different teams is ranked on the teams they share, pair by pair."""
    keys = list(columns)
    directions = directions or {}
    arrays = {key: goodness(as_array(columns[key]), directions.get(key, HIGHER)) for key in keys}  # best = highest
    groups: dict[bytes, list[str]] = {}
    for key in keys:
        groups.setdefault(np.isnan(arrays[key]).tobytes(), []).append(key)
    out: dict[str, dict[str, Correlation]] = {key: {} for key in keys}
    for mask, members in groups.items():
        defined = ~np.frombuffer(mask, dtype=bool)
        n = int(defined.sum())
        if n < 2 or n**3 >= 2**53:
            for i, first in enumerate(members):
                for second in members[i:]:
                    out[first][second] = out[second][first] = spearman(arrays[first], arrays[second])
            continue
        centred = np.stack([centred_doubled_ranks(average_ranks(arrays[key][defined])) for key in members])
        doubles = centred.astype(np.float64)
        gram = np.rint(doubles @ doubles.T).astype(np.int64)
        variance = np.diag(gram)
        rows, columns_ = np.broadcast_to(variance[:, None], gram.shape), np.broadcast_to(variance, gram.shape)
        rho = rounded_of_integers(correlation, gram, rows, columns_)
        for i, first in enumerate(members):
            for j, second in enumerate(members):
                found = None if np.isnan(rho[i, j]) else float(rho[i, j])
                out[first][second] = Correlation(rho=found, n_teams=n)
    for i, first in enumerate(keys):
        for second in keys[i + 1 :]:
            if second not in out[first]:
                out[first][second] = out[second][first] = spearman(arrays[first], arrays[second])
    return out


@dataclass(frozen=True)
class RankChange:
    """One team's rank under two metrics; ``shift`` > 0 means it climbs under the second."""

    team: str
    rank_a: int | None
    rank_b: int | None

    @property
    def shift(self) -> int | None:
        if self.rank_a is None or self.rank_b is None:
            return None
        return self.rank_a - self.rank_b


def rank_changes(
    teams: Sequence[str],
    a: Sequence[Value],
    b: Sequence[Value],
    *,
    directions: tuple[Direction, Direction] = (HIGHER, HIGHER),
) -> list[RankChange]:
    """Each team's competition rank under metric a and metric b (each by its direction),
    largest moves first."""
    ranks_a, ranks_b = competition_ranks(a, directions[0]), competition_ranks(b, directions[1])
    changes = [
        RankChange(team=team, rank_a=ra, rank_b=rb) for team, ra, rb in zip(teams, ranks_a, ranks_b, strict=True)
    ]
    return sorted(changes, key=largest_first)


def largest_first(change: RankChange) -> tuple:
    """The order of rank changes: the largest moves first, then by the first rank; a team
    undefined under either metric last."""
    return (change.shift is None, -abs(change.shift or 0), change.rank_a or 0)


def swapped_pairs(
    teams: Sequence[str],
    a: Sequence[Value],
    b: Sequence[Value],
    *,
    directions: tuple[Direction, Direction] = (HIGHER, HIGHER),
) -> list[tuple[str, str]]:
    """Pairs (x, y) where x is strictly ahead of y under metric a and strictly behind under b
    (ahead: better by the metric's direction).

    Teams undefined under either metric take part in no swap.
    """
    a, b = _oriented(a, directions[0]), _oriented(b, directions[1])
    rows = [(t, x, y) for t, x, y in zip(teams, a, b, strict=True) if x is not None and y is not None]
    return [(tx, ty) for tx, ax, bx in rows for ty, ay, by in rows if ax > ay and bx < by]


def swapped_pair_count(
    a: Sequence[Value], b: Sequence[Value], *, directions: tuple[Direction, Direction] = (HIGHER, HIGHER)
) -> int:
    """How many pairs :func:`swapped_pairs` lists, counted in O(n log n) (a board of thousands
    of teams has millions of pairs): teams taken from the best under a, each counts the teams
    strictly ahead of it under a that are strictly behind it under b."""
    a, b = _oriented(a, directions[0]), _oriented(b, directions[1])
    rows = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if len(rows) < 2:
        return 0
    levels = {value: place for place, value in enumerate(sorted({y for _, y in rows}), start=1)}
    tree = [0] * (len(levels) + 1)

    def below(place: int) -> int:
        """How many teams inserted so far have a b-level under ``place``."""
        total, place = 0, place - 1
        while place > 0:
            total, place = total + tree[place], place - (place & -place)
        return total

    count, index = 0, 0
    ordered = sorted(rows, key=lambda row: -row[0])
    while index < len(ordered):
        group_end = index
        while group_end < len(ordered) and ordered[group_end][0] == ordered[index][0]:
            group_end += 1
        group = ordered[index:group_end]
        for _, y in group:
            count += below(levels[y])
        for _, y in group:
            place = levels[y]
            while place < len(tree):
                tree[place] += 1
                place += place & -place
        index = group_end
    return count
