"""Whole results pages for anonymous visitors (leaderboard.page_cache): served from the cache
with no query beyond the task and the scores stamp, never stale by more than one rebuild, never
shared with a logged-in person."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from leaderboard import page_cache, services
from tests.leaderboard.test_boards import board_task, prediction_file, url  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db]


@pytest.fixture(autouse=True)
def page_cache_on(settings):
    settings.RESULT_PAGE_CACHE = True
    settings.RESULT_PAGE_REBUILD_IN_THREAD = False
    cache.clear()
    yield
    cache.clear()


@pytest.mark.parametrize("page", ["leaderboard", "disagreements", "what_if"])
def test_a_visitor_gets_the_cached_page_for_four_small_queries(client, board_task, page, django_assert_max_num_queries):  # noqa: F811
    first = client.get(url(page, board_task))
    assert first[page_cache.STATUS_HEADER] == "miss"
    # task, its phases, the scores stamp (an aggregate, the teams): no board, no template
    with django_assert_max_num_queries(4):
        again = client.get(url(page, board_task))
    assert again[page_cache.STATUS_HEADER] == "hit"
    assert again.content == first.content


def test_a_new_score_makes_a_new_page(client, board_task, make_user, submit):  # noqa: F811
    before = client.get(url("leaderboard", board_task)).content.decode()
    newcomer = make_user("newcomer")
    services.team_create(task=board_task, user=newcomer, name="Newcomer")
    submit(board_task, newcomer, prediction_file("a b c a b c a a"))
    after = client.get(url("leaderboard", board_task))
    assert "Newcomer" not in before
    assert after[page_cache.STATUS_HEADER] == "miss" and "Newcomer" in after.content.decode()


def test_out_of_date_pages_are_rebuilt_once_in_the_background_while_readers_get_the_last(
    client,
    board_task,  # noqa: F811
    make_user,
    submit,
    settings,
    monkeypatch,
):
    settings.RESULT_PAGE_REBUILD_IN_THREAD = True
    started: list[str] = []

    class NoThread:
        def __init__(self, *, target, args, name, daemon):
            self.name = name

        def start(self):
            started.append(self.name)

    monkeypatch.setattr(page_cache.threading, "Thread", NoThread)
    before = client.get(url("leaderboard", board_task)).content
    newcomer = make_user("newcomer")
    services.team_create(task=board_task, user=newcomer, name="Newcomer")
    submit(board_task, newcomer, prediction_file("a b c a b c a a"))
    for _ in range(3):
        stale = client.get(url("leaderboard", board_task))
        assert stale[page_cache.STATUS_HEADER] == "stale" and stale.content == before
    assert started == ["page-rebuild"]  # one rebuild at a time, whoever asks


def test_logged_in_people_get_their_own_page(client, board_task, django_user_model):  # noqa: F811
    client.get(url("leaderboard", board_task))
    member = django_user_model.objects.get(username="member0")  # "Perfect"
    client.force_login(member)
    page = client.get(url("leaderboard", board_task))
    assert page_cache.STATUS_HEADER not in page
    team_id = board_task.teams.get(name="Perfect").pk
    assert f'data-my-team="{team_id}"' in page.content.decode()
    assert f'id="team-{team_id}" data-team-id="{team_id}"' in page.content.decode()


def test_a_visitor_with_messages_is_not_served_a_shared_page(client, board_task):  # noqa: F811
    client.cookies["messages"] = "anything"
    assert page_cache.STATUS_HEADER not in client.get(url("leaderboard", board_task))
