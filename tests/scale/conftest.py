"""Fixtures of the scaled set-up: PostgreSQL, a Redis database of their own, real RQ workers.

These tests need real services. Where one does not answer they are skipped with the reason,
except on CI (``CI=true``), where a missing service fails them: CI must run them. On SQLite
(the first pass of ``make test``) they always skip: they run in the PostgreSQL pass.

Workers are ``manage.py rqworker`` subprocesses pointed at pytest's test database (read from
the live connection, as pytest-django renames it) and at ``SCALE_TEST_REDIS_URL`` (default
Redis database 15, flushed before and after each test).
"""

from __future__ import annotations

import functools
import os
from typing import NoReturn

import pytest
import redis
from django.db import connection

from tests.scale.support import database_url, worker_environment
from tools.processes import start_worker, wait_listening

ON_CI = os.environ.get("CI", "").strip().lower() == "true"
REDIS_URL = os.environ.get("SCALE_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
POSTGRES_PASS_ONLY = "runs in the PostgreSQL pass (make test-postgres)"
WORKER_START_TIMEOUT_S = 60


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail on CI, where the scaled set-up must be tested."""
    if ON_CI:
        pytest.fail(f"{reason}; CI (CI=true) must run the scaled tests", pytrace=False)
    pytest.skip(reason)


@functools.cache
def postgres_problem() -> str | None:
    import psycopg

    params = connection.settings_dict
    try:
        psycopg.connect(
            host=params.get("HOST") or "127.0.0.1",
            port=params.get("PORT") or 5432,
            user=params.get("USER") or None,
            password=params.get("PASSWORD") or None,
            dbname=params["NAME"],
            connect_timeout=3,
        ).close()
    except psycopg.Error as error:
        return f"PostgreSQL is not reachable ({' '.join(str(error).split())})"
    return None


@functools.cache
def redis_problem() -> str | None:
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except redis.RedisError as error:
        return f"Redis is not reachable at {REDIS_URL} ({error})"
    finally:
        client.close()
    return None


@pytest.fixture(scope="session", autouse=True)
def _postgres_available():
    """Session-scoped so that it runs before pytest-django creates the test database."""
    if connection.vendor != "postgresql":
        pytest.skip(POSTGRES_PASS_ONLY)
    problem = postgres_problem()
    if problem:
        unavailable(problem)


@pytest.fixture(autouse=True)
def _redis_available(request):
    if request.node.get_closest_marker("redis"):
        problem = redis_problem()
        if problem:
            unavailable(problem)


@pytest.fixture
def redis_db():
    """The scaled tests' own Redis database, empty before and after the test."""
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


def rq_queues(url: str) -> dict:
    return {"default": {"URL": url, "DEFAULT_TIMEOUT": 600}}


@pytest.fixture
def rq_tasks(settings, redis_db):
    """This process enqueues scoring on RQ (as the web servers do with ``TASKS_BACKEND=rq``)."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}
    settings.RQ_QUEUES = rq_queues(REDIS_URL)
    return redis_db


@pytest.fixture
def rq_workers(transactional_db, rq_tasks, tmp_path):
    """Start real workers: ``start(count)`` returns them once they listen. All die at teardown,
    before pytest-django empties the database."""
    env = worker_environment(
        settings_module=os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.test"),
        database_url=database_url(connection.settings_dict),
        redis_url=REDIS_URL,
    )
    # The recovery sweep every second, a run in scoring for 3 s taken for lost: faults recover
    # within the test's patience, by the same code as in production.
    env.update(RECOVERY_EVERY_S="1", SCORING_STUCK_AFTER_S="3", REQUEUE_AFTER_S="2")
    started = []

    def start(count: int = 1):
        batch = [
            start_worker(name=f"scale-{os.getpid()}-{len(started) + i}", env=env, log_dir=tmp_path)
            for i in range(count)
        ]
        started.extend(batch)
        wait_listening(batch, redis_client=rq_tasks, timeout_s=WORKER_START_TIMEOUT_S)
        return batch

    yield start
    for worker in started:
        worker.kill()
