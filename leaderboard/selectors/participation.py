"""Who is in which team, and which submissions a person may see."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db.models import Count, Prefetch, Q, QuerySet

from leaderboard import errors
from leaderboard.models import Community, Participant, Phase, Registration, Submission, Task, Team


def listed_tasks() -> QuerySet[Task]:
    """Every task for the home page (subtasks under their task), with how many teams it has
    (``team_count``), its phases and subtasks, without descriptions."""
    subtasks = Prefetch(
        "subtasks", queryset=Task.objects.defer("description").prefetch_related("phases").order_by("slug")
    )
    tasks = Task.objects.filter(parent__isnull=True).defer("description").prefetch_related("phases", subtasks)
    return tasks.annotate(team_count=Community.team_count())


def task_by_slug(slug: str) -> Task | None:
    """The task at ``slug`` with its phases (every page and API call starts here), if any.

    Neither query is ordered (:meth:`Task.ordered_phases` orders the phases): the models' own
    orderings (a phase's by its task's) made compiling them most of a cached page's time."""
    phases = Prefetch("phases", queryset=Phase.objects.order_by())
    return Task.objects.select_related("parent").prefetch_related(phases).filter(slug=slug).order_by().first()


def phase_named(task: Task, slug: str | None) -> Phase | None:
    """The task's phase ``slug``, or (``None``) its current one (:meth:`Task.current_phase`),
    if any; it knows its task (no query to reach it)."""
    phases = task.ordered_phases()
    phase = task.current_phase() if slug is None else next((p for p in phases if p.slug == slug), None)
    if phase is not None:
        phase.task = task
    return phase


def no_such_phase(task: Task, slug: str | None) -> str:
    """What a person is told of a phase the task does not have (of a task divided into
    subtasks, whose phases are theirs: each subtask and its phases)."""
    if task.is_divided:
        phases: dict[str, list[str]] = {}
        for phase in task.every_phase():
            phases.setdefault(phase.task.slug, []).append(phase.slug)
        known = "; ".join(f"{subtask}: {', '.join(slugs)}" for subtask, slugs in sorted(phases.items()))
        return errors.PHASES_OF_SUBTASKS.format(known=known or "none yet")
    return errors.NO_SUCH_PHASE.format(slug=slug, known=", ".join(p.slug for p in task.ordered_phases()) or "none")


def team_of(*, task: Task, user) -> Team | None:
    """The person's team in this task (teams are the parent's, for a subtask), if any."""
    if not user.is_authenticated:
        return None
    return task.community.teams.filter(membership__user=user).first()


def visible_submissions(*, task: Task, user, phase: Phase | None = None) -> QuerySet[Submission]:
    """Submissions a person may list (of one phase, or of every phase): organisers all;
    participants their team's; visitors none."""
    submissions = task.submissions.select_related("team", "file", "phase__task").defer("file__content")
    if phase is not None:
        submissions = submissions.filter(phase=phase)
    if task.is_organiser(user):
        return submissions
    if not user.is_authenticated:
        return submissions.none()
    return submissions.filter(team__membership__user=user)


def day_start(moment: dt.datetime) -> dt.datetime:
    """Midnight UTC of ``moment``'s day: daily limits reset then."""
    return moment.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass(frozen=True)
class Quota:
    """A team's submissions counted against a phase's limits (refused files and failures that
    were not the team's never count), and what is left."""

    used_today: int
    per_day: int
    used_total: int
    total: int
    resets_at: dt.datetime

    @property
    def left_today(self) -> int:
        return max(0, min(self.per_day - self.used_today, self.total - self.used_total))

    @property
    def left_total(self) -> int:
        return max(0, self.total - self.used_total)


def quota(*, phase: Phase, team: Team, now: dt.datetime) -> Quota:
    today = day_start(now)
    used = (
        Submission.objects.filter(team=team, phase=phase)
        .counted_against_limits()
        .aggregate(total=Count("pk"), today=Count("pk", filter=Q(created_at__gte=today)))
    )  # one query: an upload's check of its limits
    return Quota(
        used_today=used["today"],
        per_day=phase.max_per_day,
        used_total=used["total"],
        total=phase.max_total,
        resets_at=today + dt.timedelta(days=1),
    )


COUNTING_REASONS = {
    Phase.Counting.LATEST: "counts: the latest scored submission",
    Phase.Counting.BEST: "counts: the best under the primary metric",
    Phase.Counting.CHOSEN: "counts: chosen by the team",
}
NOT_CHOSEN_REASON = "counts: the latest scored submission (none is chosen)"


def counting_reason(phase: Phase, team: Team) -> str:
    """Why a team's counting submission in a phase is the one that counts, in words."""
    if phase.counting == Phase.Counting.CHOSEN and not team.submissions.filter(phase=phase, chosen=True).exists():
        return NOT_CHOSEN_REASON
    return COUNTING_REASONS[Phase.Counting(phase.counting)]


def registration_of(*, task: Task, user) -> Participant | None:
    """The person's registration in the task (the parent's, for a subtask), if any."""
    if not user.is_authenticated:
        return None
    return task.community.participants.filter(user=user).first()


def participation_problem(*, task: Task, user) -> ValidationError | None:
    """Why this person may not take part now (form or join a team, download data, upload), or
    ``None``: registration needed and missing, waiting for approval, refused, or the terms
    changed since they were accepted. Organisers never take part; tasks without terms and with
    open registration need no registration. A subtask's are its parent's."""
    community = task.community
    if not community.needs_registration:
        return None
    participant = registration_of(task=task, user=user)
    if participant is None:
        approval = " and ask the organisers to approve you" if community.registration == Registration.APPROVAL else ""
        return errors.NOT_REGISTERED.error(approval=approval)
    if participant.status == Participant.Status.PENDING:
        return errors.REGISTRATION_PENDING.error()
    if participant.status == Participant.Status.REFUSED:
        return errors.REGISTRATION_REFUSED.error(reason=participant.reason)
    if participant.terms_version < community.terms_version:
        return errors.TERMS_CHANGED.error(accepted=participant.terms_version, current=community.terms_version)
    return None


def may_download_data(*, task: Task, user) -> bool:
    """Data files and sample submissions: for organisers, and for whoever may take part."""
    return task.is_organiser(user) or (
        participation_problem(task=task, user=user) is None and (user.is_authenticated or not task.needs_registration)
    )


def may_download_phase_data(*, phase: Phase, user, now: dt.datetime | None = None) -> bool:
    """A phase's data files and samples are published when it opens: before that, they are for
    its organisers only (whoever may take part gets them from then on, :func:`may_download_data`)."""
    return phase.has_opened(now) or phase.task.is_organiser(user)
