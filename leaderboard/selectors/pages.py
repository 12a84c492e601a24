"""What each results page shows, assembled from the board selectors: a view parses its request,
calls one of these, and renders the returned context.

The costly parts (a board's rows, a metric's ranking, the disagreement analysis, a what-if, a
shake-up) are kept in the results cache (:mod:`leaderboard.results_cache`) under the task's
results version, which every write that changes them raises: nothing stale is ever served.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from django.utils import timezone

from leaderboard import charts, exports, presenters, stability
from leaderboard.models import ALL_ITEMS, PUBLIC_PART, Counting, Phase, PhaseFile, Submission, Task
from leaderboard.permissions import can_view_board, is_member
from leaderboard.results_cache import cached
from leaderboard.samples import format_rules
from leaderboard.selectors.boards import (
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
from leaderboard.selectors.participation import (
    Quota,
    counting_reason,
    may_download_data,
    may_download_phase_data,
    participation_problem,
    quota,
    registration_of,
    team_of,
    visible_submissions,
)
from leaderboard.uploads import kept_gold
from scoring.engine import columns as board_columns
from scoring.engine import ranking
from scoring.engine.columns import PAPER_SET_KEYS, Column
from scoring.engine.formatting import json_value
from scoring.engine.gold import GoldChange
from scoring.engine.latex import latex_table
from scoring.engine.metrics import Value
from scoring.engine.ranking import Correlation
from scoring.engine.registry import BY_KEY, CLASS_MEASURES, PROPERTY_NAMES
from scoring.engine.split import part_masks
from scoring.engine.whatif import UNIFORM, TargetError, WhatIf, parse_target, what_if

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
"""How many of a task's latest submissions (of any phase) its page lists for an organiser (the organisers'
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


@dataclass(frozen=True)
class BoardShown:
    """The costly part of a leaderboard page, as cached: its rows as ready HTML, what the page
    says of the intervals, the teams tied with the leader, the organisers' decisions."""

    rows: presenters.BoardRows
    intervals: stability.IntervalsNote
    tied_with_leader: list[str]
    decisions: list[DecisionNote]


def _board_shown(phase: Phase, *, calibrated: bool, sort_column: Column) -> BoardShown:
    intervals = stability.intervals_of(phase=phase)
    board = leaderboard(phase=phase, calibrated=calibrated, sort=sort_column.id)
    return BoardShown(
        rows=presenters.board_rows(board, intervals=intervals),
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
        "board": presenters.BoardPage(columns=columns, sort=sort_column, rows=shown.rows),
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


def correlations_api(*, phase: Phase, set_name: str) -> dict[str, Any]:
    """The API's correlations of a column set (cached): rho and the teams it is computed over
    for every pair of columns, and rho's intervals when current."""

    def compute() -> dict[str, Any]:
        columns = paired_columns(phase.task, paper_set=set_name == "paper")
        teams, values = team_values(phase, columns)
        matrix = correlations_of(columns=columns, teams=teams, values=values).matrix
        intervals = stability.intervals_of(phase=phase)
        current = intervals.status == stability.CURRENT and intervals.shown
        return {
            "columns": [exports.column_json(column) for column in columns],
            "teams": len(teams),
            "rho": [[json_value(matrix[a.id][b.id].rho) for b in columns] for a in columns],
            "n_teams": [[matrix[a.id][b.id].n_teams for b in columns] for a in columns],
            "intervals_status": intervals.status,
            "spearman_intervals": [[intervals.rho(a, b) for b in columns] for a in columns] if current else None,
        }

    return cached(phase, "api-correlations", (set_name,), compute)


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


def most_disagreeing(
    first: Column, columns: Iterable[Column], matrix: Mapping[str, Mapping[str, Correlation]]
) -> Column | None:
    """The column whose ranking is furthest from ``first``'s (lowest defined rho), if any."""
    row = matrix.get(first.id, {})
    candidates = [(row[c.id].rho, c) for c in columns if c.id != first.id and c.id in row and row[c.id].rho is not None]
    return min(candidates, key=lambda pair: pair[0])[1] if candidates else None


def _analysis(phase: Phase, *, columns: list[Column], every_column: list[Column]) -> dict[str, Any]:
    """The disagreement page's costly part: every column's team values, the correlations of
    ``columns`` and both figures (the heatmap's hover with rho's bootstrap intervals), and the
    intervals of rho between every two columns."""
    teams, values = team_values(phase, every_column)
    correlations = correlations_of(columns=columns, teams=teams, values=values)
    intervals = stability.intervals_of(phase=phase)
    return {
        "teams": teams,
        "values": values,
        "intervals": intervals.note(),
        "rho_intervals": {(a.id, b.id): intervals.rho(a, b) for a in every_column for b in every_column},
        "matrix": correlations.matrix,
        "heatmap": charts.correlation_heatmap(columns=columns, matrix=correlations.matrix, intervals=intervals),
        "rank_chart": charts.rank_lines(
            columns=columns, teams=teams, values=correlations.values, order_by=primary_column(phase.task)
        ),
    }


@dataclass(frozen=True)
class SetAnalysis:
    """The disagreement analysis of one column set, as cached, with what it was computed from."""

    set_name: str
    columns: list[Column]
    every_column: list[Column]
    results: dict[str, Any]


def _set_analysis(phase: Phase, set_name: str | None) -> SetAnalysis:
    """The cached analysis of the column set ``set_name`` (the first set when unknown)."""
    set_name = set_name if set_name in COLUMN_SETS else next(iter(COLUMN_SETS))
    columns = paired_columns(phase.task, paper_set=set_name == "paper")
    every_column = paired_columns(phase.task)
    results = cached(
        phase,
        "disagreements",
        (set_name,),
        lambda: _analysis(phase, columns=columns, every_column=every_column),
    )
    return SetAnalysis(set_name=set_name, columns=columns, every_column=every_column, results=results)


def figure_stem(*, phase: Phase, figure: str, set_name: str) -> str:
    """The file name, without extension, of a disagreement figure downloaded as HTML, PNG or SVG:
    ``semeval-2017-4a-evaluation-heatmap-paper``. Slugs, figure and set names are ASCII letters,
    digits and hyphens already (URL patterns and the dicts above), so nothing needs quoting."""
    return f"{phase.task.slug}-{phase.slug}-{figure}-{set_name}"


def disagreement_figure(*, phase: Phase, set_name: str | None, figure: str) -> dict[str, Any]:
    """One figure of the disagreement page for download (``figure`` a key of
    :data:`DISAGREEMENT_FIGURES`): the same cached JSON the page draws, for the same column set."""
    analysis = _set_analysis(phase, set_name)
    key, heading = DISAGREEMENT_FIGURES[figure]
    return {
        "figure": analysis.results[key],
        "title": f"{heading} · {phase.task.title} · {phase.name}",
        "note": f"Metrics: {COLUMN_SETS[analysis.set_name]}.",
        "filename": figure_stem(phase=phase, figure=figure, set_name=analysis.set_name),
    }


def disagreement_page(
    *, phase: Phase, set_name: str | None, first_id: str | None, second_id: str | None
) -> dict[str, Any]:
    """Where the rankings of a phase disagree: the Spearman heatmap of a column set (paper 000,
    Figure 2), the rank chart, and a comparison of two columns (by default the primary metric
    and the column that disagrees with it most)."""
    task = phase.task
    shown = _set_analysis(phase, set_name)
    columns, analysis = shown.columns, shown.results
    matrix = analysis["matrix"]
    by_id = {c.id: c for c in shown.every_column}
    first = by_id.get(first_id or "") or primary_column(task)
    second = by_id.get(second_id or "") or most_disagreeing(first, columns, matrix) or first.counterpart()
    comparison = compare_values(first=first, second=second, teams=analysis["teams"], values=analysis["values"])
    defined_counts = {c.id: matrix[c.id][c.id].n_teams for c in columns}
    n_scored = max(defined_counts.values(), default=0)
    return {
        "task": task,
        "phase": phase,
        "set_name": shown.set_name,
        "column_sets": COLUMN_SETS,
        "column_set_notes": COLUMN_SET_NOTES,
        "columns": columns,
        "every_column": shown.every_column,
        "n_teams": len(analysis["teams"]),
        "n_scored": n_scored,
        "partly_undefined": [(c, defined_counts[c.id]) for c in columns if defined_counts[c.id] < n_scored],
        "heatmap": analysis["heatmap"],
        "rank_chart": analysis["rank_chart"],
        "figure_stems": {
            name: figure_stem(phase=phase, figure=name, set_name=shown.set_name) for name in DISAGREEMENT_FIGURES
        },
        "first": first,
        "second": second,
        "comparison": comparison,
        "intervals": analysis["intervals"],
        "rho_interval": analysis["rho_intervals"].get((first.id, second.id)),
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


def submission_scores(*, submission: Submission, user, level: Level) -> SubmissionScores:
    """Every metric of a scored submission, raw and calibrated, as ``level`` shows them (while
    results are hidden, with the page's precision), with its ranks where this person may see the
    board (the page's table and the API's answer both come from here; whether the person may see
    metrics at all is the feedback policy's, asked before)."""
    phase = submission.phase
    board = leaderboard(phase=phase, calibrated=None) if can_view_board(user, phase) else None
    entry = board.entry_of(submission) if board else None
    ranks = entry.ranks if entry else {}
    scores = submission.shown_scores()
    rows = [
        MetricRow(
            column=raw,
            raw=level.shown(raw.value(scores)),
            calibrated=level.shown(raw.counterpart().value(scores)),
            rank=ranks.get(raw.id),
            calibrated_rank=ranks.get(raw.counterpart().id),
        )
        for raw in columns_of(phase.task, calibrated=False)
    ]
    return SubmissionScores(rows=rows, ranked=entry is not None, n_teams=len(board.entries) if board else 0)


def submission_scorecard(*, submission: Submission, user) -> dict[str, Any]:
    """A submission's page: status, and once scored what the feedback policy lets this person
    see (:mod:`leaderboard.selectors.feedback`): its metrics raw and calibrated with its ranks
    (where the board may be shown and this submission counts), the confusion matrices, the
    per-class table and the two macro F1s; or the primary score alone; or only that it was
    scored."""
    task, phase = submission.task, submission.phase
    level = feedback_level(phase=phase, user=user)
    context: dict[str, Any] = {
        "task": task,
        "phase": phase,
        "submission": submission,
        "is_member": is_member(user, submission),
        "feedback": level,
        "primary_text": primary_text(submission, level),
        "primary_metric": BY_KEY[task.primary_metric],
        "can_choose": phase.counting == Counting.CHOSEN and not phase.is_closed(),
        "part": phase.shown_part(),
    }
    if submission.status != Submission.Status.SCORED or not level.shows_metrics:
        return context
    scores = submission_scores(submission=submission, user=user, level=level)
    shown = submission.shown_scores()
    metrics = (shown.metrics if shown else None) or {}
    context.update(
        rows=scores.rows,
        ranked=scores.ranked,
        n_teams=scores.n_teams,
        f1_averaged=level.shown(metrics.get("macro_f1")),
        f1_of_averages=level.shown(metrics.get("macro_f1_of_averages")),
        f1_gap=level.shown(metrics.get("macro_f1_gap")),
    )
    if level.shows_matrices:
        context.update(
            labels=task.labels,
            per_class=shown.per_class or {},
            class_measures=CLASS_MEASURES,
            heatmap_raw=charts.confusion_heatmap(shown.confusion_matrix, task.labels, title="Raw counts"),
            heatmap_calibrated=charts.confusion_heatmap(
                shown.calibrated_matrix(), task.labels, title="Prevalence-calibrated"
            ),
        )
    return context


def gold_change_page(*, phase: Phase, change: GoldChange) -> dict[str, Any]:
    """The preview of a phase's new gold file: what changes, and which submissions would fail."""
    submissions = phase.submissions.exclude(status=Submission.Status.FAILED)
    return {
        "change": change,
        "pending_name": phase.pending_gold_file.name if phase.pending_gold_file else "",
        "class_counts": [(label, change.counts_old[label], change.counts_new[label]) for label in phase.task.labels],
        "would_fail": 0 if change.same_ids else submissions.count(),
        "n_submissions": phase.submissions.count(),
    }


@dataclass(frozen=True)
class SubmissionRow:
    """A row of a submissions table: the submission, its primary score as the person may see it
    (``None``: not shown), and whether it is the one that counts for its team."""

    submission: Submission
    primary: str | None
    counts: bool = False


@dataclass(frozen=True)
class PhaseSection:
    """A team's part of one phase: its submissions there (the one that counts marked, and why)
    and the phase's quota."""

    phase: Phase
    rows: list[SubmissionRow]
    counting_reason: str | None
    quota: Quota


def _team_rows(*, phase: Phase, team, user, level: Level) -> tuple[list[SubmissionRow], str | None]:
    """A team's submissions in a phase for its own members, newest first, with the one that
    counts marked and why. Under "best" counting the mark compares scores, so it is shown only
    where scores are (a hidden board's "validated only" team must not learn which upload scored
    best)."""
    mine = list(visible_submissions(task=phase.task, user=user, phase=phase).filter(team=team))
    show_mark = phase.counting != Counting.BEST or level.shows_metrics
    counting = counting_submissions(phase, fields=()).get(team.pk) if show_mark else None
    rows = [SubmissionRow(s, primary_text(s, level), counts=counting is not None and s.pk == counting.pk) for s in mine]
    return rows, counting_reason(phase, team) if counting else None


def team_sections(*, task: Task, team, user, now: dt.datetime) -> list[PhaseSection]:
    """The team's part of every phase that has opened, the latest first."""
    sections = []
    for phase in reversed(task.ordered_phases()):
        if not phase.has_opened(now):
            continue
        level = feedback_level(phase=phase, user=user)
        rows, reason = _team_rows(phase=phase, team=team, user=user, level=level)
        sections.append(PhaseSection(phase, rows, reason, quota(phase=phase, team=team, now=now)))
    return sections


@dataclass(frozen=True)
class PhaseStep:
    """A phase on the task's timeline, as the task page shows it."""

    phase: Phase
    state: str
    """"open", "upcoming" or "closed"."""
    board_visible: bool
    data_files: list[PhaseFile]
    data_visible: bool
    """Whether this person may download its data files and samples now."""


def timeline(*, task: Task, user, now: dt.datetime) -> list[PhaseStep]:
    """Every phase of the task in time order, with whether it is open, to come or over."""
    steps = []
    may_download = may_download_data(task=task, user=user)
    for phase in task.ordered_phases():
        state = "open" if phase.is_open(now) else ("closed" if phase.is_closed(now) else "upcoming")
        files = list(phase.data_files.select_related("file").defer("file__content"))
        visible = may_download and may_download_phase_data(phase=phase, user=user, now=now)
        steps.append(PhaseStep(phase, state, can_view_board(user, phase), files, visible))
    return steps


def task_page(*, task: Task, user) -> dict[str, Any]:
    """A task's page: its description, its phases on a timeline with their data files, sample
    submissions and boards, the person's team and its submissions in each phase (which counts,
    the quota used and left), and for organisers the latest submissions of every team."""
    now = timezone.now()
    team = team_of(task=task, user=user)
    is_organiser = task.is_organiser(user)
    current = task.current_phase(now)
    may_download = may_download_data(task=task, user=user)
    context = {
        "task": task,
        "phase": current,
        "open_phase": task.open_phase(now),
        "timeline": timeline(task=task, user=user, now=now),
        "team": team,
        "is_organiser": is_organiser,
        "task_over": task.is_over(now),
        "sections": team_sections(task=task, team=team, user=user, now=now) if team is not None else [],
        "primary_metric": BY_KEY[task.primary_metric],
        "format_rules": format_rules(
            current, show_ids=may_download and current is not None and may_download_phase_data(phase=current, user=user)
        ),
        "registration": registration_of(task=task, user=user),
        "participation_problem": None if is_organiser else participation_problem(task=task, user=user),
        "may_download": may_download,
        "announcements": list(task.announcements.all()),
    }
    if is_organiser:
        latest = visible_submissions(task=task, user=user)[:ORGANISER_SUBMISSIONS_SHOWN]
        context["all_submissions"] = [SubmissionRow(s, primary_text(s, Level.ALL)) for s in latest]
    return context


def team_page(*, task: Task, user) -> dict[str, Any] | None:
    """A member's page of their team: members, invite code, system description, and in each
    phase its submissions with the one that counts and the quota. ``None`` when the person has
    no team here."""
    team = team_of(task=task, user=user)
    if team is None:
        return None
    now = timezone.now()
    sections = team_sections(task=task, team=team, user=user, now=now)
    return {
        "task": task,
        "phase": task.current_phase(now),
        "team": team,
        "members": list(team.members.order_by("username").values_list("username", flat=True)),
        "sections": sections,
        "open_section": next((section for section in sections if section.phase.is_open(now)), None),
        "editable": not task.is_over(now),
    }


def places_climbed(before: int | None, after: int | None) -> int | None:
    """How many places a team climbed from rank ``before`` to rank ``after`` (negative: it
    dropped); ``None`` where either rank is undefined."""
    return None if before is None or after is None else before - after


@dataclass(frozen=True)
class RankMove:
    """A team's rank and value under one column in two rankings (today and at a target
    prevalence; on the public part and in the final ranking), and how far it moved."""

    team: str
    rank_before: int | None
    value_before: Value
    rank_after: int | None
    value_after: Value

    @property
    def shift(self) -> int | None:
        return places_climbed(self.rank_before, self.rank_after)


@dataclass(frozen=True)
class RankCell:
    """A team's rank under one metric today and at the target."""

    column: Column
    today: int | None
    at_target: int | None

    @property
    def shift(self) -> int | None:
        """Places climbed at the target (negative: dropped); ``None`` where a rank is undefined."""
        return places_climbed(self.today, self.at_target)


def rank_moves(teams: Sequence[str], before: Sequence[Value], after: Sequence[Value]) -> list[RankMove]:
    """Each team's competition rank and value under ``before`` and ``after``, in the order of
    the ranking ``after`` (undefined last, ties by name)."""
    ranks_before, ranks_after = ranking.competition_ranks(before), ranking.competition_ranks(after)
    moves = [RankMove(*row) for row in zip(teams, ranks_before, before, ranks_after, after, strict=True)]
    moves.sort(key=lambda move: (*ranking.sort_key(move.value_after), move.team.lower()))
    return moves


def gold_counts(phase: Phase) -> list[int]:
    """Items per class in the part of the phase's gold file its board shows now (every item,
    or one part of a split test set), cached."""

    def count() -> list[int]:
        part = phase.shown_part()
        codes = kept_gold(phase).codes
        if part != ALL_ITEMS:
            codes = codes[part_masks(len(codes), percent=phase.private_percent, seed=phase.split_seed_number)[part]]
        return [int(n) for n in np.bincount(codes, minlength=len(phase.task.labels))]

    return cached(phase, "gold-counts", (), count)


def what_if_board(*, phase: Phase, target: tuple[Fraction, ...]) -> WhatIf:
    """Every team's counting submission in the phase re-scored at ``target`` (cached)."""

    def build() -> WhatIf:
        board = leaderboard(phase=phase, calibrated=False)
        matrices = {entry.name: entry.submission.part(board.part).confusion_matrix for entry in board.scored}
        return what_if(matrices, labels=phase.task.labels, target=target)

    return cached(phase, "what-if", tuple(str(share) for share in target), build)


def what_if_page(*, phase: Phase, target_text: str | None, column_id: str | None) -> dict[str, Any]:
    """The prevalence what-if of a phase (paper 000, Eq. 5 and 26-27): the target (default
    uniform, i.e. calibration), every team re-ranked under the chosen metric next to today's,
    and the rank of every team under every metric at the target, the movers marked. A target
    that cannot be used comes back as ``problem``, with the uniform target shown instead."""
    task = phase.task
    labels = list(task.labels)
    counts = gold_counts(phase)
    problem = None
    try:
        target = parse_target(target_text or UNIFORM, labels=labels, gold_counts=counts)
    except TargetError as error:
        problem = str(error)
        target = parse_target(UNIFORM, labels=labels, gold_counts=counts)
    board = what_if_board(phase=phase, target=target)
    columns = board.columns()
    column = board_columns.column_by_id(columns, column_id or "") or primary_column(task)
    rows = rank_moves(board.teams, board.values_today(column), board.values(column))
    total = sum(counts)
    all_ranks = {c.id: (board.ranks_today(c), board.ranks(c)) for c in columns}
    return {
        "task": task,
        "phase": phase,
        "labels": labels,
        "shares": [
            (label, float(share), count / total if total else 0.0)
            for label, share, count in zip(labels, target, counts, strict=True)
        ],
        "is_uniform": len(set(target)) == 1,
        "problem": problem,
        "column": column,
        "columns": columns,
        "rows": rows,
        "movers": board.moves(column),
        "every_metric": [
            (row.team, [RankCell(c, all_ranks[c.id][0][row.team], all_ranks[c.id][1][row.team]) for c in columns])
            for row in rows
        ],
        "columns_with_movers": sum(1 for c in columns if board.moves(c)),
    }


def shakeup_page(*, phase: Phase, column_id: str | None) -> dict[str, Any]:
    """How ranks moved between the public part of a split test set (what the board showed while
    the phase ran) and the final ranking (the private part, or every item): under one column,
    each team's two ranks; under every column, Spearman's rho between the two rankings."""
    task = phase.task
    columns = columns_of(task, calibrated=None)
    column = board_columns.column_by_id(columns, column_id or "") or primary_column(task)
    final = phase.final_part

    def build() -> tuple[list[str], dict[str, list[Value]], dict[str, list[Value]]]:
        teams, public = team_values(phase, columns, PUBLIC_PART)
        _, final_values = team_values(phase, columns, final)
        return teams, public, final_values

    teams, public, final_values = cached(phase, "shake-up", (), build)
    rows = rank_moves(teams, public[column.id], final_values[column.id])
    return {
        "task": task,
        "phase": phase,
        "column": column,
        "columns": columns,
        "final_part": phase.get_final_part_display(),
        "rows": rows,
        "movers": [row for row in rows if row.shift],
        "correlations": [(c, ranking.spearman(public[c.id], final_values[c.id])) for c in columns],
    }
