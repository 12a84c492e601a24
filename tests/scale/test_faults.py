"""The scaled set-up under fire: killed workers, Redis down, racing uploads, gold replaced mid-way.

Real PostgreSQL, real Redis, real ``rqworker`` processes (see ``conftest.py``). What every test
checks is the design's promise: the Submission row is the source of truth, so no upload is
lost and none is scored twice for one gold version, whatever happens to the queue.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone
from rq import Queue
from rq.job import Job, JobStatus

from leaderboard.errors import problem_codes
from leaderboard.models import PhaseAnalysis, Submission, Task
from leaderboard.services import tasks as task_services
from leaderboard.services.scoring import lost_runs, stuck_after
from leaderboard.services.submissions import submission_create
from leaderboard.services.tasks import gold_replace
from leaderboard.services.teams import team_create, team_join
from scoring.engine.scorer import score_files
from tests.conftest import PERFECT
from tests.scale.conftest import REDIS_URL, rq_queues
from tools.factory import item_ids, labels_csv, noisy_codes
from tools.processes import wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

LABELS = ("negative", "neutral", "positive")
SCORING_TIMEOUT_S = 120
KILL_ITEMS = 300_000
"""Items per file in the kill test: scoring one takes about a second, time enough to be killed."""
GOLD_SWAP_ITEMS = 100_000


def statuses(task: Task) -> dict[int, str]:
    return dict(task.submissions.values_list("pk", "status"))


def all_scored(task: Task, *, gold_version: int) -> bool:
    rows = task.submissions.values_list("status", "scored_gold_version")
    return bool(rows) and all(row == (Submission.Status.SCORED, gold_version) for row in rows)


def expected_fields(*, gold: bytes, submission: Submission) -> dict:
    """The scores computed here, directly, without queue or worker."""
    report = score_files(gold, bytes(submission.file.content), labels=list(LABELS))
    expected = Submission()
    expected.apply(report)
    return {field: getattr(expected, field) for field in ("confusion_matrix", "metrics", "calibrated", "per_class")}


def assert_scores_equal(submission: Submission, expected: dict) -> None:
    assert submission.confusion_matrix == expected["confusion_matrix"]
    assert submission.metrics == pytest.approx(expected["metrics"], rel=1e-12, abs=1e-15)
    assert submission.calibrated == pytest.approx(expected["calibrated"], rel=1e-12, abs=1e-15)


def rescore_pending() -> str:
    out = io.StringIO()
    call_command("rescore_pending", stdout=out)
    return out.getvalue()


def closed_port_url() -> str:
    """A Redis URL on a loopback port where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"redis://127.0.0.1:{port}/15?socket_connect_timeout=2"


@pytest.fixture
def rng():
    return np.random.default_rng(20250601)


@pytest.fixture
def big_task(make_task, rng):
    """A task whose gold file has ``n_items`` shuffled items; returns (task, ids, gold codes)."""

    def make(n_items: int, **options):
        ids = item_ids(n_items)
        gold = rng.permutation(np.arange(n_items) % len(LABELS))
        task = make_task(gold=labels_csv(ids, LABELS, gold), labels=LABELS, **options)
        return task, ids, gold

    return make


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.mark.redis
@pytest.mark.slow
def test_worker_killed_mid_scoring_loses_nothing_and_scores_each_once(big_task, alice, rq_workers, rq_tasks, rng):
    task, ids, gold = big_task(KILL_ITEMS)
    team_create(task=task, user=alice, name="Alpha")
    uploads = [
        submission_create(
            task=task,
            user=alice,
            name=f"run-{n}.csv",
            content=labels_csv(ids, LABELS, noisy_codes(gold, n_labels=len(LABELS), error_rate=rate, rng=rng)),
        )
        for n, rate in enumerate((0.2, 0.4, 0.6))
    ]
    first = uploads[0]
    assert set(statuses(task).values()) == {Submission.Status.QUEUED}

    (worker,) = rq_workers(1)
    wait_until(
        lambda: statuses(task)[first.pk] == Submission.Status.SCORING,
        timeout_s=SCORING_TIMEOUT_S,
        what="the worker to start scoring the first upload",
        interval_s=0.005,
    )
    worker.kill()
    first.refresh_from_db()
    # Not the property under test but the premise: the kill must land between claim and write.
    assert (first.status, first.score_count) == (Submission.Status.SCORING, 0), "killed too late; use a bigger file"

    # No operator: a new worker's recovery sweep finds the run whose scoring started 3 s
    # (SCORING_STUCK_AFTER_S in the workers' environment) ago and never ended.
    rq_workers(1)
    wait_until(lambda: all_scored(task, gold_version=1), timeout_s=SCORING_TIMEOUT_S, what="every upload scored")

    gold_bytes = bytes(task.current_phase().gold_file.content)
    for submission in task.submissions.select_related("file"):
        assert submission.score_count == 1, f"submission {submission.pk} was scored {submission.score_count} times"
        assert submission.failure == ""
    first.refresh_from_db()
    assert_scores_equal(first, expected_fields(gold=gold_bytes, submission=first))
    assert "Re-enqueued 0 submission(s)" in rescore_pending()


@pytest.mark.redis
def test_a_run_whose_job_a_killed_worker_had_started_is_handed_over_once_it_should_have_been_claimed(
    make_task, alice, rq_tasks
):
    """A worker killed after RQ marked its job started, before the job claimed the run: the run
    is still queued, and RQ calls its job running until the job's timeout (ten minutes). A job
    claims its run as it starts: the recovery sweep hands the run over again once the job has
    been running for SCORING_STUCK_AFTER_S, not before."""
    task = make_task()
    team_create(task=task, user=alice, name="Alpha")
    run = submission_create(task=task, user=alice, name="run.csv", content=PERFECT)
    run.refresh_from_db()
    job = Job.fetch(run.job_id, connection=rq_tasks)
    Queue("default", connection=rq_tasks).remove(job)
    job.worker_name, job.started_at = "scoring-1", timezone.now()
    job.set_status(JobStatus.STARTED)
    job.save()
    Submission.objects.filter(pk=run.pk).update(enqueued_at=timezone.now() - dt.timedelta(minutes=5))
    assert lost_runs() == []  # its job may be claiming it now
    assert lost_runs(now=timezone.now() + stuck_after()) == [run.pk]


@pytest.mark.redis
def test_upload_while_redis_is_down_is_stored_and_scored_once_redis_is_back(
    big_task, alice, client, settings, rq_workers, rq_tasks, caplog, rng
):
    task, ids, gold = big_task(2_000)
    team_create(task=task, user=alice, name="Alpha")
    content = labels_csv(ids, LABELS, noisy_codes(gold, n_labels=len(LABELS), error_rate=0.3, rng=rng))
    client.force_login(alice)

    settings.RQ_QUEUES = rq_queues(closed_port_url())
    with caplog.at_level(logging.ERROR, logger="leaderboard.services.scoring"):
        response = client.post(
            reverse("leaderboard:submission_create", args=[task.slug]),
            {"file": SimpleUploadedFile("run.csv", content), "description": "uploaded while Redis was down"},
        )

    submission = Submission.objects.select_related("file").get()
    assert response.status_code == 302
    assert response["Location"] == submission.get_absolute_url()
    assert submission.status == Submission.Status.QUEUED
    assert bytes(submission.file.content) == content
    assert f"could not enqueue submission {submission.pk}" in caplog.text
    assert Queue("default", connection=rq_tasks).count == 0, "the job reached Redis: the outage was not real"

    submission.refresh_from_db()
    assert submission.enqueued_at is None  # what the sweep looks for
    settings.RQ_QUEUES = rq_queues(REDIS_URL)
    rq_workers(1)  # no operator: the worker's recovery sweep hands it to the queue
    wait_until(lambda: all_scored(task, gold_version=1), timeout_s=SCORING_TIMEOUT_S, what="the upload to be scored")
    submission.refresh_from_db()
    assert submission.score_count == 1
    assert_scores_equal(
        submission, expected_fields(gold=bytes(task.current_phase().gold_file.content), submission=submission)
    )


RACERS = 12
DAILY_LIMIT = 3


def test_uploads_racing_for_the_daily_limit_cannot_all_pass(make_task, make_user):
    """Twelve team members upload at the same instant for the last three slots of the day.

    Without the team row lock each would count the same used slots and all would pass.
    """
    task = make_task(max_per_day=DAILY_LIMIT)
    members = [make_user(f"member-{n}") for n in range(RACERS)]
    team = team_create(task=task, user=members[0], name="Racers")
    for member in members[1:]:
        team_join(task=task, user=member, invite_code=team.invite_code)
    start = threading.Barrier(RACERS)

    def upload(member) -> str:
        try:
            own_task = Task.objects.prefetch_related("phases__gold_file").get(pk=task.pk)
            start.wait(timeout=30)
            submission_create(task=own_task, user=member, name="run.csv", content=PERFECT)
            return "stored"
        except ValidationError as error:
            return " ".join(sorted(problem_codes(error)))
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=RACERS) as pool:
        outcomes = list(pool.map(upload, members))

    assert outcomes.count("stored") == DAILY_LIMIT, outcomes
    assert outcomes.count("DAILY_LIMIT") == RACERS - DAILY_LIMIT, outcomes
    assert Submission.objects.filter(team=team).count() == DAILY_LIMIT


def test_a_gold_file_being_confirmed_lets_a_scoring_job_write_what_refers_to_its_phase(make_task, monkeypatch):
    """Confirming a gold file locks its phase against another confirmation, not against the rows
    that refer to the phase: a scoring job that has raised the task's versions and then writes
    its phase's interval and analysis requests (new rows referring to the phase) must not wait
    for the confirmation, which waits for the task's row that job holds (a deadlock, which
    PostgreSQL breaks by failing one of them)."""
    task = make_task()
    phase = task.current_phase()
    task_services.gold_preview(phase=phase, gold_name="gold-v2.csv", gold_content=bytes(phase.gold_file.content))
    locked, go_on = threading.Event(), threading.Event()
    real_parse = task_services.parse_gold

    def parse_and_wait(**arguments):  # called with the phase locked
        locked.set()
        assert go_on.wait(30)
        return real_parse(**arguments)

    monkeypatch.setattr(task_services, "parse_gold", parse_and_wait)
    confirming = ThreadPoolExecutor(max_workers=1).submit(
        lambda: (task_services.gold_confirm(phase=phase), connection.close())
    )
    try:
        assert locked.wait(30)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '3s'")
            PhaseAnalysis.objects.create(phase=phase)  # its phase's key checked, as a first request does
    finally:
        go_on.set()
    confirming.result(timeout=60)
    phase.refresh_from_db()
    assert phase.gold_version == 2


@pytest.mark.redis
def test_gold_replaced_while_scoring_ends_with_every_submission_scored_against_the_new_gold(
    big_task, alice, rq_workers, rng
):
    task, ids, gold = big_task(GOLD_SWAP_ITEMS, max_per_day=10)
    team_create(task=task, user=alice, name="Alpha")
    for n, rate in enumerate(np.linspace(0.1, 0.7, 6)):
        predicted = noisy_codes(gold, n_labels=len(LABELS), error_rate=float(rate), rng=rng)
        content = labels_csv(ids, LABELS, predicted)
        submission_create(task=task, user=alice, name=f"run-{n}.csv", content=content)
    new_gold = noisy_codes(gold, n_labels=len(LABELS), error_rate=0.25, rng=rng)
    new_gold_bytes = labels_csv(ids, LABELS, new_gold)

    rq_workers(2)
    wait_until(
        lambda: Submission.Status.SCORING in statuses(task).values(),
        timeout_s=SCORING_TIMEOUT_S,
        what="scoring to start",
        interval_s=0.005,
    )
    before = statuses(task)
    phase = task.current_phase()
    assert gold_replace(phase=phase, gold_name="gold-v2.csv", gold_content=new_gold_bytes) == 6
    # The premise: scoring against the old gold was still going on when it was replaced.
    assert list(before.values()).count(Submission.Status.SCORED) < 6, before

    wait_until(lambda: all_scored(task, gold_version=2), timeout_s=SCORING_TIMEOUT_S, what="re-scoring on gold v2")
    phase.refresh_from_db()
    assert phase.gold_version == 2
    assert bytes(phase.gold_file.content) == new_gold_bytes
    for submission in task.submissions.select_related("file"):
        assert_scores_equal(submission, expected_fields(gold=new_gold_bytes, submission=submission))
        # once per gold version at most: some were scored on v1 before the swap, none twice on v2
        assert 1 <= submission.score_count <= 2
    assert "Re-enqueued 0 submission(s)" in rescore_pending()
