"""Services: every function that writes. Keyword-only arguments, one transaction each.

Problems a person can fix come out as ``ValidationError``\\ s made from the named constants of
:mod:`leaderboard.errors`, keyed by the form field they belong to.
"""

from leaderboard.services.notifications import (
    account_email_change,
    email_confirm,
    email_confirmation_send,
    email_send_later,
    notifications_mark_read,
    submission_finished_notify,
)
from leaderboard.services.organisers import submission_disqualify, team_remove
from leaderboard.services.registrations import (
    announcement_emails_set,
    announcement_post,
    registration_decide,
    registration_request,
)
from leaderboard.services.submissions import submission_choose, submission_create, submission_note
from leaderboard.services.tasks import (
    baselines_refresh,
    gold_confirm,
    gold_preview,
    gold_replace,
    phase_create,
    phase_file_add,
    phase_file_remove,
    phase_update,
    task_create,
    task_rescore,
    task_update,
)
from leaderboard.services.teams import team_create, team_invite_regenerate, team_join, team_leave, team_update

__all__ = [
    "account_email_change",
    "announcement_emails_set",
    "announcement_post",
    "baselines_refresh",
    "email_confirm",
    "email_confirmation_send",
    "email_send_later",
    "gold_confirm",
    "gold_preview",
    "gold_replace",
    "notifications_mark_read",
    "phase_create",
    "phase_file_add",
    "phase_file_remove",
    "phase_update",
    "registration_decide",
    "registration_request",
    "submission_choose",
    "submission_create",
    "submission_disqualify",
    "submission_finished_notify",
    "submission_note",
    "task_create",
    "task_rescore",
    "task_update",
    "team_create",
    "team_invite_regenerate",
    "team_join",
    "team_leave",
    "team_remove",
    "team_update",
]
