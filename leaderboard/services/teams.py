"""Creating and joining teams: one team per person per task."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction

from leaderboard import errors
from leaderboard.models import Membership, Task, Team, new_invite_code
from leaderboard.names import canonical_name, lookalike_key, name_key
from leaderboard.permissions import is_team_member
from leaderboard.results_cache import results_changed
from leaderboard.selectors.participation import participation_problem, team_of
from leaderboard.services.registrations import register_implicitly

NAME_FIELD = "name"
INVITE_FIELD = "invite_code"


def _refuse_after_close(task: Task) -> None:
    """Teams are formed, joined, left and renamed until the task's last phase closes."""
    if task.is_over():
        raise errors.TASK_CLOSED.error(closes_at=max(phase.closes_at for phase in task.community.task.every_phase()))


def _refuse_second_team(*, task: Task, user) -> None:
    existing = team_of(task=task, user=user)
    if existing is not None:
        raise errors.ALREADY_IN_TEAM.error(team=existing.name)


def _refuse_non_participant(*, task: Task, user) -> None:
    problem = participation_problem(task=task, user=user)
    if problem is not None:
        raise problem


def _refuse_taken_name(*, task: Task, name: str, team: Team | None = None) -> None:
    """A name another team of the task has, whatever its case or width, or one that looks like
    it (its confusable skeleton: :func:`leaderboard.names.lookalike_key`), is refused."""
    others = task.community.teams.exclude(pk=getattr(team, "pk", None))
    same = others.filter(name_key=name_key(name)).first()
    if same is not None:
        raise errors.TEAM_NAME_TAKEN.error(NAME_FIELD, name=name)
    alike = others.filter(lookalike_key=lookalike_key(name)).first()
    if alike is not None:
        raise errors.TEAM_NAME_LOOKALIKE.error(NAME_FIELD, name=name, other=alike.name)


def _join(*, team: Team, user) -> None:
    register_implicitly(task=team.task, user=user)
    try:
        with transaction.atomic():
            Membership.objects.create(user=user, team=team, task=team.task.community.task)
    except IntegrityError:  # a concurrent join of the same person won the race
        _refuse_second_team(task=team.task, user=user)
        raise


@transaction.atomic
def team_create(*, task: Task, user, name: str) -> Team:
    """A new team with its first member. The name is canonical (NFKC, single spaces, nothing
    hidden: :mod:`leaderboard.names`) and unique in the task whatever its case. A team formed on
    a subtask's page is a team of its parent, and takes part in every subtask."""
    _refuse_after_close(task)
    _refuse_non_participant(task=task, user=user)
    name = canonical_name(name, field=NAME_FIELD)
    if not name:
        raise errors.NAME_EMPTY.error(NAME_FIELD)
    _refuse_second_team(task=task, user=user)
    _refuse_taken_name(task=task, name=name)
    try:
        with transaction.atomic():
            team = Team.objects.create(task=task.community.task, name=name)
    except IntegrityError:  # a concurrent creation of the same name won the race
        raise errors.TEAM_NAME_TAKEN.error(NAME_FIELD, name=name) from None
    _join(team=team, user=user)
    results_changed(team.task)
    return team


@transaction.atomic
def team_join(*, task: Task, user, invite_code: str) -> Team:
    _refuse_after_close(task)
    _refuse_non_participant(task=task, user=user)
    team = task.community.teams.filter(invite_code=invite_code.strip()).first()
    if team is None:
        raise errors.BAD_INVITE.error(INVITE_FIELD)
    _refuse_second_team(task=task, user=user)
    _join(team=team, user=user)
    return team


PROFILE_FIELDS = ("name", "system_name", "system_description", "paper_url")
"""What the members of a team may change while the task is open."""


@transaction.atomic
def team_update(*, team: Team, user, changes: dict) -> Team:
    """Rename the team or describe its system (SemEval asks every team for a system name, a
    description and a paper); members only, while the task is open."""
    _refuse_non_member(team=team, user=user)
    _refuse_after_close(team.task)
    unknown = set(changes) - set(PROFILE_FIELDS)
    if unknown:
        raise ValueError(f"not a team field: {', '.join(sorted(unknown))}")
    if "name" in changes:
        name = canonical_name(changes["name"], field=NAME_FIELD)
        if not name:
            raise errors.NAME_EMPTY.error(NAME_FIELD)
        _refuse_taken_name(task=team.task, name=name, team=team)
        changes = {**changes, "name": name}
    for field, value in changes.items():
        setattr(team, field, value)
    team.full_clean(exclude=["task", "name_key", "removed_by"], validate_unique=False, validate_constraints=False)
    try:
        with transaction.atomic():
            team.save()
    except IntegrityError:
        raise errors.TEAM_NAME_TAKEN.error(NAME_FIELD, name=team.name) from None
    results_changed(team.task_id)
    return team


@transaction.atomic
def team_invite_regenerate(*, team: Team, user) -> str:
    """A new invite code; the old one stops working at once."""
    _refuse_non_member(team=team, user=user)
    team.invite_code = new_invite_code()
    team.save(update_fields=["invite_code"])
    return team.invite_code


@transaction.atomic
def team_leave(*, team: Team, user) -> None:
    """Leave a team while the task is open. An empty team without submissions goes; one with
    submissions keeps its last member, so no upload is left without a team."""
    _refuse_non_member(team=team, user=user)
    _refuse_after_close(team.task)
    if team.members.count() == 1:
        if team.submissions.exists():
            raise errors.LAST_MEMBER.error()
        team.delete()
        results_changed(team.task_id)
        return
    Membership.objects.filter(team=team, user=user).delete()


def _refuse_non_member(*, team: Team, user) -> None:
    if not is_team_member(user, team):
        raise PermissionDenied(errors.NOT_A_MEMBER)
