"""Fixtures shared by the Django tests: users, a small task (plain, or a subtask), file contents.

A test or module marked ``both_kinds`` runs once on a plain task and once on a subtask: every
task ``make_task`` builds for it is of the kind of the run (``task_kind``)."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from leaderboard.services.submissions import submission_create
from leaderboard.services.tasks import task_create, task_with_subtasks_create

GOLD = b"id,label\n1,a\n2,b\n3,c\n4,a\n5,b\n6,c\n7,a\n8,a\n"
PERFECT = b"id,label\n1,a\n2,b\n3,c\n4,a\n5,b\n6,c\n7,a\n8,a\n"
MOSTLY_A = b"id,label\n1,a\n2,a\n3,c\n4,a\n5,a\n6,c\n7,a\n8,a\n"


@pytest.fixture(autouse=True, scope="session")
def _no_kept_replicates_left():
    """The bootstrap's store of replicates (``BOOTSTRAP_STORE_DIR``, one per test run) goes
    with the run."""
    yield
    shutil.rmtree(settings.BOOTSTRAP_STORE_DIR, ignore_errors=True)


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache: rows of a rolled-back test may come back with the
    same ids (and a task with the same results version) in the next one."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def make_user(django_user_model):
    def make(username: str, **extra):
        return django_user_model.objects.create_user(username=username, password="a-long-test-password", **extra)

    return make


@pytest.fixture
def organiser(make_user):
    return make_user("organiser")


TASK_KINDS = ("plain", "subtask")
"""A task on its own, or a subtask of a task divided into subtasks (whose teams, registration,
terms, organisers and announcements are its parent's): every feature works on both."""


def pytest_generate_tests(metafunc):
    """A test marked ``both_kinds`` that builds a task runs on each kind of task."""
    if metafunc.definition.get_closest_marker("both_kinds") and "task_kind" in metafunc.fixturenames:
        metafunc.parametrize("task_kind", TASK_KINDS)


@pytest.fixture
def task_kind() -> str:
    """The kind of task ``make_task`` builds: plain, unless the test is marked ``both_kinds``."""
    return "plain"


@pytest.fixture
def make_task(organiser, task_kind):
    def make(slug: str = "toy", *, kind: str | None = None, gold: bytes = GOLD, labels=("a", "b", "c"), **options):
        """A task (``kind="subtask"``: a subtask of a new task ``<slug>-parent``, which takes
        the ``registration`` and ``terms`` of ``options``; by default the kind of the run)."""
        now = timezone.now()
        if (kind or task_kind) == "subtask":
            options["parent"] = task_with_subtasks_create(
                organiser=organiser,
                slug=f"{slug}-parent",
                title=f"Task {slug}-parent",
                description="",
                **{name: options.pop(name) for name in ("registration", "terms") if name in options},
            )
        values = {
            "organiser": organiser,
            "slug": slug,
            "title": f"Task {slug}",
            "description": "",
            "labels": None if labels is None else list(labels),
            "gold_name": "gold.csv",
            "gold_content": gold,
            "primary_metric": "macro_f1",
            "opens_at": now - dt.timedelta(days=1),
            "closes_at": now + dt.timedelta(days=1),
        }
        values.update(options)
        return task_create(**values)

    return make


@pytest.fixture
def task(make_task):
    return make_task()


@pytest.fixture
def submit(django_capture_on_commit_callbacks):
    """Upload through the service and run the on-commit scoring, as a request would."""

    def upload(task, user, content: bytes, **options):
        with django_capture_on_commit_callbacks(execute=True):
            submission = submission_create(task=task, user=user, name="run.csv", content=content, **options)
        submission.refresh_from_db()
        return submission

    return upload
