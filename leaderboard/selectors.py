"""Selectors: every function that reads for a page, an export or a chart.

A leaderboard column is a metric of the registry, raw or calibrated, identified by its
*column id*: the metric key, with ``_c`` appended for the calibrated version (as paper 000's
Figure 2 writes ``metric_c``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.db.models import QuerySet

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


def _best_key(submission: Submission, column: Column) -> tuple:
    return (*ranking.sort_key(metric_value(submission, column)), -submission.created_at.timestamp())


def counting_submissions(task: Task) -> dict[int, Submission]:
    """For each team, the scored submission that counts under the task's policy."""
    scored: dict[int, list[Submission]] = {}
    for submission in task.submissions.scored().order_by("-created_at", "-id"):
        scored.setdefault(submission.team_id, []).append(submission)
    chosen = dict(Team.objects.filter(task=task).values_list("pk", "chosen_submission_id"))
    primary = Column(next(m for m in leaderboard_metrics(tuple(task.labels)) if m.key == task.primary_metric), False)
    counting: dict[int, Submission] = {}
    for team_id, submissions in scored.items():
        if task.counting == Task.Counting.BEST:
            counting[team_id] = min(submissions, key=lambda s: _best_key(s, primary))
        elif task.counting == Task.Counting.CHOSEN:
            counting[team_id] = next((s for s in submissions if s.pk == chosen.get(team_id)), submissions[0])
        else:
            counting[team_id] = submissions[0]
    return counting


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
    counting = counting_submissions(task)
    entries = []
    for team in Team.objects.filter(task=task):
        submission = counting.get(team.pk)
        values = {c.id: metric_value(submission, c) if submission else None for c in columns}
        entries.append(Entry(name=team.name, team=team, submission=submission, values=values))
    for column in columns:
        ranks = ranking.competition_ranks([e.values[column.id] for e in entries])
        for entry, rank in zip(entries, ranks, strict=True):
            entry.ranks[column.id] = rank
    baselines = [
        Entry(name=b.name, baseline=b, values={c.id: metric_value(b, c) for c in columns})
        for b in Baseline.objects.filter(task=task)
    ]
    return entries, baselines


def leaderboard(*, task: Task, calibrated: bool | None = False, sort: str | None = None) -> Board:
    """The task's leaderboard: every team, a column per ranking metric, each with its rank.

    ``calibrated``: raw columns, calibrated ones, or (``None``, for the exports) both. Rows
    sort by ``sort`` (a column id; default the primary metric), undefined values last, ties
    by name.
    """
    columns = columns_of(task, calibrated=calibrated)
    sort_column = next((c for c in columns if c.id == sort), None) or next(
        (c for c in columns if c.metric.key == task.primary_metric), columns[0]
    )
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
    return Correlations(columns=columns, teams=teams, values=values, matrix=ranking.spearman_matrix(values))


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
