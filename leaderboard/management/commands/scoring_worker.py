"""``manage.py scoring_worker default --job-class django_tasks_rq.Job``: RQ's ``rqworker`` (same
options) at a lower CPU priority than the web tier.

Scoring is CPU work, and in a deadline rush it shares the cores with the web processes: at the
same priority, a reader of the board waited behind the uploads' scoring. Here the worker lowers
its own priority by ``settings.WORKER_NICENESS`` (``os.nice``, default 10) before it starts; the
work horse it forks for each job inherits it. When the web tier is idle the workers still get
every core, so scoring is no slower; when a page is being served, the page goes first. Needs the
RQ backend (``TASKS_BACKEND=rq``), as ``rqworker`` does.

RQ forks a work horse for each job, and what the horse imports dies with it: the modules the
jobs need are imported here first (:data:`PRELOADED`), so that every horse starts with them
(scipy.stats and pandas alone take about a second, which every job would otherwise pay).
"""

from __future__ import annotations

import importlib
import os

from django.conf import settings
from django_rq.management.commands.rqworker import Command as RQWorkerCommand

PRELOADED = (
    "leaderboard.tasks",
    "leaderboard.stability",
    "leaderboard.services.notifications",
    "pandas",  # the scorer imports these two when first needed (scoring.engine.io, .ranking)
    "scipy.stats",
)
"""The modules that define the jobs, and those the jobs import when they run."""


class Command(RQWorkerCommand):
    help = "RQ's rqworker at a lower CPU priority (settings.WORKER_NICENESS) than the web processes."

    def handle(self, *args, **options):
        os.nice(settings.WORKER_NICENESS)
        for module in PRELOADED:
            importlib.import_module(module)
        return super().handle(*args, **options)
