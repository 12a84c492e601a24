"""Participation through the pages: accounts, hosting a task, teams, uploads, submission pages.

Everything here goes through the test client, as a browser would: forms are posted (files as
multipart), redirects and flash messages are what the person sees. Scoring runs in on-commit
callbacks (the immediate tasks backend), so requests that store a submission are wrapped in
``django_capture_on_commit_callbacks(execute=True)``.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors
from leaderboard.models import Baseline, Phase, StoredFile, Submission, Task, Team
from leaderboard.selectors.boards import columns_of, counting_submissions
from leaderboard.selectors.participation import team_of
from leaderboard.services.scoring import GOLD_NO_LONGER_MATCHES
from leaderboard.services.tasks import TASK_SETTINGS_FIELDS, gold_replace
from leaderboard.services.teams import team_create
from scoring.engine import io
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-test-password"  # the password of every conftest user
NEW_PASSWORD = "correct-horse-battery-9"
FORM_TIME = "%Y-%m-%dT%H:%M"
OFF_SITE = [
    "https://evil.example/",
    "//evil.example/",
    "https:///evil.example/",
    "/\\evil.example/",
    "\\\\evil.example/",
    "http://testserver.evil.example/",
    "javascript:alert(1)",
]
SOFT = ("id,a,b,c\n" + "".join(f"{i},0.6,0.3,0.1\n" for i in range(1, 9))).encode()


def page(name: str, task: Task | None = None, *args: object) -> str:
    return reverse(f"leaderboard:{name}", args=[task.slug, *args] if task else list(args))


def notes(response) -> list[str]:
    """The flash messages of the request that gave ``response``."""
    return [str(message) for message in get_messages(response.wsgi_request)]


def shown_notes(response) -> list[str]:
    """The flash messages shown on a page (after following a redirect, say)."""
    items = re.findall(r'<li class="message[^"]*">(.*?)</li>', response.content.decode(), flags=re.S)
    return [html.unescape(item) for item in items]


def csv_file(content: bytes, name: str = "run.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="text/csv")


def label_file(labels: str, *, first_id: int = 1) -> bytes:
    """An ``id,label`` file with consecutive ids from ``first_id``."""
    rows = [f"{i},{label}\n" for i, label in enumerate(labels.split(), start=first_id)]
    return ("id,label\n" + "".join(rows)).encode()


def stored_counts() -> tuple[int, int]:
    return StoredFile.objects.count(), Submission.objects.count()


def form_time(moment: dt.datetime) -> str:
    return moment.strftime(FORM_TIME)


def phase_page(name: str, task: Task, *args: object) -> str:
    """A page of the task's only phase, by the phase's address."""
    return page(name, task, task.current_phase().slug, *args)


def settings_form(task: Task, **changes: object) -> dict[str, object]:
    """The task's settings form as the page would post it, with ``changes`` applied."""
    data = {name: getattr(task, name) for name in TASK_SETTINGS_FIELDS}
    return {**data, **changes}


def phase_settings_form(phase: Phase, **changes: object) -> dict[str, object]:
    """A phase's settings form as the page would post it, with ``changes`` applied."""
    data = {
        "name": phase.name,
        "description": phase.description,
        "opens_at": form_time(phase.opens_at),
        "closes_at": form_time(phase.closes_at),
        "max_per_day": phase.max_per_day,
        "max_total": phase.max_total,
        "counting": phase.counting,
        "visibility": phase.visibility,
        "feedback": phase.feedback,
    }
    return {**data, **changes}


def new_task_form(**changes: object) -> dict[str, object]:
    now = timezone.now()
    data = {
        "title": "Sentiment",
        "slug": "sentiment",
        "description": "Three classes.",
        "labels": "a, b\nc",
        "gold": csv_file(GOLD, "gold.csv"),
        "primary_metric": "macro_recall",
        "opens_at": form_time(now - dt.timedelta(days=1)),
        "closes_at": form_time(now + dt.timedelta(days=30)),
        "max_per_day": 3,
        "max_total": 10,
        "counting": Phase.Counting.BEST,
        "visibility": Phase.Visibility.PUBLIC,
        "phase_name": "Evaluation",
        "phase_slug": "evaluation",
        "registration": "open",
    }
    return {**data, **changes}


@pytest.fixture(autouse=True)
def _fresh_cache():
    """The log-in rate limit counts failures in the cache, which outlives a test."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def alice(task, make_user):
    """A participant of the toy task, in the team "Alpha"."""
    user = make_user("alice")
    team_create(task=task, user=user, name="Alpha")
    return user


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def organiser_client(client, organiser):
    client.force_login(organiser)
    return client


@pytest.fixture
def post_upload(django_capture_on_commit_callbacks):
    """Post a prediction file to the upload view and run the scoring it queues."""

    def post(client, task: Task, content: bytes, name: str = "run.csv", **fields: object):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(page("submission_create", task), {"file": csv_file(content, name), **fields})

    return post


# --- accounts ----------------------------------------------------------------------------------


def test_signup_creates_the_account_logs_in_and_follows_a_local_next(client, task):
    response = client.post(
        reverse("signup"),
        {
            "username": "newcomer",
            "email": "newcomer@example.org",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
            "next": task.get_absolute_url(),
        },
    )
    assert response.status_code == 302
    assert response["Location"] == task.get_absolute_url()
    user = get_user_model().objects.get(username="newcomer")
    assert response.wsgi_request.user == user
    assert client.get(page("task_list")).context["user"] == user


def test_signup_with_a_bad_password_stays_on_the_form(client):
    response = client.post(reverse("signup"), {"username": "x", "password1": "123", "password2": "123"})
    assert response.status_code == 200
    assert response.context["form"].errors["password2"]
    assert not get_user_model().objects.filter(username="x").exists()


@pytest.mark.parametrize("target", OFF_SITE)
def test_signup_never_redirects_off_site(client, target):
    response = client.post(
        reverse("signup"),
        {
            "username": "newcomer",
            "email": "newcomer@example.org",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
            "next": target,
        },
    )
    assert response.status_code == 302
    assert response["Location"] == page("task_list")


@pytest.mark.parametrize("target", OFF_SITE)
def test_login_never_redirects_off_site(client, alice, target):
    response = client.post(reverse("login"), {"username": "alice", "password": PASSWORD, "next": target})
    assert response.status_code == 302
    assert response["Location"] == page("task_list")
    assert response.wsgi_request.user == alice


@pytest.mark.parametrize("view", ["signup", "login"])
def test_forms_do_not_carry_an_off_site_next(client, view):
    content = client.get(reverse(view), {"next": "https://evil.example/"}).content.decode()
    assert 'name="next" value=""' in content
    local = client.get(reverse(view), {"next": "/tasks/toy/"}).content.decode()
    assert 'name="next" value="/tasks/toy/"' in local


def test_login_follows_a_local_next(client, alice, task):
    response = client.post(
        reverse("login"), {"username": "alice", "password": PASSWORD, "next": task.get_absolute_url()}
    )
    assert response["Location"] == task.get_absolute_url()


def test_login_with_a_wrong_password_is_a_form_error(client, alice):
    response = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert response.status_code == 200
    assert response.context["form"].non_field_errors()
    assert not response.wsgi_request.user.is_authenticated


def test_logout_is_a_post(alice_client):
    assert alice_client.get(reverse("logout")).status_code == 405
    assert alice_client.get(page("task_list")).context["user"].is_authenticated
    response = alice_client.post(reverse("logout"))
    assert response.status_code == 302
    assert not alice_client.get(page("task_list")).context["user"].is_authenticated


# --- hosting a task ----------------------------------------------------------------------------


def test_task_creation_needs_a_login(client):
    response = client.get(page("task_create"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_create_a_task_through_the_page(client, make_user):
    host = make_user("host")
    client.force_login(host)
    assert client.get(page("task_create")).status_code == 200
    response = client.post(page("task_create"), new_task_form())
    task = Task.objects.get(slug="sentiment")
    assert response.status_code == 302
    assert response["Location"] == task.get_absolute_url()
    assert list(task.organisers.all()) == [host]
    assert task.labels == ["a", "b", "c"]
    [phase] = task.phases.all()
    assert (phase.name, phase.slug) == ("Evaluation", "evaluation")
    assert (task.primary_metric, phase.counting, phase.max_per_day) == ("macro_recall", "best", 3)
    assert bytes(phase.gold_file.content) == GOLD
    assert phase.gold_file.name == "gold.csv"
    assert Baseline.objects.filter(phase=phase).count() == 3
    assert notes(response) == ["The task “Sentiment” is created."]


def test_create_a_task_divided_into_subtasks_through_the_page(client, make_user):
    """Such a task has no labels, metric or phases of its own: the form asks for none."""
    client.force_login(make_user("host"))
    form = {"title": "Sentiment", "slug": "sentiment", "description": "", "registration": "open", "terms": ""}
    response = client.post(page("task_create") + "?subtasks=1", form)
    task = Task.objects.get(slug="sentiment")
    assert response.status_code == 302, response.context["form"].errors
    assert task.is_divided
    assert not task.phases.exists()


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        (b"id,label\n1,a\n2,b\n3,c\n2,a\n", "line 5: the id '2' appears a second time (first on line 3)"),
        (b"id,label\n1,a\n2,x\n3,c\n", "line 3: unknown label 'x'; expected one of a, b, c"),
        (b"id,label\n1,a\n2,b\n3\n", "line 4: expected 2 fields, found 1"),
        (b"id,label\n1,a\n2,b\n3,\n", "line 4: the label is empty"),
    ],
)
def test_a_bad_gold_file_is_a_form_error_naming_the_line(client, make_user, gold, expected):
    client.force_login(make_user("host"))
    response = client.post(page("task_create"), new_task_form(gold=csv_file(gold, "gold.csv")))
    assert response.status_code == 200
    assert any(expected in error for error in response.context["form"].errors["gold"])
    assert expected in html.unescape(response.content.decode())
    assert not Task.objects.exists()
    assert not StoredFile.objects.exists()


def test_bad_labels_are_an_error_on_the_labels_field(client, make_user):
    client.force_login(make_user("host"))
    response = client.post(page("task_create"), new_task_form(labels="a"))
    assert response.context["form"].errors["labels"] == [errors.TOO_FEW_LABELS]
    assert not Task.objects.exists()


@pytest.mark.both_kinds
def test_organiser_edits_the_settings(organiser_client, task):
    closes = timezone.now() + dt.timedelta(days=9)
    phase = task.current_phase()
    response = organiser_client.post(page("task_edit", task), settings_form(task, title="Renamed"))
    assert response.status_code == 302
    assert response["Location"] == task.get_absolute_url()
    response = organiser_client.post(
        phase_page("phase_edit", task),
        phase_settings_form(phase, max_per_day=2, counting="chosen", closes_at=form_time(closes)),
    )
    assert response.status_code == 302
    assert response["Location"] == task.get_absolute_url()
    task.refresh_from_db()
    phase.refresh_from_db()
    assert (task.title, phase.max_per_day, phase.counting) == ("Renamed", 2, "chosen")
    assert form_time(phase.closes_at) == form_time(closes)


def test_settings_must_close_after_opening(organiser_client, task):
    phase = task.current_phase()
    response = organiser_client.post(
        phase_page("phase_edit", task), phase_settings_form(phase, name="Renamed", closes_at=form_time(phase.opens_at))
    )
    assert response.status_code == 200
    assert errors.BAD_DATES in response.context["form"].non_field_errors()
    phase.refresh_from_db()
    assert phase.name == "Evaluation"


@pytest.mark.both_kinds
def test_replace_gold_through_the_page_rescores(
    organiser_client, task, alice, submit, django_capture_on_commit_callbacks
):
    submission = submit(task, alice, PERFECT)
    new_gold = GOLD.replace(b"2,b", b"2,a")
    preview = organiser_client.post(phase_page("gold_replace", task), {"gold": csv_file(new_gold, "gold-v2.csv")})
    assert preview.status_code == 200
    change = preview.context["change"]
    assert (change.added, change.removed, change.relabelled) == (0, 0, 1)
    assert change.examples_relabelled == (("2", "b", "a"),)
    assert preview.context["would_fail"] == 0
    phase = task.current_phase()
    assert phase.gold_version == 1 and bytes(phase.gold_file.content) == GOLD  # nothing changes before confirming
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(phase_page("gold_replace", task), {"confirm": "1"})
    assert response.status_code == 302
    assert notes(response) == ["The gold file is replaced; 1 submission(s) are being scored again."]
    phase.refresh_from_db()
    submission.refresh_from_db()
    assert (phase.gold_version, phase.gold_file.name, bytes(phase.gold_file.content)) == (2, "gold-v2.csv", new_gold)
    assert submission.scored_gold_version == 2
    assert submission.metrics["accuracy"] == pytest.approx(7 / 8)


def test_a_bad_replacement_gold_is_a_form_error(organiser_client, task):
    response = organiser_client.post(phase_page("gold_replace", task), {"gold": csv_file(b"id,label\n1,a\n2,b\n")})
    assert response.status_code == 200
    message = errors.GOLD_LABEL_UNUSED.format(label="c")
    assert response.context["form"].errors["gold"] == [message]
    phase = task.current_phase()
    assert phase.gold_version == 1
    assert bytes(phase.gold_file.content) == GOLD


# --- teams -------------------------------------------------------------------------------------


@pytest.mark.both_kinds
def test_create_and_join_a_team_through_the_pages(client, task, make_user):
    """Bob creates the team on the task's page, Carol joins it on the page of the task that holds
    the teams (for a subtask, its parent's), and each page shows the team."""
    holder = task.community.task
    client.force_login(make_user("bob"))
    assert 'action="{}"'.format(page("team_create", task)) in client.get(task.get_absolute_url()).content.decode()
    response = client.post(page("team_create", task), {"name": "  Beta   team "}, follow=True)
    assert response.redirect_chain == [(task.get_absolute_url(), 302)]
    team = task.community.teams.get()
    assert team.name == "Beta team"
    assert shown_notes(response) == [f"You created the team “Beta team”. Invite code: {team.invite_code}"]
    assert f"<code>{team.invite_code}</code>" in response.content.decode()

    carol = make_user("carol")
    client.force_login(carol)
    assert 'action="{}"'.format(page("team_join", holder)) in client.get(holder.get_absolute_url()).content.decode()
    response = client.post(page("team_join", holder), {"invite_code": f" {team.invite_code} "}, follow=True)
    assert response.redirect_chain == [(holder.get_absolute_url(), 302)]
    assert shown_notes(response) == ["You joined the team “Beta team”."]
    assert team_of(task=task, user=carol) == team
    assert "You are in <strong>Beta team</strong>" in client.get(task.get_absolute_url()).content.decode()

    response = client.post(page("team_create", task), {"name": "Gamma"}, follow=True)
    assert shown_notes(response) == [errors.ALREADY_IN_TEAM.format(team="Beta team")]
    assert task.community.teams.count() == 1


@pytest.mark.both_kinds
def test_joining_with_a_wrong_code_says_so(client, task, make_user):
    client.force_login(make_user("dan"))
    response = client.post(page("team_join", task), {"invite_code": "not-a-code"})
    assert notes(response) == [errors.BAD_INVITE]
    assert not Team.objects.exists()


# --- uploads -----------------------------------------------------------------------------------


def every_metric_rows(content: str) -> dict[str, tuple[str, str, str, str]]:
    """Metric name -> (raw value, rank, calibrated value, calibrated rank) from the submission
    page's "Every metric" table."""
    cell = r'\s*<td class="num">(.*?)</td>'
    rows = re.findall(r'<th title="[^"]*"><a href="[^"]*">([^<]*)</a></th>' + cell * 4, content)
    return {html.unescape(name): tuple(re.sub(r"<[^>]+>", "", text) for text in cells) for name, *cells in rows}


@pytest.mark.both_kinds
def test_a_good_upload_leads_to_its_scored_page(alice_client, task, make_user, submit, post_upload):
    bob = make_user("bob")
    team_create(task=task, user=bob, name="Beta")
    leader = submit(task, bob, PERFECT)
    response = post_upload(alice_client, task, MOSTLY_A, description="first run")
    submission = Submission.objects.get(team__name="Alpha")
    assert response.status_code == 302
    assert response["Location"] == submission.get_absolute_url()
    assert submission.status == Submission.Status.SCORED
    assert submission.description == "first run"

    page_response = alice_client.get(response["Location"])
    assert page_response.status_code == 200
    content = page_response.content.decode()
    assert f"Submission #{submission.pk} to the Evaluation phase is stored and" in content  # the flash message
    assert 'id="submission-status"' in content and ">scored</span>" in content
    metrics = submission.metrics
    for key in ("macro_f1", "macro_f1_of_averages", "macro_f1_gap"):
        assert f"{metrics[key]:.4f}" in content
    assert metrics["macro_f1_gap"] > 0  # MOSTLY_A has precision != recall, so the two F1s differ
    assert f"Δ = {metrics['macro_f1_gap']:.4f}" in content

    for label in task.labels:
        per_class = submission.per_class[label]
        row = re.search(rf'<tr><th scope="row">{label}</th>(.*?)</tr>', content, flags=re.S)
        assert row, f"no per-class row for {label}"
        cells = re.findall(r'<td class="num">(.*?)</td>', row.group(1))
        assert cells[:3] == [f"{per_class[m]:.4f}" for m in ("precision", "recall", "f1")]

    shown = every_metric_rows(content)
    columns = columns_of(task, calibrated=False)
    assert len(shown) == len(columns)
    calibrated_columns = columns_of(task, calibrated=True)
    for column, calibrated in zip(columns, calibrated_columns, strict=True):
        for position, shown_column in ((0, column), (2, calibrated)):
            mine = shown_column.value(submission)
            theirs = shown_column.value(leader)
            expected_rank = "—" if mine is None else str(1 + (theirs is not None and theirs > mine))
            value, rank = shown[column.name][position : position + 2]
            assert rank == expected_rank, shown_column.id
            assert value == ("undefined" if mine is None else f"{mine:.4f}")
    assert page_response.context["ranked"] and page_response.context["n_teams"] == 2


BAD_UPLOADS = {
    "duplicate id": (b"id,label\n1,a\n2,b\n1,a\n", 4, "the id '1' appears a second time (first on line 2)"),
    "unknown label": (b"id,label\n1,a\n2,z\n", 3, "unknown label 'z'; expected one of a, b, c"),
    "no header": (b"1,a\n2,b\n", 1, "the first line must be the header"),
    "not UTF-8": (b"id,label\n1,\xe9\n", 2, "are not UTF-8 text"),
    "too many fields": (PERFECT.replace(b"3,c", b"3,c,extra"), 4, "expected 2 fields, found 3"),
    "too many fields on the first line": (PERFECT.replace(b"1,a", b"1,a,extra"), 2, "expected 2 fields, found 3"),
    "missing ids": (b"id,label\n1,a\n", None, "7 gold id(s) have no prediction, the first being '2'"),
}


@pytest.mark.parametrize(("content", "line", "problem"), BAD_UPLOADS.values(), ids=BAD_UPLOADS)
def test_a_bad_upload_is_sent_back_with_the_line_and_nothing_is_stored(
    alice_client, task, post_upload, content, line, problem
):
    before = stored_counts()
    response = post_upload(alice_client, task, content, name="bad.csv")
    assert response.status_code == 302
    assert response["Location"] == task.get_absolute_url()
    [message] = notes(response)
    assert message.startswith("The file was refused: bad.csv")
    assert problem in message
    if line is not None:
        assert f"bad.csv, line {line}: " in message
    assert stored_counts() == before


@pytest.mark.both_kinds
def test_an_upload_after_the_deadline_names_the_deadline(alice_client, task, post_upload):
    closed = timezone.now() - dt.timedelta(minutes=5)
    Phase.objects.filter(task=task).update(opens_at=closed - dt.timedelta(days=1), closes_at=closed)
    response = post_upload(alice_client, task, PERFECT)
    [message] = notes(response)
    assert f"{closed:%Y-%m-%d %H:%M} UTC" in message
    assert errors.DEADLINE_PASSED.format(phase="Evaluation", closes_at=closed) in message
    assert stored_counts() == (1, 0)  # the gold file only


def test_an_upload_without_a_file_is_refused(alice_client, task):
    response = alice_client.post(page("submission_create", task), {"description": "no file"})
    assert response["Location"] == task.get_absolute_url()
    assert notes(response) == ["The file was refused: This field is required."]
    assert not Submission.objects.exists()


@pytest.mark.both_kinds
def test_submission_status_json(alice_client, task, alice, submit):
    submission = submit(task, alice, PERFECT)
    response = alice_client.get(page("submission_status", task, submission.pk))
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {"id": submission.pk, "status": "scored", "failure": None}


@pytest.mark.both_kinds
def test_choosing_a_submission_makes_it_the_one_that_counts(client, make_task, make_user, submit):
    task = make_task("chosen", counting=Phase.Counting.CHOSEN)
    phase = task.current_phase()
    carla = make_user("carla")
    team_create(task=task, user=carla, name="Carla's team")
    client.force_login(carla)
    first = submit(task, carla, PERFECT)
    second = submit(task, carla, MOSTLY_A)
    assert counting_submissions(phase)[first.team_id] == second  # the latest, until chosen
    content = client.get(first.get_absolute_url()).content.decode()
    assert "Make this the submission that counts" in content

    response = client.post(page("submission_choose", task, first.pk))
    assert response["Location"] == first.get_absolute_url()
    assert notes(response) == [f"Submission #{first.pk} now counts for your team."]
    assert list(Submission.objects.filter(team=first.team_id, chosen=True)) == [first]
    assert counting_submissions(phase)[first.team_id] == first


def test_the_choose_button_is_only_for_tasks_that_count_the_chosen_one(alice_client, task, alice, submit):
    submission = submit(task, alice, PERFECT)
    assert task.current_phase().counting == Phase.Counting.LATEST
    assert (
        "Make this the submission that counts" not in alice_client.get(submission.get_absolute_url()).content.decode()
    )


@pytest.mark.both_kinds
def test_gold_download_is_for_organisers_only(client, task, alice, organiser):
    url = phase_page("gold_download", task)
    assert client.get(url)["Location"].startswith(reverse("login"))
    client.force_login(alice)
    assert client.get(url).status_code == 404
    client.force_login(organiser)
    response = client.get(url)
    assert response.status_code == 200
    assert response.content == GOLD
    assert response["Content-Disposition"] == 'attachment; filename="toy-evaluation-gold.csv"'
    assert url in client.get(task.get_absolute_url()).content.decode()


@pytest.mark.both_kinds
def test_rescore_button_scores_what_was_left_queued(
    organiser_client, task, alice, submit, django_capture_on_commit_callbacks
):
    submission = submit(task, alice, PERFECT)
    Submission.objects.filter(pk=submission.pk).update(status=Submission.Status.QUEUED, scored_gold_version=None)
    assert organiser_client.get(page("task_rescore", task)).status_code == 405
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(page("task_rescore", task))
    assert response["Location"] == task.get_absolute_url()
    assert notes(response)[0].startswith("1 submission(s) are queued for scoring")
    submission.refresh_from_db()
    assert submission.status == Submission.Status.SCORED
    assert submission.score_count == 2


# --- the submission page in each state ---------------------------------------------------------


def test_the_page_of_a_soft_submission(alice_client, task, alice, submit):
    submission = submit(task, alice, SOFT)
    assert (submission.kind, submission.status) == (Submission.Kind.SOFT, Submission.Status.SCORED)
    response = alice_client.get(submission.get_absolute_url())
    assert response.status_code == 200
    content = response.content.decode()
    assert "probabilities" in content
    assert f"{submission.metrics['macro_f1']:.4f}" in content
    assert "2.4000" in json.loads(response.context["heatmap_raw"])["data"][0]["text"][0]  # 4 items × p(a) = 0.6


@pytest.mark.both_kinds
def test_the_page_of_a_failed_submission(
    alice_client, organiser, task, alice, submit, django_capture_on_commit_callbacks
):
    submission = submit(task, alice, PERFECT)
    other_ids = label_file("a b c a b c a a", first_id=11)  # same labels, ids the predictions lack
    with django_capture_on_commit_callbacks(execute=True):
        gold_replace(phase=task.current_phase(), gold_name="gold2.csv", gold_content=other_ids)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.FAILED
    problem = "run.csv, line 2: " + io.UNKNOWN_ID.format(id="1")
    assert submission.failure == GOLD_NO_LONGER_MATCHES.format(version=2, problem=problem)

    response = alice_client.get(submission.get_absolute_url())
    assert response.status_code == 200
    content = html.unescape(response.content.decode())
    assert submission.failure in content
    assert ">failed</span>" in content
    assert "Every metric" not in content
    status = alice_client.get(page("submission_status", task, submission.pk))
    assert json.loads(status.content)["failure"] == submission.failure
