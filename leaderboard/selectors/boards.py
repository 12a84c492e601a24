"""Leaderboards: each team's counting submission, its values under every column and its ranks,
as arrays (:class:`BoardData`), and the views of them the pages, exports and the API take.

A phase's board is read once per state of its scores (the pages keep it in the results cache):
one query for the counting submissions with each one's values as packed doubles
(:attr:`Scored.board_values`, written with its scores), one for the teams, one for the
baselines; ranks are computed for every column at once with numpy. At 3,000 teams this is a
few megabytes of doubles, not the 8 MB of JSON the suite's dictionaries take.

Columns are the engine's (:class:`scoring.engine.columns.Column`): plain data naming a metric,
a class for per-class columns, and whether the metric is calibrated.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
from django.db import connections
from django.db.models import Case, F, FloatField, IntegerField, OrderBy, When, Window
from django.db.models import Value as SQLValue
from django.db.models.fields.json import KT, KeyTransform
from django.db.models.functions import Cast, RowNumber

from leaderboard.models import (
    ALL_ITEMS,
    Baseline,
    Counting,
    Phase,
    PhaseAnalysis,
    Scored,
    Submission,
    SubmissionQuerySet,
    Task,
)
from scoring.engine import columns as board_columns
from scoring.engine import ranking
from scoring.engine.aggregate import BORDA, METHODS, Aggregate
from scoring.engine.columns import Column, score_fields
from scoring.engine.metrics import Value, plain_values
from scoring.engine.schemes import BOARD_SETS


def columns_of(task: Task, *, calibrated: bool | None = False) -> list[Column]:
    """The task's ranking columns: raw ones, calibrated ones, or (``None``) both."""
    return task.scheme.ranking_columns(calibrated=calibrated)


def shown_columns(task: Task, *, calibrated: bool | None = False, overall: Aggregate | None = None) -> list:
    """A board's columns: the overall ranking ``overall`` first, if any, then :func:`columns_of`."""
    return [*([overall] if overall else []), *columns_of(task, calibrated=calibrated)]


def overall_key(overall: Aggregate | None) -> tuple | None:
    """What names an overall ranking in a cache key: its method and its columns."""
    return overall and (overall.method, tuple(column.id for column in overall.columns))


def paired_columns(task: Task, *, paper_set: bool = False) -> list[Column]:
    """The task's columns with each metric followed by its calibrated version (Figure 2)."""
    return task.scheme.paired_columns(paper_set=paper_set)


def column_by_id(task: Task, column_id: str) -> Column | None:
    """The task's column named ``column_id`` (raw or calibrated), if any."""
    return board_columns.column_by_id(columns_of(task, calibrated=None), column_id)


def primary_column(task: Task) -> Column:
    """The raw column of the task's primary metric."""
    return Column(task.primary_metric)


def sorted_by(task: Task | Phase, columns: Sequence[Column], sort: str | None) -> Column:
    """The column a board sorts by: ``sort`` if it is one of ``columns``, else the primary metric."""
    return board_columns.column_by_id(columns, sort or "") or next(
        (c for c in columns if c.label is None and c.key == task.primary_metric), columns[0]
    )


def overall_of(task: Task, method: str | None = None, over: str | None = None) -> Aggregate | None:
    """The overall column of a board: the organisers' choice (:attr:`Task.overall`), or a
    visitor's, exploring: ``method`` (a method's key, or ``off``: none) over ``over`` (a named
    set of :data:`~scoring.engine.board.BOARD_SETS` or column ids separated by commas). What
    names no method or no column falls back to the organisers' choice, then to Table 8's set."""
    chosen = method if method in METHODS or method == "off" else task.overall_method
    if chosen in ("", "off"):
        return None
    scheme = task.scheme
    for columns in (over, task.overall_columns, scheme.default_overall_set):
        try:
            return scheme.overall(chosen, columns or "", primary=task.primary_metric)
        except ValueError:
            continue
    return None


def overall_set(task: Task, overall: Aggregate) -> str | None:
    """The named set of columns (:data:`~scoring.engine.board.BOARD_SETS`) ``overall`` is
    taken over, if it is one (the phase's bootstrap stores the intervals of those)."""
    ids = [column.id for column in overall.columns]
    sets = task.scheme.column_sets(primary=task.primary_metric)
    return next((name for name in BOARD_SETS if name in sets and [column.id for column in sets[name]] == ids), None)


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

    One query that returns one row per team, with only the columns in ``fields``:
    ``DISTINCT ON (team_id)`` where the database has it (PostgreSQL), else the first row of a
    window over each team's submissions. ``phase_id`` stays loaded, or reading
    ``submission.phase`` would cost a query per row.
    """
    part = part or phase.shown_part()
    if part != ALL_ITEMS and set(fields) & set(ALL_SCORE_FIELDS):
        fields = (*(f for f in fields if f not in ALL_SCORE_FIELDS), "parts")
    rows = counting_rows(phase, part).only(
        "id", "phase_id", "team_id", "created_at", "scored_gold_version", "chosen", *fields
    )
    return {submission.team_id: submission for submission in rows}


def counting_rows(phase: Phase, part: str) -> SubmissionQuerySet:
    """The query of :func:`counting_submissions`: each team's counting submission on ``part``."""
    scored = phase.submissions.rankable()
    order = _counting_order(phase, part)
    if connections[scored.db].features.can_distinct_on_fields:
        return scored.order_by("team_id", *order).distinct("team_id")
    first = Window(RowNumber(), partition_by=[F("team_id")], order_by=order)
    return scored.annotate(place_in_team=first).filter(place_in_team=1).order_by()


# --- a board as arrays --------------------------------------------------------------------------


def _rows_from_json(model, pks: Iterable[int], columns: Sequence[Column], part: str, n: int) -> dict[int, np.ndarray]:
    """Packed rows read from the JSON scores, for rows packed under another layout (or before
    values were packed): slower, and exact all the same."""
    fields = ("confusion_matrix", *ALL_SCORE_FIELDS) if part == ALL_ITEMS else ("parts",)
    found = {}
    for row in model.objects.filter(pk__in=list(pks)).only("id", *fields):
        found[row.pk] = Scored.row_of(columns, row.part(part), n)
    return found


@dataclass(frozen=True)
class BoardData:
    """A phase's board on one part of its test set, as arrays: every team of the task (removed
    teams left out), its counting submission's id and values under every ranking column (raw,
    then calibrated: ``columns``), NaN where undefined or where the team has no scored
    submission, and its competition rank under each (0: none), and its confusion matrix on the
    part (NaN without one); then the baselines."""

    phase_id: int
    part: str
    columns: tuple[Column, ...]
    team_ids: np.ndarray
    names: tuple[str, ...]
    submission_ids: np.ndarray
    """0 for a team without a scored submission."""
    score_counts: np.ndarray
    rescoring: np.ndarray
    """Scored against an older gold file; its scores stand until the new ones are written."""
    values: np.ndarray
    ranks: np.ndarray
    matrices: np.ndarray
    """Teams × n × n: each counting submission's confusion matrix (rows predicted, columns gold)."""
    baseline_names: tuple[str, ...] = ()
    baseline_values: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    contrastive_teams: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """The row of the team of each contrastive run (runs a team marked contrastive: shown under
    it, never ranked), in the order of the teams, then of their marks."""
    contrastive_marks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    contrastive_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    contrastive_values: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    analysis_values: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    """The teams' majority vote and the oracle (:data:`ANALYSIS_ROWS`; never ranked), from the
    phase's analysis on this part, if it has one of at least two teams."""
    analysis_teams: int = 0
    """The teams whose runs the analysis rows combine."""
    analysis_current: bool = False
    """Whether the analysis rows are of these scores (else of earlier ones, being recomputed)."""

    def contrastive_of(self, row: int) -> list[int]:
        """The indices of the contrastive runs of the team of ``row``."""
        return self._contrastive_runs.get(row, [])

    @cached_property
    def _contrastive_runs(self) -> dict[int, list[int]]:
        """Row → the indices of its team's contrastive runs (a board of 10,000 teams asks for
        each team's, and most have none)."""
        runs: dict[int, list[int]] = {}
        for run, row in enumerate(self.contrastive_teams.tolist()):
            runs.setdefault(row, []).append(run)
        return runs

    @cached_property
    def index(self) -> dict[str, int]:
        """Column id → its position in ``columns``."""
        return {column.id: j for j, column in enumerate(self.columns)}

    @cached_property
    def row_of(self) -> dict[int, int]:
        """Team id → its row."""
        return {int(team): i for i, team in enumerate(self.team_ids)}

    @cached_property
    def name_order(self) -> np.ndarray:
        """Each row's place among the teams' names in alphabetical order (case-insensitive)."""
        return ranking.name_places(self.names)

    @property
    def scored(self) -> np.ndarray:
        return self.submission_ids > 0

    def value(self, row: int, column: Column) -> Value:
        found = self.values[row, self.index[column.id]]
        return None if np.isnan(found) else float(found)

    def rank(self, row: int, column: Column) -> int | None:
        found = int(self.ranks[row, self.index[column.id]])
        return found or None

    def column_array(self, column: Column) -> np.ndarray:
        """The values of ``column`` of every team, NaN where undefined."""
        return self.values[:, self.index[column.id]]

    def column_values(self, column: Column, rows: np.ndarray | None = None) -> list[Value]:
        """The values of ``column`` (of ``rows``, default every team), ``None`` where undefined."""
        found = self.values[:, self.index[column.id]] if rows is None else self.values[rows, self.index[column.id]]
        return plain_values(found)

    def order(self, column: Column) -> np.ndarray:
        """The rows of the teams with a scored submission, best first under ``column``
        (undefined last, ties by name), then the rows of the others, by name."""
        ranks = self.ranks[:, self.index[column.id]].astype(np.int64)
        ranked_key = np.where(ranks > 0, ranks, np.iinfo(np.int32).max)
        scored = self.scored
        rows = np.lexsort((self.name_order, ranked_key, ~scored))
        return rows

    def baseline_value(self, row: int, column: Column) -> Value:
        found = self.baseline_values[row, self.index[column.id]]
        return None if np.isnan(found) else float(found)

    def with_overall(self, overall: Aggregate | None) -> BoardData:
        """The board with the overall ranking ``overall`` as one more column: each team's value
        from its ranks under the overall's columns, and its competition rank by that value
        (:mod:`scoring.engine.aggregate`); none for baselines and contrastive runs, which are
        ranked under no column."""
        if overall is None:
            return self
        values = overall.of_ranks(self.ranks[:, [self.index[column.id] for column in overall.columns]].T)
        ranks = ranking.competition_rank_matrix(values[:, np.newaxis], [overall.direction])

        def widened(found: np.ndarray) -> np.ndarray:
            return np.column_stack([found, np.full(len(found), np.nan)])

        return replace(
            self,
            columns=(*self.columns, overall),
            values=np.column_stack([self.values, values]),
            ranks=np.column_stack([self.ranks, ranks]),
            baseline_values=widened(self.baseline_values),
            contrastive_values=widened(self.contrastive_values),
            analysis_values=widened(self.analysis_values),
        )


PACKED = ("id", "board_values", "board_layout")
"""What :func:`board_data` reads of a scored row (never its JSON, while its packed values are of
the current layout)."""


def _packed_rows(model, rows: Sequence[tuple | None], columns: Sequence[Column], part: str, n: int) -> np.ndarray:
    """The packed values and matrix on ``part`` of each row (``(pk, board_values, board_layout)``;
    NaN for ``None``), read from the JSON scores where they are of another layout."""
    layout, width = Scored.layout_of(columns), len(columns) + n * n
    out = np.full((len(rows), width), np.nan)
    unpacked: dict[int, int] = {}
    for index, row in enumerate(rows):
        if row is None:
            continue
        packed = Scored.unpacked(row[1], row[2], layout=layout, part=part, width=width)
        if packed is None:
            unpacked[row[0]] = index
        else:
            out[index] = packed
    for pk, packed in _rows_from_json(model, unpacked, columns, part, n).items():
        out[unpacked[pk]] = packed
    return out


FETCHED_AT_ONCE = 500
"""Counting submissions whose packed values one query reads (SQLite takes 999 parameters)."""


def _counting_packed(
    ids: np.ndarray, counts: np.ndarray, columns: tuple[Column, ...], part: str, n: int, previous: BoardData | None
) -> np.ndarray:
    """:func:`_packed_rows` of the counting submissions ``ids`` (0: none) at their score
    ``counts``: a row that ``previous`` (the board of the same teams, columns and part at earlier
    scores) holds with the same submission at the same count is taken from it (a submission's
    values change only when it is scored again, which counts), the others are read."""
    packed = np.full((len(ids), len(columns) + n * n), np.nan)
    taken = np.zeros(len(ids), dtype=bool)
    if previous is not None:
        taken = (ids != 0) & (ids == previous.submission_ids) & (counts == previous.score_counts)
        packed[taken] = np.column_stack([previous.values[taken], previous.matrices[taken].reshape(taken.sum(), -1)])
    wanted = np.flatnonzero((ids != 0) & ~taken)
    missing = dict(zip(ids[wanted].tolist(), wanted.tolist(), strict=True))
    pks = list(missing)
    for start in range(0, len(pks), FETCHED_AT_ONCE):
        rows = list(
            Submission.objects.filter(pk__in=pks[start : start + FETCHED_AT_ONCE]).order_by().values_list(*PACKED)
        )
        packed[[missing[row[0]] for row in rows]] = _packed_rows(Submission, rows, columns, part, n)
    return packed


def board_data(phase: Phase, part: str | None = None, *, previous: BoardData | None = None) -> BoardData:
    """The phase's board on ``part`` (default: the part it shows now), as plain rows (no model
    instance per team): which submission counts for each team, the teams, then the values of
    the counting submissions that ``previous`` does not hold, the baselines, the contrastive
    runs and the analysis. ``previous``: the board at earlier scores of the same results
    version (:mod:`leaderboard.results_cache`), whose teams are these (any change of a team
    raises that version). After a new score, at 10,000 teams, the board reads one team's
    values, not 10,000, and no team."""
    part = part or phase.shown_part()
    columns = tuple(columns_of(phase.task, calibrated=None))
    k, n = len(columns), len(phase.task.labels)
    counting = {
        row[0]: row[1:]
        for row in counting_rows(phase, part).values_list("team_id", "id", "score_count", "scored_gold_version")
    }
    if previous is not None and (previous.phase_id, previous.part, previous.columns) != (phase.pk, part, columns):
        previous = None
    if previous is None:
        teams = list(phase.task.community.teams.filter(removed_at__isnull=True).values_list("pk", "name"))
        team_ids, names = np.array([team for team, _ in teams], dtype=np.int64), tuple(name for _, name in teams)
    else:
        team_ids, names = previous.team_ids, previous.names
    team_rows = {team_id: row for row, team_id in enumerate(team_ids.tolist())}
    submissions = [counting.get(team_id) for team_id in team_rows]
    ids = np.array([row[0] if row else 0 for row in submissions], dtype=np.int64)
    counts = np.array([row[1] if row else 0 for row in submissions], dtype=np.int64)
    packed = _counting_packed(ids, counts, columns, part, n, previous)
    baselines = list(Baseline.objects.filter(phase=phase).order_by("name").values_list(*PACKED, "name"))
    marked = []  # the contrastive runs: none, without a query, where the phase takes none
    if phase.contrastive_runs:
        fields = ("team_id", "contrastive", *PACKED)
        marked = phase.submissions.shown().filter(contrastive__isnull=False).values_list(*fields)
    runs = sorted((team_rows[team_id], mark, row) for team_id, mark, *row in marked if team_id in team_rows)
    contrastive = _packed_rows(Submission, [tuple(row) for *_, row in runs], columns, part, n)
    analysis = (
        PhaseAnalysis.objects.filter(phase=phase, part=part, n_teams__gt=1)
        .values_list("pk", "board_values", "board_layout", "stamp", "n_teams")
        .first()
    )
    data = BoardData(
        phase_id=phase.pk,
        part=part,
        columns=columns,
        team_ids=team_ids,
        names=names,
        submission_ids=ids,
        score_counts=counts,
        rescoring=np.array([bool(row) and row[2] != phase.gold_version for row in submissions], dtype=bool),
        values=packed[:, :k],
        ranks=ranking.competition_rank_matrix(packed[:, :k], [column.direction for column in columns]),
        matrices=packed[:, k:].reshape(len(names), n, n),
        baseline_names=tuple(row[3] for row in baselines),
        baseline_values=_packed_rows(Baseline, baselines, columns, part, n)[:, :k],
        contrastive_teams=np.array([row for row, _, _ in runs], dtype=np.int64),
        contrastive_marks=np.array([mark for _, mark, _ in runs], dtype=np.int64),
        contrastive_ids=np.array([row[0] for *_, row in runs], dtype=np.int64),
        contrastive_values=contrastive[:, :k],
    )
    if analysis is None or analysis[1] is None or analysis[2] != Scored.layout_of(columns):
        return data  # none, or of other columns: the stamp names the layout, so it is being recomputed
    rows = np.frombuffer(bytes(analysis[1]), dtype="<f8").reshape(len(ANALYSIS_ROWS), -1)
    return replace(
        data,
        analysis_values=rows[:, :k],
        analysis_teams=analysis[4],
        analysis_current=analysis[3] == analysis_stamp(data, phase),
    )


ANALYSIS_ROWS = ("Majority vote of the teams", "Oracle (any team right)")
"""The two rows of a phase's analysis a board shows, never ranked (:mod:`scoring.engine.analysis`)."""
ANALYSIS_LAYOUT = 1
"""The version of what an analysis holds: raised when that changes, so that every phase's is
computed again."""


def analysis_stamp(data: BoardData, phase: Phase) -> str:
    """A digest of what a phase's analysis is computed from: its board's scores
    (:func:`scores_digest`), the primary metric (whose leaders are compared by kappa), the labels
    and whether they are a scale, the board's columns and :data:`ANALYSIS_LAYOUT`."""
    task = phase.task
    layout = Scored.layout_of(columns_of(task, calibrated=None))
    inputs = (ANALYSIS_LAYOUT, layout, scores_digest(data, phase), task.primary_metric, task.ordinal, task.labels)
    return hashlib.sha256(repr(inputs).encode()).hexdigest()


def scores_digest(data: BoardData, phase: Phase) -> str:
    """A digest of what a board's derived results (its bootstrap intervals) are computed from:
    each team's counting submission and the version of its scores (the three arrays' bytes,
    teams without one left out), and the phase's gold file and split."""
    digest = hashlib.sha256(
        repr((phase.pk, phase.gold_version, data.part, phase.private_percent, phase.split_seed)).encode()
    )
    counted = data.submission_ids != 0
    for found in (data.team_ids, data.submission_ids, data.score_counts):
        digest.update(found[counted].astype("<i8").tobytes())
    return digest.hexdigest()


# --- boards as rows (exports, the metric page, tests) ---------------------------------------------


@dataclass
class Entry:
    """One row of a leaderboard: a team and its counting submission, or a baseline (never ranked)."""

    name: str
    team_id: int | None = None
    submission_id: int | None = None
    values: dict[str, Value] = field(default_factory=dict)
    ranks: dict[str, int | None] = field(default_factory=dict)
    being_rescored: bool = False
    """Scored against an older gold file; its scores stand until the new ones are written."""
    contrastive: int | None = None
    """A team's contrastive run k (never ranked): ``team_id`` is its team's."""


@dataclass
class Board:
    phase: Phase
    columns: list[Column]
    data: BoardData
    """The board's arrays (with the overall column, if the board has one)."""
    order: np.ndarray
    """The teams' rows of ``data`` in board order (those with a scored submission first)."""
    baselines: list[Entry]
    sort: Column
    part: str = ALL_ITEMS
    """What the values are computed on: every item, or a part of a split test set."""
    contrastive: list[Entry] = field(default_factory=list)
    """The teams' contrastive runs, in the order of their teams on the board."""
    analysis: list[Entry] = field(default_factory=list)
    """The teams' majority vote and the oracle (:data:`ANALYSIS_ROWS`), never ranked."""
    analysis_current: bool = False
    """Whether ``analysis`` is of the board's scores (else of earlier ones, being recomputed)."""

    @property
    def task(self) -> Task:
        return self.phase.task

    @cached_property
    def entries(self) -> list[Entry]:
        """Every team, in board order, made when first asked for: a download of 10,000 teams
        is written from the arrays (:func:`leaderboard.exports.export_table`)."""
        return entries_of(self.data, self.order, self.columns)

    @property
    def scored(self) -> list[Entry]:
        """Teams with a scored submission, in board order."""
        return [entry for entry in self.entries if entry.submission_id is not None]

    @property
    def unscored(self) -> list[Entry]:
        """Teams without a scored submission (listed apart, never ranked)."""
        return [entry for entry in self.entries if entry.submission_id is None]

    def entry_of(self, submission: Submission) -> Entry | None:
        """The row whose counting submission is ``submission``, if it counts."""
        return next((e for e in self.entries if e.submission_id == submission.pk), None)


def python_cells(values: np.ndarray, ranks: np.ndarray, columns: Sequence[Column]) -> tuple[list, list]:
    """Rows of values and ranks under ``columns`` (NaN and 0 where none) as Python objects,
    whole arrays at once: floats (ints for a count of places), ints, ``None`` where undefined.
    A board of 10,000 teams makes as many rows of as many cells as it has columns."""
    cells = values.astype(object)
    for j, column in enumerate(columns):
        if isinstance(column, Aggregate) and column.method == BORDA:  # a count of places
            cells[:, j] = np.nan_to_num(values[:, j]).astype(np.int64).astype(object)
    cells[np.isnan(values)] = None
    places = ranks.astype(object)
    places[ranks == 0] = None
    return cells.tolist(), places.tolist()


def entries_of(data: BoardData, rows: Iterable[int], columns: Sequence[Column]) -> list[Entry]:
    """The teams of ``rows`` as entries with their values and ranks under ``columns``."""
    ids = [column.id for column in columns]
    indices = [data.index[key] for key in ids]
    rows = np.asarray(list(rows), dtype=np.int64)
    values, ranks = python_cells(data.values[np.ix_(rows, indices)], data.ranks[np.ix_(rows, indices)], columns)
    team_ids, submission_ids = data.team_ids[rows].tolist(), data.submission_ids[rows].tolist()
    rescoring = data.rescoring[rows].tolist()
    return [
        Entry(
            name=data.names[row],
            team_id=team_ids[n],
            submission_id=submission_ids[n] or None,
            values=dict(zip(ids, row_values, strict=True)),
            ranks=dict(zip(ids, row_ranks, strict=True)),
            being_rescored=rescoring[n],
        )
        for n, (row, row_values, row_ranks) in enumerate(zip(rows.tolist(), values, ranks, strict=True))
    ]


def baseline_entries(data: BoardData, columns: Sequence[Column], sort: Column) -> list[Entry]:
    """The baselines, best first under ``sort``, never ranked."""
    rows = sorted(
        range(len(data.baseline_names)),
        key=lambda row: (
            *ranking.sort_key(data.baseline_value(row, sort), sort.direction),
            data.baseline_names[row].lower(),
        ),
    )
    return [
        Entry(name=data.baseline_names[row], values={c.id: data.baseline_value(row, c) for c in columns})
        for row in rows
    ]


def leaderboard(
    *, phase: Phase, calibrated: bool | None = False, sort: str | None = None, part: str | None = None
) -> Board:
    """The phase's leaderboard: every team, a column per ranking metric, each with its rank,
    on ``part`` of the test set (default: the part the phase shows now).

    ``calibrated``: raw columns, calibrated ones, or (``None``, for the exports) both. Rows
    sort by ``sort`` (a column id; default the primary metric), undefined values last, ties
    by name.
    """
    return board_of(board_data(phase, part), phase=phase, calibrated=calibrated, sort=sort)


def board_of(
    data: BoardData,
    *,
    phase: Phase,
    calibrated: bool | None = False,
    sort: str | None = None,
    overall: Aggregate | None = None,
) -> Board:
    """:func:`leaderboard` from a board already read; ``overall``, an overall ranking, is its
    first column."""
    data = data.with_overall(overall)
    columns = shown_columns(phase.task, calibrated=calibrated, overall=overall)
    sort_column = sorted_by(phase.task, columns, sort)
    order = data.order(sort_column)
    baselines = baseline_entries(data, columns, sort_column)
    contrastive = [
        Entry(
            name=data.names[row],
            team_id=int(data.team_ids[row]),
            submission_id=int(data.contrastive_ids[run]),
            values={c.id: _value(data.contrastive_values[run, data.index[c.id]]) for c in columns},
            contrastive=int(data.contrastive_marks[run]),
        )
        for row in order
        for run in data.contrastive_of(row)
    ]
    analysis = [
        Entry(name=name, values={c.id: _value(values[data.index[c.id]]) for c in columns})
        for name, values in zip(ANALYSIS_ROWS, data.analysis_values, strict=False)
    ]
    return Board(
        phase=phase,
        columns=columns,
        data=data,
        order=order,
        baselines=baselines,
        sort=sort_column,
        part=data.part,
        contrastive=contrastive,
        analysis=analysis,
        analysis_current=data.analysis_current,
    )


def _value(found: float) -> Value:
    return None if np.isnan(found) else float(found)


def team_values(
    phase: Phase, columns: Sequence[Column], part: str | None = None, *, data: BoardData | None = None
) -> tuple[list[str], dict[str, list[Value]]]:
    """Team names and, per column id, the teams' values in the phase (on ``part``; default the
    part the phase shows now), in that order (every team of the task)."""
    data = data or board_data(phase, part)
    return list(data.names), {c.id: data.column_values(c) for c in columns}


def output_matrices(data: BoardData, output: str) -> dict[str, np.ndarray]:
    """Team name → the confusion matrix of ``output`` (rows predicted, columns gold) of its
    counting submission on the board's part, in board order, for a task of several outputs: a
    board packs no matrix of such a task (:attr:`Scheme.matrix_size`), so each is read from its
    run's ``output_scores`` (on a part, from ``parts``), the database taking out that matrix alone
    (one query). A run not scored on the part has none."""
    rows = np.flatnonzero(data.scored)
    path = ["output_scores", output, "confusion_matrix"]
    if data.part != ALL_ITEMS:
        path = ["parts", data.part, *path]
    found = functools.reduce(lambda inner, key: KeyTransform(key, inner), path[1:], path[0])
    matrices = dict(
        Submission.objects.filter(pk__in=data.submission_ids[rows].tolist())
        .annotate(matrix=found)
        .values_list("pk", "matrix")
    )
    return {
        data.names[row]: np.asarray(matrix, dtype=np.float64)
        for row in rows
        if (matrix := matrices.get(int(data.submission_ids[row]))) is not None
    }


@dataclass(frozen=True)
class Correlations:
    columns: list[Column]
    teams: list[str]
    values: dict[str, list[Value]]
    matrix: dict[str, dict[str, ranking.Correlation]]


def correlations_of(
    *, columns: Sequence[Column], teams: Sequence[str], values: Mapping[str, Sequence[Value]]
) -> Correlations:
    """The correlation matrix of ``columns`` from team values already read (``values`` may
    hold more columns)."""
    wanted = {c.id: list(values[c.id]) for c in columns}
    matrix = ranking.spearman_matrix(wanted, directions={c.id: c.direction for c in columns})
    return Correlations(columns=list(columns), teams=list(teams), values=wanted, matrix=matrix)


def rank_correlations(*, phase: Phase, column_ids: Iterable[str] | None = None) -> Correlations:
    """Spearman's rho between the team rankings of every pair of columns in a phase (paper 000,
    Fig. 2)."""
    columns = columns_of(phase.task, calibrated=None)
    if column_ids is not None:
        wanted = list(column_ids)
        columns = [c for c in columns if c.id in wanted]
    teams, values = team_values(phase, columns)
    return correlations_of(columns=columns, teams=teams, values=values)


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
    directions = (first.direction, second.direction)
    return Comparison(
        first=first,
        second=second,
        changes=ranking.rank_changes(teams, a, b, directions=directions),
        swaps=ranking.swapped_pairs(teams, a, b, directions=directions),
        correlation=ranking.spearman(a, b, directions=directions),
    )
