"""What each results page shows, assembled from the board selectors: a view parses its request,
calls one of these, and renders the returned context.

The costly parts (a board's rows, the disagreement analysis, a comparison) are cached under
keys stamped with the scores they were computed from (:mod:`leaderboard.caching`), so nothing
stale is ever served.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from leaderboard import caching, charts, presenters
from leaderboard.models import Submission, Task
from leaderboard.permissions import can_view_board, is_member
from leaderboard.selectors.boards import (
    Comparison,
    column_by_id,
    columns_of,
    compare_columns,
    compare_values,
    correlations_of,
    counting_submissions,
    leaderboard,
    paired_columns,
    primary_column,
    sorted_by,
    team_values,
)
from leaderboard.selectors.feedback import Level, feedback_level, primary_text
from leaderboard.selectors.organisers import organiser_actions
from leaderboard.selectors.participation import counting_reason, quota, team_of, visible_submissions
from scoring.engine.columns import PAPER_SET_KEYS, Column
from scoring.engine.gold import GoldChange
from scoring.engine.metrics import Value
from scoring.engine.ranking import Correlation
from scoring.engine.registry import BY_KEY, CLASS_MEASURES, PROPERTY_NAMES

COLUMN_SETS: dict[str, str] = {"paper": "Opitz's SemEval-2017 set (Table 8)", "all": "all metrics"}
"""The heatmap's column sets (``?set=``); the first is the default."""

COLUMN_SET_NOTES: dict[str, str] = {
    "paper": "The metrics of @opitz-overview, Table 8 and Figure 2 ("
    + ", ".join(BY_KEY[key].symbol for key in PAPER_SET_KEYS)
    + ", then each class's recall), each beside its prevalence-calibrated version.",
    "all": "Every ranking metric of the suite, then each class's recall, each beside its prevalence-calibrated "
    "version.",
}
"""One line per column set saying which metrics it holds (``@key`` cites a reference)."""

DISAGREEMENT_FIGURES: dict[str, tuple[str, str]] = {
    "heatmap": ("heatmap", "Rank correlation between metrics"),
    "rank-chart": ("rank_chart", "Each team's rank under each metric"),
}
"""The disagreement page's figures that download as files: name (in URLs and file names) →
(key in the cached analysis, heading)."""

ORGANISER_SUBMISSIONS_SHOWN = 10
"""How many of a task's latest submissions its page lists for an organiser (the organisers'
submissions page lists them all, paginated)."""


@dataclass(frozen=True)
class DecisionNote:
    """An organiser's decision as the board shows it (plain data, so it caches)."""

    created_at: dt.datetime
    kind: str
    team: str
    submission_id: int | None
    reason: str

    @classmethod
    def of(cls, action) -> DecisionNote:
        return cls(
            action.created_at, action.kind, action.team.name if action.team else "", action.submission_id, action.reason
        )


def board_page(*, task: Task, calibrated: bool, sort: str | None) -> dict[str, Any]:
    """The leaderboard: its columns, the sorted column and the rows as ready HTML (cached)."""
    columns = columns_of(task, calibrated=calibrated)
    sort_column = sorted_by(task, columns, sort)
    stamp = caching.scores_stamp(task)
    rows = caching.cached(
        task,
        stamp,
        ("leaderboard", calibrated, sort_column.id),
        lambda: presenters.board_rows(leaderboard(task=task, calibrated=calibrated, sort=sort_column.id)),
    )
    return {
        "task": task,
        "board": presenters.BoardPage(columns=columns, sort=sort_column, rows=rows),
        "calibrated": calibrated,
        "switch_sort": sort_column.counterpart().id,
        "decisions": caching.cached(
            task, stamp, ("decisions",), lambda: [DecisionNote.of(action) for action in organiser_actions(task=task)]
        ),
    }


def metric_page(*, task: Task, column_id: str) -> dict[str, Any] | None:
    """One column's page: definition, properties, chance baseline, its ranking and how far it
    is from the primary metric's ranking. ``None`` if the task has no such column."""
    column = column_by_id(task, column_id)
    if column is None:
        return None
    board = leaderboard(task=task, calibrated=column.calibrated, sort=column.id)
    primary = primary_column(task)
    comparison = compare_columns(task=task, first=primary, second=column) if primary != column else None
    moves = {change.team: change for change in comparison.changes} if comparison else {}
    metric = column.metric
    n_classes = len(task.labels)
    return {
        "task": task,
        "column": column,
        "metric": metric,
        "board": board,
        "rows": [(entry, moves.get(entry.name)) for entry in board.scored],
        "unscored": board.unscored,
        "primary": primary,
        "comparison": comparison,
        "movers": [change for change in comparison.changes if change.shift] if comparison else [],
        "counterpart": column.counterpart(),
        "properties": [(code, name, metric.properties[code]) for code, name in PROPERTY_NAMES.items()],
        "n_classes": n_classes,
        "chance": metric.baseline.value(n_classes) if metric.baseline else None,
    }


def most_disagreeing(
    first: Column, columns: Iterable[Column], matrix: Mapping[str, Mapping[str, Correlation]]
) -> Column | None:
    """The column whose ranking is furthest from ``first``'s (lowest defined rho), if any."""
    row = matrix.get(first.id, {})
    candidates = [(row[c.id].rho, c) for c in columns if c.id != first.id and c.id in row and row[c.id].rho is not None]
    return min(candidates, key=lambda pair: pair[0])[1] if candidates else None


def _analysis(task: Task, *, columns: list[Column], every_column: list[Column]) -> dict[str, Any]:
    """The disagreement page's costly part: every column's team values, the correlations of
    ``columns`` and both figures."""
    teams, values = team_values(task, every_column)
    correlations = correlations_of(columns=columns, teams=teams, values=values)
    return {
        "teams": teams,
        "values": values,
        "matrix": correlations.matrix,
        "heatmap": charts.correlation_heatmap(columns=columns, matrix=correlations.matrix),
        "rank_chart": charts.rank_lines(columns=columns, teams=teams, values=correlations.values),
    }


@dataclass(frozen=True)
class SetAnalysis:
    """The disagreement analysis of one column set, as cached, with what it was computed from."""

    set_name: str
    columns: list[Column]
    every_column: list[Column]
    stamp: str
    results: dict[str, Any]


def _set_analysis(task: Task, set_name: str | None) -> SetAnalysis:
    """The cached analysis of the column set ``set_name`` (the first set when unknown)."""
    set_name = set_name if set_name in COLUMN_SETS else next(iter(COLUMN_SETS))
    columns = paired_columns(task, paper_set=set_name == "paper")
    every_column = paired_columns(task)
    stamp = caching.scores_stamp(task)
    results = caching.cached(
        task,
        stamp,
        ("disagreements", [c.id for c in columns]),
        lambda: _analysis(task, columns=columns, every_column=every_column),
    )
    return SetAnalysis(set_name=set_name, columns=columns, every_column=every_column, stamp=stamp, results=results)


def figure_stem(*, task: Task, figure: str, set_name: str) -> str:
    """The file name, without extension, of a disagreement figure downloaded as HTML, PNG or SVG:
    ``semeval-2017-4a-heatmap-paper``. Slugs, figure and set names are ASCII letters, digits and
    hyphens already (URL patterns and the dicts above), so nothing needs quoting."""
    return f"{task.slug}-{figure}-{set_name}"


def disagreement_figure(*, task: Task, set_name: str | None, figure: str) -> dict[str, Any]:
    """One figure of the disagreement page for download (``figure`` a key of
    :data:`DISAGREEMENT_FIGURES`): the same cached JSON the page draws, for the same column set."""
    analysis = _set_analysis(task, set_name)
    key, heading = DISAGREEMENT_FIGURES[figure]
    return {
        "figure": analysis.results[key],
        "title": f"{heading} · {task.title}",
        "note": f"Metrics: {COLUMN_SETS[analysis.set_name]}.",
        "filename": figure_stem(task=task, figure=figure, set_name=analysis.set_name),
    }


def disagreement_page(
    *, task: Task, set_name: str | None, first_id: str | None, second_id: str | None
) -> dict[str, Any]:
    """Where the rankings disagree: the Spearman heatmap of a column set (paper 000, Figure 2),
    the rank chart, and a comparison of two columns (by default the primary metric and the
    column that disagrees with it most)."""
    cached = _set_analysis(task, set_name)
    columns, analysis = cached.columns, cached.results
    matrix = analysis["matrix"]
    by_id = {c.id: c for c in cached.every_column}
    first = by_id.get(first_id or "") or primary_column(task)
    second = by_id.get(second_id or "") or most_disagreeing(first, columns, matrix) or first.counterpart()
    comparison: Comparison = caching.cached(
        task,
        cached.stamp,
        ("comparison", first.id, second.id),
        lambda: compare_values(first=first, second=second, teams=analysis["teams"], values=analysis["values"]),
    )
    defined_counts = {c.id: matrix[c.id][c.id].n_teams for c in columns}
    n_scored = max(defined_counts.values(), default=0)
    return {
        "task": task,
        "set_name": cached.set_name,
        "column_sets": COLUMN_SETS,
        "column_set_notes": COLUMN_SET_NOTES,
        "columns": columns,
        "every_column": cached.every_column,
        "n_teams": len(analysis["teams"]),
        "n_scored": n_scored,
        "partly_undefined": [(c, defined_counts[c.id]) for c in columns if defined_counts[c.id] < n_scored],
        "heatmap": analysis["heatmap"],
        "rank_chart": analysis["rank_chart"],
        "figure_stems": {
            name: figure_stem(task=task, figure=name, set_name=cached.set_name) for name in DISAGREEMENT_FIGURES
        },
        "first": first,
        "second": second,
        "comparison": comparison,
    }


@dataclass(frozen=True)
class MetricRow:
    """One metric of a submission: its raw column and value, the calibrated ones, and the ranks
    where the board may be shown and this submission is the one that counts."""

    column: Column
    raw: Value
    calibrated: Value
    rank: int | None
    calibrated_rank: int | None

    @property
    def calibrated_column(self) -> Column:
        return self.column.counterpart()


@dataclass(frozen=True)
class SubmissionScores:
    rows: list[MetricRow]
    ranked: bool
    n_teams: int


def submission_scores(*, submission: Submission, user) -> SubmissionScores:
    """Every metric of a scored submission, raw and calibrated, with its ranks where this person
    may see the board (the page's table and the API's answer both come from here; whether the
    person may see metrics at all is the feedback policy's, asked before)."""
    task = submission.task
    board = leaderboard(task=task, calibrated=None) if can_view_board(user, task) else None
    entry = board.entry_of(submission) if board else None
    ranks = entry.ranks if entry else {}
    rows = [
        MetricRow(
            column=raw,
            raw=raw.value(submission),
            calibrated=raw.counterpart().value(submission),
            rank=ranks.get(raw.id),
            calibrated_rank=ranks.get(raw.counterpart().id),
        )
        for raw in columns_of(task, calibrated=False)
    ]
    return SubmissionScores(rows=rows, ranked=entry is not None, n_teams=len(board.entries) if board else 0)


def submission_scorecard(*, submission: Submission, user) -> dict[str, Any]:
    """A submission's page: status, and once scored what the feedback policy lets this person
    see (:mod:`leaderboard.selectors.feedback`): its metrics raw and calibrated with its ranks
    (where the board may be shown and this submission counts), the confusion matrices, the
    per-class table and the two macro F1s; or the primary score alone; or only that it was
    scored."""
    task = submission.task
    level = feedback_level(task=task, user=user)
    context: dict[str, Any] = {
        "task": task,
        "submission": submission,
        "is_member": is_member(user, submission),
        "feedback": level,
        "primary_text": primary_text(submission, level),
        "primary_metric": BY_KEY[task.primary_metric],
        "can_choose": task.counting == Task.Counting.CHOSEN and not task.is_closed(),
    }
    if submission.status != Submission.Status.SCORED or not level.shows_metrics:
        return context
    scores = submission_scores(submission=submission, user=user)
    metrics = submission.metrics or {}
    context.update(
        rows=scores.rows,
        ranked=scores.ranked,
        n_teams=scores.n_teams,
        f1_averaged=metrics.get("macro_f1"),
        f1_of_averages=metrics.get("macro_f1_of_averages"),
        f1_gap=metrics.get("macro_f1_gap"),
    )
    if level.shows_matrices:
        context.update(
            labels=task.labels,
            class_measures=CLASS_MEASURES,
            heatmap_raw=charts.confusion_heatmap(submission.confusion_matrix, task.labels, title="Raw counts"),
            heatmap_calibrated=charts.confusion_heatmap(
                submission.calibrated_matrix(), task.labels, title="Prevalence-calibrated"
            ),
        )
    return context


def gold_change_page(*, task: Task, change: GoldChange) -> dict[str, Any]:
    """The preview of a new gold file: what changes, and which submissions would fail."""
    submissions = task.submissions.exclude(status=Submission.Status.FAILED)
    return {
        "change": change,
        "pending_name": task.pending_gold_file.name if task.pending_gold_file else "",
        "class_counts": [(label, change.counts_old[label], change.counts_new[label]) for label in task.labels],
        "would_fail": 0 if change.same_ids else submissions.count(),
        "n_submissions": task.submissions.count(),
    }


@dataclass(frozen=True)
class SubmissionRow:
    """A row of a submissions table: the submission, its primary score as the person may see it
    (``None``: not shown), and whether it is the one that counts for its team."""

    submission: Submission
    primary: str | None
    counts: bool = False


def _team_rows(*, task: Task, team, user, level: Level) -> tuple[list[SubmissionRow], str | None]:
    """A team's submissions for its own members, newest first, with the one that counts marked
    and why. Under "best" counting the mark compares scores, so it is shown only where scores
    are (a hidden board's "validated only" team must not learn which upload scored best)."""
    mine = list(visible_submissions(task=task, user=user).filter(team=team))
    show_mark = task.counting != Task.Counting.BEST or level.shows_metrics
    counting = counting_submissions(task, fields=()).get(team.pk) if show_mark else None
    rows = [SubmissionRow(s, primary_text(s, level), counts=counting is not None and s.pk == counting.pk) for s in mine]
    return rows, counting_reason(task, team) if counting else None


def task_page(*, task: Task, user) -> dict[str, Any]:
    """A task's page: its description, the person's team, its submissions (which counts, the
    quota used and left), and for organisers the latest submissions of every team."""
    team = team_of(task=task, user=user)
    is_organiser = task.is_organiser(user)
    level = feedback_level(task=task, user=user)
    context = {
        "task": task,
        "team": team,
        "is_organiser": is_organiser,
        "board_visible": can_view_board(user, task),
        "feedback": level,
        "submissions": [],
        "primary_metric": BY_KEY[task.primary_metric],
    }
    if team is not None:
        rows, reason = _team_rows(task=task, team=team, user=user, level=level)
        context.update(submissions=rows, counting_reason=reason, quota=quota(task=task, team=team, now=timezone.now()))
    if is_organiser:
        latest = visible_submissions(task=task, user=user)[:ORGANISER_SUBMISSIONS_SHOWN]
        context["all_submissions"] = [SubmissionRow(s, primary_text(s, Level.ALL)) for s in latest]
    return context


def team_page(*, task: Task, user) -> dict[str, Any] | None:
    """A member's page of their team: members, invite code, system description, submissions
    with the one that counts and the quota. ``None`` when the person has no team here."""
    team = team_of(task=task, user=user)
    if team is None:
        return None
    level = feedback_level(task=task, user=user)
    rows, reason = _team_rows(task=task, team=team, user=user, level=level)
    return {
        "task": task,
        "team": team,
        "members": list(team.members.order_by("username").values_list("username", flat=True)),
        "submissions": rows,
        "counting_reason": reason,
        "quota": quota(task=task, team=team, now=timezone.now()),
        "editable": not task.is_closed(),
    }
