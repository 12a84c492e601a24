"""The leaderboard's table body as ready-made HTML, built in Python.

A 500-team board has over 10,000 cells; rendering each through template tags (``{% with %}``,
two look-ups, a filter and a tag per cell) took most of a second. Here each row is one string
built with :func:`~django.utils.html.format_html`, which escapes every argument that is not
already safe: team and baseline names above all (the value cells, made only of our own markup
and formatted numbers, are joined directly). Values and rank badges come from the same
helpers as the template filters (:mod:`leaderboard.formatting`), so a cell looks the same
everywhere. The result holds only strings, so it can be cached (:mod:`leaderboard.caching`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from leaderboard.formatting import rank_badge, rank_interval_html, value_html
from leaderboard.selectors.boards import Board, Entry
from leaderboard.stability import Intervals
from scoring.engine.columns import Column

BASELINE_RANK_CELL = mark_safe(
    '<td class="col-rank"><span class="tag tag-baseline" title="baseline, not ranked">base</span></td>'
)
RESCORING_TAG = mark_safe(
    ' <span class="tag tag-rescoring" title="scores against the previous gold file until the new ones land">'
    "being re-scored</span>"
)
BASELINE_PLACEHOLDER = mark_safe('<span class="rank rank-placeholder" aria-hidden="true"></span>')


@dataclass(frozen=True)
class BoardRows:
    """The rows of a board's table, each a safe HTML ``<tr>``: ranked teams, teams without a
    scored submission, baselines."""

    ranked: list[SafeString]
    unscored: list[SafeString]
    baselines: list[SafeString]


@dataclass(frozen=True)
class BoardPage:
    """What the leaderboard template shows: the columns (for the header), the sort, the rows."""

    columns: list[Column]
    sort: Column
    rows: BoardRows


def cell_classes(board: Board, column: Column) -> str:
    """A value cell's classes: numeric, and marked when primary or sorted (as its header)."""
    classes = "num"
    if column.label is None and column.key == board.task.primary_metric:
        classes += " primary"
    if column.id == board.sort.id:
        classes += " sorted"
    return classes


class _Badges(dict):
    """Rank badges by rank, each built once per board (a board has at most one per team)."""

    def __missing__(self, rank: int | None) -> SafeString:
        badge = self[rank] = rank_badge(rank)
        return badge


def _cells(values: Sequence[SafeString | str], badges: Sequence[SafeString], openings: Sequence[str]) -> SafeString:
    """A row's value cells. Every piece is already safe: ``openings`` are our own markup, a
    value is ``metric_value``'s output (digits, or escaped HTML) and a badge ``rank_badge``'s,
    so they are joined as they are rather than run through ``format_html`` 10,000 times."""
    cells = zip(openings, values, badges, strict=True)
    return mark_safe("".join(f"{opening}{value}</span>{badge}</td>" for opening, value, badge in cells))


def _interval_cell(entry: Entry, board: Board, intervals: Intervals | None) -> SafeString | str:
    """The rank interval under the sorted column, when the board shows intervals."""
    if intervals is None or not intervals.shown:
        return ""
    rank = intervals.rank(board.sort, entry.team.pk) if entry.team else None
    tied = rank is not None and rank[0] == 1 and entry.ranks[board.sort.id] != 1
    return format_html('<td class="col-interval">{}</td>', rank_interval_html(rank, stale=intervals.stale, tied=tied))


def _team_attributes(entry: Entry) -> SafeString | str:
    """A team row's anchor and team id: the rows are cached and shared by every visitor, so
    the page marks the visitor's own row from these (``board.js``), not the server."""
    if entry.team is None:
        return ""
    return format_html(' id="team-{}" data-team-id="{}"', entry.team.pk, entry.team.pk)


def _team_row(
    entry: Entry, board: Board, openings: Sequence[str], badges: _Badges, intervals: Intervals | None = None
) -> SafeString:
    cells = _cells(
        [value_html(entry.values[column.id]) for column in board.columns],
        [badges[entry.ranks[column.id]] for column in board.columns],
        openings,
    )
    return format_html(
        '<tr class="team-row"{}><td class="col-rank">{}</td><th scope="row" class="col-team">{}{}</th>{}{}</tr>',
        _team_attributes(entry),
        badges[entry.ranks[board.sort.id]],
        entry.name,
        RESCORING_TAG if entry.being_rescored else "",
        _interval_cell(entry, board, intervals),
        cells,
    )


def _unscored_row(entry: Entry, board: Board, badges: _Badges, extra: int = 0) -> SafeString:
    return format_html(
        '<tr class="unscored-row"{}><td class="col-rank">{}</td><th scope="row" class="col-team">{}</th>'
        '<td class="muted no-score" colspan="{}">no scored submission</td></tr>',
        _team_attributes(entry),
        badges[None],
        entry.name,
        len(board.columns) + extra,
    )


def _baseline_row(entry: Entry, board: Board, openings: Sequence[str], extra: int = 0) -> SafeString:
    cells = _cells(
        [value_html(entry.values[column.id]) for column in board.columns],
        [BASELINE_PLACEHOLDER] * len(board.columns),
        openings,
    )
    return format_html(
        '<tr class="baseline-row">{}<th scope="row" class="col-team">{} '
        '<span class="baseline-note">baseline, not ranked</span></th>{}{}</tr>',
        BASELINE_RANK_CELL,
        entry.name,
        mark_safe('<td class="col-interval"></td>' * extra),
        cells,
    )


def board_rows(board: Board, intervals: Intervals | None = None) -> BoardRows:
    """The board's rows: teams with a scored submission in board order, then the others
    (listed apart, never ranked), then the baselines. With ``intervals`` to show, each row
    has a cell after the team's name: its rank interval under the sorted column."""
    openings = [format_html('<td class="{}"><span class="value">', cell_classes(board, c)) for c in board.columns]
    badges = _Badges()
    extra = 1 if intervals is not None and intervals.shown else 0
    return BoardRows(
        ranked=[_team_row(e, board, openings, badges, intervals) for e in board.scored],
        unscored=[_unscored_row(e, board, badges, extra) for e in board.unscored],
        baselines=[_baseline_row(e, board, openings, extra) for e in board.baselines],
    )
