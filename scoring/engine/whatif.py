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

Exactness: shares are exact fractions (``"0.2"`` is 1/5, ``"1/3"`` is 1/3), and every value is
the double nearest to the formula's exact value at the exactly scaled matrix, as a report's
values are: all teams are evaluated as one stack (:class:`scoring.engine.canonical.StackValues`,
pairs of doubles with error bounds, exact arithmetic where those leave the rounding open), and
the ranks come from :mod:`scoring.engine.ranking`. So equal shares give every value the
board's calibrated (``_c``) value as the same double, and the gold's own shares give today's.
Ties at the target are exact ties, as on the board.

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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational

import numpy as np

from scoring.engine.canonical import StackValues, integer_weights
from scoring.engine.columns import Column, ranking_columns
from scoring.engine.metrics import Value, as_matrices, plain_values
from scoring.engine.ranking import RankChange, competition_rank_matrix, largest_first
from scoring.engine.registry import CLASS_MEASURES, suite_metrics

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

TARGET_NOT_PLAIN = (
    "the share {text!r} of class {label!r} is not a plain number: write a decimal with at most "
    "{digits} digits before and after the point (0.25), a fraction of two such whole numbers (1/4), "
    "or give the whole target as 'uniform' or 'gold'"
)
SHARE_DIGITS = 12
"""The most digits a share written by a person may have on each side of its point or its bar:
a target is a few shares, and a share of a thousand digits only makes the arithmetic slow."""
PLAIN_SHARE = re.compile(rf"-?(?P<whole>\d{{1,{SHARE_DIGITS}}})(?:\.(?P<decimals>\d{{1,{SHARE_DIGITS}}}))?")
FRACTION_SHARE = re.compile(rf"-?(?P<numerator>\d{{1,{SHARE_DIGITS}}})/(?P<denominator>\d{{1,{SHARE_DIGITS}}})")

NUMBER_CHARACTERS = frozenset("0123456789.+-/eE")

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


def written_share(text: str, *, label: str) -> str:
    """One share as a person writes it, checked before any arithmetic: a plain decimal
    (``0.25``) or a fraction of two whole numbers (``1/4``), at most :data:`SHARE_DIGITS` digits
    on each side; an exponent or a thousand digits is :data:`TARGET_NOT_PLAIN`, text that is no
    number at all :data:`TARGET_NOT_A_NUMBER`. Returns the text, stripped."""
    text = text.strip()
    if PLAIN_SHARE.fullmatch(text):
        return text
    if fraction := FRACTION_SHARE.fullmatch(text):
        if int(fraction["denominator"]):
            return text
    elif any(character.isdigit() for character in text) and set(text) <= NUMBER_CHARACTERS:
        raise TargetError(
            TARGET_NOT_PLAIN, text=text[:40] + ("…" if len(text) > 40 else ""), label=label, digits=SHARE_DIGITS
        )
    raise TargetError(TARGET_NOT_A_NUMBER, text=text, label=label)


def parse_target(text: str, *, labels: Sequence[str], gold_counts: Sequence[int]) -> tuple[Fraction, ...]:
    """A target as a person writes it: comma-separated shares in label order (``0.2,0.3,0.5``,
    ``1/3,1/3,1/3``, or any positive weights such as ``2,3,5``), :data:`UNIFORM`, or
    :data:`GOLD` (the shares of ``gold_counts``, the gold's items per class). Each share is
    checked by :func:`written_share`, then the target normalised and validated by
    :func:`normalised_target`; :data:`CLASS_WITHOUT_GOLD` for :data:`GOLD` when a class has no
    gold item."""
    keyword = text.strip().lower()
    if keyword == UNIFORM:
        return normalised_target([1] * len(labels), labels=labels)
    if keyword == GOLD:
        refuse_classes_without_gold(labels, gold_counts)
        return normalised_target([int(count) for count in gold_counts], labels=labels)
    parts = text.split(",")
    if len(parts) != len(labels):
        raise TargetError(TARGET_LENGTH, expected=len(labels), labels=", ".join(labels), got=len(parts))
    return normalised_target(
        [written_share(part, label=label) for part, label in zip(parts, labels, strict=True)], labels=labels
    )


def refuse_classes_without_gold(labels: Sequence[str], gold_masses: Sequence[int]) -> None:
    """Raise :data:`CLASS_WITHOUT_GOLD` naming the first class whose gold mass is 0."""
    empty = next((label for label, mass in zip(labels, gold_masses, strict=True) if not mass), None)
    if empty is not None:
        raise TargetError(CLASS_WITHOUT_GOLD, label=empty)


def predicted_share(q):
    """P(f→i) of paper 000's Eq. 27 at the target: how often class i is predicted, as a share of
    the scaled matrix's mass."""
    return q.xp.ratio_or_undefined(q.bias, q.total)


@dataclass(frozen=True)
class Suite:
    """One team's raw suite values (canonical), shaped as a report so that a board column reads
    them (:class:`scoring.engine.columns.Scores`); there is no calibrated side."""

    metrics: Mapping[str, Value]
    per_class: Mapping[str, Mapping[str, Value]]
    calibrated: None = None
    calibrated_per_class: None = None


Values = Mapping[tuple[str, str | None], np.ndarray]
"""Every metric (``(key, None)``) and every per-class measure (``(key, label)``) of every team,
in team order, NaN where undefined."""


@dataclass(frozen=True)
class WhatIf:
    """Every team's values today and at the target distribution, their ranks under every raw
    ranking column, and who moves."""

    labels: tuple[str, ...]
    teams: tuple[str, ...]
    target: tuple[Fraction, ...]
    """The target's shares, exact, in label order, summing to 1."""
    today: np.ndarray
    """The teams' values today under :meth:`columns` (teams × columns, NaN where undefined)."""
    at_target: Values
    """As :data:`Values`, with ``("predicted", label)``, Eq. 27's P(f→i), besides."""
    rank_matrix_today: np.ndarray
    rank_matrix: np.ndarray
    """Competition ranks (teams × :meth:`columns`, 0 where undefined) today and at the target."""
    ordinal: bool = False
    """Whether the labels are an ordered scale: the ordinal errors are re-estimated too."""

    def columns(self) -> list[Column]:
        """The board's raw ranking columns, each re-estimated at the target."""
        return ranking_columns(self.labels, calibrated=False, ordinal=self.ordinal)

    def values(self, column: Column) -> list[Value]:
        """The teams' values at the target, in team order (``None`` where undefined)."""
        return _plain(self.at_target[column.key, column.label])

    def values_today(self, column: Column) -> list[Value]:
        """The teams' values today: the board's values under ``column``."""
        return _plain(self.today[:, self.columns().index(column)])

    def suite(self, team: str) -> Suite:
        """One team's every metric and per-class measure at the target: each class's
        ``support`` is its target share and ``predicted`` Eq. 27's P(f→i)."""
        row = self.teams.index(team)
        metrics = {m.key: _plain(self.at_target[m.key, None][row]) for m in suite_metrics(ordinal=self.ordinal)}
        return Suite(metrics=metrics, per_class=self._per_class(row))

    def _per_class(self, row: int) -> dict[str, dict[str, Value]]:
        per_class = {}
        for label, share in zip(self.labels, self.target, strict=True):
            per_class[label] = {m.key: _plain(self.at_target[m.key, label][row]) for m in CLASS_MEASURES}
            per_class[label] |= {"support": float(share), "predicted": _plain(self.at_target["predicted", label][row])}
        return per_class

    def _ranks(self, matrix: np.ndarray, column: Column) -> dict[str, int | None]:
        ranks = matrix[:, self.columns().index(column)].tolist()
        return {team: rank or None for team, rank in zip(self.teams, ranks, strict=True)}

    def ranks(self, column: Column) -> dict[str, int | None]:
        """Competition ranks at the target (1, 2, 2, 4), ``None`` for an undefined value."""
        return self._ranks(self.rank_matrix, column)

    def ranks_today(self, column: Column) -> dict[str, int | None]:
        """Competition ranks today: the board's ranks under ``column``."""
        return self._ranks(self.rank_matrix_today, column)

    def moves(self, column: Column) -> list[RankChange]:
        """The teams whose rank differs at the target, largest moves first: ``rank_a`` is today's
        rank, ``rank_b`` the rank at the target, ``shift > 0`` a team that climbs."""
        index = self.columns().index(column)
        today, at_target = self.rank_matrix_today[:, index], self.rank_matrix[:, index]
        changes = [
            RankChange(team=self.teams[row], rank_a=int(today[row]) or None, rank_b=int(at_target[row]) or None)
            for row in np.flatnonzero(today != at_target)
        ]
        return sorted(changes, key=largest_first)

    def columns_with_moves(self) -> int:
        """Under how many columns some team's rank differs at the target."""
        return int(np.any(self.rank_matrix_today != self.rank_matrix, axis=0).sum())

    def as_json(self, teams: Sequence[str] | None = None) -> dict:
        """The what-if's JSON object (see the module docstring), of every team or of ``teams``
        (a page of them: their values and ranks, which of them move, their per-class measures)."""
        index = {team: row for row, team in enumerate(self.teams)}
        rows = list(range(len(self.teams))) if teams is None else [index[team] for team in teams]
        names = [self.teams[row] for row in rows]

        def column_json(position: int, column: Column) -> tuple[dict, list]:
            values = _plain(self.at_target[column.key, column.label][rows])
            today = self.rank_matrix_today[rows, position].tolist()
            at_target = self.rank_matrix[rows, position].tolist()
            cells = {
                team: {"value": value, "rank": rank or None, "rank_today": before or None}
                for team, value, rank, before in zip(names, values, at_target, today, strict=True)
            }
            moved = [
                RankChange(t, a or None, b or None) for t, a, b in zip(names, today, at_target, strict=True) if a != b
            ]
            moved.sort(key=largest_first)
            return cells, [{"team": c.team, "from": c.rank_a, "to": c.rank_b} for c in moved]

        columns = {column.id: column_json(position, column) for position, column in enumerate(self.columns())}
        return {
            "target": {label: float(share) for label, share in zip(self.labels, self.target, strict=True)},
            "columns": {key: cells for key, (cells, _) in columns.items()},
            "moved": {key: moved for key, (_, moved) in columns.items()},
            "per_class": {self.teams[row]: self._per_class(row) for row in rows},
        }


def _plain(values: np.ndarray) -> list[Value] | Value:
    if np.ndim(values) == 0:
        return None if np.isnan(values) else float(values)
    return plain_values(values)


def every_value(
    stack: StackValues, labels: Sequence[str], *, scaled: bool, ordinal: bool = False
) -> dict[tuple[str, str | None], np.ndarray]:
    """Every metric (with the ordinal errors when ``ordinal``) and per-class measure of every
    matrix of ``stack``, raw or at its target."""
    out = {(metric.key, None): stack.values(metric.formula, scaled=scaled) for metric in suite_metrics(ordinal=ordinal)}
    formulas = [(measure.key, measure.formula) for measure in CLASS_MEASURES]
    if scaled:
        formulas.append(("predicted", predicted_share))
    for key, formula in formulas:
        for index, label in enumerate(labels):
            out[key, label] = stack.values(formula, scaled=scaled, label=index)
    return out


def what_if(
    matrices: Mapping[str, np.ndarray],
    *,
    labels: Sequence[str],
    target: Sequence[Share],
    ordinal: bool = False,
    today: np.ndarray | None = None,
) -> WhatIf:
    """Every team (``matrices``: team → confusion matrix of counts or soft masses, rows
    predicted, columns gold, in ``labels`` order; teams in the mapping's order) scored today and
    at ``target``, a share per label (any positive weights, normalised; see
    :func:`normalised_target`); ``ordinal``: the labels are an ordered scale, and the ordinal
    errors are re-estimated and re-ranked too. All teams are one stack (:class:`StackValues`):
    each value the double nearest to its exact value at the exactly scaled matrix, as a report's.
    ``today``: the teams' values today under the ranking columns (teams × columns), where the
    caller holds them (a board's, which are the same doubles); computed from the matrices if not.

    Raises :class:`TargetError` for a bad target, or :data:`CLASS_WITHOUT_GOLD` naming the first
    class that some team's matrix holds no gold mass for.
    """
    labels = tuple(labels)
    shares = normalised_target(target, labels=labels)
    stack = as_matrices(list(matrices.values()), len(labels))
    gold = stack.sum(axis=1)  # one stack, checked at once: a board of 10,000 teams has as many
    for row in np.flatnonzero((gold == 0).any(axis=1))[:1]:
        refuse_classes_without_gold(labels, gold[row].tolist())
    values = StackValues(stack, weights=integer_weights(shares))
    columns = ranking_columns(labels, calibrated=False, ordinal=ordinal)

    def under_columns(found: Values) -> np.ndarray:
        return np.array([found[c.key, c.label] for c in columns]).reshape(len(columns), -1).T

    if today is None:
        today = under_columns(every_value(values, labels, scaled=False, ordinal=ordinal))
    at_target = every_value(values, labels, scaled=True, ordinal=ordinal)
    directions = [c.direction for c in columns]
    return WhatIf(
        labels=labels,
        teams=tuple(matrices),
        target=shares,
        today=today,
        at_target=at_target,
        rank_matrix_today=competition_rank_matrix(today, directions),
        rank_matrix=competition_rank_matrix(under_columns(at_target), directions),
        ordinal=ordinal,
    )
