"""``manage.py scoring_worker default --job-class django_tasks_rq.Job``: RQ's ``rqworker`` (same
options) at a lower CPU priority than the web tier.

Scoring is CPU work, and in a deadline rush it shares the cores with the web processes: at the
same priority, a reader of the board waited behind the uploads' scoring. Here the worker lowers
its own priority by ``settings.WORKER_NICENESS`` (``os.nice``, default 10) before it starts; the
work horse it forks for each job inherits it. When the web tier is idle the workers still get
every core, so scoring is no slower; when a page is being served, the page goes first. Needs the
RQ backend (``TASKS_BACKEND=rq``), as ``rqworker`` does.
"""

from __future__ import annotations

import os

from django.conf import settings
from django_rq.management.commands.rqworker import Command as RQWorkerCommand


class Command(RQWorkerCommand):
    help = "RQ's rqworker at a lower CPU priority (settings.WORKER_NICENESS) than the web processes."

    def handle(self, *args, **options):
        os.nice(settings.WORKER_NICENESS)
        return super().handle(*args, **options)
