"""What a phase's leaderboard, a metric's page and the board's downloads show (the page, the
API and the exports read the same cached pieces).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from leaderboard import exports, stability
from leaderboard.models import Phase
from leaderboard.pages import board_rows
from leaderboard.results_cache import cached
from leaderboard.selectors.boards import (
    column_by_id,
    columns_of,
    compare_columns,
    leaderboard,
    primary_column,
    sorted_by,
)
from leaderboard.selectors.organisers import organiser_actions
from scoring.engine.columns import Column
from scoring.engine.latex import latex_table
from scoring.engine.registry import PROPERTY_NAMES


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


@dataclass(frozen=True)
class BoardShown:
    """The costly part of a leaderboard page, as cached: its rows as ready HTML, what the page
    says of the intervals, the teams tied with the leader, the organisers' decisions."""

    rows: board_rows.BoardRows
    intervals: stability.IntervalsNote
    tied_with_leader: list[str]
    decisions: list[DecisionNote]


def _board_shown(phase: Phase, *, calibrated: bool, sort_column: Column) -> BoardShown:
    intervals = stability.intervals_of(phase=phase)
    board = leaderboard(phase=phase, calibrated=calibrated, sort=sort_column.id)
    return BoardShown(
        rows=board_rows.board_rows(board, intervals=intervals),
        intervals=intervals.note(),
        tied_with_leader=intervals.tied_with_leader(sort_column),
        decisions=[DecisionNote.of(action) for action in organiser_actions(task=phase.task, phase=phase)],
    )


def board_page(*, phase: Phase, calibrated: bool, sort: str | None) -> dict[str, Any]:
    """A phase's leaderboard: its columns, the sorted column and the rows as ready HTML (cached)."""
    task = phase.task
    columns = columns_of(task, calibrated=calibrated)
    sort_column = sorted_by(task, columns, sort)
    shown = cached(
        phase,
        "leaderboard",
        (calibrated, sort_column.id),
        lambda: _board_shown(phase, calibrated=calibrated, sort_column=sort_column),
    )
    return {
        "task": task,
        "phase": phase,
        "board": board_rows.BoardPage(columns=columns, sort=sort_column, rows=shown.rows),
        "calibrated": calibrated,
        "switch_sort": sort_column.counterpart().id,
        "intervals": shown.intervals,
        "tied_with_leader": shown.tied_with_leader,
        "decisions": shown.decisions,
    }


def board_api(*, phase: Phase, calibrated: bool, sort: str | None) -> dict[str, Any]:
    """The API's leaderboard (cached): the JSON download's rows for the raw or calibrated
    columns sorted by ``sort``, and the intervals in the CLI's layout."""

    sort_id = sorted_by(phase.task, columns_of(phase.task, calibrated=calibrated), sort).id

    def compute() -> dict[str, Any]:
        board = leaderboard(phase=phase, calibrated=calibrated, sort=sort_id)
        data = exports.board_data(board)  # the download's very shape, built in one place
        intervals = stability.intervals_of(phase=phase)
        return {**data, "sort": board.sort.id, "calibrated": calibrated, "intervals": intervals.as_api()}

    return cached(phase, "api-leaderboard", (calibrated, sort_id), compute)


def export(*, phase: Phase, kind: str, calibrated: bool | None = None, sort: str | None = None) -> str:
    """A board download (cached): ``csv`` or ``json`` (every column), or ``tex`` (the columns the
    page shows, raw or calibrated, in its order)."""
    sort_id = sorted_by(phase.task, columns_of(phase.task, calibrated=calibrated), sort).id

    def compute() -> str:
        board = leaderboard(phase=phase, calibrated=calibrated, sort=sort_id)
        if kind == "csv":
            return exports.board_csv(board)
        if kind == "json":
            return exports.board_json(board)
        return latex_table(
            teams=[entry.name for entry in board.scored],
            columns=board.columns,
            values={column.id: [entry.values[column.id] for entry in board.scored] for column in board.columns},
            title=f"{phase.task.title} ({phase.name})",
        )

    return cached(phase, f"export-{kind}", (calibrated, sort_id), compute)


def _interval_of(intervals: stability.Intervals, column: Column, entry) -> tuple[dict | None, bool]:
    """A team's intervals under ``column``, and whether it is tied with a leader it is not."""
    interval = intervals.interval(column, entry.team.pk) if entry.team else None
    rank = interval and interval["rank"]
    return interval, bool(rank) and rank[0] == 1 and entry.ranks[column.id] != 1


def metric_page(*, phase: Phase, column_id: str) -> dict[str, Any] | None:
    """One column's page in a phase: definition, properties, chance baseline, its ranking and
    how far it is from the primary metric's ranking. ``None`` if the task has no such column."""
    task = phase.task
    column = column_by_id(task, column_id)
    if column is None:
        return None
    metric = column.metric
    n_classes = len(task.labels)
    return {
        "task": task,
        "phase": phase,
        "column": column,
        "metric": metric,
        "primary": primary_column(task),
        "counterpart": column.counterpart(),
        "properties": [(code, name, metric.properties[code]) for code, name in PROPERTY_NAMES.items()],
        "n_classes": n_classes,
        "chance": metric.baseline.value(n_classes) if metric.baseline else None,
        **cached(phase, "metric", (column.id,), lambda: _metric_ranking(phase, column)),
    }


def _metric_ranking(phase: Phase, column: Column) -> dict[str, Any]:
    """The costly part of a metric's page, as cached: the teams ranked under it, their intervals,
    and the comparison with the primary metric's ranking."""
    board = leaderboard(phase=phase, calibrated=column.calibrated, sort=column.id)
    primary = primary_column(phase.task)
    comparison = compare_columns(phase=phase, first=primary, second=column) if primary != column else None
    moves = {change.team: change for change in comparison.changes} if comparison else {}
    intervals = stability.intervals_of(phase=phase)
    scored = board.scored
    return {
        "baselines": board.baselines,
        "rows": [(entry, moves.get(entry.name)) for entry in scored],
        "team_intervals": {entry.name: _interval_of(intervals, column, entry) for entry in scored},
        "intervals": intervals.note(),
        "tied_with_leader": intervals.tied_with_leader(column),
        "groups": intervals.groups(column),
        "unscored": board.unscored,
        "comparison": comparison,
        "movers": [change for change in comparison.changes if change.shift] if comparison else [],
    }
