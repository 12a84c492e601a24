"""``manage.py scoring_worker``: RQ's worker, niced below the web tier, running the jobs in its own
process with their modules imported at start, the recovery sweep in its maintenance tick, and a
new worker after Redis failed the last one."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from leaderboard.management.commands import scoring_worker

pytestmark = pytest.mark.django_db

PACKAGE = Path(scoring_worker.__file__).resolve().parents[2]


def test_every_module_that_defines_a_job_is_preloaded():
    defining = {
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for path in PACKAGE.rglob("*.py")
        if re.search(r"^@(task|background)\(", path.read_text(), flags=re.MULTILINE)
    }
    assert defining  # the scan finds the job modules
    assert defining <= set(scoring_worker.PRELOADED)


JOB_IN_A_FRESH_PROCESS = """
import os, sys, tempfile
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ["DATABASE_URL"] = "sqlite:///" + tempfile.mkdtemp() + "/job.sqlite3"
import django
django.setup()
from unittest import mock
from django.core.management import call_command
from django.utils import timezone
call_command("migrate", verbosity=0)
from leaderboard.management.commands.scoring_worker import preload
preload()
from django.urls.resolvers import URLResolver
built = []
URLResolver._populate = lambda self: built.append(self)  # the resolver's tables built again
from leaderboard.services import scoring
from leaderboard.services.submissions import submission_create
from leaderboard.services.teams import team_create
from leaderboard.services.tasks import task_create
from django.contrib.auth import get_user_model
users = get_user_model().objects
now = timezone.now()
task = task_create(organiser=users.create_user("o"), slug="t", title="t", description="", labels=["a", "b"],
    gold_name="g.csv", gold_content=b"id,label\\n1,a\\n2,b\\n", primary_metric="macro_f1",
    opens_at=now - timezone.timedelta(days=1), closes_at=now + timezone.timedelta(days=1))
member = users.create_user("m")
team_create(task=task, user=member, name="Team")
with mock.patch.object(scoring, "enqueue_scoring", lambda *args, **kwargs: None):
    run = submission_create(task=task, user=member, name="r.csv", content=b"id,label\\n1,a\\n2,a\\n")
before = set(sys.modules)
scoring.submission_score(submission_id=run.pk)
print(sorted(set(sys.modules) - before), len(built))
"""


def test_a_job_loads_nothing_the_worker_has_not_preloaded():
    """Whatever a job imports, or builds on first use, the first job after a start would (the
    URLconf and every view behind it took 0.3 s; the URL resolver's tables 0.3 s more)."""
    import subprocess
    import sys

    found = subprocess.run(
        [sys.executable, "-c", JOB_IN_A_FRESH_PROCESS], capture_output=True, text=True, cwd=PACKAGE.parent, check=True
    )
    assert found.stdout.strip() == "[] 0", found.stdout[-2000:]


class FakeWorker:
    """Records how it was made and run; its runs end as ``outcomes`` say."""

    def __init__(self, outcomes: list, made: list):
        self.outcomes, self.made = outcomes, made
        self._stop_requested = False

    def __call__(self, *queues, **options):
        self.made.append((queues, options))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return self

    def work(self, *, burst, with_scheduler):
        self._stop_requested = True


def run(monkeypatch, settings, outcomes: list) -> tuple[list, list]:
    settings.WORKER_NICENESS, settings.RECOVERY_EVERY_S = 7, 15
    calls: list[tuple] = []
    made: list = []
    monkeypatch.setattr(scoring_worker, "yield_cores", lambda niceness: calls.append(("nice", niceness)))
    monkeypatch.setattr(scoring_worker.importlib, "import_module", lambda name: calls.append(("import", name)))
    monkeypatch.setattr(scoring_worker, "get_worker", FakeWorker(outcomes, made))
    monkeypatch.setattr(scoring_worker.time, "sleep", lambda seconds: calls.append(("sleep", seconds)))
    scoring_worker.Command().handle(
        queues=["default"], job_class="django_tasks_rq.Job", name="w", burst=False, without_scheduler=False, verbosity=0
    )
    return calls, made


def test_the_worker_lowers_its_priority_and_imports_the_jobs_modules_before_it_starts(settings, monkeypatch):
    calls, made = run(monkeypatch, settings, ["ok"])
    assert calls == [("nice", 7), *(("import", name) for name in scoring_worker.PRELOADED)]  # by preload()
    [(queues, options)] = made
    assert queues == ("default",) and options["worker_class"] is scoring_worker.ScoringWorker
    assert options["maintenance_interval"] == 15 and options["worker_ttl"] == 30  # waits 15 s for a job at most


def niced_in_a_child(*, own_session: bool) -> tuple[str, str, int]:
    """A forked child, leading a session of its own or not, calls ``yield_cores(5)``: its
    autogroup before and after, and its niceness after."""
    import multiprocessing

    def child(out):
        if own_session:
            os.setsid()
        before = Path("/proc/self/autogroup").read_text().strip()
        scoring_worker.yield_cores(5)
        out.send((before, Path("/proc/self/autogroup").read_text().strip(), os.getpriority(os.PRIO_PROCESS, 0)))

    fork = multiprocessing.get_context("fork")
    ours, theirs = fork.Pipe()
    process = fork.Process(target=child, args=(theirs,))
    process.start()
    found = ours.recv()
    process.join()
    return found


autogroups = pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists(), reason="no autogroups on this system (Linux's CONFIG_SCHED_AUTOGROUP)"
)


@autogroups
def test_a_worker_leading_its_own_session_lowers_its_sessions_priority_too():
    """Linux shares the cores between sessions first: a worker niced within a session of its own
    (as a supervisor starts it) took as much as the web processes' whole session."""
    before, after, niceness = niced_in_a_child(own_session=True)
    assert before.endswith("nice 0") and after == before.replace("nice 0", f"nice {niceness}")
    assert niceness == os.getpriority(os.PRIO_PROCESS, 0) + 5


@autogroups
def test_a_worker_started_from_a_shell_leaves_the_shells_session_as_it_was():
    before, after, niceness = niced_in_a_child(own_session=False)
    assert after == before and niceness == os.getpriority(os.PRIO_PROCESS, 0) + 5


def test_a_new_worker_starts_after_redis_failed_the_last_one(settings, monkeypatch):
    calls, made = run(monkeypatch, settings, [RedisConnectionError("down"), RedisConnectionError("down"), "ok"])
    assert [call for call in calls if call[0] == "sleep"] == [("sleep", 1.0), ("sleep", 2.0)]
    assert [options["name"] for _, options in made] == ["w", "w.2", "w.3"]


def test_the_maintenance_tick_runs_the_recovery_sweep(monkeypatch):
    swept: list[str] = []
    monkeypatch.setattr(scoring_worker.SimpleWorker, "run_maintenance_tasks", lambda self: swept.append("rq"))
    monkeypatch.setattr(scoring_worker, "recover_runs", lambda: swept.append("runs") or 0)
    monkeypatch.setattr(scoring_worker.derived, "sweep", lambda: swept.append("derived") or 0)
    scoring_worker.ScoringWorker.run_maintenance_tasks(object.__new__(scoring_worker.ScoringWorker))
    assert swept == ["rq", "runs", "derived"]


def test_a_job_runs_in_the_worker_after_its_broken_database_connection_is_replaced(monkeypatch):
    """No work horse is forked per job; a connection that the last job or a database restart
    left broken is closed first, so that the job opens a new one."""
    done: list[str] = []
    monkeypatch.setattr(scoring_worker, "close_old_connections", lambda: done.append("checked"))
    monkeypatch.setattr(scoring_worker.SimpleWorker, "perform_job", lambda self, job, queue: done.append(job))
    worker = object.__new__(scoring_worker.ScoringWorker)
    worker.perform_job("job", "queue")
    assert done == ["checked", "job"]
    assert scoring_worker.ScoringWorker.execute_job is scoring_worker.SimpleWorker.execute_job  # nothing forked


@pytest.mark.django_db
def test_a_failing_sweep_never_stops_the_worker(monkeypatch, caplog):
    def broken():
        raise RuntimeError("the database is down")

    monkeypatch.setattr(scoring_worker, "recover_runs", broken)
    scoring_worker.recover()
    assert "the recovery sweep failed" in caplog.text
