"""Whole results pages for anonymous visitors (leaderboard.page_cache): served from the cache
with no query beyond the task while recently found current, else beyond the scores stamp; at
most a rebuild and a pause behind; built once however many readers wait; never shared with a
logged-in person."""

from __future__ import annotations

import gzip

import pytest
from django.core.cache import cache

from leaderboard import page_cache, services
from leaderboard.models import Phase
from tests.leaderboard.test_boards import board_task, prediction_file, url  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db]


@pytest.fixture(autouse=True)
def page_cache_on(settings):
    settings.RESULT_PAGE_CACHE = True
    settings.RESULT_PAGE_REBUILD_IN_THREAD = False
    cache.clear()
    page_cache.forget_recent_pages()
    yield
    cache.clear()
    page_cache.forget_recent_pages()


def end_the_window(path: str) -> None:
    """What the end of a page's freshness window does: its entry in the cache expires, and the
    processes that kept the page let it go."""
    cache.delete(page_cache._Keys.of(path).checked)
    page_cache.forget_recent_pages()


def add_a_team(board_task, make_user, submit):  # noqa: F811
    newcomer = make_user("newcomer")
    services.team_create(task=board_task, user=newcomer, name="Newcomer")
    submit(board_task, newcomer, prediction_file("a b c a b c a a"))


class NoThread:
    """Records the rebuilds a page would start, without starting them."""

    started: list[str] = []

    def __init__(self, *, target, args, name, daemon):
        self.name = name

    def start(self):
        self.started.append(self.name)


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
    add_a_team(board_task, make_user, submit)
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
    monkeypatch.setattr(page_cache.threading, "Thread", NoThread)
    monkeypatch.setattr(NoThread, "started", [])
    before = client.get(url("leaderboard", board_task)).content
    add_a_team(board_task, make_user, submit)
    for _ in range(3):
        stale = client.get(url("leaderboard", board_task))
        assert stale[page_cache.STATUS_HEADER] == "stale" and stale.content == before
    assert NoThread.started == ["page-rebuild"]  # one rebuild at a time, whoever asks


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


def test_a_page_found_current_is_served_without_the_stamp_for_a_while(
    client,
    board_task,  # noqa: F811
    make_user,
    submit,
    settings,
    django_assert_max_num_queries,
):
    settings.RESULT_PAGE_FRESH_S = 60
    first = client.get(url("leaderboard", board_task))
    checked = client.get(url("leaderboard", board_task))
    assert (first[page_cache.STATUS_HEADER], checked[page_cache.STATUS_HEADER]) == ("miss", "hit")
    add_a_team(board_task, make_user, submit)
    with django_assert_max_num_queries(0):  # answered before the task is looked up
        recent = client.get(url("leaderboard", board_task))
    assert recent[page_cache.STATUS_HEADER] == "recent" and recent.content == first.content
    end_the_window(url("leaderboard", board_task))
    after = client.get(url("leaderboard", board_task))
    assert after[page_cache.STATUS_HEADER] == "miss" and "Newcomer" in after.content.decode()


def test_a_page_is_rebuilt_at_most_once_per_pause(client, board_task, make_user, submit, settings, monkeypatch):  # noqa: F811
    settings.RESULT_PAGE_REBUILD_IN_THREAD = True
    settings.RESULT_PAGE_REBUILD_EVERY_S = 60
    monkeypatch.setattr(page_cache.threading, "Thread", NoThread)
    monkeypatch.setattr(NoThread, "started", [])
    page = url("leaderboard", board_task)
    assert client.get(page)[page_cache.STATUS_HEADER] == "miss"  # built: the pause starts now
    add_a_team(board_task, make_user, submit)
    assert client.get(page)[page_cache.STATUS_HEADER] == "stale"
    assert NoThread.started == []  # within the pause: the previous page, no rebuild
    cache.delete(page_cache._Keys.of(page).rebuilt)  # the pause is over
    assert client.get(page)[page_cache.STATUS_HEADER] == "stale"
    assert NoThread.started == ["page-rebuild"]


def test_readers_of_a_page_nobody_has_built_wait_for_the_one_build(
    client,
    board_task,  # noqa: F811
    settings,
    monkeypatch,
):
    settings.RESULT_PAGE_REBUILD_IN_THREAD = True
    page = url("leaderboard", board_task)
    keys = page_cache._Keys.of(page)
    cache.add(keys.building, 1)  # another reader is building it
    built = {"gzip": gzip.compress(b"<p>built by the other reader</p>"), "content_type": "text/html", "key": "k"}
    polls: list[float] = []

    def other_reader_finishes(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) == 3:
            cache.set(keys.page, built)
            cache.delete(keys.building)

    monkeypatch.setattr(page_cache.time, "sleep", other_reader_finishes)
    waited = client.get(page)
    assert waited[page_cache.STATUS_HEADER] == "waited" and waited.content == b"<p>built by the other reader</p>"
    assert len(polls) == 3


def test_a_reader_builds_the_page_itself_when_the_other_build_takes_too_long(
    client,
    board_task,  # noqa: F811
    settings,
    monkeypatch,
):
    settings.RESULT_PAGE_REBUILD_IN_THREAD = True
    monkeypatch.setattr(page_cache, "COLD_WAIT_S", 0.0)
    page = url("leaderboard", board_task)
    cache.add(page_cache._Keys.of(page).building, 1)
    answer = client.get(page)
    assert answer.status_code == 200 and "Perfect" in answer.content.decode()
    assert page_cache.STATUS_HEADER not in answer  # rendered for this reader, not stored


def test_a_board_hidden_from_visitors_is_hidden_once_the_window_is_over(client, board_task, settings):  # noqa: F811
    settings.RESULT_PAGE_FRESH_S = 60
    page = url("leaderboard", board_task)
    client.get(page)
    assert client.get(page)[page_cache.STATUS_HEADER] == "hit"  # checked: the window starts
    board_task.phases.update(visibility=Phase.Visibility.AFTER_CLOSE)
    assert client.get(page)[page_cache.STATUS_HEADER] == "recent"  # within the window
    end_the_window(page)
    hidden = client.get(page)
    assert hidden.status_code == 403 and page_cache.STATUS_HEADER not in hidden


def test_a_browser_gets_the_stored_page_compressed_and_another_client_plain(client, board_task):  # noqa: F811
    page = url("leaderboard", board_task)
    built = client.get(page)
    compressed = client.get(page, headers={"Accept-Encoding": "gzip, deflate, br"})
    plain = client.get(page)
    assert (compressed[page_cache.STATUS_HEADER], plain[page_cache.STATUS_HEADER]) == ("hit", "hit")
    assert compressed["Content-Encoding"] == "gzip" and "Accept-Encoding" in compressed["Vary"]
    assert gzip.decompress(compressed.content) == built.content == plain.content
    assert len(compressed.content) < len(built.content) / 3
    assert not plain.has_header("Content-Encoding") and "Accept-Encoding" in plain["Vary"]


def test_a_recent_page_is_served_from_the_process_memory_until_its_window_ends(
    client,
    board_task,  # noqa: F811
    settings,
    monkeypatch,
):
    settings.RESULT_PAGE_FRESH_S = 60
    page = url("leaderboard", board_task)
    client.get(page)
    assert client.get(page)[page_cache.STATUS_HEADER] == "hit"  # the window starts
    first = client.get(page)  # read from the cache, and kept by this process
    assert first[page_cache.STATUS_HEADER] == "recent"
    reads = []
    monkeypatch.setattr(page_cache.cache, "get_many", lambda keys: reads.append(keys) or {})
    kept = client.get(page)
    assert kept[page_cache.STATUS_HEADER] == "recent" and kept.content == first.content and reads == []
    ends = float(cache.get(page_cache._Keys.of(page).checked)) + settings.RESULT_PAGE_FRESH_S
    monkeypatch.setattr(page_cache.time, "time", lambda: ends + 0.001)  # the window is over
    client.get(page)
    assert len(reads) == 1  # the cache is asked again


def test_a_process_keeps_at_most_so_many_recent_pages_the_oldest_going_first(monkeypatch):
    monkeypatch.setattr(page_cache, "RECENT_PAGES_KEPT", 2)
    for path in ("/a/", "/b/", "/c/"):
        page_cache._keep_recent(path, {"gzip": path.encode()}, until=1e12)
    assert list(page_cache._recent_pages) == ["/b/", "/c/"]
