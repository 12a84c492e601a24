"""``manage.py scoring_worker``: RQ's worker, niced below the web tier, with the jobs' modules
imported before it forks a work horse per job."""

from __future__ import annotations

import re
from pathlib import Path

from django_rq.management.commands.rqworker import Command as RQWorkerCommand

from leaderboard.management.commands import scoring_worker

PACKAGE = Path(scoring_worker.__file__).resolve().parents[2]


def test_every_module_that_defines_a_job_is_preloaded():
    defining = {
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for path in PACKAGE.rglob("*.py")
        if re.search(r"^@task\(", path.read_text(), flags=re.MULTILINE)
    }
    assert defining  # the scan finds the task modules
    assert defining <= set(scoring_worker.PRELOADED)


def test_the_worker_lowers_its_priority_and_imports_the_jobs_modules_before_it_starts(settings, monkeypatch):
    settings.WORKER_NICENESS = 7
    calls: list[tuple] = []
    monkeypatch.setattr(scoring_worker.os, "nice", lambda increment: calls.append(("nice", increment)))
    monkeypatch.setattr(scoring_worker.importlib, "import_module", lambda name: calls.append(("import", name)))
    monkeypatch.setattr(RQWorkerCommand, "handle", lambda self, *args, **options: calls.append(("rqworker",)))
    scoring_worker.Command().handle()
    assert calls == [("nice", 7), *(("import", name) for name in scoring_worker.PRELOADED), ("rqworker",)]
