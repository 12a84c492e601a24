"""What each results page shows, assembled from the board selectors: a view parses its request,
calls one of these, and renders the returned context.

The costly parts (a board's rows, the disagreement analysis, a comparison) are cached under
keys stamped with the scores they were computed from (:mod:`leaderboard.caching`), so nothing
stale is ever served.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

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
    leaderboard,
    paired_columns,
    primary_column,
    sorted_by,
    team_values,
)
from leaderboard.selectors.feedback import Level, feedback_level, primary_text
from leaderboard.selectors.participation import team_of, visible_submissions
from scoring.engine.columns import PAPER_SET_KEYS, Column
from scoring.engine.gold import GoldChange
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

ORGANISER_SUBMISSIONS_SHOWN = 200
"""How many of a task's latest submissions its page lists for an organiser."""


def board_page(*, task: Task, calibrated: bool, sort: str | None) -> dict[str, Any]:
    """The leaderboard: its columns, the sorted column and the rows as ready HTML (cached)."""
    columns = columns_of(task, calibrated=calibrated)
    sort_column = sorted_by(task, columns, sort)
    rows = caching.cached(
        task,
        caching.scores_stamp(task),
        ("leaderboard", calibrated, sort_column.id),
        lambda: presenters.board_rows(leaderboard(task=task, calibrated=calibrated, sort=sort_column.id)),
    )
    return {
        "task": task,
        "board": presenters.BoardPage(columns=columns, sort=sort_column, rows=rows),
        "calibrated": calibrated,
        "switch_sort": sort_column.counterpart().id,
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


def disagreement_page(
    *, task: Task, set_name: str | None, first_id: str | None, second_id: str | None
) -> dict[str, Any]:
    """Where the rankings disagree: the Spearman heatmap of a column set (paper 000, Figure 2),
    the rank chart, and a comparison of two columns (by default the primary metric and the
    column that disagrees with it most)."""
    set_name = set_name if set_name in COLUMN_SETS else next(iter(COLUMN_SETS))
    columns = paired_columns(task, paper_set=set_name == "paper")
    every_column = paired_columns(task)
    stamp = caching.scores_stamp(task)
    analysis = caching.cached(
        task,
        stamp,
        ("disagreements", [c.id for c in columns]),
        lambda: _analysis(task, columns=columns, every_column=every_column),
    )
    matrix = analysis["matrix"]
    by_id = {c.id: c for c in every_column}
    first = by_id.get(first_id or "") or primary_column(task)
    second = by_id.get(second_id or "") or most_disagreeing(first, columns, matrix) or first.counterpart()
    comparison: Comparison = caching.cached(
        task,
        stamp,
        ("comparison", first.id, second.id),
        lambda: compare_values(first=first, second=second, teams=analysis["teams"], values=analysis["values"]),
    )
    defined_counts = {c.id: matrix[c.id][c.id].n_teams for c in columns}
    n_scored = max(defined_counts.values(), default=0)
    return {
        "task": task,
        "set_name": set_name,
        "column_sets": COLUMN_SETS,
        "column_set_notes": COLUMN_SET_NOTES,
        "columns": columns,
        "every_column": every_column,
        "n_teams": len(analysis["teams"]),
        "n_scored": n_scored,
        "partly_undefined": [(c, defined_counts[c.id]) for c in columns if defined_counts[c.id] < n_scored],
        "heatmap": analysis["heatmap"],
        "rank_chart": analysis["rank_chart"],
        "first": first,
        "second": second,
        "comparison": comparison,
    }


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
    board = leaderboard(task=task, calibrated=None) if can_view_board(user, task) else None
    entry = board.entry_of(submission) if board else None
    ranks = entry.ranks if entry else {}
    rows = [
        {
            "column": raw,
            "calibrated_column": raw.counterpart(),
            "raw": raw.value(submission),
            "calibrated": raw.counterpart().value(submission),
            "rank": ranks.get(raw.id),
            "calibrated_rank": ranks.get(raw.counterpart().id),
        }
        for raw in columns_of(task, calibrated=False)
    ]
    metrics = submission.metrics or {}
    context.update(
        rows=rows,
        ranked=entry is not None,
        n_teams=len(board.entries) if board else 0,
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
    """A row of a submissions table: the submission and its primary score as the person may
    see it (``None``: not shown)."""

    submission: Submission
    primary: str | None


def task_page(*, task: Task, user) -> dict[str, Any]:
    """A task's page: its description, the person's team and submissions, and for organisers
    the latest submissions of every team."""
    team = team_of(task=task, user=user)
    is_organiser = task.is_organiser(user)
    level = feedback_level(task=task, user=user)
    mine = visible_submissions(task=task, user=user).filter(team=team) if team else []
    context = {
        "task": task,
        "team": team,
        "is_organiser": is_organiser,
        "board_visible": can_view_board(user, task),
        "feedback": level,
        "submissions": [SubmissionRow(s, primary_text(s, level)) for s in mine],
        "primary_metric": BY_KEY[task.primary_metric],
    }
    if is_organiser:
        latest = visible_submissions(task=task, user=user)[:ORGANISER_SUBMISSIONS_SHOWN]
        context["all_submissions"] = [SubmissionRow(s, primary_text(s, Level.ALL)) for s in latest]
    return context
