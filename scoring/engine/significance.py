"""Who is really behind the leader: paired bootstrap differences to each column's leader, their
intervals, and one-sided p-values with Holm's correction across the teams of a column.

The method, per board column (raw or calibrated), on the replicates of
:func:`scoring.engine.bootstrap.bootstrap` (every team scored on the same resampled test sets):

* **The leader** is the team ranked 1 on the full test set (the board's rank). When several
  teams tie for first, the leader is the first of them in the board's team order (the order
  of the CLI's arguments, of the site's board); the others are tested against it like every
  team: their observed difference is 0, and they come out not significantly behind unless
  nearly every replicate puts the leader ahead. A column without any defined value has no
  leader.
* **The difference** of team t in replicate r is d_r = value(leader, r) − value(t, r), oriented
  by the column's direction (:func:`scoring.engine.ranking.goodness`) so that d_r > 0 when the
  leader is better: for an error measure it is value(t, r) − value(leader, r). It is the
  difference of the two values as the replicate reports them (each the double nearest to its
  exact value), rounded once (one subtraction of doubles, correctly rounded), so its sign is
  exactly the replicate's comparison of the two (d_r = 0 exactly when they tie there). Being
  a difference of rounded values, it may be an ulp away from the double nearest to the
  difference of the exact values; no decision depends on that, since only its sign is tested.
* **Its interval** is the percentile interval of the d_r, the same order statistics as every
  score interval (:func:`scoring.engine.bootstrap.order_statistics`). It is the team's own
  interval, not adjusted for the other teams: an interval above 0 with an adjusted p-value
  above the level is a team that would be behind on its own, but not once every team of the
  column is tested.
* **The p-value** of "t is not behind the leader" is the share of replicates in which the
  leader is not better, with the Monte Carlo correction of Davison & Hinkley (1997, Ch. 4):
  p = (1 + #{r : d_r <= 0}) / (1 + B). It is never 0, and a test that rejects at p <= α keeps its
  level α for the bootstrap distribution. This is the paired bootstrap's reading of Koehn
  (2004): the leader is significantly better when it is better in nearly every resampled test
  set.
* **Holm's step-down** (Holm 1979) adjusts the p-values of the teams of one column (every team
  but the leader with a defined p-value): sorted p_(1) <= ... <= p_(m), the adjusted value is
  p~_(i) = min(1, max_{j <= i} (m − j + 1) p_(j)). A team is significantly behind at level α when
  p~ <= α; "not significantly behind the leader" is p~ > α.
* **Undefined.** A team's difference is undefined in a replicate where its value or the
  leader's is; its interval and p-value are then undefined (``None``) if that happens in any
  replicate (the rule of every bootstrap interval), and it is left out of the Holm family.

Exactness: p-values are ratios of integers, and Holm's adjustment is done on the integer
numerators over the common denominator 1 + B, then divided once: each stored p-value is the
double nearest to its exact value, and equal p-values are the same double.

Assumptions, and what the numbers do not say:

* **Items are independent.** The bootstrap resamples items as independent draws from the
  population the test set stands for. Items that depend on each other (several tweets of one
  thread or one user, near-duplicates, one annotator's batch) make intervals too narrow and
  p-values too small; such a test set needs a bootstrap of its clusters instead.
* **Paired.** Every team is scored on the same resampled items, so the correlation between the
  teams' errors (the same hard items trip both) is kept: the spread of the difference is that
  of the difference, usually much smaller than the spreads of the two scores together.
* **The bootstrap distribution is not a null distribution.** It is centred at the observed
  difference, and the p-value reads how often resampling reverses it; it approximates a test
  well when the difference's distribution is roughly symmetric and the test set large.
* **What Holm controls.** For each column separately, the family-wise error rate: the
  probability of calling at least one team significantly behind the leader when it is not, at
  most α, whatever the dependence between the teams' p-values (all of them are against the
  same leader on the same replicates). Nothing is controlled across columns (each column is its
  own family), and the leader is chosen from the data: "t is significantly behind the leader"
  is a statement about t and that team, not a proof that the leader is the best.

Sources: Koehn, *Statistical Significance Tests for Machine Translation Evaluation* (EMNLP
2004), the paired bootstrap; Davison & Hinkley, *Bootstrap Methods and their Application*
(1997), the (1 + count)/(1 + B) p-value; Holm, *A Simple Sequentially Rejective Multiple Test
Procedure* (Scandinavian Journal of Statistics, 1979), the step-down (references ``@koehn-2004``,
``@davison-hinkley-1997``, ``@holm-1979`` of :mod:`scoring.engine.references`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from scoring.engine.ranking import Direction, goodness

LEVEL = 0.05
"""The level at which a team is called significantly behind the leader (adjusted p <= LEVEL)."""


def holm_step_down(numerators: np.ndarray, denominator: int) -> np.ndarray:
    """Holm's adjusted p-values of the p-values ``numerators / denominator`` (1-d), as numerators
    over the same denominator: sorted ascending, p~_(i) = min(1, max_{j <= i} (m − j + 1) p_(j)).
    Integer arithmetic throughout (Python ints for an object array), so ties stay ties."""
    numerators = np.asarray(numerators)
    m = len(numerators)
    order = np.argsort(numerators, kind="stable")
    multipliers = np.arange(m, 0, -1).astype(numerators.dtype)  # m - j + 1 for j = 1, ..., m
    scaled = numerators[order] * multipliers
    adjusted = np.minimum(np.maximum.accumulate(scaled), denominator) if m else scaled
    out = np.empty_like(numerators)
    out[order] = adjusted
    return out


def holm(p_values: Sequence[Fraction | int]) -> list[Fraction]:
    """Holm's adjusted p-values of exact p-values (Holm 1979), exact."""
    exact = [Fraction(p) for p in p_values]
    common = math.lcm(*(p.denominator for p in exact))
    numerators = np.array([p.numerator * (common // p.denominator) for p in exact], dtype=object)
    return [Fraction(int(n), int(common)) for n in holm_step_down(numerators, common)]


@dataclass(frozen=True)
class BehindLeader:
    """One column's comparisons with its leader: ``leader`` the leader's index (``None``
    without one); per team, ``difference`` the (lo, hi) interval of d = leader − team (NaN for
    the leader and where undefined) and ``p_holm`` the adjusted p-value (NaN likewise)."""

    leader: int | None
    difference: np.ndarray
    p_holm: np.ndarray

    def not_significantly_behind(self, level: float = LEVEL) -> list[int]:
        """The leader and the teams whose adjusted p-value is above ``level``, by index; a team
        with an undefined p-value is in neither this list nor the other."""
        if self.leader is None:
            return []
        return [self.leader, *(int(t) for t in np.flatnonzero(self.p_holm > level))]


def leader_of(observed: np.ndarray, direction: Direction) -> int | None:
    """The leader of a column: the first team ranked 1 on the full test set (``observed``,
    NaN where undefined), that is the first whose value is the best (equal doubles tie);
    ``None`` without a defined value."""
    oriented = goodness(observed, direction)
    defined = ~np.isnan(oriented)
    if not defined.any():
        return None
    return int(np.flatnonzero(defined & (oriented == oriented[defined].max()))[0])


@dataclass(frozen=True)
class Differences:
    """Some teams' paired differences to the leader over every replicate: ``interval`` the
    (lo, hi) percentile interval of d = leader − team, ``not_better`` how many replicates have
    d <= 0, ``defined`` whether d is defined in every replicate (the others' rows are NaN and
    0)."""

    interval: np.ndarray
    not_better: np.ndarray
    defined: np.ndarray


def differences(leader: np.ndarray, teams: np.ndarray, *, direction: Direction, bounds: tuple[int, int]) -> Differences:
    """The :class:`Differences` of ``teams`` (teams × replicates) to the ``leader`` (its
    values in the same replicates), by the column's ``direction``; ``bounds`` the 1-based
    order statistics of the interval (:func:`scoring.engine.bootstrap.order_statistics`)."""
    d = goodness(leader, direction) - goodness(teams, direction)
    defined = ~np.isnan(d).any(axis=1)
    interval = np.full((len(teams), 2), np.nan)
    not_better = np.zeros(len(teams), dtype=np.int64)
    if defined.any():
        low, high = bounds
        d = d[defined]
        interval[defined] = np.sort(d, axis=1)[:, [low - 1, high - 1]]
        not_better[defined] = np.count_nonzero(d <= 0, axis=1)
    return Differences(interval=interval, not_better=not_better, defined=defined)


def adjusted(leader: int | None, found: Differences, replicates: int) -> BehindLeader:
    """A column's :class:`BehindLeader` from every team's :class:`Differences` (the leader's
    own row is left out): Holm's step-down over the teams whose difference is defined."""
    teams = len(found.defined)
    difference = np.full((teams, 2), np.nan)
    p_holm = np.full(teams, np.nan)
    if leader is None:
        return BehindLeader(leader=None, difference=difference, p_holm=p_holm)
    defined = found.defined.copy()
    defined[leader] = False
    if defined.any():
        difference[defined] = found.interval[defined]
        numerators = holm_step_down((1 + found.not_better[defined]).astype(np.int64), 1 + replicates)
        p_holm[defined] = numerators / (1 + replicates)  # exact integers, divided once
    return BehindLeader(leader=leader, difference=difference, p_holm=p_holm)


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
    leader = leader_of(observed, direction)
    by_team = np.ascontiguousarray(replicates.T)  # teams × replicates, one row each
    found = differences(by_team[leader or 0], by_team, direction=direction, bounds=bounds)
    return adjusted(leader, found, len(replicates))
