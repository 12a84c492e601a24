"""A database that cannot be reached answers 503 with Retry-After and a sentence, never 500
(leaderboard.unavailable), on the pages and in the API."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import reverse

from leaderboard.pages import results as results_page

pytestmark = pytest.mark.django_db


@pytest.fixture
def database_gone(monkeypatch):
    def gone(**kwargs):
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(results_page, "board_page", gone)
    monkeypatch.setattr(results_page, "board_api", gone)


def test_a_page_says_to_try_again(task, database_gone):
    response = Client(raise_request_exception=False).get(reverse("leaderboard:leaderboard", args=[task.slug]))
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "cannot reach its database for a moment" in response.content.decode()


def test_the_api_says_to_try_again(task, database_gone):
    response = Client(raise_request_exception=False).get(f"/api/tasks/{task.slug}/leaderboard")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json()["code"] == "UNAVAILABLE"
