"""Who may see what. Pure checks: no side effects, no queries beyond the ones they need."""

from __future__ import annotations

from leaderboard.models import Membership, Phase, Submission, Team


def can_view_board(user, phase: Phase) -> bool:
    """A phase's leaderboard is public while it runs, or only after it closes, as the phase
    says; organisers and staff always see it."""
    return phase.results_public() or phase.task.is_organiser(user)


def is_team_member(user, team: Team | int) -> bool:
    """Whether ``user`` is a member of ``team`` (a team or its id) now."""
    team_id = team if isinstance(team, int) else team.pk
    return user.is_authenticated and Membership.objects.filter(team_id=team_id, user=user).exists()


def is_member(user, submission: Submission) -> bool:
    """Whether ``user`` is a member of the team that uploaded ``submission``."""
    return is_team_member(user, submission.team_id)


def can_view_submission(user, submission: Submission) -> bool:
    """A team sees its own submissions; other signed-in people see its scores once results are
    public (organisers and staff always); visitors see none (as ``visible_submissions``).
    The uploaded file itself is never served to other teams."""
    return user.is_authenticated and (is_member(user, submission) or can_view_board(user, submission.phase))


def runs_scope(user, phase: Phase) -> frozenset[int] | None:
    """Whose runs of a phase this person may download in one archive: every team's for the
    task's organisers and staff (``None``), their own team's for a participant, nobody's (an
    empty set) for anyone else."""
    if phase.task.is_organiser(user):
        return None
    if not user.is_authenticated:
        return frozenset()
    return frozenset(phase.task.community.memberships.filter(user=user).values_list("team_id", flat=True))
