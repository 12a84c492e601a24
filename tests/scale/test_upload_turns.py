"""The site's upload turns on PostgreSQL (``leaderboard.services.submissions.upload_turn``):
uploads that reach different web processes wait in the same queues, are served in their order
of arrival, and take a free turn at once. Another process is played by a connection of its own."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from django.db import connection

from leaderboard.models import Submission
from leaderboard.services import submissions
from leaderboard.services.submissions import UPLOAD_TURN_LOCKS, submission_create, upload_turn
from leaderboard.services.teams import team_create
from leaderboard.uploads import prediction_kind, stored_gold
from tests.conftest import PERFECT
from tests.scale.support import database_url
from tools.processes import wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def waiting_for_turns(other: psycopg.Connection) -> int:
    return other.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND NOT granted",
        [UPLOAD_TURN_LOCKS],
    ).fetchone()[0]


@pytest.fixture
def other_process():
    """A connection of another web process, holding turn 0 until it lets go."""
    with psycopg.connect(database_url(connection.settings_dict), autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s, 0)", [UPLOAD_TURN_LOCKS])
        yield other


def upload_in_thread(pool: ThreadPoolExecutor, task, user, name: str):
    def upload():
        try:
            return submission_create(task=task, user=user, name=name, content=PERFECT)
        finally:
            connection.close()  # the thread's own connection

    return pool.submit(upload)


def test_uploads_to_different_processes_take_the_sites_one_turn_in_their_order_of_arrival(
    make_task, make_user, settings, other_process, monkeypatch
):
    settings.UPLOADS_AT_ONCE = 1
    validated = []  # in the order of their turns

    def validating(*, gold, name, content):
        validated.append(name)
        return prediction_kind(gold=gold, name=name, content=content)

    monkeypatch.setattr(submissions, "prediction_kind", validating)
    task = make_task(max_per_day=10)
    users = [make_user(name) for name in ("alice", "bob", "carol")]
    for n, user in enumerate(users):
        team_create(task=task, user=user, name=f"Team {n}")
    with ThreadPoolExecutor(max_workers=len(users)) as pool:
        uploads = []
        for n, user in enumerate(users):  # each arrives once the one before waits
            uploads.append(upload_in_thread(pool, task, user, f"run-{n}.csv"))
            wait_until(lambda n=n: waiting_for_turns(other_process) == n + 1, timeout_s=10, what=f"upload {n} to wait")
        assert validated == [] and Submission.objects.count() == 0  # none checked while another process has the turn
        other_process.execute("SELECT pg_advisory_unlock(%s, 0)", [UPLOAD_TURN_LOCKS])
        stored = [upload.result(timeout=30) for upload in uploads]
    assert validated == ["run-0.csv", "run-1.csv", "run-2.csv"]
    assert [submission.file.name for submission in stored] == validated
    assert waiting_for_turns(other_process) == 0


def test_an_upload_takes_a_free_turn_while_another_is_taken(make_task, make_user, settings, other_process):
    settings.UPLOADS_AT_ONCE = 2
    task = make_task()
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    with ThreadPoolExecutor(max_workers=1) as pool:
        submission = upload_in_thread(pool, task, alice, "run.csv").result(timeout=30)
    assert submission.status == Submission.Status.SCORED
    assert waiting_for_turns(other_process) == 0


def test_a_turn_whose_connection_broke_went_with_it(settings, other_process, caplog):
    settings.UPLOADS_AT_ONCE = 2
    with upload_turn():  # turn 1, turn 0 being the other process's
        other_process.execute("SELECT pg_terminate_backend(%s)", [connection.connection.info.backend_pid])
    assert "upload turn 1 not let go: its connection broke" in caplog.text
    connection.close()
    held = other_process.execute(
        "SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s", [UPLOAD_TURN_LOCKS]
    ).fetchall()
    assert held == [(0,)]  # the other process's alone


def test_uploads_read_a_gold_file_too_large_to_be_kept_one_at_a_time(make_task, make_user, settings, monkeypatch):
    """A gold file is parsed in the turn: a fresh process's first uploads (and every upload, for a
    gold file too large to be kept) would otherwise parse it side by side, each its own copy."""
    settings.UPLOADS_AT_ONCE = 1
    task = make_task(max_per_day=10)
    users = [make_user(name) for name in ("alice", "bob", "carol")]
    for n, user in enumerate(users):
        team_create(task=task, user=user, name=f"Team {n}")
    parsing, most, lock = [0], [0], threading.Lock()

    def slowly_parsed(phase):
        with lock:
            parsing[0] += 1
            most[0] = max(most[0], parsing[0])
        try:
            time.sleep(0.2)
            return stored_gold(phase)
        finally:
            with lock:
                parsing[0] -= 1

    monkeypatch.setattr("leaderboard.uploads.stored_gold", slowly_parsed)
    monkeypatch.setattr("leaderboard.uploads.GOLD_KEPT_MAX_ITEMS", 0)  # never kept: each upload parses it
    monkeypatch.setattr("leaderboard.uploads._kept_gold", {})
    with ThreadPoolExecutor(max_workers=len(users)) as pool:
        started = [upload_in_thread(pool, task, user, f"run-{n}.csv") for n, user in enumerate(users)]
        stored = [upload.result(timeout=30) for upload in started]
    assert len({submission.pk for submission in stored}) == 3 and most == [1]  # three parses, one at a time
