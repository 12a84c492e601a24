"""The runs of a phase as its archive reads them (:mod:`leaderboard.archives`): which runs
(every one, those that count, some teams'), each one's facts with its values and ranks as the
board has them, then their files' bytes one at a time.

Both passes stream: the facts :data:`FACTS_CHUNK` rows at a time (no file bytes), the files
one at a time, each read by its key, so what a download holds does not grow with the number of
runs. What is
read is fixed when the view is made (:attr:`RunsView.last_id`, the counting runs, the board's
ranks): a run uploaded while the archive is being written is in neither its index nor its files.

What a reader sees of the scores is the feedback policy's (:mod:`leaderboard.selectors.feedback`),
as on every other channel: organisers, and everyone once results are public, every value as
stored with its rank; a team while results are hidden its own runs' values with the page's
precision (or the primary score rounded, or none), and no ranks.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Count, Max, QuerySet

from leaderboard.models import Counting, Membership, Phase, Scored, StoredFile, Submission
from leaderboard.permissions import can_view_board
from leaderboard.selectors.boards import BoardData, board_data, columns_of, primary_column
from leaderboard.selectors.feedback import PRIMARY_DIGITS, Level, feedback_level
from scoring.engine.columns import Column
from scoring.engine.metrics import Value

FACTS_CHUNK = 500
"""Runs read at a time for the index (their facts and packed values, a few kB each)."""
FACT_FIELDS = (
    "id",
    "phase_id",
    "team_id",
    "file_id",
    "kind",
    "description",
    "status",
    "failure",
    "created_at",
    "scored_at",
    "chosen",
    "disqualified_at",
    "disqualified_reason",
    "board_values",
    "board_layout",
    "file__name",
    "file__size",
    "file__sha256",
)
ALL_RUNS, COUNTING_RUNS = "all", "counting"


@dataclass(frozen=True)
class RunFacts:
    """One run as its archive's index lists it."""

    id: int
    team_id: int
    team: str
    members: tuple[str, ...]
    file_name: str
    size: int
    sha256: str
    kind: str
    uploaded_at: dt.datetime
    scored_at: dt.datetime | None
    status: str
    failure: str
    counts: bool | None
    """Whether it is its team's run on the board; ``None`` where this reader may not know."""
    chosen: bool
    disqualified: str
    """The organisers' reason, if it is disqualified."""
    description: str
    values: tuple[Value, ...]
    """Under :attr:`RunsView.columns`, as this reader may see them."""
    ranks: tuple[int | None, ...]
    """The board's ranks under the same columns; ``None`` where it is not ranked there."""


@dataclass(frozen=True)
class RunsView:
    """What one archive holds, fixed when it is made: the phase, the runs chosen, the columns
    and what this reader sees of them."""

    phase: Phase
    which: str
    team_ids: frozenset[int] | None
    """The teams chosen (``None``: every team)."""
    level: Level
    ranked: bool
    """The reader may see the board: runs that count carry their ranks."""
    columns: tuple[Column, ...]
    part: str
    last_id: int
    team_names: dict[int, str]
    members: dict[int, tuple[str, ...]]
    board: BoardData
    counting_ids: frozenset[int]

    @property
    def shows_counting(self) -> bool:
        """Under "best" counting the mark compares scores: shown only where scores are (as
        the team's page does)."""
        return self.phase.counting != Counting.BEST or self.level.shows_metrics

    def selected(self) -> QuerySet[Submission]:
        """The runs, by team name then upload time."""
        runs = Submission.objects.filter(phase=self.phase, pk__lte=self.last_id)
        if self.team_ids is not None:
            runs = runs.filter(team_id__in=self.team_ids)
        if self.which == COUNTING_RUNS:
            runs = runs.filter(pk__in=self.counting_ids)
        return runs.order_by("team__name", "created_at", "id")


def shown_columns(phase: Phase, level: Level) -> tuple[Column, ...]:
    """The columns whose values a reader at ``level`` sees: every ranking column (raw, then
    calibrated, as the board's CSV), the primary one alone, or none."""
    if level.shows_metrics:
        return tuple(columns_of(phase.task, calibrated=None))
    if level is Level.PRIMARY:
        return (primary_column(phase.task),)
    return ()


def runs_view(*, phase: Phase, user, which: str = ALL_RUNS, team_ids: frozenset[int] | None = None) -> RunsView:
    """The archive of ``phase`` for ``user`` (who may read it: the caller decided), with the
    runs ``which`` says of the teams ``team_ids`` (``None``: every team)."""
    level = feedback_level(phase=phase, user=user)
    board = board_data(phase)
    teams = phase.task.community.teams
    if team_ids is not None:
        teams = teams.filter(pk__in=team_ids)
    members: dict[int, list[str]] = {}
    for team_id, username in (
        Membership.objects.filter(team__in=teams).order_by("user__username").values_list("team_id", "user__username")
    ):
        members.setdefault(team_id, []).append(username)
    last_id = Submission.objects.filter(phase=phase).aggregate(last=Max("id"))["last"] or 0
    return RunsView(
        phase=phase,
        which=which,
        team_ids=team_ids,
        level=level,
        ranked=can_view_board(user, phase),
        columns=shown_columns(phase, level),
        part=board.part,
        last_id=last_id,
        team_names=dict(teams.values_list("pk", "name")),
        members={team: tuple(names) for team, names in members.items()},
        board=board,
        counting_ids=frozenset(int(pk) for pk in board.submission_ids if pk),
    )


def _values(view: RunsView, run: Submission) -> tuple[Value, ...]:
    """The run's values under the view's columns, as the board stores them (its packed doubles,
    or its JSON scores where they were packed under another layout), then as the reader may see
    them. Unscored: none."""
    if not view.columns or run.status != Submission.Status.SCORED:
        return tuple(None for _ in view.columns)
    board_columns, n = view.board.columns, len(view.phase.task.labels)
    layout, width = Scored.layout_of(board_columns), len(board_columns) + n * n
    vector = Scored.unpacked(run.board_values, run.board_layout, layout=layout, part=view.part, width=width)
    if vector is None:
        stored = Submission.objects.get(pk=run.pk)
        vector = Scored.row_of(board_columns, stored.part(view.part), n)
    values = [None if v != v else v for v in vector[: len(board_columns)].tolist()]
    found = [values[view.board.index[column.id]] for column in view.columns]
    if view.level is Level.PRIMARY:
        return tuple(None if v is None else round(v, PRIMARY_DIGITS) for v in found)
    return tuple(view.level.shown(v) for v in found)


def _ranks(view: RunsView, run: Submission, counts: bool) -> tuple[int | None, ...]:
    if not (view.ranked and counts):
        return tuple(None for _ in view.columns)
    row = view.board.row_of[run.team_id]
    return tuple(int(view.board.ranks[row, view.board.index[column.id]]) or None for column in view.columns)


def run_facts(view: RunsView) -> Iterator[RunFacts]:
    """Every chosen run's facts, values and ranks, a chunk of rows at a time."""
    runs = view.selected().select_related("file").only(*FACT_FIELDS)
    for run in runs.iterator(chunk_size=FACTS_CHUNK):
        counts = run.pk in view.counting_ids
        yield RunFacts(
            id=run.pk,
            team_id=run.team_id,
            team=view.team_names.get(run.team_id, ""),
            members=view.members.get(run.team_id, ()),
            file_name=run.file.name,
            size=run.file.size,
            sha256=run.file.sha256,
            kind=run.kind,
            uploaded_at=run.created_at,
            scored_at=run.scored_at,
            status=run.status,
            failure=run.failure,
            counts=counts if view.shows_counting else None,
            chosen=run.chosen,
            disqualified=run.disqualified_reason if run.disqualified_at else "",
            description=run.description,
            values=_values(view, run),
            ranks=_ranks(view, run, counts),
        )


@dataclass(frozen=True)
class RunFile:
    id: int
    team_id: int
    name: str
    uploaded_at: dt.datetime
    content: bytes


def run_files(view: RunsView) -> Iterator[RunFile]:
    """Every chosen run's file, exactly as uploaded, one at a time, in the index's order.

    The runs are listed in order without their bytes, and each file is then read by its key:
    sorting rows that carry the bytes would make the database hold them all in its sorter
    (SQLite keeps the sort in memory up to its cache, then in temporary files), which grows
    with the number of runs; a look-up by key holds one file."""
    rows = view.selected().values_list("pk", "team_id", "file_id", "file__name", "created_at")
    for pk, team_id, file_id, name, uploaded_at in rows.iterator(chunk_size=FACTS_CHUNK):
        content = StoredFile.objects.values_list("content", flat=True).get(pk=file_id)
        yield RunFile(id=pk, team_id=team_id, name=name, uploaded_at=uploaded_at, content=bytes(content))


@dataclass(frozen=True)
class TeamRuns:
    team_id: int
    name: str
    removed: bool
    runs: int
    counting: bool


def runs_page(*, phase: Phase) -> dict:
    """The organisers' page of a phase's runs: every team with how many runs it has there and
    whether one counts, to choose what to download."""
    board = board_data(phase)
    counting_teams = {int(team) for team, pk in zip(board.team_ids, board.submission_ids, strict=True) if pk}
    counts = dict(
        Submission.objects.filter(phase=phase).values("team_id").annotate(n=Count("id")).values_list("team_id", "n")
    )
    teams = [
        TeamRuns(team.pk, team.name, team.removed_at is not None, counts.get(team.pk, 0), team.pk in counting_teams)
        for team in phase.task.community.teams
    ]
    return {
        "task": phase.task,
        "phase": phase,
        "teams": teams,
        "n_runs": sum(counts.values()),
        "n_counting": len(counting_teams),
    }
