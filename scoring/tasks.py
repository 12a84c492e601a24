"""The task that scores a stored submission, through the Django tasks API.

With the immediate backend (the embedded default) it runs inside the upload request once the
submission's transaction has committed; with RQ it runs on any worker. It is idempotent: the
Submission row, not the queue, says whether work is left (see :mod:`scoring.storage`).
"""

from __future__ import annotations

from django_tasks import task

from scoring.storage import score_submission_now


@task()
def score_submission(submission_id: int) -> str:
    """Score submission ``submission_id`` against its task's current gold file."""
    return score_submission_now(submission_id=submission_id)
