"""An overall ranking across metrics: a team's mean rank, or its Borda points, over a set of
board columns, itself a column of the board.

Two methods, each computed from the board's competition ranks (1, 2, 2, 4; rank 1 the best by
each column's direction, :mod:`scoring.engine.ranking`), never from raw values, so that errors
and scores, shares and unbounded measures count alike:

* **mean rank** (:data:`MEAN_RANK`): (1/k) Σ_c rank_c(t) over the k chosen columns. Lower is
  better. A rational, stored as the double nearest to it (an integer sum divided once by k), so
  two teams whose rank sums are equal tie. The average rank of Demšar (*Statistical
  comparisons of classifiers over multiple data sets*, JMLR 2006), with the board's
  competition ranks where he averages tied positions.
* **Borda** (:data:`BORDA`): Σ_c #{u defined under c : t strictly better than u under c}, the
  points of Borda's count with ties (a tie gives neither team a point). Higher is better. An
  integer.

Rules (the same for both):

* **Ties are ties.** The overall rank is the competition rank of the overall value by the
  method's direction; equal values share it.
* **Undefined.** A team that has no rank under one of the chosen columns (its value is
  undefined there) gets no overall value and no overall rank: a mean over fewer columns, or
  points from fewer columns, would compare it with the others on other terms. Under that
  column the other teams keep their board ranks (the undefined team neither beats nor is
  beaten), as the board shows them.
* **Columns** are any of the board's columns, raw or calibrated, per class or not, each
  counted once; the CLI's default is every raw ranking column.
* **Bootstrap** (:meth:`scoring.engine.bootstrap.Stability.aggregate_intervals`): in every
  replicate, the same method over the replicate's competition ranks and the teams' overall
  rank in that replicate; the intervals are the same order statistics of the same replicates
  as every score and rank interval, undefined when the team's overall value is undefined in
  any replicate.

What an overall ranking does not say: it weighs every chosen column equally, so a set with
many near-copies of one metric (accuracy and prevalence-weighted recall are one number; raw
and calibrated macro recall too) counts that metric several times; the choice of the set is
the choice of the winner, which is why the disagreement page shows the winner of several sets
(:func:`column_sets`, :func:`winners`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from scoring.engine.columns import Column, ranking_columns, table8_columns
from scoring.engine.metrics import Value
from scoring.engine.ranking import HIGHER, LOWER, Direction, competition_ranks

MEAN_RANK = "mean_rank"
BORDA = "borda"

UNKNOWN_METHOD = "unknown aggregation method {method!r}; known: {known}"
NO_COLUMNS = "an overall ranking needs at least one column"


@dataclass(frozen=True)
class Method:
    """How an overall ranking combines the ranks: what a page, a caption or the CLI says of it.
    It has the display attributes of a metric of the registry, so a board column reads it the
    same way."""

    key: str
    name: str
    symbol: str
    direction: Direction
    formula_text: str
    formula_latex: str
    description: str
    value_range: tuple[float | None, float | None]

    do_not_call_in_templates: ClassVar[bool] = True

    @property
    def higher_is_better(self) -> bool:
        return self.direction.higher_is_better


METHODS: dict[str, Method] = {
    MEAN_RANK: Method(
        key=MEAN_RANK,
        name="Mean rank",
        symbol="MR",
        direction=LOWER,
        formula_text="(1/k) Σ_c rank_c, over the k chosen columns",
        formula_latex=r"\frac{1}{k}\sum_{c} \mathrm{rank}_c",
        description="The mean of the team's competition ranks under the chosen columns (1 = best under each); "
        "lower is better.",
        value_range=(1.0, None),
    ),
    BORDA: Method(
        key=BORDA,
        name="Borda count",
        symbol="Borda",
        direction=HIGHER,
        formula_text="Σ_c #(teams strictly behind under c), over the chosen columns",
        formula_latex=r"\sum_{c} \#\{u : \mathrm{rank}_c(u) > \mathrm{rank}_c\}",
        description="Per chosen column, one point for each team strictly behind (a tie gives neither a point), "
        "summed; higher is better.",
        value_range=(0.0, None),
    ),
}


class AggregateError(ValueError):
    """An overall ranking that cannot be built: ``template`` is one of the named messages."""

    def __init__(self, template: str, **params: object) -> None:
        self.template = template
        self.params = params
        super().__init__(template.format(**params))


def aggregation_method(key: str) -> Method:
    """The method registered under ``key``; :class:`AggregateError` names the known ones."""
    try:
        return METHODS[key]
    except KeyError:
        raise AggregateError(UNKNOWN_METHOD, method=key, known=", ".join(METHODS)) from None


@dataclass(frozen=True)
class Aggregate:
    """An overall ranking as a board column: ``method`` (:data:`MEAN_RANK` or :data:`BORDA`)
    over ``columns``. Its id is the method's key; it is never calibrated nor per class."""

    method: str
    columns: tuple[Column, ...]
    label: ClassVar[None] = None
    calibrated: ClassVar[bool] = False

    def __post_init__(self) -> None:
        aggregation_method(self.method)  # refuses an unknown method
        if not self.columns:
            raise AggregateError(NO_COLUMNS)

    @property
    def metric(self) -> Method:
        """The method, read as a metric: name, symbol, formula, range, direction."""
        return METHODS[self.method]

    @property
    def key(self) -> str:
        return self.method

    @cached_property
    def id(self) -> str:
        return self.method

    @property
    def symbol(self) -> str:
        return self.metric.symbol

    @property
    def name(self) -> str:
        return f"{self.metric.name} over {len(self.columns)} column{'s' if len(self.columns) != 1 else ''}"

    @property
    def direction(self) -> Direction:
        return self.metric.direction

    @property
    def formula_text(self) -> str:
        return f"{self.metric.formula_text}: {', '.join(column.id for column in self.columns)}"

    @property
    def description(self) -> str:
        return f"{self.metric.description} Columns: {', '.join(column.symbol for column in self.columns)}."

    def totals(self, ranks: np.ndarray, *, worse: np.ndarray | None = None) -> np.ndarray:
        """The integers the overall values are made of: each team's sum of ranks (mean rank) or
        its Borda points, from competition ranks (..., columns, teams), 0 where a team has no
        rank, the columns in :attr:`columns` order: shape (..., teams), -1 for a team without a
        rank under some column (see the module's rules). ``worse``: the teams' points under each
        column (:func:`beaten` of ``ranks``), when they are known already."""
        ranks = np.asarray(ranks)
        return totals_of(ranks, beaten(ranks) if worse is None else worse, methods=(self.method,))[self.method]

    def of_totals(self, totals: np.ndarray) -> np.ndarray:
        """The overall values of :meth:`totals` (NaN where -1): a mean rank is its sum divided
        once by the number of columns, so two teams whose sums are equal tie; Borda points are
        themselves. Increasing in the total: an order statistic of the totals gives the value's."""
        totals = np.asarray(totals)
        values = totals / len(self.columns) if self.method == MEAN_RANK else totals.astype(np.float64)
        return np.where(totals >= 0, values, np.nan)

    def of_ranks(self, ranks: np.ndarray) -> np.ndarray:
        """The overall values of competition ranks (..., columns, teams), 0 where a team has no
        rank, the columns in :attr:`columns` order: shape (..., teams), NaN for a team without a
        rank under some column (see the module's rules)."""
        return self.of_totals(self.totals(ranks))

    def values(self, ranks: Sequence[Sequence[int | None]]) -> list[Value | int]:
        """The overall values of the board's ranks (one list of team ranks per column, ``None``
        where undefined): floats for mean ranks, ints for Borda points, ``None`` where undefined."""
        matrix = np.array([[rank or 0 for rank in column] for column in ranks], dtype=np.int64)
        plain = int if self.method == BORDA else float
        return [None if np.isnan(value) else plain(value) for value in self.of_ranks(matrix)]

    def ranks(self, values: Sequence[Value]) -> list[int | None]:
        """The overall competition ranks of the overall values, by the method's direction."""
        return competition_ranks(values, self.direction)


def totals_of(
    ranks: np.ndarray, worse: np.ndarray, *, methods: Sequence[str] = tuple(METHODS)
) -> dict[str, np.ndarray]:
    """Each method's totals (:meth:`Aggregate.totals`) of one set of columns, from competition
    ranks and the points under each column (:func:`beaten`), both (..., columns, teams)."""
    ranks = np.asarray(ranks)
    complete = np.all(ranks > 0, axis=-2)
    sums = {MEAN_RANK: ranks, BORDA: worse}
    return totals_of_sums(
        complete, {method: np.asarray(sums[method]).sum(axis=-2, dtype=np.int64) for method in methods}
    )


def totals_of_sums(complete: np.ndarray, sums: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each method's totals from its sums over the set's columns (the sum of ranks, or of
    points) and whether the team has a rank under every column of the set: -1 where not."""
    return {method: np.where(complete, total, -1) for method, total in sums.items()}


def beaten(ranks: np.ndarray) -> np.ndarray:
    """For competition ranks (..., teams), 0 where undefined: how many defined teams each team
    is strictly better than (0 for a team without a rank). With ties, the teams at or above a
    rank r are not r of them: they are counted, per row, with one bincount."""
    ranks = np.asarray(ranks, dtype=np.int64)
    teams = ranks.shape[-1]
    if teams == 0:
        return ranks
    rows = ranks.reshape(-1, teams)
    offsets = np.arange(len(rows))[:, np.newaxis] * (teams + 1)
    counts = np.bincount((rows + offsets).ravel(), minlength=len(rows) * (teams + 1)).reshape(len(rows), teams + 1)
    counts[:, 0] = 0  # teams without a rank beat no one and are beaten by no one
    at_or_above = np.cumsum(counts, axis=1)
    behind = at_or_above[:, -1:] - np.take_along_axis(at_or_above, rows, axis=1)
    return np.where(rows > 0, behind, 0).reshape(ranks.shape)


def column_sets(labels: Sequence[str], *, primary: str, ordinal: bool = False) -> dict[str, list[Column]]:
    """The sets of columns whose overall winners the disagreement page compares: paper 000's
    Table 8 (:func:`scoring.engine.columns.table8_columns`), every raw ranking column, every
    calibrated one, and the organiser's primary metric alone."""
    return {
        "table8": table8_columns(labels),
        "raw": ranking_columns(labels, calibrated=False, ordinal=ordinal),
        "calibrated": ranking_columns(labels, calibrated=True, ordinal=ordinal),
        "primary": [Column(primary)],
    }


def winners(
    method: str, sets: Mapping[str, Sequence[Column]], ranks_of: Callable[[Column], Sequence[int | None]]
) -> dict[str, list[int]]:
    """For each named set of columns (:func:`column_sets`), the teams (indexes) that the overall
    ranking ``method`` over that set ranks first, ties all listed; ``ranks_of`` gives a column's
    competition ranks of the teams (``None`` or 0 where undefined; a list or an array), as the
    board has them. The disagreement page's question: does the winner depend on the set?"""
    out = {}
    for name, columns in sets.items():
        overall = Aggregate(method, tuple(columns))
        ranks = np.array([np.asarray(ranks_of(column), dtype=np.float64) for column in columns])
        values = overall.of_ranks(np.nan_to_num(ranks, nan=0.0).astype(np.int64))
        defined = ~np.isnan(values)
        if not defined.any():
            out[name] = []
            continue
        best = values[defined].max() if overall.direction.higher_is_better else values[defined].min()
        out[name] = np.flatnonzero(defined & (values == best)).tolist()  # rank 1: every team at the best
    return out
