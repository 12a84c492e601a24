"""The leaderboard's table rows as ready-made HTML, built in Python.

A board page shows one page of teams (at most ``PAGE_SIZE``), and each row has a cell per
column; rendering each cell through template tags (``{% with %}``, two look-ups, a filter and a
tag per cell) cost most of a page's time. Here each row is one string built with
:func:`~django.utils.html.format_html`, which escapes every argument that is not already safe:
team and baseline names above all (the value cells, made only of our own markup and formatted
numbers, are joined directly). Values and rank badges come from the same helpers as the
template filters (:mod:`leaderboard.formatting`), so a cell looks the same everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from leaderboard.formatting import UNDEFINED_HTML, rank_badge, rank_interval_html
from leaderboard.selectors.boards import ANALYSIS_ROWS, BoardData
from scoring.engine.aggregate import BORDA, Aggregate
from scoring.engine.columns import Column
from scoring.engine.formatting import VALUE_DIGITS, fixed

BASELINE_RANK_CELL = mark_safe(
    '<td class="col-rank"><span class="tag tag-baseline" title="baseline, not ranked">base</span></td>'
)
RESCORING_TAG = mark_safe(
    ' <span class="tag tag-rescoring" title="scores against the previous gold file until the new ones land">'
    "being re-scored</span>"
)
MINE_TAG = mark_safe(' <span class="tag tag-mine">your team</span>')
CLOSE_TAG = mark_safe(
    ' <span class="tag tag-close" title="not significantly behind the leader under the sorted column (paired '
    'bootstrap, Holm-adjusted p above 0.05)">≈ leader</span>'
)
NOT_RANKED = mark_safe('<span class="muted" title="ranked with no one">–</span>')
BASELINE_PLACEHOLDER = mark_safe('<span class="rank rank-placeholder" aria-hidden="true"></span>')


class _Badges(dict):
    """Rank badges by rank, each built once per page."""

    def __missing__(self, rank: int | None) -> SafeString:
        badge = self[rank] = rank_badge(rank)
        return badge


def _openings(columns: Sequence[Column], *, primary: str, sort: Column) -> list[str]:
    """Each value cell's opening tag: numeric, and marked when primary or sorted (as its header)."""
    openings = []
    for column in columns:
        classes = "num"
        if column.label is None and column.key == primary:
            classes += " primary"
        if column.id == sort.id:
            classes += " sorted"
        openings.append(format_html('<td class="{}"><span class="value">', classes))
    return openings


@dataclass(frozen=True)
class _Format:
    """How a column's values are shown: their decimals, and whether it is an overall ranking
    (which a row ranked with nobody, a baseline or a contrastive run, has no value of)."""

    digits: int = VALUE_DIGITS
    overall: bool = False

    @classmethod
    def of(cls, column: Column | Aggregate) -> _Format:
        if isinstance(column, Aggregate):
            return cls(digits=0 if column.method == BORDA else VALUE_DIGITS, overall=True)
        return cls()


def _values(values: np.ndarray, formats: Sequence[_Format], *, ranked: bool = True) -> list[SafeString | str]:
    """The value cells' contents of a row, as :func:`~leaderboard.formatting.value_html` shows a
    float (NaN for undefined); ``ranked`` false: a row ranked with nobody. A page holds
    thousands: each is formatted here directly, not through ``value_html``'s checks of what
    kind of value it was given."""
    return [
        NOT_RANKED if found.overall and not ranked else fixed(v, found.digits) if math.isfinite(v) else UNDEFINED_HTML
        for v, found in zip(values.tolist(), formats, strict=True)
    ]


def _cells(values: Sequence[SafeString | str], badges: Sequence[SafeString], openings: Sequence[str]) -> SafeString:
    """A row's value cells. Every piece is already safe: ``openings`` are our own markup, a
    value is ``value_html``'s output (digits, or escaped HTML) and a badge ``rank_badge``'s, so
    they are joined as they are rather than run through ``format_html`` for every cell."""
    cells = zip(openings, values, badges, strict=True)
    return mark_safe("".join(f"{opening}{value}</span>{badge}</td>" for opening, value, badge in cells))


def board_rows(
    data: BoardData,
    rows: Sequence[int],
    *,
    columns: Sequence[Column],
    sort: Column,
    primary: str,
    rank_intervals: np.ndarray | None = None,
    stale: bool = False,
    mine: int | None = None,
    contrastive: bool = False,
    close: np.ndarray | None = None,
) -> list[SafeString]:
    """The ``<tr>`` of each team of ``rows`` (rows of ``data``): a team with a scored
    submission has its rank under ``sort``, its name, its rank interval under ``sort`` when
    ``rank_intervals`` are given (per row of ``data``: best and worst, -1 for none) and a value
    and rank per column; a team without one says so. The visitor's own team (``mine``, a team
    id) is marked, and so is each team ``close`` (per row of ``data``) says is not
    significantly behind the leader. With ``contrastive``, each team's contrastive runs follow
    its row: values, never ranks. One string per team (its row, then its runs' rows)."""
    indices = [data.index[column.id] for column in columns]
    sort_index = data.index[sort.id]
    openings = _openings(columns, primary=primary, sort=sort)
    formats = [_Format.of(column) for column in columns]
    badges = _Badges()
    shown = []
    for row in rows:
        team_id = int(data.team_ids[row])
        attributes = format_html(' id="team-{}" data-team-id="{}"', team_id, team_id)
        own = MINE_TAG if team_id == mine else ""
        if not data.submission_ids[row]:
            extra = 1 if rank_intervals is not None else 0
            shown.append(
                format_html(
                    '<tr class="unscored-row{}"{}><td class="col-rank">{}</td>'
                    '<th scope="row" class="col-team">{}{}</th>'
                    '<td class="muted no-score" colspan="{}">no scored submission</td></tr>',
                    " mine" if team_id == mine else "",
                    attributes,
                    badges[None],
                    data.names[row],
                    own,
                    len(columns) + extra,
                )
            )
            continue
        values = data.values[row, indices]
        ranks = data.ranks[row, indices]
        cells = _cells(
            _values(values, formats),
            [badges[rank or None] for rank in ranks.tolist()],
            openings,
        )
        interval = ""
        if rank_intervals is not None:
            best, worst = (int(bound) for bound in rank_intervals[row])
            place = int(data.ranks[row, sort_index]) or None
            tied = best == 1 and place != 1
            interval = format_html(
                '<td class="col-interval">{}</td>',
                rank_interval_html(None if best < 0 else [best, worst], stale=stale, tied=tied),
            )
        shown.append(
            format_html(
                '<tr class="team-row{}"{}><td class="col-rank">{}</td>'
                '<th scope="row" class="col-team">{}{}{}{}</th>{}{}</tr>',
                " mine" if team_id == mine else "",
                attributes,
                badges[int(data.ranks[row, sort_index]) or None],
                data.names[row],
                CLOSE_TAG if close is not None and close[row] else "",
                RESCORING_TAG if data.rescoring[row] else "",
                own,
                interval,
                cells,
            )
        )
        if contrastive:
            runs = _contrastive_rows(data, row, indices, openings, formats, intervals=rank_intervals is not None)
            shown[-1] = mark_safe(shown[-1] + "".join(runs))
    return shown


def _contrastive_rows(
    data: BoardData, row: int, indices: list[int], openings, formats, *, intervals: bool
) -> list[SafeString]:
    """The rows of the contrastive runs of the team of ``row``."""
    shown = []
    for run in data.contrastive_of(row):
        values = data.contrastive_values[run, indices]
        cells = _cells(
            _values(values, formats, ranked=False),
            [BASELINE_PLACEHOLDER] * len(indices),
            openings,
        )
        mark = int(data.contrastive_marks[run])
        shown.append(
            format_html(
                '<tr class="contrastive-row"><td class="col-rank"><span class="tag tag-contrastive" '
                'title="contrastive run {}, not ranked">c{}</span></td><th scope="row" class="col-team">{} '
                '<span class="contrastive-note">contrastive run {}, not ranked</span></th>{}{}</tr>',
                mark,
                mark,
                data.names[row],
                mark,
                mark_safe('<td class="col-interval"></td>' if intervals else ""),
                cells,
            )
        )
    return shown


def baseline_rows(
    data: BoardData, *, columns: Sequence[Column], sort: Column, primary: str, intervals: bool = False
) -> list[SafeString]:
    """The baselines' rows, best first under ``sort``: values, never ranks."""
    sort_values = data.baseline_values[:, data.index[sort.id]]
    order = sorted(
        range(len(data.baseline_names)),
        key=lambda row: (
            np.isnan(sort_values[row]),
            -np.nan_to_num(sort_values[row]) * sort.direction.value,
            data.baseline_names[row].lower(),
        ),
    )
    rows = [(BASELINE_RANK_CELL, data.baseline_names[row], data.baseline_values[row]) for row in order]
    return _unranked_rows(
        data, rows, "baseline-row", BASELINE_NOTE, columns=columns, sort=sort, primary=primary, intervals=intervals
    )


def analysis_rows(
    data: BoardData, *, columns: Sequence[Column], sort: Column, primary: str, intervals: bool = False
) -> list[SafeString]:
    """The teams' majority vote and the oracle (:data:`~leaderboard.selectors.boards.ANALYSIS_ROWS`):
    values, never ranks; marked stale when they are of earlier scores."""
    note = ANALYSIS_NOTE if data.analysis_current else STALE_ANALYSIS_NOTE
    rows = list(zip(ANALYSIS_RANK_CELLS, ANALYSIS_ROWS, data.analysis_values, strict=False))
    return _unranked_rows(
        data, rows, "analysis-row", note, columns=columns, sort=sort, primary=primary, intervals=intervals
    )


ANALYSIS_RANK_CELLS = tuple(
    mark_safe(f'<td class="col-rank"><span class="tag tag-baseline" title="{title}, not ranked">{tag}</span></td>')
    for tag, title in (("vote", "the teams' majority vote"), ("any", "right where any team was right"))
)
BASELINE_NOTE = mark_safe('<span class="baseline-note">baseline, not ranked</span>')
ANALYSIS_NOTE = mark_safe('<span class="baseline-note">the teams together, not ranked</span>')
STALE_ANALYSIS_NOTE = mark_safe(
    '<span class="baseline-note">the teams together, not ranked</span> <span class="tag tag-stale" '
    'title="computed from earlier scores; the analysis of the latest is being computed">stale</span>'
)


def _unranked_rows(
    data: BoardData,
    rows: Sequence[tuple[SafeString, str, np.ndarray]],
    kind: str,
    note: SafeString,
    *,
    columns: Sequence[Column],
    sort: Column,
    primary: str,
    intervals: bool,
) -> list[SafeString]:
    """Rows shown for comparison and never ranked (``rows``: the cell in the rank's place, a name
    and its values under the board's columns), of the class ``kind``: a value per column, a
    placeholder for each rank."""
    indices = [data.index[column.id] for column in columns]
    openings = _openings(columns, primary=primary, sort=sort)
    formats = [_Format.of(column) for column in columns]
    shown = []
    for rank_cell, name, values in rows:
        cells = _cells(
            _values(values[indices], formats, ranked=False),
            [BASELINE_PLACEHOLDER] * len(columns),
            openings,
        )
        shown.append(
            format_html(
                '<tr class="{}">{}<th scope="row" class="col-team">{} {}</th>{}{}</tr>',
                kind,
                rank_cell,
                name,
                note,
                mark_safe('<td class="col-interval"></td>' if intervals else ""),
                cells,
            )
        )
    return shown
