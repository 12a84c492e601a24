"""The cached results pages never show stale data: any change of what they show changes the key."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from leaderboard import services
from leaderboard.models import Phase, Submission, Task, Team
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db

SCRIPT_NAME = "<script>alert('x')</script> & co"


def board(client, task: Task, **params) -> str:
    response = client.get(reverse("leaderboard:leaderboard", args=[task.slug]), params)
    assert response.status_code == 200
    return response.content.decode()


def disagreements(client, task: Task) -> str:
    response = client.get(reverse("leaderboard:disagreements", args=[task.slug]))
    assert response.status_code == 200
    return response.content.decode()


def team_values(content: str, team: str) -> str:
    """The cells of a team's row, as printed."""
    row = re.search(rf'<th scope="row" class="col-team">{re.escape(html.escape(team))}</th>(.*?)</tr>', content, re.S)
    assert row, f"no row for {team}"
    return row.group(1)


@pytest.fixture
def two_teams(make_task, make_user):
    task = make_task("cached")
    alice, bob = make_user("alice"), make_user("bob")
    services.team_create(task=task, user=alice, name="Alice")
    services.team_create(task=task, user=bob, name="Bob")
    return task, alice, bob


def test_a_new_score_shows_at_once(client, two_teams, submit):
    task, alice, _ = two_teams
    submit(task, alice, MOSTLY_A)
    before = board(client, task)
    assert board(client, task) == before  # served from the cache
    submit(task, alice, PERFECT)
    after = board(client, task)
    assert team_values(after, "Alice") != team_values(before, "Alice")
    assert '<span class="value">1.0000</span>' in team_values(after, "Alice")


def test_a_new_score_updates_the_disagreements_page(client, two_teams, submit):
    task, alice, bob = two_teams
    submit(task, alice, PERFECT)
    assert "1 of 2 teams" in " ".join(disagreements(client, task).split())
    submit(task, bob, MOSTLY_A)
    assert "2 of 2 teams" in " ".join(disagreements(client, task).split())


def test_a_rescore_of_the_same_submission_shows_at_once(client, two_teams, submit):
    task, alice, _ = two_teams
    submission = submit(task, alice, MOSTLY_A)
    board(client, task)
    perfect = submit(task, alice, PERFECT)
    Submission.objects.filter(pk=perfect.pk).delete()  # back to one scored submission...
    Submission.objects.filter(pk=submission.pk).update(metrics={**submission.metrics, "macro_f1": 0.125})
    Submission.objects.filter(pk=submission.pk).update(score_count=submission.score_count + 1)  # ...re-scored
    assert '<span class="value">0.1250</span>' in team_values(board(client, task), "Alice")


def test_a_new_team_shows_at_once(client, two_teams, make_user):
    task, _, _ = two_teams
    board(client, task)
    services.team_create(task=task, user=make_user("carol"), name="Carol")
    assert "Carol" in board(client, task)


def test_a_renamed_team_shows_at_once(client, two_teams):
    task, _, _ = two_teams
    board(client, task)
    Team.objects.filter(task=task, name="Bob").update(name="Robert")
    content = board(client, task)
    assert "Robert" in content and ">Bob<" not in content


def test_choosing_another_submission_shows_at_once(client, make_task, make_user, submit):
    task = make_task("chosen", counting=Phase.Counting.CHOSEN)
    alice = make_user("alice")
    services.team_create(task=task, user=alice, name="Alice")
    perfect = submit(task, alice, PERFECT)
    submit(task, alice, MOSTLY_A)
    before = team_values(board(client, task), "Alice")  # the latest counts until one is chosen
    services.submission_choose(submission=perfect, user=alice)
    after = team_values(board(client, task), "Alice")
    assert after.count('<span class="value">1.0000</span>') > before.count('<span class="value">1.0000</span>')


def test_each_view_of_the_board_has_its_own_entry(client, two_teams, submit):
    task, alice, bob = two_teams
    submit(task, alice, PERFECT)
    submit(task, bob, MOSTLY_A)
    raw = board(client, task)
    calibrated = board(client, task, calibrated="1", sort="accuracy_c")
    assert raw != calibrated
    assert 'href="?calibrated=1&amp;sort=macro_f1_c"' in raw
    assert board(client, task) == raw


def test_warm_board_costs_three_queries(client, two_teams, submit, django_assert_max_num_queries):
    """Task, its phases, the scores' stamp and the teams' stamp, whatever the number of teams."""
    task, alice, _ = two_teams
    submit(task, alice, PERFECT)
    board(client, task)
    with django_assert_max_num_queries(4):
        board(client, task)


def test_team_names_are_escaped_in_the_cells(client, make_task, make_user, submit):
    task = make_task("escaped")
    user, idle = make_user("mallory"), make_user("idle")
    services.team_create(task=task, user=user, name=SCRIPT_NAME)
    services.team_create(task=task, user=idle, name=SCRIPT_NAME + " (idle)")
    submit(task, user, PERFECT)
    for _ in range(2):  # built, then from the cache
        content = board(client, task)
        assert "<script>alert" not in content
        assert f'<th scope="row" class="col-team">{html.escape(SCRIPT_NAME)}</th>' in content
        assert html.escape(SCRIPT_NAME + " (idle)") in content
