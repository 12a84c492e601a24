"""``manage.py scoring_worker default --job-class django_tasks_rq.Job``: an RQ worker that
scores at a lower CPU priority than the web tier, survives Redis outages, and recovers the runs
a fault left behind.

- **Priority.** Scoring is CPU work that shares the cores with the web processes in a deadline
  rush: the worker lowers its own priority by ``settings.WORKER_NICENESS`` (:func:`yield_cores`).
- **In its own process.** The jobs run in the worker (RQ's ``SimpleWorker``), one after another,
  not in a work horse forked for each: the fork, the horse's new database connection (a new
  PostgreSQL backend) and its cold caches cost a deadline's jobs 100 ms of CPU each, more than
  scoring a 12,284-line file. A database connection that broke is replaced before the next job
  (``close_old_connections``); the bootstrap intervals run in a child process of their own with
  its memory capped (:mod:`leaderboard.stability_job`), so a job leaves no large memory behind.
- **Preloaded.** The modules the jobs need are imported at start (:data:`PRELOADED`), and the URL
  resolver's tables built, so that the first job after a start does not pay for them.
- **Recovery.** Every ``settings.RECOVERY_EVERY_S`` (RQ's maintenance tick, run between jobs and
  while idle) the worker hands lost runs to the queue again and asks for the derived results
  (bootstrap intervals, analyses) that are due (:func:`leaderboard.services.scoring.recover_runs`,
  :func:`leaderboard.derived.sweep`).
  Several workers may sweep at once: scoring is idempotent.
- **Redis outages.** RQ's worker gives up when Redis fails it outside its waiting loop: this
  command then starts a new worker after a pause that grows to ``MAX_RESTART_WAIT_S``, until
  Redis answers again; SIGTERM or SIGINT stop it for good. The scheduler (``--with-scheduler``,
  on by default) runs in one of the workers.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections
from django.urls import get_resolver
from django_rq.workers import get_worker
from redis.exceptions import RedisError
from rq import SimpleWorker
from rq.logutils import setup_loghandlers

from leaderboard import derived
from leaderboard.services.scoring import recover_runs
from leaderboard.startup import LIBRARIES

logger = logging.getLogger(__name__)

PRELOADED = (
    "leaderboard.services.scoring",
    "leaderboard.derived",
    "leaderboard.services.notifications",
    "leaderboard.services.registrations",
    "pandas",  # the scorer imports it when first needed (scoring.engine.io)
    settings.ROOT_URLCONF,  # a job's notice links to its run (reverse): the URLconf imports every view
    *LIBRARIES,  # exact values (an irrational MCC of a score, an analysis's rows)
)
"""The modules that define the jobs, and those the jobs import when they run."""
MAX_RESTART_WAIT_S = 30.0


def preload() -> None:
    """What the first job would otherwise load: the modules of :data:`PRELOADED`, and the URL
    resolver's tables (built on first use: a job's notice links to its run)."""
    for module in PRELOADED:
        importlib.import_module(module)
    get_resolver().reverse_dict  # noqa: B018


def yield_cores(niceness: int) -> None:
    """Lower this process's CPU priority by ``niceness`` (``os.nice``) and, when it leads a
    session of its own (as under a supervisor or a service manager), that session's too: Linux
    shares the cores between sessions (autogroups) before it shares a session's between its
    processes, so a niceness within the session alone yields nothing to web processes in another."""
    lowered = os.nice(niceness)
    if os.getsid(0) != os.getpid():
        return  # started from a shell: its session is the shell's, whose other processes keep theirs
    try:
        Path("/proc/self/autogroup").write_text(str(lowered))
    except OSError:  # not Linux, or no autogroups
        logger.debug("no autogroup to lower", exc_info=True)


def recover() -> None:
    """One recovery sweep; a failure (the database down) is logged and tried again next tick."""
    close_old_connections()
    try:
        recover_runs()
        derived.sweep()
    except Exception:
        logger.exception("the recovery sweep failed; it runs again at the next tick")


class ScoringWorker(SimpleWorker):
    """RQ's worker, whose maintenance tick also runs the recovery sweep, and which tries Redis
    again every few seconds while it is down (RQ's own pause grows to a minute)."""

    max_connection_wait_time = 5.0

    def perform_job(self, *args, **kwargs):
        close_old_connections()  # one the last job or the database's restart left broken
        return super().perform_job(*args, **kwargs)

    def run_maintenance_tasks(self) -> None:
        super().run_maintenance_tasks()
        recover()


class Command(BaseCommand):
    help = "An RQ worker for scoring: lower CPU priority, recovery of lost runs, restarts after Redis outages."

    def add_arguments(self, parser):
        parser.add_argument("queues", nargs="*", default=["default"], help="the queues to work on")
        parser.add_argument("--job-class", default="django_tasks_rq.Job")
        parser.add_argument("--name", default=None, help="the worker's name (numbered after a restart)")
        parser.add_argument("--burst", action="store_true", help="quit once the queues are empty")
        parser.add_argument("--without-scheduler", action="store_true", help="never run RQ's scheduler here")

    def handle(self, *args, queues, job_class, name, burst, without_scheduler, verbosity, **options):
        yield_cores(settings.WORKER_NICENESS)
        preload()
        setup_loghandlers("DEBUG" if verbosity >= 2 else "INFO" if verbosity else "WARNING")
        stopping = []

        def stop(signum, frame):
            stopping.append(signum)
            raise SystemExit(0)

        wait_s, run = 1.0, 0
        while not stopping:
            run += 1
            try:
                worker = get_worker(
                    *queues,
                    job_class=job_class,
                    worker_class=ScoringWorker,
                    name=None if name is None else (name if run == 1 else f"{name}.{run}"),
                    maintenance_interval=settings.RECOVERY_EVERY_S,
                    # RQ waits this long less 15 s for a job before its maintenance tick runs.
                    worker_ttl=settings.RECOVERY_EVERY_S + 15,
                )
                worker.work(burst=burst, with_scheduler=not without_scheduler)
                wait_s = 1.0
                if burst or worker._stop_requested:
                    return
            except RedisError as error:
                logger.error("Redis cannot be reached (%s); a new worker starts in %.0f s", error, wait_s)
            if not stopping:
                # RQ's own handlers are gone with its worker: a stop signal now ends the loop.
                signal.signal(signal.SIGTERM, stop)
                signal.signal(signal.SIGINT, stop)
                time.sleep(wait_s)
                wait_s = min(wait_s * 2, MAX_RESTART_WAIT_S)
