"""Hand to the queue, now, every run a fault left behind (as the workers' recovery sweep does every
``RECOVERY_EVERY_S``): runs queued whose job is lost, runs in scoring for longer than
``--stuck-after`` seconds since their scoring started (default ``SCORING_STUCK_AFTER_S``), and
runs scored against an older gold file. Scoring is idempotent, so running this while workers are
busy is safe: a submission is never scored twice for one gold version.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.management.base import BaseCommand

from leaderboard.models import Submission
from leaderboard.services.scoring import enqueue_scoring


class Command(BaseCommand):
    help = "Re-enqueue submissions that are queued, stuck in scoring, or scored against an old gold file."

    def add_arguments(self, parser):
        parser.add_argument(
            "--stuck-after",
            type=float,
            default=None,
            help="only re-enqueue 'scoring' submissions whose scoring started at least this many seconds ago "
            "(default: SCORING_STUCK_AFTER_S)",
        )
        parser.add_argument("--task", help="only this task (its slug)")

    def handle(self, *args, stuck_after: float | None = None, task: str | None = None, **options):
        seconds = settings.SCORING_STUCK_AFTER_S if stuck_after is None else stuck_after
        pending = Submission.objects.needing_scoring(stuck_after=dt.timedelta(seconds=seconds))
        if task:
            pending = pending.filter(phase__task__slug=task)
        ids = list(pending.order_by("created_at").values_list("pk", flat=True))
        for pk in ids:
            enqueue_scoring(pk)
        self.stdout.write(f"Re-enqueued {len(ids)} submission(s).")
