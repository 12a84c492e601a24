"""Leaderboards: each team's counting submission, its values under every column and its ranks,
and the comparisons between the rankings of two or more columns.

Columns are the engine's (:class:`scoring.engine.columns.Column`): plain data naming a metric,
a class for per-class columns, and whether the metric is calibrated.
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
    When,
    Window,
)
from django.db.models import Value as SQLValue
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, RowNumber

from leaderboard.models import ALL_ITEMS, Baseline, Counting, Phase, Submission, Task, Team
from scoring.engine import columns as board_columns
from scoring.engine import ranking
from scoring.engine.columns import Column, score_fields
from scoring.engine.metrics import Value


def columns_of(task: Task, *, calibrated: bool | None = False) -> list[Column]:
    """The task's ranking columns: raw ones, calibrated ones, or (``None``) both."""
    return board_columns.ranking_columns(task.labels, calibrated=calibrated)


def paired_columns(task: Task, *, paper_set: bool = False) -> list[Column]:
    """The task's columns with each metric followed by its calibrated version (Figure 2)."""
    return board_columns.paired_columns(task.labels, paper_set=paper_set)


def column_by_id(task: Task, column_id: str) -> Column | None:
    """The task's column named ``column_id`` (raw or calibrated), if any."""
    return board_columns.column_by_id(columns_of(task, calibrated=None), column_id)


def primary_column(task: Task) -> Column:
    """The raw column of the task's primary metric."""
    return Column(task.primary_metric)


def _counting_order(phase: Phase, part: str) -> list[OrderBy]:
    """The order, within a team, that puts its counting submission in the phase first (under
    "best", best on ``part``: the items the board is computed on).

    Latest: newest upload first (then the highest id). Best: the primary metric's value,
    highest first and undefined last, ties to the newest. Chosen: the team's chosen
    submission, else the latest.
    """
    newest = [F("created_at").desc(), F("id").desc()]
    if phase.counting == Counting.BEST:
        path = (
            f"metrics__{phase.primary_metric}"
            if part == ALL_ITEMS
            else f"parts__{part}__metrics__{phase.primary_metric}"
        )
        primary = Cast(KT(path), FloatField())
        return [primary.desc(nulls_last=True), *newest]
    if phase.counting == Counting.CHOSEN:
        chosen_first = Case(When(chosen=True, then=SQLValue(0)), default=SQLValue(1), output_field=IntegerField())
        return [chosen_first.asc(), *newest]
    return newest


ALL_SCORE_FIELDS = score_fields(columns_of_both := board_columns.ranking_columns(("_",), calibrated=None))
"""Every JSON column of scores a board may read (suite and per-class values, raw and calibrated)."""
del columns_of_both


def counting_submissions(
    phase: Phase, *, fields: Sequence[str] = ALL_SCORE_FIELDS, part: str | None = None
) -> dict[int, Submission]:
    """For each team, the scored submission that counts in the phase under its policy, judged
    on ``part`` of the test set (default: the part the phase shows now, :meth:`Phase.shown_part`).

    One query that returns one row per team, with only the JSON columns in ``fields``:
    ``DISTINCT ON (team_id)`` where the database has it (PostgreSQL), else the first row of a
    window over each team's submissions. ``phase_id`` stays loaded, or reading
    ``submission.phase`` would cost a query per row.
    """
    part = part or phase.shown_part()
    if part != ALL_ITEMS and set(fields) & set(ALL_SCORE_FIELDS):
        fields = (*(f for f in fields if f not in ALL_SCORE_FIELDS), "parts")
    scored = phase.submissions.rankable().only(
        "id", "phase_id", "team_id", "created_at", "scored_gold_version", "chosen", *fields
    )
    order = _counting_order(phase, part)
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
    values: dict[str, Value] = field(default_factory=dict)
    ranks: dict[str, int | None] = field(default_factory=dict)
    being_rescored: bool = False
    """Scored against an older gold file; its scores stand until the new ones are written."""


@dataclass
class Board:
    phase: Phase
    columns: list[Column]
    entries: list[Entry]
    baselines: list[Entry]
    sort: Column
    part: str = ALL_ITEMS
    """What the values are computed on: every item, or a part of a split test set."""

    @property
    def task(self) -> Task:
        return self.phase.task

    @property
    def scored(self) -> list[Entry]:
        """Teams with a scored submission, in board order."""
        return [entry for entry in self.entries if entry.submission is not None]

    @property
    def unscored(self) -> list[Entry]:
        """Teams without a scored submission (listed apart, never ranked)."""
        return [entry for entry in self.entries if entry.submission is None]

    def entry_of(self, submission: Submission) -> Entry | None:
        """The row whose counting submission is ``submission``, if it counts."""
        return next((e for e in self.entries if e.submission and e.submission.pk == submission.pk), None)


def _entries(phase: Phase, columns: Sequence[Column], part: str) -> tuple[list[Entry], list[Entry]]:
    """Every team of the task with its counting submission's values and ranks in the phase,
    then the phase's baselines, on ``part`` of the test set; only the JSON columns that
    ``columns`` read are loaded."""
    fields = score_fields(columns) if part == ALL_ITEMS else ("parts",)
    counting = counting_submissions(phase, fields=fields, part=part)
    entries = []
    for team in Team.objects.filter(task=phase.task_id, removed_at__isnull=True).only("id", "name", "task_id"):
        submission = counting.get(team.pk)
        scores = submission.part(part) if submission is not None else None
        values = {c.id: c.value(scores) for c in columns}
        rescoring = submission is not None and submission.scored_gold_version != phase.gold_version
        entries.append(Entry(name=team.name, team=team, submission=submission, values=values, being_rescored=rescoring))
    for column in columns:
        ranks = ranking.competition_ranks([e.values[column.id] for e in entries])
        for entry, rank in zip(entries, ranks, strict=True):
            entry.ranks[column.id] = rank
    baselines = [
        Entry(name=b.name, values={c.id: c.value(b.part(part)) for c in columns})
        for b in Baseline.objects.filter(phase=phase).only("id", "name", "phase_id", *fields)
    ]
    return entries, baselines


def sorted_by(task: Task | Phase, columns: Sequence[Column], sort: str | None) -> Column:
    """The column a board sorts by: ``sort`` if it is one of ``columns``, else the primary metric."""
    return board_columns.column_by_id(columns, sort or "") or next(
        (c for c in columns if c.label is None and c.key == task.primary_metric), columns[0]
    )


def leaderboard(
    *, phase: Phase, calibrated: bool | None = False, sort: str | None = None, part: str | None = None
) -> Board:
    """The phase's leaderboard: every team, a column per ranking metric, each with its rank,
    on ``part`` of the test set (default: the part the phase shows now).

    ``calibrated``: raw columns, calibrated ones, or (``None``, for the exports) both. Rows
    sort by ``sort`` (a column id; default the primary metric), undefined values last, ties
    by name.
    """
    columns = columns_of(phase.task, calibrated=calibrated)
    sort_column = sorted_by(phase.task, columns, sort)
    part = part or phase.shown_part()
    entries, baselines = _entries(phase, columns, part)
    entries.sort(key=lambda e: (*ranking.sort_key(e.values[sort_column.id]), e.name.lower()))
    baselines.sort(key=lambda e: (*ranking.sort_key(e.values[sort_column.id]), e.name.lower()))
    return Board(phase=phase, columns=columns, entries=entries, baselines=baselines, sort=sort_column, part=part)


def team_values(
    phase: Phase, columns: Sequence[Column], part: str | None = None
) -> tuple[list[str], dict[str, list[Value]]]:
    """Team names and, per column id, the teams' values in the phase (on ``part``; default the
    part the phase shows now), in that order."""
    entries, _ = _entries(phase, columns, part or phase.shown_part())
    return [e.name for e in entries], {c.id: [e.values[c.id] for e in entries] for c in columns}


@dataclass(frozen=True)
class Correlations:
    columns: list[Column]
    teams: list[str]
    values: dict[str, list[Value]]
    matrix: dict[str, dict[str, ranking.Correlation]]


def rank_correlations(*, phase: Phase, column_ids: Iterable[str] | None = None) -> Correlations:
    """Spearman's rho between the team rankings of every pair of columns in a phase (paper 000,
    Fig. 2)."""
    columns = columns_of(phase.task, calibrated=None)
    if column_ids is not None:
        wanted = list(column_ids)
        columns = [c for c in columns if c.id in wanted]
    teams, values = team_values(phase, columns)
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


def compare_columns(*, phase: Phase, first: Column, second: Column) -> Comparison:
    """How two metrics order the teams of a phase differently: rank moves and swapped pairs."""
    teams, values = team_values(phase, [first, second])
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
