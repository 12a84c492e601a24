"""Who may see what. Pure checks: no side effects, no queries beyond the ones they need."""

from __future__ import annotations

from django.utils import timezone

from leaderboard.models import Membership, Phase, StoredFile, Submission, Team


def can_view_board(user, phase: Phase) -> bool:
    """A phase's leaderboard is public while it runs, or only after it closes, as the phase
    says; organisers and staff always see it."""
    return phase.results_public() or phase.task.is_organiser(user)


def phase_using_gold(phase: Phase) -> Phase | None:
    """A phase, of any task, that uses the same gold file as ``phase`` (the same bytes) and has
    not closed (``phase`` itself while it runs), the one closing last; ``None`` once every such
    phase has closed. While one has not, the gold labels of its items are secret."""
    digest = StoredFile.objects.filter(pk=phase.gold_file_id).values("sha256")[:1]  # never the bytes
    return (
        Phase.objects.select_related("task")
        .filter(gold_file__sha256=digest, closes_at__gt=timezone.now())
        .order_by("-closes_at")
        .first()
    )


def can_view_hardest_items(user, phase: Phase) -> bool:
    """The analysis's hardest items name gold labels: the task's organisers see them always;
    everyone else who sees the board only once the organisers published them and while no phase
    that uses the same gold file is still to close (:func:`phase_using_gold`)."""
    if phase.task.is_organiser(user):
        return True
    return phase.hardest_published and can_view_board(user, phase) and phase_using_gold(phase) is None


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
