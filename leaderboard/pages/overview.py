"""A task's page, a team's page and a submission's page: what each shows this person (their
team, its submissions in each phase with the quota, the scores the feedback policy lets them
see), and the preview of a new gold file.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from leaderboard import charts, errors
from leaderboard.models import Counting, PartScores, Phase, PhaseFile, Submission, Task
from leaderboard.pages.results import board_data_of
from leaderboard.permissions import can_view_board, is_member
from leaderboard.samples import format_rules
from leaderboard.selectors.boards import (
    columns_of,
    counting_submissions,
    leaderboard,
    primary_column,
)
from leaderboard.selectors.feedback import Level, feedback_level, primary_text
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
from scoring.engine.columns import Column
from scoring.engine.gold import GoldChange
from scoring.engine.metrics import Value
from scoring.engine.registry import BY_KEY, CLASS_MEASURES

ORGANISER_SUBMISSIONS_SHOWN = 10
"""How many of a task's latest submissions (of any phase) its page lists for an organiser (the organisers'
submissions page lists them all, paginated)."""


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
        "can_choose": phase.counting == Counting.CHOSEN and not phase.contrastive_runs and not phase.is_closed(),
        "run_marks": phase.run_marks() if not phase.is_closed() else [],
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
    if level.shows_matrices and task.scheme.has_outputs:
        context["outputs"] = [
            OutputMatrices.of(index, output.name, output.labels, (shown.output_scores or {}).get(output.name))
            for index, output in enumerate(task.scheme.outputs, start=1)
        ]
        context["class_measures"] = CLASS_MEASURES
    elif level.shows_matrices:
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


@dataclass(frozen=True)
class OutputMatrices:
    """One output's confusion matrices and per-class table on a run's page."""

    name: str
    labels: tuple[str, ...]
    per_class: dict
    heatmap_raw: str | None
    heatmap_calibrated: str | None

    index: int

    @property
    def raw_script_id(self) -> str:
        return f"confusion-raw-data-{self.index}"

    @property
    def calibrated_script_id(self) -> str:
        return f"confusion-calibrated-data-{self.index}"

    @classmethod
    def of(cls, index: int, name: str, labels: tuple[str, ...], stored: dict | None) -> OutputMatrices:
        scores = PartScores(**stored) if stored else None
        matrix = scores.confusion_matrix if scores else None
        return cls(
            index=index,
            name=name,
            labels=labels,
            per_class=(scores.per_class if scores else None) or {},
            heatmap_raw=charts.confusion_heatmap(matrix, labels, title=f"{name}: raw counts"),
            heatmap_calibrated=charts.confusion_heatmap(
                scores.calibrated_matrix() if scores else None, labels, title=f"{name}: prevalence-calibrated"
            ),
        )


def gold_change_page(*, phase: Phase, change: GoldChange) -> dict[str, Any]:
    """The preview of a phase's new gold file: what changes, and which submissions would fail."""
    submissions = phase.submissions.exclude(status=Submission.Status.FAILED)
    return {
        "change": change,
        "pending_name": phase.pending_gold_file.name if phase.pending_gold_file else "",
        "class_counts": [(label, change.counts_old[label], count) for label, count in change.counts_new.items()],
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
    """The team's part of every phase that has opened (of every subtask, for a task divided
    into them), the latest first."""
    sections = []
    for phase in reversed(task.every_phase() if task.is_divided else task.ordered_phases()):
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


@dataclass(frozen=True)
class SubtaskStep:
    """A subtask on its parent's page: its current phase, whether it is open, and, where this
    person may see that phase's board, the teams ranked first under its primary metric."""

    task: Task
    phase: Phase | None
    state: str
    leaders: list[str] | None


def subtask_steps(*, task: Task, user, now: dt.datetime) -> list[SubtaskStep]:
    """Each subtask of a task divided into subtasks, with its winners so far (ties all named)."""
    steps = []
    for subtask in task.subtasks.prefetch_related("phases").order_by("slug"):
        subtask.parent = task
        phase = subtask.current_phase(now)
        if phase is None:
            steps.append(SubtaskStep(subtask, None, "upcoming", None))
            continue
        phase.task = subtask
        state = "open" if phase.is_open(now) else ("closed" if phase.is_closed(now) else "upcoming")
        leaders = None
        if state != "upcoming" and not phase.waits_for_gold and can_view_board(user, phase):
            data = board_data_of(phase)
            first = data.ranks[:, data.index[primary_column(subtask).id]] == 1
            leaders = sorted(data.names[row] for row in first.nonzero()[0])
        steps.append(SubtaskStep(subtask, phase, state, leaders))
    return steps


def task_page(*, task: Task, user) -> dict[str, Any]:
    """A task's page: its description, its phases on a timeline with their data files, sample
    submissions and boards, the person's team and its submissions in each phase (which counts,
    the quota used and left), and for organisers the latest submissions of every team and the
    phases (of every subtask) that wait for their gold file."""
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
        "announcements": list(task.community.announcements),
        "divided": task.is_divided,
        "subtasks": subtask_steps(task=task, user=user, now=now) if task.is_divided else [],
    }
    open_phase = context["open_phase"]
    if open_phase is not None and open_phase.waits_for_gold:
        context["waits_for_gold_message"] = errors.WAITS_FOR_GOLD.format(phase=open_phase.name)
    if is_organiser:
        context["waiting_phases"] = [phase for phase in task.every_phase() if phase.waits_for_gold]
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
