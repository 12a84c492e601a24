"""What organisers read: every submission of a task, filtered and paginated; the decisions
taken (shown on the board too); the participants for a mailing list."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Prefetch, Q, QuerySet

from leaderboard.models import Membership, OrganiserAction, Participant, Phase, Submission, Task, Team

SUBMISSIONS_PER_PAGE = 50


@dataclass(frozen=True)
class SubmissionFilter:
    team: int | None = None
    status: str | None = None
    phase: str | None = None

    @classmethod
    def parse(cls, query) -> SubmissionFilter:
        """From a query string; anything malformed is no filter."""
        team = query.get("team", "")
        status = query.get("status", "")
        return cls(
            team=int(team) if team.isdigit() else None,
            status=status if status in Submission.Status.values else None,
            phase=query.get("phase") or None,
        )


PHASE_OF_SUBTASK = "/"
"""Between a subtask's slug and its phase's, where a task divided into subtasks filters its
submissions by phase (``semeval-2017-task-4a/evaluation``)."""


def phase_choices(task: Task) -> list[tuple[str, str]]:
    """The phases a task's submissions may be filtered by, as (value, name): its own, or every
    subtask's, each named after its subtask."""
    return [
        (phase.slug, phase.name)
        if phase.task_id == task.pk
        else (f"{phase.task.slug}{PHASE_OF_SUBTASK}{phase.slug}", f"{phase.task.title} · {phase.name}")
        for phase in task.every_phase()
    ]


def task_submissions(*, task: Task, where: SubmissionFilter, page: str | int | None) -> Page:
    """Every submission of the task, newest first, filtered; one page of them (no silent cap)."""
    submissions = task.submissions.select_related("team", "file", "phase__task").defer("file__content")
    if where.phase is not None:
        subtask, _, phase = where.phase.rpartition(PHASE_OF_SUBTASK)
        submissions = submissions.filter(phase__slug=phase, **({"phase__task__slug": subtask} if subtask else {}))
    if where.team is not None:
        submissions = submissions.filter(team_id=where.team)
    if where.status is not None:
        submissions = submissions.filter(status=where.status)
    return Paginator(submissions, SUBMISSIONS_PER_PAGE).get_page(page)


def organiser_actions(*, task: Task, phase: Phase | None = None) -> QuerySet[OrganiserAction]:
    """The decisions taken about the task's teams and submissions, newest first: the teams
    removed (from every subtask: teams are the community's) and the submissions disqualified in
    this task (in one phase of it)."""
    actions = task.community.organiser_actions.select_related("actor", "team", "submission")
    if task.is_divided:
        return actions
    runs = Q(submission__phase__task=task) if phase is None else Q(submission__phase=phase)
    return actions.filter(Q(submission__isnull=True) | runs)


def participants(*, task: Task) -> QuerySet[Team]:
    """Every team with its members (user name and e-mail address), by team name."""
    members = Membership.objects.select_related("user").order_by("user__username")
    return task.community.teams.prefetch_related(Prefetch("membership_set", queryset=members))


def submissions_page(*, task: Task, where: SubmissionFilter, page: str | int | None) -> dict:
    """The organisers' page of every submission: one page of them, the filter's choices, the
    decisions taken."""
    return {
        "task": task,
        "page": task_submissions(task=task, where=where, page=page),
        "where": where,
        "teams": task.community.teams.order_by("name"),
        "phases": phase_choices(task),
        "statuses": Submission.Status.choices,
        "decisions": organiser_actions(task=task),
    }


def registrations_page(*, task: Task, status: str | None) -> dict:
    """The organisers' list of requests to take part: every registration (or those with
    ``status``), oldest request first, each with its team, and how many wait."""
    community = task.community  # one registration for every subtask
    registrations = community.participants.select_related("user", "decided_by")
    counts = {value: registrations.filter(status=value).count() for value in Participant.Status.values}
    if status in Participant.Status.values:
        registrations = registrations.filter(status=status)
    teams = dict(community.memberships.values_list("user_id", "team__name"))
    return {
        "task": community.task,
        "rows": [(registration, teams.get(registration.user_id)) for registration in registrations],
        "status": status if status in Participant.Status.values else None,
        "statuses": Participant.Status.choices,
        "counts": counts,
    }
