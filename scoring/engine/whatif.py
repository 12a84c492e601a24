"""What if the classes had another distribution: every team re-scored and re-ranked at a target
class distribution (paper 000, Eq. 5 and Eq. 26-27).

Each team's confusion matrix is scaled to the target (Eq. 5): gold column ``j`` is multiplied
by lambda_jj = share(j) / prevalence(j), which keeps each class's error proportions, so every
recall stays as it is and every quantity that depends on the class distribution is
re-estimated. Precision in particular becomes Eq. 27's estimate, R_i·share(i) / P(f→i), with
P(f→i) = sum_j P(f→i | class = j)·share(j) the rate at which the classifier would predict
``i`` on data of the target distribution; the macro metrics, kappa and MCC follow from the
scaled matrix (Section 5: "estimated scores of macro metrics, including MCC and KAPPA, easily
follow"). Equal shares are prevalence calibration (Eq. 6); the gold's own shares are today.

Exactness: shares are exact fractions (``"0.2"`` is 1/5, ``"1/3"`` is 1/3) and the scaling is
done in exact arithmetic (:meth:`scoring.engine.canonical.ExactMatrix.scaled_to`), the values are
the suite's canonical ones (:mod:`scoring.engine.suite`), and the ranks come from
:mod:`scoring.engine.ranking`. So equal shares give the very matrix calibration gives, and
every value equals the board's calibrated (``_c``) value as the same double; the gold's shares
scale a team's whole matrix by one factor, and every value equals today's. Ties at the target
are exact ties, as on the board.

The target is validated (:func:`normalised_target`): one share per label, each a number above 0
(a share of 0 would empty a gold column, and Eq. 5 scales by lambda > 0), normalised to sum to
1; a class with no gold item cannot be given a share. Each refusal is a
:class:`TargetError` with one of the named messages below.

JSON (:meth:`WhatIf.as_json`, the board's ``"prevalence_what_if"``)::

    {"target": {label: share},
     "columns": {id: {team: {"value": v or null, "rank": r or null, "rank_today": r or null}}},
     "moved": {id: [{"team": t, "from": rank today, "to": rank at the target}, ...]},
     "per_class": {team: {label: {measure: v or null, ..., "support": share, "predicted": P(f→i)}}}}

``columns`` holds every raw ranking column of the board (ids as in the board's ``ranks``);
``moved`` lists, per column, the teams whose rank differs, largest moves first; ``per_class``
holds each team's one-vs-rest measures at the target, with the class's target share as
``support`` and Eq. 27's P(f→i) as ``predicted``, so ``precision = recall·support / predicted``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational

import numpy as np

from scoring.engine.canonical import ExactMatrix, integer_weights
from scoring.engine.columns import Column, ranking_columns
from scoring.engine.metrics import Value
from scoring.engine.ranking import RankChange, competition_ranks, rank_changes
from scoring.engine.suite import metric_values, per_class_values

UNIFORM = "uniform"
"""The target of equal shares: prevalence calibration (paper 000, Eq. 6)."""
GOLD = "gold"
"""The target of the gold's own shares: today's board."""

TARGET_LENGTH = "the target needs one share per class ({expected}: {labels}), got {got}"
TARGET_NOT_A_NUMBER = (
    "the share {text!r} of class {label!r} is not a number: write a decimal (0.25) or a fraction (1/4), "
    "or give the whole target as 'uniform' or 'gold'"
)
TARGET_NOT_POSITIVE = (
    "the share of class {label!r} is {share}: every class needs a share above 0 (a share of 0 would "
    "empty its gold column and count its recall as 0 for every team; Eq. 5 scales by lambda > 0)"
)
CLASS_WITHOUT_GOLD = (
    "class {label!r} has no gold item, so no target can give it a share: scaling (Eq. 5) re-weights "
    "the items a class has"
)

Share = Rational | float | str


class TargetError(ValueError):
    """A target distribution that cannot be used: ``template`` is one of the named messages."""

    def __init__(self, template: str, **params: object) -> None:
        self.template = template
        self.params = params
        super().__init__(template.format(**params))


def exact_share(value: Share, *, label: str) -> Fraction:
    """One share as an exact fraction: text as written (``"0.2"`` is 1/5), a float as the binary
    fraction it is; refused when not a finite number."""
    try:
        return Fraction(value.strip() if isinstance(value, str) else value)
    except (ValueError, TypeError, OverflowError, ZeroDivisionError):
        raise TargetError(TARGET_NOT_A_NUMBER, text=str(value), label=label) from None


def normalised_target(shares: Sequence[Share], *, labels: Sequence[str]) -> tuple[Fraction, ...]:
    """The target distribution as exact shares summing to 1, one per label in label order.

    Raises :class:`TargetError`: :data:`TARGET_LENGTH`, :data:`TARGET_NOT_A_NUMBER`,
    :data:`TARGET_NOT_POSITIVE`, each naming the class.
    """
    if len(shares) != len(labels):
        raise TargetError(TARGET_LENGTH, expected=len(labels), labels=", ".join(labels), got=len(shares))
    exact = [exact_share(share, label=label) for share, label in zip(shares, labels, strict=True)]
    for share, text, label in zip(exact, shares, labels, strict=True):
        if share <= 0:
            raise TargetError(TARGET_NOT_POSITIVE, label=label, share=str(text).strip())
    total = sum(exact)
    return tuple(share / total for share in exact)


def parse_target(text: str, *, labels: Sequence[str], gold_counts: Sequence[int]) -> tuple[Fraction, ...]:
    """A target as a person writes it: comma-separated shares in label order (``0.2,0.3,0.5``,
    ``1/3,1/3,1/3``, or any positive weights such as ``2,3,5``), :data:`UNIFORM`, or
    :data:`GOLD` (the shares of ``gold_counts``, the gold's items per class). Normalised and
    validated by :func:`normalised_target`; :data:`CLASS_WITHOUT_GOLD` for :data:`GOLD` when a
    class has no gold item."""
    keyword = text.strip().lower()
    if keyword == UNIFORM:
        return normalised_target([1] * len(labels), labels=labels)
    if keyword == GOLD:
        refuse_classes_without_gold(labels, gold_counts)
        return normalised_target([int(count) for count in gold_counts], labels=labels)
    return normalised_target(text.split(","), labels=labels)


def refuse_classes_without_gold(labels: Sequence[str], gold_masses: Sequence[int]) -> None:
    """Raise :data:`CLASS_WITHOUT_GOLD` naming the first class whose gold mass is 0."""
    empty = next((label for label, mass in zip(labels, gold_masses, strict=True) if not mass), None)
    if empty is not None:
        raise TargetError(CLASS_WITHOUT_GOLD, label=empty)


@dataclass(frozen=True)
class Suite:
    """One team's raw suite values (canonical), shaped as a report so that a board column reads
    them (:class:`scoring.engine.columns.Scores`); there is no calibrated side."""

    metrics: Mapping[str, Value]
    per_class: Mapping[str, Mapping[str, Value]]
    calibrated: None = None
    calibrated_per_class: None = None

    @classmethod
    def of(cls, matrix: ExactMatrix, labels: tuple[str, ...]) -> Suite:
        return cls(metrics=metric_values(matrix), per_class=per_class_values(matrix, labels))


@dataclass(frozen=True)
class WhatIf:
    """Every team's ranking columns today and at the target distribution, and who moves."""

    labels: tuple[str, ...]
    teams: tuple[str, ...]
    target: tuple[Fraction, ...]
    """The target's shares, exact, in label order, summing to 1."""
    today: Mapping[str, Suite]
    at_target: Mapping[str, Suite]

    def columns(self) -> list[Column]:
        """The board's raw ranking columns, each re-estimated at the target."""
        return ranking_columns(self.labels, calibrated=False)

    def values(self, column: Column) -> list[Value]:
        """The teams' values at the target, in team order (``None`` where undefined)."""
        return [column.value(self.at_target[team]) for team in self.teams]

    def values_today(self, column: Column) -> list[Value]:
        """The teams' values today: the board's values under ``column``."""
        return [column.value(self.today[team]) for team in self.teams]

    def ranks(self, column: Column) -> dict[str, int | None]:
        """Competition ranks at the target (1, 2, 2, 4), ``None`` for an undefined value."""
        return dict(zip(self.teams, competition_ranks(self.values(column)), strict=True))

    def ranks_today(self, column: Column) -> dict[str, int | None]:
        """Competition ranks today: the board's ranks under ``column``."""
        return dict(zip(self.teams, competition_ranks(self.values_today(column)), strict=True))

    def moves(self, column: Column) -> list[RankChange]:
        """The teams whose rank differs at the target, largest moves first: ``rank_a`` is today's
        rank, ``rank_b`` the rank at the target, ``shift > 0`` a team that climbs."""
        changes = rank_changes(self.teams, self.values_today(column), self.values(column))
        return [change for change in changes if change.rank_a != change.rank_b]

    def as_json(self) -> dict:
        """The what-if's JSON object (see the module docstring)."""
        columns = self.columns()

        def column_json(column: Column) -> dict:
            today, at_target = self.ranks_today(column), self.ranks(column)
            return {
                team: {"value": value, "rank": at_target[team], "rank_today": today[team]}
                for team, value in zip(self.teams, self.values(column), strict=True)
            }

        return {
            "target": {label: float(share) for label, share in zip(self.labels, self.target, strict=True)},
            "columns": {column.id: column_json(column) for column in columns},
            "moved": {
                column.id: [{"team": c.team, "from": c.rank_a, "to": c.rank_b} for c in self.moves(column)]
                for column in columns
            },
            "per_class": {team: self.at_target[team].per_class for team in self.teams},
        }


def what_if(
    matrices: Mapping[str, np.ndarray | ExactMatrix], *, labels: Sequence[str], target: Sequence[Share]
) -> WhatIf:
    """Every team (``matrices``: team → confusion matrix, rows predicted, columns gold, in
    ``labels`` order; teams in the mapping's order) scored today and at ``target``, a share per
    label (any positive weights, normalised; see :func:`normalised_target`).

    Raises :class:`TargetError` for a bad target, or :data:`CLASS_WITHOUT_GOLD` naming the first
    class that some team's matrix holds no gold mass for.
    """
    labels = tuple(labels)
    shares = normalised_target(target, labels=labels)
    weights = integer_weights(shares)
    exact = {team: ExactMatrix.of(matrix) for team, matrix in matrices.items()}
    for matrix in exact.values():
        if len(labels) != matrix.n:
            raise ValueError(f"{len(labels)} labels for a {matrix.n}x{matrix.n} matrix")
        refuse_classes_without_gold(labels, matrix.prevalence)
    return WhatIf(
        labels=labels,
        teams=tuple(exact),
        target=shares,
        today={team: Suite.of(matrix, labels) for team, matrix in exact.items()},
        at_target={team: Suite.of(matrix.scaled_to(weights), labels) for team, matrix in exact.items()},
    )
