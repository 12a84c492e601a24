"""Who is in which team, and which submissions a person may see."""

from __future__ import annotations

from django.db.models import QuerySet

from leaderboard.models import Submission, Task, Team


def listed_tasks() -> QuerySet[Task]:
    """Every task for the home page, with its teams (for the count) and without descriptions."""
    return Task.objects.defer("description").prefetch_related("teams")


def team_of(*, task: Task, user) -> Team | None:
    """The person's team in this task, if any."""
    if not user.is_authenticated:
        return None
    return Team.objects.filter(task=task, membership__user=user).first()


def visible_submissions(*, task: Task, user) -> QuerySet[Submission]:
    """Submissions a person may list: organisers all; participants their team's; visitors none."""
    submissions = task.submissions.select_related("team", "file").defer("file__content")
    if task.is_organiser(user):
        return submissions
    if not user.is_authenticated:
        return submissions.none()
    return submissions.filter(team__membership__user=user)
