"""The Redis cache answers as an empty cache while Redis cannot be reached: pages, the API and
uploads work, slower, and nothing answers 500 (leaderboard.cache_backend)."""

from __future__ import annotations

import socket
import time

import pytest
from django.core.cache import caches
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from leaderboard import cache_backend
from leaderboard.services.teams import team_create
from leaderboard.services.tokens import token_create
from tests.conftest import PERFECT

pytestmark = pytest.mark.django_db


def closed_port() -> int:
    """A loopback port where nothing listens: connections are refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def redis_down(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "leaderboard.cache_backend.ResilientRedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    return caches["default"]  # Django makes the cache anew when CACHES changes


def test_every_operation_answers_as_an_empty_cache(redis_down):
    cache = redis_down
    assert cache.get("k") is None and cache.get("k", "default") == "default"
    assert cache.set("k", 1) is None and cache.get_many(["k"]) == {}
    assert cache.add("k", 1) is True  # the caller goes ahead (computes the page itself)
    assert cache.incr("k") == 1 and cache.has_key("k") is False
    assert cache.delete("k") is False and cache.set_many({"k": 1}) == []


def test_after_a_failure_redis_is_not_asked_again_for_a_while(redis_down, monkeypatch):
    cache = redis_down
    cache.get("k")
    calls = []
    monkeypatch.setattr(cache_backend.RedisCache, "get", lambda *args, **kwargs: calls.append(args))
    started = time.monotonic()
    for _ in range(100):
        assert cache.get("k") is None
    assert calls == [] and time.monotonic() - started < 0.5


def test_pages_uploads_and_the_api_work_without_the_cache(redis_down, make_task, make_user, submit):
    task = make_task()
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submit(task, alice, PERFECT)
    for name in ("leaderboard", "disagreements", "what_if", "leaderboard_csv"):
        assert Client().get(reverse(f"leaderboard:{name}", args=[task.slug])).status_code == 200
    assert Client().get(f"/api/tasks/{task.slug}/leaderboard").status_code == 200
    _, secret = token_create(user=alice, name="laptop")
    response = Client().post(
        f"/api/tasks/{task.slug}/submissions",
        {"file": SimpleUploadedFile("run.csv", PERFECT)},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert response.status_code == 201, response.content
    member = Client()
    member.force_login(alice)
    response = member.post(
        reverse("leaderboard:submission_create", args=[task.slug]), {"file": SimpleUploadedFile("run.csv", PERFECT)}
    )
    assert response.status_code == 302 and task.submissions.count() == 3


def test_one_redis_client_serves_every_operation(redis_down):
    client = redis_down._cache.get_client("a")
    assert redis_down._cache.get_client("b", write=True) is client
    assert redis_down.get("a") is None  # still answered as an empty cache while Redis is down
    assert redis_down._cache.get_client("c") is client
