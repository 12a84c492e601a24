"""What a phase's leaderboard, a metric's page and the board's downloads show (the page, the
API and the exports read the same cached pieces).

A board is read once per state of the scores (:func:`board_data_of`, arrays of every team's
values and ranks), and each view of it (raw or calibrated, a sort) once more
(:class:`BoardView`: the order of its rows, the rank intervals under its sort, the teams tied
with the leader). A request then only picks a page of rows (:data:`PAGE_SIZE`), or the rows a
search finds, renders them, and adds the visitor's own team's row wherever it stands: at 3,000
teams a page stays a page.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from leaderboard import exports, stability
from leaderboard.models import Phase
from leaderboard.pages import board_rows
from leaderboard.results_cache import cached
from leaderboard.selectors.boards import (
    BoardData,
    board_data,
    board_of,
    column_by_id,
    overall_key,
    overall_set,
    primary_column,
    shown_columns,
    sorted_by,
)
from leaderboard.selectors.organisers import organiser_actions
from scoring.engine import ranking
from scoring.engine.aggregate import METHODS, Aggregate
from scoring.engine.columns import Column
from scoring.engine.latex import latex_table
from scoring.engine.registry import PROPERTY_NAMES
from scoring.engine.significance import LEVEL

T = TypeVar("T")

PAGE_SIZE = 100
"""Teams on one page of a board (a SemEval task's whole board fits on one)."""
MOVERS_SHOWN = 20
"""The largest rank moves a metric page lists against the primary metric."""
QUERY_MAX_LENGTH = 80


def board_data_of(phase: Phase, part: str | None = None) -> BoardData:
    """The phase's board on ``part`` (default the part it shows now), read once per state of
    the scores (the results cache); after a new score, from the board before it."""
    part = part or phase.shown_part()
    return cached(
        phase,
        "board-data",
        (part,),
        lambda: board_data(phase, part),
        update=lambda previous: board_data(phase, part, previous=previous),
    )


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
class BoardView:
    """A board under one sort, as cached: its rows best first (those without a scored
    submission last), and what the intervals say under that column."""

    order: np.ndarray
    n_scored: int
    rank_intervals: np.ndarray | None
    """Per row of the board: the best and worst rank of its 95 % interval, -1 for none."""
    score_intervals: np.ndarray | None
    """Per row: the score interval's bounds, NaN for none."""
    intervals: stability.IntervalsNote
    tied_with_leader: list[str]
    groups: list[list[str]]
    behind: np.ndarray | None = None
    """Per row: the interval of (leader − team) and Holm's p, NaN for the leader and for none."""
    not_behind: list[str] = field(default_factory=list)
    """The teams not significantly behind the leader."""


def _view(phase: Phase, data: BoardData, column: Column | Aggregate) -> BoardView:
    intervals = stability.intervals_of(phase=phase, data=data)
    if isinstance(column, Aggregate):  # the intervals of the named sets are stored, of no other
        return _overall_view(phase, data, column, intervals)
    ranks, scores = intervals.bounds(column, data.team_ids) if intervals.shown else (None, None)
    return BoardView(
        order=data.order(column),
        n_scored=int(data.scored.sum()),
        rank_intervals=ranks,
        score_intervals=scores,
        intervals=intervals.note(),
        tied_with_leader=intervals.tied_with_leader(column),
        groups=intervals.groups(column),
        behind=intervals.behind(column, data.team_ids) if intervals.shown else None,
        not_behind=intervals.not_significantly_behind(column),
    )


def _overall_view(phase: Phase, data: BoardData, overall: Aggregate, intervals: stability.Intervals) -> BoardView:
    name = overall_set(phase.task, overall)
    ranks, values = (None, None)
    if intervals.shown and name is not None:
        ranks, values = intervals.overall_bounds(overall.method, name, data.team_ids)
    tied = [] if ranks is None else [data.names[row] for row in data.order(overall) if ranks[row, 0] == 1]
    return BoardView(
        order=data.order(overall),
        n_scored=int(data.scored.sum()),
        rank_intervals=ranks,
        score_intervals=values,
        intervals=intervals.note(),
        tied_with_leader=tied,
        groups=[],
    )


def board_view(phase: Phase, data: BoardData, column: Column | Aggregate) -> BoardView:
    key = overall_key(column) if isinstance(column, Aggregate) else column.id
    return cached(phase, "board-view", (data.part, key), lambda: _view(phase, data, column))


@dataclass(frozen=True)
class Paging:
    """Where a page of a board stands among its pages, for the links to the others."""

    page: int
    pages: int
    total: int
    first: int
    """The position (from 1) of the page's first row."""
    shown: int
    query: str

    @property
    def previous(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def next(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None

    @property
    def last_shown(self) -> int:
        return self.first + self.shown - 1


def page_of(
    data: BoardData, order: np.ndarray, *, page: str | int | None, query: str | None, size: int = PAGE_SIZE
) -> tuple[np.ndarray, Paging]:
    """The rows of one page of ``order``: those whose team's name holds ``query`` (any case),
    ``size`` at a time. An unknown or too large page number is the nearest page."""
    shown, paging = items_page(order.tolist(), [data.names[row] for row in order], page=page, query=query, size=size)
    return np.array(shown, dtype=np.int64), paging


def items_page(
    items: list, names: list[str], *, page: str | int | None, query: str | None, size: int = PAGE_SIZE
) -> tuple[list, Paging]:
    """One page of ``items`` (each named in ``names``): those whose name holds ``query``."""
    query = " ".join((query or "").split())[:QUERY_MAX_LENGTH]
    if query:
        needle = query.casefold()
        items = [item for item, name in zip(items, names, strict=True) if needle in name.casefold()]
    pages = max(1, math.ceil(len(items) / size))
    try:
        number = min(max(1, int(page or 1)), pages)
    except (TypeError, ValueError):
        number = 1
    start = (number - 1) * size
    shown = items[start : start + size]
    return shown, Paging(
        page=number, pages=pages, total=len(items), first=start + 1 if shown else 0, shown=len(shown), query=query
    )


def _my_row(data: BoardData, team_id: int | None) -> int | None:
    return data.row_of.get(team_id) if team_id is not None else None


def board_page(
    *,
    phase: Phase,
    calibrated: bool,
    sort: str | None,
    page: str | None,
    query: str | None,
    team_id: int | None,
    contrastive: bool = True,
    overall: Aggregate | None = None,
) -> dict[str, Any]:
    """A phase's leaderboard: its columns (first the overall ranking ``overall``, if any), the
    sorted column, one page of rows as ready HTML (or the rows a search finds), each team's
    contrastive runs under it unless ``contrastive`` is false, the visitor's own team's row
    wherever it stands, and the baselines."""
    task = phase.task
    data = board_data_of(phase).with_overall(overall)
    columns = shown_columns(task, calibrated=calibrated, overall=overall)
    sort_column = sorted_by(task, columns, sort)
    view = board_view(phase, data, sort_column)
    rows, paging = page_of(data, view.order, page=page, query=query)
    mine = _my_row(data, team_id)
    render = {
        "columns": columns,
        "sort": sort_column,
        "primary": task.primary_metric,
        "rank_intervals": view.rank_intervals,
        "stale": view.intervals.stale,
        "close": None if view.behind is None else view.behind[:, 2] > LEVEL,
    }
    # The page's rows are the same for every visitor (cached); the visitor's own row is marked.
    params = (data.part, calibrated, sort_column.id, overall_key(overall), paging.page, paging.query, contrastive)
    shown = cached(
        phase, "board-rows", params, lambda: board_rows.board_rows(data, rows, **render, contrastive=contrastive)
    )
    shown_rows = rows.tolist()
    if mine is not None and mine in shown_rows:
        shown = list(shown)
        shown[shown_rows.index(mine)] = board_rows.board_rows(
            data, [mine], **render, mine=team_id, contrastive=contrastive
        )[0]
    mine_elsewhere = mine is not None and mine not in shown_rows
    unranked = {"columns": columns, "sort": sort_column, "primary": task.primary_metric}
    unranked["intervals"] = view.rank_intervals is not None
    my_place = int(np.flatnonzero(view.order == mine)[0]) if mine is not None else None
    return {
        "task": task,
        "phase": phase,
        "columns": columns,
        "sort": sort_column,
        "rows": shown,
        "contrastive": contrastive,
        "has_contrastive": len(data.contrastive_ids) > 0,
        "my_row": board_rows.board_rows(data, [mine], **render, mine=team_id)[0] if mine_elsewhere else None,
        "my_page": my_place // PAGE_SIZE + 1 if my_place is not None else None,
        "my_team_id": team_id if mine is not None else None,
        "baseline_rows": board_rows.baseline_rows(data, **unranked),
        "analysis_rows": board_rows.analysis_rows(data, **unranked),
        "analysis_teams": data.analysis_teams,
        "analysis_current": data.analysis_current,
        "paging": paging,
        "n_scored": view.n_scored,
        "n_teams": len(data.names),
        "n_unscored": len(data.names) - view.n_scored,
        "calibrated": calibrated,
        "switch_sort": sort_column.id if sort_column is overall else sort_column.counterpart().id,
        **overall_context(task, overall),
        "intervals": view.intervals,
        "tied_with_leader": view.tied_with_leader,
        "not_behind": view.not_behind,
        "level": LEVEL,
        "decisions": cached(
            phase,
            "decisions",
            (),
            lambda: [DecisionNote.of(action) for action in organiser_actions(task=task, phase=phase)],
        ),
    }


OVER_NAMES = {
    "table8": "the metrics of Table 8",
    "raw": "every raw column",
    "calibrated": "every calibrated column",
}
"""How a board names the sets of columns an overall ranking may be taken over
(:data:`~scoring.engine.board.BOARD_SETS`)."""


def overall_context(task, overall: Aggregate | None) -> dict[str, Any]:
    """What a board says of its overall column and offers to choose instead: the methods, the
    named sets, what the shown one is taken over, whether it is the organisers' choice."""
    named = overall_set(task, overall) if overall else None
    if overall is None:
        over = ""
    elif named:
        over = OVER_NAMES[named]
    else:
        over = ", ".join(column.symbol for column in overall.columns)
    organisers = task.overall
    return {
        "overall": overall,
        "overall_over": over,
        "overall_over_value": named or (",".join(column.id for column in overall.columns) if overall else ""),
        "overall_methods": METHODS,
        "over_names": {
            name: text
            for name, text in OVER_NAMES.items()
            if name in task.scheme.column_sets(primary=task.primary_metric)
        },
        "overall_params": ("overall", "over"),
        "organisers_overall": organisers,
        "overall_is_organisers": overall == organisers,
    }


def api_page(items: Sequence[T], *, page: int, per_page: int) -> tuple[Sequence[T], int, int]:
    """The API's paging: page ``page`` (from 1, clamped to the last) of ``per_page`` items (0:
    all on one page), the page's number and how many pages there are."""
    pages = max(1, math.ceil(len(items) / per_page)) if per_page else 1
    page = min(max(1, page), pages)
    return (items[(page - 1) * per_page : page * per_page] if per_page else items), page, pages


def board_api(
    *, phase: Phase, calibrated: bool, sort: str | None, page: int, per_page: int, overall: Aggregate | None = None
) -> dict[str, Any]:
    """The API's leaderboard: the JSON download's rows for the raw or calibrated columns (first
    the overall ranking ``overall``, if any) sorted by ``sort``, a page at a time (``per_page``
    0: every row), and the intervals in the CLI's layout (cached, each page and the intervals
    apart)."""
    sort_id = sorted_by(phase.task, shown_columns(phase.task, calibrated=calibrated, overall=overall), sort).id

    def board() -> tuple[dict[str, Any], exports.ExportTable, list]:
        """The download's very shape without its rows (built in one place), and its rows as
        arrays and names: each request makes the page's rows alone (a board of 10,000 teams has
        100 on a page), and the entry is the same for every page."""
        found = board_of(board_data_of(phase), phase=phase, calibrated=calibrated, sort=sort_id, overall=overall)
        table = exports.export_table(found)
        return exports.board_data(found, table, rows=()), table, found.columns

    head, table, columns = cached(phase, "api-board", (calibrated, sort_id, overall_key(overall)), board)
    teams: list[list[int]] = []  # each team's row, then its contrastive runs' rows
    for row, kind in enumerate(table.kinds):
        if kind == "team":
            teams.append([row])
        elif kind == "contrastive":
            teams[-1].append(row)
    unranked = [
        row for row, kind in enumerate(table.kinds) if kind in ("baseline", *exports.ANALYSIS_KINDS)
    ]  # on every page
    shown, page, pages = api_page(teams, page=page, per_page=per_page)

    def intervals() -> dict[str, Any]:
        found = stability.intervals_of(phase=phase, data=board_data_of(phase))
        return found.as_api(teams={table.names[rows[0]] for rows in shown})

    return {
        **head,
        "rows": exports.table_rows(table, columns, [row for rows in shown for row in rows] + unranked),
        "sort": sort_id,
        "calibrated": calibrated,
        "page": page,
        "pages": pages,
        "teams": len(teams),
        "intervals": cached(phase, "api-intervals", (calibrated, sort_id, page, per_page), intervals),
    }


def export(
    *,
    phase: Phase,
    kind: str,
    calibrated: bool | None = None,
    sort: str | None = None,
    contrastive: bool = True,
    overall: Aggregate | None = None,
    analysis: bool = False,
) -> bytes:
    """A board download (cached, as the bytes of its UTF-8 text): ``csv`` or ``json`` (every
    column), or ``tex`` (the columns the page shows, raw or calibrated, in its order), first the
    overall ranking ``overall`` if any; the teams' contrastive runs, never ranked, with them
    unless ``contrastive`` is false. The CSV and JSON end with the teams' majority vote and the
    oracle; the LaTeX table only with ``analysis``, below a rule."""
    sort_id = sorted_by(phase.task, shown_columns(phase.task, calibrated=calibrated, overall=overall), sort).id

    def compute() -> bytes:
        board = board_of(board_data_of(phase), phase=phase, calibrated=calibrated, sort=sort_id, overall=overall)
        if not contrastive:
            board.contrastive = []
        if kind == "csv":
            return exports.board_csv(board)
        if kind == "json":
            return exports.board_json(board)
        data = board.data  # the teams with a scored submission, in board order, from the arrays
        scored = board.order[data.scored[board.order]]
        return latex_table(
            teams=[data.names[row] for row in scored.tolist()],
            columns=board.columns,
            values={column.id: data.column_values(column, scored) for column in board.columns},
            title=f"{phase.task.full_title} ({phase.name})",
            unranked=[(f"{run.name} (contrastive {run.contrastive})", run.values) for run in board.contrastive],
            ensembles=[(row.name, row.values) for row in board.analysis] if analysis else (),
        ).encode()

    params = (calibrated, sort_id, contrastive, overall_key(overall), analysis and kind == "tex")
    return cached(phase, f"export-{kind}", params, compute)


@dataclass(frozen=True)
class RankedRow:
    """A team on a metric's page: its rank and value, its intervals, and its place under the
    primary metric."""

    name: str
    team_id: int
    rank: int | None
    value: float | None
    score_interval: list[float] | None
    rank_interval: list[int] | None
    tied: bool
    primary_rank: int | None
    mine: bool
    scored: bool
    behind: tuple[list[float], float] | None = None
    """Against the leader: the interval of (leader − team) and Holm's p (``None`` for the leader)."""

    @property
    def significantly_behind(self) -> bool:
        return self.behind is not None and self.behind[1] <= LEVEL

    @property
    def shift(self) -> int | None:
        """Places climbed under this metric against the primary one (negative: dropped)."""
        return None if self.rank is None or self.primary_rank is None else self.primary_rank - self.rank


@dataclass(frozen=True)
class Comparison:
    """How two metrics order the teams differently: rho, the teams it rests on, how many pairs
    of teams swap places, and the largest moves."""

    first: Column
    second: Column
    correlation: ranking.Correlation
    swaps: int
    movers: list[tuple[str, int, int, int]]
    """(team, rank under the first metric, rank under the second, places climbed), largest
    moves first, at most :data:`MOVERS_SHOWN`."""
    n_moving: int
    """How many teams have another rank under the second metric."""
    swapped: list[tuple[str, str]]
    """The pairs that swap (ahead under the first, behind under the second), when there are at
    most :data:`MOVERS_SHOWN` of them."""


def compare(data: BoardData, first: Column, second: Column) -> Comparison:
    """:class:`Comparison` of two columns of a board (ranks on the whole board)."""
    ranks_a = data.ranks[:, data.index[first.id]]
    ranks_b = data.ranks[:, data.index[second.id]]
    moving = np.flatnonzero((ranks_a > 0) & (ranks_b > 0) & (ranks_a != ranks_b))
    moved = [
        (data.names[row], int(ranks_a[row]), int(ranks_b[row]), int(ranks_a[row] - ranks_b[row])) for row in moving
    ]
    moved.sort(key=lambda move: (-abs(move[3]), move[1], move[0].lower()))
    a, b = data.column_values(first), data.column_values(second)
    directions = (first.direction, second.direction)
    swaps = ranking.swapped_pair_count(a, b, directions=directions)
    return Comparison(
        first=first,
        second=second,
        correlation=ranking.spearman(a, b, directions=directions),
        swaps=swaps,
        movers=moved[:MOVERS_SHOWN],
        n_moving=len(moved),
        swapped=ranking.swapped_pairs(list(data.names), a, b, directions=directions) if swaps <= MOVERS_SHOWN else [],
    )


def _behind(view: BoardView, row: int) -> tuple[list[float], float] | None:
    if view.behind is None or np.isnan(view.behind[row, 2]):
        return None
    lo, hi, p = (float(bound) for bound in view.behind[row])
    return [lo, hi], p


def metric_page(
    *, phase: Phase, column_id: str, page: str | None, query: str | None, team_id: int | None
) -> dict[str, Any] | None:
    """One column's page in a phase: definition, properties, chance baseline, its ranking (a
    page of it) with intervals, and how far it is from the primary metric's ranking. ``None``
    if the task has no such column."""
    task = phase.task
    column = column_by_id(task, column_id)
    if column is None:
        return None
    metric = column.metric
    scheme = task.scheme
    primary = primary_column(task)
    data = board_data_of(phase)
    view = board_view(phase, data, column)
    comparison = (
        cached(phase, "comparison", (primary.id, column.id), lambda: compare(data, primary, column))
        if primary != column
        else None
    )
    rows, paging = page_of(data, view.order, page=page, query=query)
    mine = _my_row(data, team_id)
    shown_rows = [*rows.tolist(), *([mine] if mine is not None and mine not in set(rows.tolist()) else [])]
    primary_index, index = data.index[primary.id], data.index[column.id]
    ranked = []
    for row in shown_rows:
        rank_interval = score_interval = None
        if view.rank_intervals is not None and view.rank_intervals[row][0] >= 0:
            rank_interval = [int(bound) for bound in view.rank_intervals[row]]
        if view.score_intervals is not None and not np.isnan(view.score_intervals[row][0]):
            score_interval = [float(bound) for bound in view.score_intervals[row]]
        rank = int(data.ranks[row, index]) or None
        ranked.append(
            RankedRow(
                name=data.names[row],
                team_id=int(data.team_ids[row]),
                rank=rank,
                value=data.value(row, column),
                score_interval=score_interval,
                rank_interval=rank_interval,
                tied=bool(rank_interval) and rank_interval[0] == 1 and rank != 1,
                primary_rank=int(data.ranks[row, primary_index]) or None,
                mine=row == mine,
                scored=bool(data.submission_ids[row]),
                behind=_behind(view, row),
            )
        )
    return {
        "task": task,
        "phase": phase,
        "column": column,
        "metric": metric,
        "primary": primary,
        "counterpart": column.counterpart() if column.has_twin else None,
        "properties": [(code, name, metric.properties[code]) for code, name in PROPERTY_NAMES.items()],
        "n_classes": len(task.labels),
        "outputs": scheme.outputs,
        "chance": scheme.chance(metric.baseline),
        "rows": ranked,
        "paging": paging,
        "n_scored": view.n_scored,
        "baselines": [(name, data.baseline_value(b, column)) for b, name in enumerate(data.baseline_names)],
        "intervals": view.intervals,
        "tied_with_leader": view.tied_with_leader,
        "groups": view.groups,
        "comparison": comparison,
        "not_behind": view.not_behind,
        "level": LEVEL,
        "span": 1 + (3 if view.intervals.shown else 0) + (2 if comparison else 0),
    }
