"""A phase that waits for its gold file, through every route a person takes, on a plain task
and on a subtask.

What this proves: an organiser creates a task, a subtask and a phase without a gold file
(the forms take none); until it is given the phase takes no upload (the task page says so in
place of its upload form, a forced upload is refused with that message, and so is the API's),
shows no board (its board page is a clear page, its downloads answer 404 with the same words,
the API answers 409), offers no sample submission and no gold download; the task page tells its
organisers which phase waits and links to where they give it; every link the task page and the
board page show answers (no 404, no 5xx) to the visitor it is shown to. Giving the gold file
through the usual preview and confirmation opens the phase: a team uploads and is ranked.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors
from leaderboard.models import Phase, Submission, Task
from leaderboard.services.tasks import task_create, task_with_subtasks_create
from leaderboard.services.teams import team_create
from leaderboard.services.tokens import token_create
from tests.conftest import GOLD, PERFECT

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["plain", "subtask"])
def waiting(request, organiser, make_user) -> tuple[Task, Phase, dict[str, Client]]:
    """A task (or a subtask of a divided task) whose only phase, open now, waits for its gold
    file; a team of one member; clients for the organiser, the member and an anonymous visitor."""
    now = timezone.now()
    dates = {"opens_at": now - dt.timedelta(days=1), "closes_at": now + dt.timedelta(days=1)}
    details = {"description": "", "labels": ["a", "b", "c"], "primary_metric": "macro_f1", **dates}
    if request.param == "plain":
        task = task_create(organiser=organiser, slug="toy", title="Toy", **details)
    else:
        root = task_with_subtasks_create(organiser=organiser, slug="t4", title="Task 4", description="")
        task = task_create(organiser=organiser, parent=root, slug="t4a", title="Subtask A", **details)
    member = make_user("alice")
    team_create(task=task, user=member, name="Alpha")
    clients = {"anonymous": Client(), "organiser": Client(), "member": Client()}
    clients["organiser"].force_login(organiser)
    clients["member"].force_login(member)
    return task, task.phases.get(), clients


def links(html: str) -> set[str]:
    """Every local address the page links to (not its forms' actions)."""
    return {href for href in re.findall(r'href="(/[^"]*)"', html) if not href.startswith("/static/")}


def assert_every_link_answers(client: Client, page: str) -> None:
    html = client.get(page).content.decode()
    for href in links(html):
        status = client.get(href.replace("&amp;", "&")).status_code
        assert status < 400, (page, href, status)


def test_a_phase_waits_for_its_gold_file_then_opens_with_it(waiting, organiser, django_capture_on_commit_callbacks):
    task, phase, clients = waiting
    assert phase.waits_for_gold and phase.gold_version == 0 and not phase.baselines.exists()
    message = errors.WAITS_FOR_GOLD.format(phase=phase.name)
    give = reverse("leaderboard:gold_replace", args=[task.slug, phase.slug])

    page = clients["organiser"].get(task.get_absolute_url()).content.decode()
    assert "A phase waits for its gold file" in page and f'href="{give}"' in page
    assert reverse("leaderboard:gold_download", args=[task.slug, phase.slug]) not in page
    if task.parent:  # the parent's page says it too, naming the subtask
        parent_page = clients["organiser"].get(task.parent.get_absolute_url()).content.decode()
        assert f'href="{give}"' in parent_page and "waits for its gold file" in parent_page

    page = clients["member"].get(task.get_absolute_url()).content.decode()
    assert message in page and 'name="file"' not in page  # no upload form, the reason instead
    assert "Sample submissions come with its gold file." in page
    assert reverse("leaderboard:sample_download", args=[task.slug, phase.slug, "labels"]) not in page
    assert reverse("leaderboard:leaderboard", args=[task.slug, phase.slug]) not in page

    upload = reverse("leaderboard:submission_create", args=[task.slug])
    refused = clients["member"].post(upload, {"file": SimpleUploadedFile("run.csv", PERFECT)}, follow=True)
    assert "The file was refused: " + message in refused.content.decode() and not Submission.objects.exists()

    board = clients["anonymous"].get(reverse("leaderboard:leaderboard", args=[task.slug, phase.slug]))
    assert board.status_code == 200 and "No leaderboard yet" in board.content.decode()
    assert clients["anonymous"].get(reverse("leaderboard:leaderboard", args=[task.slug])).status_code == 200
    for name in ("leaderboard_csv", "leaderboard_json", "leaderboard_tex"):
        download = clients["organiser"].get(reverse(f"leaderboard:{name}", args=[task.slug, phase.slug]))
        assert download.status_code == 404 and "waits for its gold file" in download.content.decode()
    organiser_board = clients["organiser"].get(reverse("leaderboard:disagreements", args=[task.slug, phase.slug]))
    assert f'href="{give}"' in organiser_board.content.decode()
    sample = clients["member"].get(reverse("leaderboard:sample_download", args=[task.slug, phase.slug, "labels"]))
    assert sample.status_code == 404
    gold = clients["organiser"].get(reverse("leaderboard:gold_download", args=[task.slug, phase.slug]))
    assert gold.status_code == 404
    for role, client in clients.items():
        for page in (task.get_absolute_url(), reverse("leaderboard:leaderboard", args=[task.slug, phase.slug])):
            assert_every_link_answers(client, page)
        if role == "organiser":
            assert_every_link_answers(client, reverse("leaderboard:task_archive", args=[task.community.task.slug]))

    # The organiser gives the gold file through the usual preview and confirmation.
    form = clients["organiser"].get(give).content.decode()
    assert "Give the gold file of" in form and "waits for its gold file" in form
    preview = clients["organiser"].post(give, {"gold": SimpleUploadedFile("gold.csv", GOLD)}).content.decode()
    assert "8 items" in preview and "Confirm: give it and open the phase" in preview
    opened = clients["organiser"].post(give, {"confirm": "1"}, follow=True).content.decode()
    assert f"The {phase.name} phase has its gold file" in opened and "A phase waits" not in opened
    phase.refresh_from_db()
    assert not phase.waits_for_gold and phase.gold_version == 1 and phase.baselines.count() == 3

    with django_capture_on_commit_callbacks(execute=True):
        uploaded = clients["member"].post(upload, {"file": SimpleUploadedFile("run.csv", PERFECT)})
    assert uploaded.status_code == 302
    assert Submission.objects.get().status == Submission.Status.SCORED
    board = clients["anonymous"].get(reverse("leaderboard:leaderboard", args=[task.slug, phase.slug]))
    assert board.status_code == 200 and "Alpha" in board.content.decode()
    assert (
        clients["member"]
        .get(reverse("leaderboard:sample_download", args=[task.slug, phase.slug, "labels"]))["Content-Disposition"]
        .endswith('-sample-labels.csv"')
    )


def test_the_api_says_the_phase_waits(waiting, make_user):
    task, phase, _ = waiting
    member = task.community.teams.get().members.get()
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=member, name='cli')[1]}")
    detail = api.get(f"/api/tasks/{task.slug}").json()
    assert detail["waits_for_gold"] is True and detail["is_open"] is False
    assert detail["phases"][0]["waits_for_gold"] is True and detail["you"]["board_visible"] is False
    for endpoint in ("leaderboard", "correlations", "what-if"):
        answer = api.get(f"/api/tasks/{task.slug}/{endpoint}")
        assert answer.status_code == 409
        assert answer.json() == {"code": "WAITS_FOR_GOLD", "message": errors.WAITS_FOR_GOLD.format(phase=phase.name)}
    upload = api.post(f"/api/tasks/{task.slug}/submissions", {"file": SimpleUploadedFile("run.csv", PERFECT)})
    assert upload.status_code == 400 and upload.json()["code"] == "WAITS_FOR_GOLD"
    assert not Submission.objects.exists()


@pytest.mark.parametrize("kind", ["plain", "subtask"])
def test_the_forms_create_a_task_a_subtask_and_a_phase_without_gold(client, organiser, kind):
    """The gold file is optional on every form that creates a phase."""
    client.force_login(organiser)
    dates = {"opens_at": "2031-01-01T00:00", "closes_at": "2031-02-01T00:00", "max_per_day": 5, "max_total": 10}
    common = {"title": "Toy", "labels": "a, b, c", "primary_metric": "macro_f1", **dates}
    common.update(counting="latest", visibility="public", phase_name="Practice", phase_slug="practice")
    if kind == "plain":
        response = client.post(reverse("leaderboard:task_create"), {**common, "slug": "toy"})
        task = Task.objects.get(slug="toy")
    else:
        root = task_with_subtasks_create(organiser=organiser, slug="t4", title="Task 4", description="")
        response = client.post(reverse("leaderboard:subtask_create", args=[root.slug]), {**common, "slug": "t4a"})
        task = Task.objects.get(slug="t4a")
        assert task.parent == root
    assert response.status_code == 302 and task.phases.get().waits_for_gold
    added = client.post(
        reverse("leaderboard:phase_create", args=[task.slug]),
        {**dates, "opens_at": "2031-03-01T00:00", "closes_at": "2031-04-01T00:00", "name": "Test", "slug": "test"}
        | {"counting": "latest", "visibility": "after_close"},
    )
    assert added.status_code == 302
    assert [phase.waits_for_gold for phase in task.ordered_phases()] == [True, True]
    page = client.get(task.get_absolute_url()).content.decode()
    assert "2 phases wait for their gold files" in page
