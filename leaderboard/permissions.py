"""Who may see what. Pure checks: no side effects, no queries beyond the ones they need."""

from __future__ import annotations

from leaderboard.models import Membership, Submission, Task


def can_view_board(user, task: Task) -> bool:
    """Leaderboards are public during the task, or only after it closes, as the task says;
    organisers and staff always see them."""
    return task.results_public() or task.is_organiser(user)


def is_member(user, submission: Submission) -> bool:
    return user.is_authenticated and Membership.objects.filter(team_id=submission.team_id, user=user).exists()


def can_view_submission(user, submission: Submission) -> bool:
    """A team sees its own submissions; other signed-in people see its scores once results are
    public (organisers and staff always); visitors see none (as ``visible_submissions``).
    The uploaded file itself is never served to other teams."""
    return user.is_authenticated and (is_member(user, submission) or can_view_board(user, submission.task))
