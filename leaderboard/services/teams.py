"""Creating and joining teams: one team per person per task."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from leaderboard import errors
from leaderboard.models import Membership, Task, Team
from leaderboard.selectors.participation import team_of

NAME_FIELD = "name"
INVITE_FIELD = "invite_code"


def _refuse_second_team(*, task: Task, user) -> None:
    existing = team_of(task=task, user=user)
    if existing is not None:
        raise errors.ALREADY_IN_TEAM.error(team=existing.name)


def _join(*, team: Team, user) -> None:
    try:
        with transaction.atomic():
            Membership.objects.create(user=user, team=team, task=team.task)
    except IntegrityError:  # a concurrent join of the same person won the race
        _refuse_second_team(task=team.task, user=user)
        raise


@transaction.atomic
def team_create(*, task: Task, user, name: str) -> Team:
    name = " ".join(name.split())
    _refuse_second_team(task=task, user=user)
    if Team.objects.filter(task=task, name__iexact=name).exists():
        raise errors.TEAM_NAME_TAKEN.error(NAME_FIELD, name=name)
    team = Team.objects.create(task=task, name=name)
    _join(team=team, user=user)
    return team


@transaction.atomic
def team_join(*, task: Task, user, invite_code: str) -> Team:
    team = Team.objects.filter(task=task, invite_code=invite_code.strip()).first()
    if team is None:
        raise errors.BAD_INVITE.error(INVITE_FIELD)
    _refuse_second_team(task=task, user=user)
    _join(team=team, user=user)
    return team
