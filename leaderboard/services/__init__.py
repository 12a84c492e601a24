"""Services: every function that writes. Keyword-only arguments, one transaction each.

Problems a person can fix come out as ``ValidationError``\\ s made from the named constants of
:mod:`leaderboard.errors`, keyed by the form field they belong to.
"""

from leaderboard.services.submissions import submission_choose, submission_create
from leaderboard.services.tasks import (
    baselines_refresh,
    gold_confirm,
    gold_preview,
    gold_replace,
    task_create,
    task_rescore,
    task_update,
)
from leaderboard.services.teams import team_create, team_join

__all__ = [
    "baselines_refresh",
    "gold_confirm",
    "gold_preview",
    "gold_replace",
    "submission_choose",
    "submission_create",
    "task_create",
    "task_rescore",
    "task_update",
    "team_create",
    "team_join",
]
