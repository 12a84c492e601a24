"""An organiser's decisions about participants: disqualifying a submission, removing a team.

Each takes a reason, which the leaderboard shows, and is recorded as an ``OrganiserAction``
(who, when, why) in the same transaction. Nothing is deleted: a disqualified submission and a
removed team's submissions stay stored, and simply no longer count.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from leaderboard import errors
from leaderboard.derived import scores_changed
from leaderboard.models import OrganiserAction, Submission, Task, Team

REASON_FIELD = "reason"


def _checked(*, task: Task, user, reason: str) -> str:
    if not task.is_organiser(user):
        raise PermissionDenied(errors.NOT_ORGANISER)
    reason = " ".join(reason.split())
    if not reason:
        raise errors.REASON_REQUIRED.error(REASON_FIELD)
    return reason


@transaction.atomic
def submission_disqualify(*, submission: Submission, user, reason: str) -> OrganiserAction:
    """Take a submission off the board, for a reason the board shows; the team's next submission
    under the counting rule counts instead."""
    reason = _checked(task=submission.task, user=user, reason=reason)
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    if locked.disqualified_at is not None:
        raise errors.ALREADY_DISQUALIFIED.error(pk=locked.pk)
    now = timezone.now()
    Submission.objects.filter(pk=locked.pk).update(
        disqualified_at=now, disqualified_by=user, disqualified_reason=reason
    )
    scores_changed(phase=locked.phase)
    return OrganiserAction.objects.create(
        task=submission.task.community.task,
        actor=user,
        kind=OrganiserAction.Kind.DISQUALIFY,
        team_id=locked.team_id,
        submission=locked,
        reason=reason,
        created_at=now,
    )


@transaction.atomic
def team_remove(*, team: Team, user, reason: str) -> OrganiserAction:
    """Take a team off the board, for a reason the board shows."""
    reason = _checked(task=team.task, user=user, reason=reason)
    locked = Team.objects.select_for_update().get(pk=team.pk)
    if locked.removed_at is not None:
        raise errors.ALREADY_REMOVED.error(team=locked.name)
    now = timezone.now()
    Team.objects.filter(pk=locked.pk).update(removed_at=now, removed_by=user, removed_reason=reason)
    for phase in team.task.every_phase():
        scores_changed(phase=phase)
    return OrganiserAction.objects.create(
        task=team.task.community.task,
        actor=user,
        kind=OrganiserAction.Kind.REMOVE_TEAM,
        team=locked,
        reason=reason,
        created_at=now,
    )
