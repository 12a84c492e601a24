"""Ranks with ties, rank correlations between metrics, and the teams that swap places.

Conventions (contract): every suite metric is higher-is-better; display ranks are competition
ranks (1, 2, 2, 4); rank correlations use average ranks for ties. An undefined value (``None``)
never ranks: it gets no rank, sorts last, and is left out of every correlation that involves
its metric (each correlation reports how many teams it rests on).

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

import numpy as np

from scoring.engine.canonical import rounded, rounded_of_integers
from scoring.engine.exact import EXACT, Q
from scoring.engine.metrics import Value


def sort_key(value: Value) -> tuple[bool, float]:
    """Key that sorts higher values first and undefined values last."""
    return (value is None, -value if value is not None else 0.0)


def competition_ranks(values: Sequence[Value]) -> list[int | None]:
    """Competition ranks, best = 1, ties share the better rank (1, 2, 2, 4); None stays None."""
    defined = np.array([v for v in values if v is not None], dtype=np.float64)
    ranks = _rankdata(-defined, method="min").astype(int) if defined.size else []
    it = iter(ranks)
    return [int(next(it)) if v is not None else None for v in values]


def competition_rank_matrix(values: np.ndarray) -> np.ndarray:
    """Competition ranks (1, 2, 2, 4; best = highest) of every column of ``values`` at once,
    0 where a value is undefined (NaN). Equal doubles tie, as :func:`ranking.competition_ranks`
    ranks them."""
    ranks = np.zeros(values.shape, dtype=np.int32)
    for j in range(values.shape[1]):
        column = values[:, j]
        defined = ~np.isnan(column)
        ascending = np.sort(column[defined])
        ranks[defined, j] = len(ascending) - np.searchsorted(ascending, column[defined], side="right") + 1
    return ranks


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """Average ranks (ties share the mean of their positions), best = 1."""
    return _rankdata(-np.asarray(values, dtype=np.float64), method="average")


def _rankdata(values: np.ndarray, *, method: str) -> np.ndarray:
    """``scipy.stats.rankdata``, imported when first needed: scipy.stats takes about 0.6 s to
    import, a tenth of the command line's whole run on ten million lines, and scoring one file
    ranks nothing."""
    from scipy.stats import rankdata

    return rankdata(values, method=method)


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


def spearman(a: Sequence[Value] | np.ndarray, b: Sequence[Value] | np.ndarray) -> Correlation:
    """Spearman's rho over the teams defined under both metrics (average ranks for ties);
    undefined values are ``None`` (or NaN in an array).

    ``rho`` is ``None`` when fewer than two teams remain or one ranking is all ties.
    """
    a, b = as_array(a), as_array(b)
    both = ~np.isnan(a) & ~np.isnan(b)
    n = int(both.sum())
    if n < 2:
        return Correlation(rho=None, n_teams=n)
    da = centred_doubled_ranks(average_ranks(a[both]))
    db = centred_doubled_ranks(average_ranks(b[both]))
    # Exact in int64: |d| < n, so each sum is below n**3 (n under two million teams).
    terms = [Q(int(np.dot(u, v))) for u, v in ((da, db), (da, da), (db, db))]
    return Correlation(rho=rounded(correlation(EXACT, *terms)), n_teams=n)


def as_array(values: Sequence[Value] | np.ndarray) -> np.ndarray:
    """Values as doubles, NaN where undefined."""
    if isinstance(values, np.ndarray):
        return values.astype(np.float64, copy=False)
    return np.array([np.nan if value is None else value for value in values], dtype=np.float64)


def spearman_matrix(columns: Mapping[str, Sequence[Value]]) -> dict[str, dict[str, Correlation]]:
    """Spearman's rho for every pair of metrics; ``columns`` maps a metric to its team values.

    Columns defined for the same teams (most of a board's) are ranked once each and their rhos
    come from one product of their doubled centred ranks (integers, exact in doubles below
    2**53), each correctly rounded as :func:`spearman` rounds it; a pair of columns defined for
    different teams is ranked on the teams they share, pair by pair."""
    keys = list(columns)
    arrays = {key: as_array(columns[key]) for key in keys}
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


def rank_changes(teams: Sequence[str], a: Sequence[Value], b: Sequence[Value]) -> list[RankChange]:
    """Each team's competition rank under metric a and metric b, largest moves first."""
    changes = [
        RankChange(team=team, rank_a=ra, rank_b=rb)
        for team, ra, rb in zip(teams, competition_ranks(a), competition_ranks(b), strict=True)
    ]
    return sorted(changes, key=largest_first)


def largest_first(change: RankChange) -> tuple:
    """The order of rank changes: the largest moves first, then by the first rank; a team
    undefined under either metric last."""
    return (change.shift is None, -abs(change.shift or 0), change.rank_a or 0)


def swapped_pairs(teams: Sequence[str], a: Sequence[Value], b: Sequence[Value]) -> list[tuple[str, str]]:
    """Pairs (x, y) where x is strictly ahead of y under metric a and strictly behind under b.

    Teams undefined under either metric take part in no swap.
    """
    rows = [(t, x, y) for t, x, y in zip(teams, a, b, strict=True) if x is not None and y is not None]
    return [(tx, ty) for tx, ax, bx in rows for ty, ay, by in rows if ax > ay and bx < by]


def swapped_pair_count(a: Sequence[Value], b: Sequence[Value]) -> int:
    """How many pairs :func:`swapped_pairs` lists, counted in O(n log n) (a board of thousands
    of teams has millions of pairs): teams taken in decreasing order under a, each counts the
    teams strictly ahead of it under a that are strictly behind it under b."""
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
