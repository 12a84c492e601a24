"""Re-enqueue every submission left queued or half-scored (a lost job, a killed worker, Redis
restarted), and every one scored against an older gold file. Scoring is idempotent, so running
this while workers are busy is safe: a submission is never scored twice for one gold version.
"""

from __future__ import annotations

import datetime as dt

from django.core.management.base import BaseCommand

from leaderboard.models import Submission
from leaderboard.tasks import enqueue_scoring


class Command(BaseCommand):
    help = "Re-enqueue submissions that are queued, stuck in scoring, or scored against an old gold file."

    def add_arguments(self, parser):
        parser.add_argument(
            "--stuck-after",
            type=int,
            default=0,
            help="only re-enqueue 'scoring' submissions uploaded at least this many seconds ago (default 0: all)",
        )
        parser.add_argument("--task", help="only this task (its slug)")

    def handle(self, *args, stuck_after: int = 0, task: str | None = None, **options):
        pending = Submission.objects.needing_scoring(stuck_after=dt.timedelta(seconds=stuck_after))
        if task:
            pending = pending.filter(task__slug=task)
        ids = list(pending.order_by("created_at").values_list("pk", flat=True))
        for pk in ids:
            enqueue_scoring(pk)
        self.stdout.write(f"Re-enqueued {len(ids)} submission(s).")
