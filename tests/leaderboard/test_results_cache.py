"""The results cache never shows a visitor a page older than a change committed before the
request: each thing a results page shows is changed the way a person changes it (a form, an
upload, an organiser's decision), and the next visitor's page shows it. And the check of who
may see a page is never skipped, whatever the cache holds, however a reader dresses the request.
"""

from __future__ import annotations

import datetime as dt
import html
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from leaderboard import results_cache
from leaderboard.models import Phase, Submission, Task
from leaderboard.pages import disagreements as disagreements_page
from leaderboard.pages import results as results_page
from leaderboard.pages import shifts as shifts_page
from leaderboard.services.organisers import team_remove
from leaderboard.services.teams import team_create, team_leave
from leaderboard.views import boards
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db

RESULTS_PAGES = ["leaderboard", "disagreements", "what_if", "metric_detail"]
DATETIME = "%Y-%m-%dT%H:%M"


def page(task: Task, name: str, **params) -> str:
    """A results page as an anonymous visitor reads it (a client of its own, no cookie)."""
    args = [task.slug, "macro_f1"] if name == "metric_detail" else [task.slug]
    response = Client().get(reverse(f"leaderboard:{name}", args=args), params)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def team_cells(content: str, team: str) -> str:
    row = re.search(rf'<th scope="row" class="col-team">{re.escape(html.escape(team))}(.*?)</tr>', content, re.S)
    assert row, f"no row for {team}"
    return row.group(1)


@pytest.fixture
def contest(make_task, make_user, submit):
    """A public task, two teams with a scored run each, every results page read once (cached)."""
    task = make_task("cached")
    alice, bob = make_user("alice"), make_user("bob")
    team_create(task=task, user=alice, name="Alice")
    team_create(task=task, user=bob, name="Bob")
    submit(task, alice, MOSTLY_A)
    submit(task, bob, PERFECT)
    for name in RESULTS_PAGES:
        page(task, name)
    return task, alice, bob


@pytest.fixture
def organiser_client(client, organiser):
    client.force_login(organiser)
    return client


def phase_form(phase: Phase, **changes) -> dict:
    data = {
        "name": phase.name,
        "description": phase.description,
        "opens_at": phase.opens_at.strftime(DATETIME),
        "closes_at": phase.closes_at.strftime(DATETIME),
        "max_per_day": phase.max_per_day,
        "max_total": phase.max_total,
        "counting": phase.counting,
        "visibility": phase.visibility,
        "feedback": phase.feedback,
        "private_percent": phase.private_percent,
        "final_part": phase.final_part,
    }
    return {**data, **changes}


def edit_phase(organiser_client, task: Task, **changes) -> None:
    phase = task.current_phase()
    url = reverse("leaderboard:phase_edit", args=[task.slug, phase.slug])
    response = organiser_client.post(url, phase_form(phase, **changes))
    assert response.status_code == 302, response.content.decode()[:2000]


@pytest.mark.parametrize("name", RESULTS_PAGES)
def test_a_renamed_task_shows_at_once_on_every_results_page(contest, organiser_client, name):
    task, _, _ = contest
    url = reverse("leaderboard:task_edit", args=[task.slug])
    data = {"title": "A new title", "description": "new", "primary_metric": "macro_f1", "registration": "open"}
    assert organiser_client.post(url, {**data, "terms": ""}).status_code == 302
    content = page(task, name)
    assert "A new title" in content and "Task cached" not in content


def test_a_renamed_phase_and_its_dates_show_at_once(contest, organiser_client):
    task, _, _ = contest
    closes = (timezone.now() + dt.timedelta(days=3)).replace(second=0, microsecond=0)
    edit_phase(organiser_client, task, name="Final round", closes_at=closes.strftime(DATETIME))
    for name in RESULTS_PAGES:
        content = page(task, name)
        assert "Final round" in content
    assert f"{closes:%Y-%m-%d %H:%M} UTC" in page(task, "leaderboard")


def test_a_new_phase_shows_in_the_phase_switch_at_once(contest, organiser_client, client):
    task, _, _ = contest
    phase = task.current_phase()
    url = reverse("leaderboard:phase_create", args=[task.slug])
    gold = Submission.objects.filter(phase=phase).first()  # any file: the phase needs a gold file of its own
    assert gold is not None
    data = phase_form(
        phase,
        name="Post-evaluation",
        opens_at=(phase.closes_at + dt.timedelta(hours=1)).strftime(DATETIME),
        closes_at=(phase.closes_at + dt.timedelta(days=5)).strftime(DATETIME),
        feedback="",
    )
    data.update(slug="post", gold=SimpleUploadedFile("gold.csv", PERFECT))
    assert organiser_client.post(url, data).status_code == 302
    assert "Post-evaluation" in page(task, "leaderboard")


def test_a_renamed_team_shows_at_once(contest):
    task, alice, _ = contest
    member = Client()
    member.force_login(alice)
    data = {"name": "Alicia", "system_name": "", "system_description": "", "paper_url": ""}
    assert member.post(reverse("leaderboard:team_detail", args=[task.slug]), data).status_code == 302
    for name in ("leaderboard", "disagreements", "what_if"):
        content = page(task, name)
        assert "Alicia" in content and ">Alice<" not in content


def test_a_new_score_shows_at_once_everywhere(contest, submit):
    task, alice, _ = contest
    before = team_cells(page(task, "leaderboard"), "Alice")
    submit(task, alice, PERFECT)
    after = team_cells(page(task, "leaderboard"), "Alice")
    assert after != before and '<span class="value">1.0000</span>' in after
    assert "1.0000" in page(task, "metric_detail")


def test_an_upload_through_the_page_shows_at_once(contest):
    task, alice, _ = contest
    member = Client()
    member.force_login(alice)
    response = member.post(
        reverse("leaderboard:submission_create", args=[task.slug]), {"file": SimpleUploadedFile("run.csv", PERFECT)}
    )
    assert response.status_code == 302
    assert '<span class="value">1.0000</span>' in team_cells(page(task, "leaderboard"), "Alice")


def test_a_disqualification_shows_at_once(contest, organiser_client):
    task, _, _ = contest
    run = Submission.objects.get(team__name="Bob")
    url = reverse("leaderboard:organiser_submissions", args=[task.slug])
    assert organiser_client.post(url, {"submission": run.pk, "reason": "used the labels"}).status_code == 302
    content = page(task, "leaderboard")
    assert "used the labels" in content
    assert 'class="unscored-row"' in content and "Bob" in content


def test_a_new_gold_file_shows_at_once(contest, organiser_client, django_capture_on_commit_callbacks):
    task, _, _ = contest
    phase = task.current_phase()
    url = reverse("leaderboard:gold_replace", args=[task.slug, phase.slug])
    new_gold = MOSTLY_A  # Alice's file becomes the perfect one
    assert organiser_client.post(url, {"gold": SimpleUploadedFile("gold.csv", new_gold)}).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        assert organiser_client.post(url, {"confirm": "1"}).status_code == 302
    assert '<span class="value">1.0000</span>' in team_cells(page(task, "leaderboard"), "Alice")


@pytest.mark.parametrize("name", ["leaderboard", "disagreements", "what_if", "metric_detail", "leaderboard_csv"])
def test_hiding_the_board_takes_effect_for_the_very_next_visitor(contest, organiser_client, name):
    task, _, _ = contest
    args = [task.slug, "macro_f1"] if name == "metric_detail" else [task.slug]
    assert Client().get(reverse(f"leaderboard:{name}", args=args)).status_code == 200
    edit_phase(organiser_client, task, visibility=Phase.Visibility.AFTER_CLOSE, feedback="validated")
    response = Client().get(reverse(f"leaderboard:{name}", args=args))
    assert response.status_code == 403
    assert "Alice" not in response.content.decode()


def test_a_changed_feedback_policy_shows_on_the_hidden_board_at_once(contest, organiser_client):
    """While the board is hidden its page (for the organisers) says what each team sees."""
    task, _, _ = contest
    edit_phase(organiser_client, task, visibility=Phase.Visibility.AFTER_CLOSE, feedback="validated")
    url = reverse("leaderboard:leaderboard", args=[task.slug])
    assert "validated only" in organiser_client.get(url).content.decode()
    edit_phase(organiser_client, task, feedback="primary")
    content = organiser_client.get(url).content.decode()
    assert "the primary score only" in content and "validated only" not in content


def test_a_board_hidden_by_its_dates_is_hidden_without_any_write(make_task, make_user, submit):
    """A phase with a hidden board that closes opens its board: time, not a write, changes it;
    and the other way round a phase not yet open shows nothing cached of itself."""
    task = make_task("timed", visibility=Phase.Visibility.AFTER_CLOSE)
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alice")
    submit(task, alice, PERFECT)
    url = reverse("leaderboard:leaderboard", args=[task.slug])
    assert Client().get(url).status_code == 403
    Phase.objects.filter(task=task).update(closes_at=timezone.now() - dt.timedelta(seconds=1))
    assert Client().get(url).status_code == 200


# --- readers who dress the request --------------------------------------------------------------


@pytest.fixture
def computations(monkeypatch):
    """How many times a piece of a results page was computed (not read from the cache)."""
    counted: list[str] = []
    real = results_cache.cached

    def counting(phase, piece, params, compute, update=None):
        def count(compute):
            def counted_compute(*previous):
                counted.append(piece)
                return compute(*previous)

            return counted_compute

        return real(phase, piece, params, count(compute), update=update and count(update))

    for module in (results_page, disagreements_page, shifts_page):
        monkeypatch.setattr(module, "cached", counting)
    return counted


def test_random_query_strings_and_made_up_sessions_are_served_from_the_cache(contest, computations):
    task, _, _ = contest
    url = reverse("leaderboard:leaderboard", args=[task.slug])
    Client().get(url)
    computations.clear()
    for number in range(20):
        reader = Client()
        reader.cookies["sessionid"] = f"made-up-{number}"
        response = reader.get(url, {"x": number, "utm_source": "mail"})
        assert response.status_code == 200 and "Alice" in response.content.decode()
    assert computations == []


def test_a_parameter_the_page_reads_is_normalised_before_it_names_an_entry(contest, computations):
    task, _, _ = contest
    url = reverse("leaderboard:leaderboard", args=[task.slug])
    Client().get(url)
    computations.clear()
    for sort in ("nonsense", "macro_f1", "", "'; drop table"):
        Client().get(url, {"sort": sort})
    assert computations == []  # every unknown sort is the primary metric's, as computed already


def test_a_hidden_board_is_refused_even_with_a_cached_copy(contest, organiser_client):
    """The cache holds the public board's rows; the check runs first anyway."""
    task, _, _ = contest
    Phase.objects.filter(task=task).update(visibility=Phase.Visibility.AFTER_CLOSE)  # no version raised
    assert Client().get(reverse("leaderboard:leaderboard", args=[task.slug])).status_code == 403


# --- a deadline rush: new scores within RESULTS_SCORES_FRESH_S, everything else at once -----------


def test_during_a_rush_a_new_score_shows_within_the_window_and_a_rename_at_once(contest, submit, settings):
    """With the window of production (here a minute, under a frozen clock), the pages just
    computed stand for new scores until the window ends; the first reader after it gets the page
    once more and its successor is computed after that reader's response, for the next; a change
    that is not a score (a team renamed) is shown by the very next read, with the new scores too."""
    from freezegun import freeze_time

    settings.RESULTS_SCORES_FRESH_S = 60
    task, alice, _ = contest
    with freeze_time(timezone.now()) as clock:
        page(task, "leaderboard")
        before = team_cells(page(task, "leaderboard"), "Alice")
        submit(task, alice, PERFECT)  # scored in the request: a new score, nothing else
        assert team_cells(page(task, "leaderboard"), "Alice") == before  # within the window
        clock.tick(dt.timedelta(seconds=61))
        assert team_cells(page(task, "leaderboard"), "Alice") == before  # and recomputed after it
        assert '<span class="value">1.0000</span>' in team_cells(page(task, "leaderboard"), "Alice")
        submit(task, alice, MOSTLY_A)
        member = Client()
        member.force_login(alice)
        data = {"name": "Alicia", "system_name": "", "system_description": "", "paper_url": ""}
        assert member.post(reverse("leaderboard:team_detail", args=[task.slug]), data).status_code == 302
        renamed = page(task, "leaderboard")  # at once, with the latest score too
        assert team_cells(renamed, "Alicia") == before  # MOSTLY_A again, as at first


def test_a_page_older_than_two_windows_is_computed_for_its_reader(contest, submit, settings):
    """A board read once in a while: its first reader after a new score gets the new score."""
    from freezegun import freeze_time

    settings.RESULTS_SCORES_FRESH_S = 60
    task, alice, _ = contest
    with freeze_time(timezone.now()) as clock:
        before = team_cells(page(task, "leaderboard"), "Alice")
        submit(task, alice, PERFECT)
        clock.tick(dt.timedelta(seconds=121))
        after = team_cells(page(task, "leaderboard"), "Alice")
    assert after != before and '<span class="value">1.0000</span>' in after


def test_a_page_computed_from_older_scores_is_not_taken_for_the_current_one(contest, submit, settings):
    """A page first asked for just after a score is computed from the board's data of the scores
    before (still within its window): it is as old as that data, so once the window is over it
    is computed again, although no score came since. Labelled with the scores of its request, it
    would show the old scores for good."""
    from freezegun import freeze_time

    settings.RESULTS_SCORES_FRESH_S = 60
    task, alice, _ = contest
    with freeze_time(timezone.now()) as clock:
        page(task, "leaderboard")  # the board's data, at the scores before
        submit(task, alice, PERFECT)  # the last score of the phase
        stale = team_cells(page(task, "leaderboard", calibrated=1), "Alice")  # asked for first, from that data
        clock.tick(dt.timedelta(seconds=61))
        page(task, "leaderboard", calibrated=1)  # served once more, computed again after it
        fresh = team_cells(page(task, "leaderboard", calibrated=1), "Alice")
    results_cache.results_changed(task)  # every entry computed anew
    assert fresh != stale and fresh == team_cells(page(task, "leaderboard", calibrated=1), "Alice")


def test_outside_a_request_an_old_entry_is_computed_at_once(contest, submit, settings, computations):
    """A command or a job reads the results (an export, a notice): nobody gets a response
    first, so nothing waits for after it."""
    from freezegun import freeze_time

    settings.RESULTS_SCORES_FRESH_S = 60
    task, alice, _ = contest
    with freeze_time(timezone.now()) as clock:
        submit(task, alice, PERFECT)
        clock.tick(dt.timedelta(seconds=61))
        task.refresh_from_db()
        computations.clear()
        phase = task.current_phase()
        data = results_page.board_data_of(phase)
    assert computations == ["board-data"]
    alice_row = data.names.index("Alice")
    assert data.submission_ids[alice_row] == Submission.objects.filter(team__name="Alice").latest("pk").pk


def test_a_new_score_s_board_is_computed_from_the_board_before_it(contest, submit, monkeypatch):
    """Only the new score's row is read (tests/leaderboard/selectors/test_boards.py): the board
    of older scores is what the new one is computed from."""
    task, alice, _ = contest
    before = results_page.board_data_of(task.current_phase())
    given = []
    real = results_page.board_data

    def recorded(phase, part, *, previous=None):
        given.append(previous)
        return real(phase, part, previous=previous)

    monkeypatch.setattr(results_page, "board_data", recorded)
    submit(task, alice, PERFECT)
    task.refresh_from_db()
    after = results_page.board_data_of(task.current_phase())
    assert [previous.submission_ids.tolist() for previous in given] == [before.submission_ids.tolist()]
    latest = Submission.objects.filter(team__name="Alice").latest("pk").pk
    assert (
        after.submission_ids[after.names.index("Alice")] == latest != before.submission_ids[before.names.index("Alice")]
    )


def test_teams_that_come_leave_or_are_removed_show_at_once_between_new_scores(
    contest, submit, make_user, organiser, settings
):
    """A new score's board takes its teams from the board before it: every change of a team
    raises the results version, so the next board is read anew, even within a rush's window."""
    settings.RESULTS_SCORES_FRESH_S = 60
    task, alice, bob = contest

    def teams() -> list[str]:
        task.refresh_from_db()
        return sorted(results_page.board_data_of(task.current_phase()).names)

    carol, dave = make_user("carol"), make_user("dave")
    team_create(task=task, user=carol, name="Carol")
    submit(task, alice, PERFECT)
    assert teams() == ["Alice", "Bob", "Carol"]
    team_create(task=task, user=dave, name="Dave")
    assert teams() == ["Alice", "Bob", "Carol", "Dave"]
    submit(task, carol, MOSTLY_A)
    team_leave(team=task.community.teams.get(name="Dave"), user=dave)
    assert teams() == ["Alice", "Bob", "Carol"]
    submit(task, bob, MOSTLY_A)
    team_remove(team=task.community.teams.get(name="Bob"), user=organiser, reason="Two accounts.")
    assert teams() == ["Alice", "Carol"]


def test_a_reader_does_not_wait_while_another_computes_a_new_score_s_page(contest, submit, computations):
    """Another request holds the claim on the current entry: the reader gets the page of the
    scores before, at once, rather than waiting for it or computing it too."""
    task, alice, _ = contest
    before = team_cells(page(task, "leaderboard"), "Alice")
    submit(task, alice, PERFECT)
    task.refresh_from_db()
    phase = task.current_phase()
    data_key = results_cache.entry_key(phase, "board-data", (phase.shown_part(),))
    assert results_cache.cache.add(f"{data_key}:computing", 1, 60)  # another request computes it
    computations.clear()
    started = timezone.now()
    assert team_cells(page(task, "leaderboard"), "Alice") == before
    assert "board-data" not in computations
    assert (timezone.now() - started).total_seconds() < results_cache.BUILD_WAIT_S / 2


def test_a_reader_who_waited_in_vain_computes_the_entry_and_leaves_the_other_s_claim(contest, monkeypatch):
    """Nothing cached yet, and another request's computation takes longer than a reader will
    wait: the reader computes the entry itself, and the other request still holds its claim (a
    third reader does not start a third computation)."""
    task, _, _ = contest
    results_cache.results_changed(task)  # nothing cached at the new version
    task.refresh_from_db()
    phase = task.current_phase()
    key = results_cache.entry_key(phase, "piece", ())
    assert results_cache.cache.add(f"{key}:computing", 1, 60)  # the other request
    monkeypatch.setattr(results_cache, "BUILD_WAIT_S", 0.05)
    assert results_cache.cached(phase, "piece", (), lambda: "computed here") == "computed here"
    assert results_cache.cache.get(f"{key}:computing") == 1


def test_a_page_for_nobody_in_particular_is_rendered_once_per_version(contest, monkeypatch):
    """Anonymous readers of the board and the disagreement page share one rendered page per
    version; a logged-in member's page is rendered for them (their row marked), and so is a
    request with a parameter the page does not read (its links would carry it)."""
    task, alice, _ = contest
    rendered: list[str] = []
    real = boards.render

    def counting(request, template, context=None, **options):
        rendered.append(template)
        return real(request, template, context, **options)

    monkeypatch.setattr(boards, "render", counting)
    results_cache.results_changed(task)  # the fixture's reads are of the version before
    for name in ("leaderboard", "disagreements"):
        first, second = page(task, name), page(task, name)
        assert first == second
    assert len(rendered) == 2
    member = Client()
    member.force_login(alice)
    mine = member.get(reverse("leaderboard:leaderboard", args=[task.slug])).content.decode()
    assert 'class="team-row mine"' in mine and 'class="team-row mine"' not in page(task, "leaderboard")
    page(task, "leaderboard", utm_source="mail")
    assert len(rendered) == 4
    results_cache.results_changed(task)  # a change: the next reader renders the page anew
    page(task, "leaderboard")
    assert len(rendered) == 5


def test_the_shared_page_is_gzipped_once_for_every_reader_who_accepts_it(contest):
    import gzip

    task, _, _ = contest
    url = reverse("leaderboard:leaderboard", args=[task.slug])
    plain = Client().get(url)
    first, second = (Client().get(url, HTTP_ACCEPT_ENCODING="gzip, br") for _ in range(2))
    assert first["Content-Encoding"] == "gzip" and first.content == second.content
    assert gzip.decompress(first.content) == plain.content and "Content-Encoding" not in plain
    assert "Accept-Encoding" in first["Vary"] and "Accept-Encoding" in plain["Vary"]


def test_a_page_found_a_little_old_is_computed_in_the_process_thread_not_the_readers(settings):
    """On a server the reader's kept connection is served again once the request's thread is
    free: the entry is computed in the process's own thread, and the request's thread is free
    before that computation ends."""
    import threading

    from django.core.signals import request_finished

    settings.RESULTS_AFTER_RESPONSE_IN = "thread"
    started, finish, ran_in = threading.Event(), threading.Event(), []

    def compute() -> None:
        ran_in.append(threading.current_thread().name)
        started.set()
        finish.wait(5)

    results_cache._after_response.set([compute])
    request_finished.send(sender=None)  # the response has been sent
    assert started.wait(5) and not finish.is_set()  # computing while the request's thread is free
    finish.set()
    results_cache._later.submit(lambda: None).result(5)  # after the computation
    assert ran_in[0].startswith("results-after-response") and ran_in[0] != threading.current_thread().name
    assert results_cache._after_response.get() is None


def test_readers_cannot_queue_more_work_for_that_thread_than_it_takes(settings):
    """With :data:`LATER_QUEUED_MAX` requests' entries waiting for the process's thread, the
    next request computes its own in its thread (it is not served again until then), and the
    thread takes requests' entries again once it is done."""
    import threading

    from django.core.signals import request_finished

    settings.RESULTS_AFTER_RESPONSE_IN = "thread"
    finish, ran_in = threading.Event(), []

    def finished_request(compute) -> None:
        results_cache._after_response.set([compute])
        request_finished.send(sender=None)

    for _ in range(results_cache.LATER_QUEUED_MAX):
        finished_request(lambda: finish.wait(5))
    finished_request(lambda: ran_in.append(threading.current_thread().name))
    assert ran_in == [threading.current_thread().name]  # the queue was full: here, at once
    finish.set()
    results_cache._later.submit(lambda: None).result(5)  # the queued ones are done
    finished_request(lambda: ran_in.append(threading.current_thread().name))
    results_cache._later.submit(lambda: None).result(5)
    assert ran_in[1].startswith("results-after-response")
