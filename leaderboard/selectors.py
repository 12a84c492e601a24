"""Selectors: every function that reads for a page, an export or a chart.

A leaderboard column is a metric of the registry, raw or calibrated, identified by its
*column id*: the metric key, with ``_c`` appended for the calibrated version (as paper 000's
Figure 2 writes ``metric_c``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from django.db import connections
from django.db.models import (
    Case,
    F,
    FloatField,
    IntegerField,
    OrderBy,
    OuterRef,
    QuerySet,
    Subquery,
    When,
    Window,
)
from django.db.models import Value as SQLValue
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, RowNumber

from leaderboard.models import Baseline, Scored, Submission, Task, Team
from scoring.engine import ranking
from scoring.engine.metrics import Value
from scoring.engine.registry import BY_KEY, Metric, leaderboard_metrics

CALIBRATED_SUFFIX = "_c"


@dataclass(frozen=True)
class Column:
    """A metric as a leaderboard column: raw or calibrated."""

    metric: Metric
    calibrated: bool

    @property
    def id(self) -> str:
        return self.metric.key + (CALIBRATED_SUFFIX if self.calibrated else "")

    @property
    def label(self) -> str:
        return self.metric.symbol + (CALIBRATED_SUFFIX if self.calibrated else "")


def columns_of(task: Task, *, calibrated: bool | None = None) -> list[Column]:
    """The task's ranking columns: raw ones, calibrated ones, or (``None``) both."""
    metrics = leaderboard_metrics(tuple(task.labels))
    flags = (False, True) if calibrated is None else (calibrated,)
    return [Column(metric, flag) for flag in flags for metric in metrics]


def column_by_id(task: Task, column_id: str) -> Column | None:
    return next((c for c in columns_of(task) if c.id == column_id), None)


PAPER_SET_KEYS: tuple[str, ...] = ("macro_recall", "gmean_recall", "hmean_recall", "macro_f1", "kappa", "mcc")
"""The metrics of paper 000's Table 8 and Figure 2, in the paper's order; each class's recall
follows them."""


def paired_columns(task: Task, *, paper_set: bool = False) -> list[Column]:
    """Columns with each metric followed by its calibrated version, as Figure 2 pairs them.

    ``paper_set`` keeps the metrics of Figure 2 (``PAPER_SET_KEYS`` and each class's recall);
    otherwise every ranking column of the task.
    """
    metrics = list(leaderboard_metrics(tuple(task.labels), class_measures=("recall",)))
    if paper_set:
        order = {key: index for index, key in enumerate(PAPER_SET_KEYS)}
        per_class = [m for m in metrics if m.key not in BY_KEY]
        metrics = sorted((m for m in metrics if m.key in order), key=lambda m: order[m.key]) + per_class
    return [Column(metric, flag) for metric in metrics for flag in (False, True)]


def metric_value(scored: Scored, column: Column) -> Value:
    """The stored value of a column for a scored row (suite metric or per-class measure)."""
    values = scored.calibrated if column.calibrated else scored.metrics
    if values is None:
        return None
    key = column.metric.key
    if key in values:
        return values[key]
    measure, _, label = key.partition("[")
    per_class = scored.calibrated_per_class if column.calibrated else scored.per_class
    return (per_class or {}).get(label.rstrip("]"), {}).get(measure)


SCORE_FIELDS: dict[bool, tuple[str, str]] = {
    False: ("metrics", "per_class"),
    True: ("calibrated", "calibrated_per_class"),
}
"""The JSON columns a board reads, raw or calibrated: the suite's values and, for the
``recall[label]`` columns, the per-class ones."""


def score_fields(calibrated: bool | None) -> tuple[str, ...]:
    """The JSON columns a board of raw (``False``), calibrated (``True``) or both (``None``)
    columns needs; the others (the confusion matrix above all) are never read."""
    flags = (False, True) if calibrated is None else (calibrated,)
    return tuple(name for flag in flags for name in SCORE_FIELDS[flag])


def _counting_order(task: Task) -> list[OrderBy]:
    """The order, within a team, that puts its counting submission first.

    Latest: newest upload first (then the highest id). Best: the primary metric's value,
    highest first and undefined last, ties to the newest. Chosen: the team's chosen
    submission, else the latest.
    """
    newest = [F("created_at").desc(), F("id").desc()]
    if task.counting == Task.Counting.BEST:
        primary = Cast(KT(f"metrics__{task.primary_metric}"), FloatField())
        return [primary.desc(nulls_last=True), *newest]
    if task.counting == Task.Counting.CHOSEN:
        chosen_id = Team.objects.filter(pk=OuterRef("team_id")).values("chosen_submission_id")[:1]
        chosen_first = Case(
            When(pk=Subquery(chosen_id), then=SQLValue(0)), default=SQLValue(1), output_field=IntegerField()
        )
        return [chosen_first.asc(), *newest]
    return newest


def counting_submissions(task: Task, *, fields: Sequence[str] | None = None) -> dict[int, Submission]:
    """For each team, the scored submission that counts under the task's policy.

    One query that returns one row per team, with only the JSON columns in ``fields``
    (default: every score column): ``DISTINCT ON (team_id)`` where the database has it
    (PostgreSQL), else the first row of a window over each team's submissions. ``task_id``
    stays loaded, or reading ``submission.task`` would cost a query per row.
    """
    fields = score_fields(None) if fields is None else tuple(fields)
    scored = task.submissions.scored().only("id", "task_id", "team_id", "created_at", *fields)
    order = _counting_order(task)
    if connections[scored.db].features.can_distinct_on_fields:
        rows = scored.order_by("team_id", *order).distinct("team_id")
    else:
        first = Window(RowNumber(), partition_by=[F("team_id")], order_by=order)
        rows = scored.annotate(place_in_team=first).filter(place_in_team=1).order_by()
    return {submission.team_id: submission for submission in rows}


@dataclass
class Entry:
    """One row of a leaderboard: a team's counting submission, or a baseline (never ranked)."""

    name: str
    team: Team | None = None
    submission: Submission | None = None
    baseline: Baseline | None = None
    values: dict[str, Value] = field(default_factory=dict)
    ranks: dict[str, int | None] = field(default_factory=dict)

    @property
    def is_baseline(self) -> bool:
        return self.baseline is not None


@dataclass
class Board:
    task: Task
    columns: list[Column]
    entries: list[Entry]
    baselines: list[Entry]
    sort: Column

    @property
    def primary_id(self) -> str:
        return self.task.primary_metric


def _entries(task: Task, columns: Sequence[Column]) -> tuple[list[Entry], list[Entry]]:
    """Every team with its counting submission's values and ranks, then the baselines; only
    the JSON columns that ``columns`` read are loaded."""
    sides = {column.calibrated for column in columns}
    calibrated = sides.pop() if len(sides) == 1 else None
    counting = counting_submissions(task, fields=score_fields(calibrated))
    entries = []
    for team in Team.objects.filter(task=task).only("id", "name", "task_id"):
        submission = counting.get(team.pk)
        values = {c.id: metric_value(submission, c) if submission else None for c in columns}
        entries.append(Entry(name=team.name, team=team, submission=submission, values=values))
    for column in columns:
        ranks = ranking.competition_ranks([e.values[column.id] for e in entries])
        for entry, rank in zip(entries, ranks, strict=True):
            entry.ranks[column.id] = rank
    baselines = [
        Entry(name=b.name, baseline=b, values={c.id: metric_value(b, c) for c in columns})
        for b in Baseline.objects.filter(task=task).only("id", "name", "task_id", *score_fields(calibrated))
    ]
    return entries, baselines


def sorted_by(task: Task, columns: Sequence[Column], sort: str | None) -> Column:
    """The column a board sorts by: ``sort`` if it is one of ``columns``, else the primary metric."""
    return next((c for c in columns if c.id == sort), None) or next(
        (c for c in columns if c.metric.key == task.primary_metric), columns[0]
    )


def leaderboard(*, task: Task, calibrated: bool | None = False, sort: str | None = None) -> Board:
    """The task's leaderboard: every team, a column per ranking metric, each with its rank.

    ``calibrated``: raw columns, calibrated ones, or (``None``, for the exports) both. Rows
    sort by ``sort`` (a column id; default the primary metric), undefined values last, ties
    by name.
    """
    columns = columns_of(task, calibrated=calibrated)
    sort_column = sorted_by(task, columns, sort)
    entries, baselines = _entries(task, columns)
    entries.sort(key=lambda e: (*ranking.sort_key(e.values[sort_column.id]), e.name.lower()))
    baselines.sort(key=lambda e: (*ranking.sort_key(e.values[sort_column.id]), e.name.lower()))
    return Board(task=task, columns=columns, entries=entries, baselines=baselines, sort=sort_column)


def team_values(task: Task, columns: Sequence[Column]) -> tuple[list[str], dict[str, list[Value]]]:
    """Team names and, per column id, the teams' values in that order."""
    entries, _ = _entries(task, columns)
    return [e.name for e in entries], {c.id: [e.values[c.id] for e in entries] for c in columns}


@dataclass(frozen=True)
class Correlations:
    columns: list[Column]
    teams: list[str]
    values: dict[str, list[Value]]
    matrix: dict[str, dict[str, ranking.Correlation]]


def rank_correlations(*, task: Task, column_ids: Iterable[str] | None = None) -> Correlations:
    """Spearman's rho between the team rankings of every pair of columns (paper 000, Fig. 2)."""
    columns = columns_of(task)
    if column_ids is not None:
        wanted = list(column_ids)
        columns = [c for c in columns if c.id in wanted]
    teams, values = team_values(task, columns)
    return correlations_of(columns=columns, teams=teams, values=values)


def correlations_of(
    *, columns: Sequence[Column], teams: Sequence[str], values: Mapping[str, Sequence[Value]]
) -> Correlations:
    """The correlation matrix of ``columns`` from team values already read (``values`` may
    hold more columns)."""
    wanted = {c.id: list(values[c.id]) for c in columns}
    return Correlations(columns=list(columns), teams=list(teams), values=wanted, matrix=ranking.spearman_matrix(wanted))


@dataclass(frozen=True)
class Comparison:
    first: Column
    second: Column
    changes: list[ranking.RankChange]
    swaps: list[tuple[str, str]]
    correlation: ranking.Correlation


def compare_columns(*, task: Task, first: Column, second: Column) -> Comparison:
    """How two metrics order the teams differently: rank moves and swapped pairs."""
    teams, values = team_values(task, [first, second])
    return compare_values(first=first, second=second, teams=teams, values=values)


def compare_values(
    *, first: Column, second: Column, teams: Sequence[str], values: Mapping[str, Sequence[Value]]
) -> Comparison:
    """:func:`compare_columns` on team values already read."""
    a, b = values[first.id], values[second.id]
    return Comparison(
        first=first,
        second=second,
        changes=ranking.rank_changes(teams, a, b),
        swaps=ranking.swapped_pairs(teams, a, b),
        correlation=ranking.spearman(a, b),
    )


def visible_submissions(*, task: Task, user) -> QuerySet[Submission]:
    """Submissions a person may see: organisers all; participants their team's (everyone's
    once results are public); visitors none.
    """
    submissions = task.submissions.select_related("team", "file").defer("file__content")
    if task.is_organiser(user):
        return submissions
    if not user.is_authenticated:
        return submissions.none()
    return submissions.filter(team__membership__user=user)
