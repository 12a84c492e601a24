"""Who may do what: every role against every action, each cell asserted.

The task is open and its results are hidden until it closes (``after_close``); teams A and B
each have a scored submission. Each action has a table of the expected outcome per role, for
the task still running ("hidden") and, where visibility matters, after it closed ("public").
A refused write must also leave everything as it was, so those tests check the data too.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors
from leaderboard.models import Phase, Submission, Task, Team
from leaderboard.services.tasks import TASK_SETTINGS_FIELDS
from leaderboard.services.teams import team_create
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-test-password"  # the password of every conftest user
ROLES = ("anonymous", "member_a", "member_b", "organiser", "other_organiser", "staff")
LOGIN = "redirect to log-in"
BOARD_VIEWS = ("leaderboard", "leaderboard_csv", "leaderboard_json", "leaderboard_tex", "disagreements")


def table(*outcomes: object) -> list:
    """One expected outcome per role, in the order of ``ROLES``: (role, outcome) cases."""
    return [pytest.param(role, outcome, id=role) for role, outcome in zip(ROLES, outcomes, strict=True)]


def by_phase(**tables: list) -> list:
    """(phase, role, outcome) cases from a table per phase ("hidden", "public")."""
    return [
        pytest.param(phase, *case.values, id=f"{phase}-{case.id}") for phase, cases in tables.items() for case in cases
    ]


@dataclass
class World:
    task: Task
    users: dict
    submission_a: Submission
    submission_b: Submission

    def client(self, role: str, **options: object) -> Client:
        client = Client(**options)
        if self.users[role] is not None:
            client.force_login(self.users[role])
        return client

    @property
    def phase(self) -> Phase:
        """The task's only phase."""
        return self.task.current_phase()

    def close(self) -> None:
        """Move the phase's dates so that it closed a minute ago (its results become public)."""
        now = timezone.now()
        Phase.objects.filter(task=self.task).update(
            opens_at=now - dt.timedelta(days=3), closes_at=now - dt.timedelta(minutes=1)
        )

    def enter(self, phase: str) -> None:
        assert phase in ("hidden", "public")
        if phase == "public":
            self.close()
        assert self.phase.results_public() == (phase == "public")


@pytest.fixture
def world(make_task, make_user, organiser, submit) -> World:
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE, counting=Phase.Counting.CHOSEN)
    users = {"anonymous": None, "organiser": organiser}
    submissions = []
    for role, name, content in [("member_a", "A", PERFECT), ("member_b", "B", MOSTLY_A)]:
        users[role] = make_user(f"member-of-{name}")
        team_create(task=task, user=users[role], name=name)
        submissions.append(submit(task, users[role], content))
    users["other_organiser"] = make_user("other-organiser")
    make_task("other").organisers.set([users["other_organiser"]])
    users["staff"] = make_user("staff", is_staff=True)
    return World(task=task, users=users, submission_a=submissions[0], submission_b=submissions[1])


def page(name: str, task: Task, *args: object) -> str:
    return reverse(f"leaderboard:{name}", args=[task.slug, *args])


def phase_page(name: str, task: Task, *args: object) -> str:
    """A page of the task's only phase, by its phase's address."""
    return page(name, task, task.current_phase().slug, *args)


def assert_outcome(response, expected: object) -> None:
    if expected == LOGIN:
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login") + "?next=")
    else:
        assert response.status_code == expected


def refused(expected: object) -> bool:
    return expected == LOGIN or expected in (403, 404)


# --- reading -----------------------------------------------------------------------------------

LEADERBOARD = by_phase(
    hidden=table(403, 403, 403, 200, 403, 200),
    public=table(200, 200, 200, 200, 200, 200),
)


@pytest.mark.parametrize(("phase", "role", "expected"), LEADERBOARD)
def test_view_the_leaderboard(world, phase, role, expected):
    world.enter(phase)
    client = world.client(role)
    for name in BOARD_VIEWS:
        for address in (page(name, world.task), phase_page(name, world.task)):
            response = client.get(address)
            assert_outcome(response, expected)
            if expected == 403:
                assert "Results are hidden" in response.content.decode()
    assert_outcome(client.get(page("metric_detail", world.task, "kappa_c")), expected)
    assert_outcome(client.get(phase_page("metric_detail", world.task, "kappa_c")), expected)


SUBMISSION_OF_A = by_phase(
    hidden=table(404, 200, 404, 200, 404, 200),
    public=table(404, 200, 200, 200, 200, 200),
)


@pytest.mark.parametrize(("phase", "role", "expected"), SUBMISSION_OF_A)
def test_view_team_a_submission_page(world, phase, role, expected):
    world.enter(phase)
    response = world.client(role).get(world.submission_a.get_absolute_url())
    assert_outcome(response, expected)
    if expected == 200:
        assert f"Submission #{world.submission_a.pk} of A" in response.content.decode()


@pytest.mark.parametrize(("phase", "role", "expected"), SUBMISSION_OF_A)
def test_view_team_a_submission_status(world, phase, role, expected):
    world.enter(phase)
    response = world.client(role).get(page("submission_status", world.task, world.submission_a.pk))
    assert_outcome(response, expected)
    if expected == 200:
        assert response.json() == {"id": world.submission_a.pk, "status": "scored", "failure": None}


@pytest.mark.parametrize(("role", "expected"), table(LOGIN, 404, 404, 200, 404, 200))
def test_download_the_gold_file(world, role, expected):
    response = world.client(role).get(phase_page("gold_download", world.task))
    assert_outcome(response, expected)
    assert (response.content == GOLD) == (expected == 200)


# --- writing -----------------------------------------------------------------------------------

UPLOADER_TEAM = table(None, "A", "B", None, None, None)


@pytest.mark.parametrize(("role", "team"), UPLOADER_TEAM)
def test_an_upload_always_goes_to_the_uploaders_own_team(world, role, team, django_capture_on_commit_callbacks):
    """The form has no team field; a forged one (team A's id) is ignored."""
    team_a = world.submission_a.team
    before = set(Submission.objects.values_list("pk", flat=True))
    forged = {"file": SimpleUploadedFile("run.csv", PERFECT), "team": team_a.pk, "team_id": team_a.pk}
    with django_capture_on_commit_callbacks(execute=True):
        response = world.client(role).post(page("submission_create", world.task), forged)
    new = Submission.objects.exclude(pk__in=before)
    if role == "anonymous":
        assert_outcome(response, LOGIN)
    elif team is None:
        assert response["Location"] == world.task.get_absolute_url()
        assert [str(m) for m in get_messages(response.wsgi_request)] == ["The file was refused: " + errors.NO_TEAM]
    if team is None:
        assert not new.exists()
    else:
        [submission] = new
        assert submission.team.name == team
        assert response["Location"] == submission.get_absolute_url()


ORGANISERS_ONLY = table(LOGIN, 403, 403, 302, 403, 302)


@pytest.mark.parametrize(("role", "expected"), ORGANISERS_ONLY)
def test_change_the_settings(world, role, expected):
    """The task's own settings (task_edit) and its phase's dates, limits and policies (phase_edit)."""
    task, phase = world.task, world.phase
    task_form = {
        **{name: getattr(task, name) for name in TASK_SETTINGS_FIELDS},
        "title": "Taken over",
        "primary_metric": "accuracy",
    }
    phase_form = {
        "name": phase.name,
        "description": "",
        "opens_at": phase.opens_at.strftime("%Y-%m-%dT%H:%M"),
        "closes_at": phase.closes_at.strftime("%Y-%m-%dT%H:%M"),
        "max_per_day": 99,
        "max_total": 999,
        "counting": Phase.Counting.LATEST,
        "visibility": Phase.Visibility.PUBLIC,
        "feedback": Phase.Feedback.FULL,
    }
    client = world.client(role)
    assert_outcome(client.post(page("task_edit", task), task_form), expected)
    assert_outcome(client.post(phase_page("phase_edit", task), phase_form), expected)
    task.refresh_from_db()
    phase.refresh_from_db()
    changed = (task.title, phase.max_per_day, phase.visibility) == ("Taken over", 99, "public")
    assert changed != refused(expected)
    if refused(expected):
        assert (task.title, task.primary_metric, phase.counting) == ("Task toy", "macro_f1", "chosen")


@pytest.mark.parametrize(("role", "expected"), ORGANISERS_ONLY)
def test_open_the_settings_page(world, role, expected):
    expected = 200 if expected == 302 else expected
    assert_outcome(world.client(role).get(page("task_edit", world.task)), expected)
    assert_outcome(world.client(role).get(phase_page("phase_edit", world.task)), expected)


@pytest.mark.parametrize(("role", "expected"), ORGANISERS_ONLY)
def test_replace_the_gold_file(world, role, expected, django_capture_on_commit_callbacks):
    new_gold = GOLD.replace(b"2,b", b"2,a")
    client = world.client(role)
    preview = client.post(phase_page("gold_replace", world.task), {"gold": SimpleUploadedFile("g.csv", new_gold)})
    assert_outcome(preview, 200 if expected == 302 else expected)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(phase_page("gold_replace", world.task), {"confirm": "1"})
    assert_outcome(response, expected)
    phase = world.phase
    world.submission_a.refresh_from_db()
    if refused(expected):
        assert (phase.gold_version, bytes(phase.gold_file.content)) == (1, GOLD)
        assert world.submission_a.metrics["accuracy"] == 1.0
    else:
        assert (phase.gold_version, bytes(phase.gold_file.content)) == (2, new_gold)
        assert world.submission_a.metrics["accuracy"] == pytest.approx(7 / 8)


@pytest.mark.parametrize(("role", "expected"), ORGANISERS_ONLY)
def test_rescore(world, role, expected, django_capture_on_commit_callbacks):
    """A submission whose job was lost (left queued) is scored only if the re-score is allowed."""
    lost = world.submission_b
    Submission.objects.filter(pk=lost.pk).update(status=Submission.Status.QUEUED, scored_gold_version=None)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = world.client(role).post(page("task_rescore", world.task))
    assert_outcome(response, expected)
    lost.refresh_from_db()
    assert (lost.status == Submission.Status.QUEUED) == refused(expected)
    assert (len(callbacks) == 0) == refused(expected)


CHOOSE_A = by_phase(
    hidden=table(LOGIN, 302, 404, 403, 404, 403),
    public=table(LOGIN, 302, 403, 403, 403, 403),
)


@pytest.mark.parametrize(("phase", "role", "expected"), CHOOSE_A)
def test_choose_team_a_submission(world, phase, role, expected):
    """Only a member of team A may choose A's submission (member A is the control), and only
    while the task is open: after the close (results public) the final board cannot change."""
    world.enter(phase)
    team_a = world.submission_a.team
    response = world.client(role).post(page("submission_choose", world.task, world.submission_a.pk))
    assert_outcome(response, expected)
    chosen = expected == 302 and not world.phase.is_closed()
    assert chosen_of(team_a) == (world.submission_a if chosen else None)
    assert chosen_of(Team.objects.get(name="B")) is None


def chosen_of(team: Team) -> Submission | None:
    return Submission.objects.filter(team=team, chosen=True).first()


# --- CSRF, log-in rate limit, admin ------------------------------------------------------------


@pytest.fixture
def csrf_client(world) -> Client:
    """A browser-like client of a person without a team: CSRF tokens are checked."""
    return world.client("organiser", enforce_csrf_checks=True)


def test_a_post_without_a_csrf_token_is_refused(csrf_client, world):
    response = csrf_client.post(page("team_create", world.task), {"name": "Forged"})
    assert response.status_code == 403
    assert not Team.objects.filter(name="Forged").exists()
    response = csrf_client.post(reverse("logout"))
    assert response.status_code == 403
    assert csrf_client.get(world.task.get_absolute_url()).context["user"] == world.users["organiser"]


def test_the_same_post_with_the_token_passes(csrf_client, world):
    csrf_client.get(world.task.get_absolute_url())  # sets the CSRF cookie, as the page would
    token = csrf_client.cookies["csrftoken"].value
    response = csrf_client.post(page("team_create", world.task), {"name": "Genuine", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert Team.objects.filter(name="Genuine").exists()


def test_log_in_without_a_csrf_token_is_refused(world):
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("login"), {"username": "member-of-A", "password": PASSWORD})
    assert response.status_code == 403
    assert "_auth_user_id" not in client.session


def log_in(client: Client, username: str, password: str):
    return client.post(reverse("login"), {"username": username, "password": password})


def test_log_in_is_rate_limited_per_user_name(world, settings):
    """The throttle's own attacks are in test_login_throttle.py; here, its place among the rights."""
    settings.AXES_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(2):
        response = log_in(client, "member-of-A", "wrong")
        assert response.status_code == 200
        assert response.context["form"].non_field_errors()
    assert log_in(client, "member-of-A", "wrong").status_code == 429  # the third failure locks out
    for password in ("wrong", PASSWORD):
        response = log_in(client, " ｍember-of-A ", password)  # spaces and a fullwidth m: the same account
        assert response.status_code == 429
        assert "Too many failed log-ins" in response.content.decode()
        assert "_auth_user_id" not in client.session
    response = log_in(client, "member-of-B", PASSWORD)
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(world.users["member_b"].pk)


def test_fewer_failures_than_the_limit_do_not_block(world, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(2):
        log_in(client, "member-of-A", "wrong")
    assert log_in(client, "member-of-A", PASSWORD).status_code == 302


@pytest.mark.parametrize(("role", "expected"), table(302, 302, 302, 302, 302, 200))
def test_the_admin_needs_staff(world, role, expected):
    """Organisers are not staff: the admin sends everyone but staff to its own log-in."""
    response = world.client(role).get(reverse("admin:index"))
    assert response.status_code == expected
    if expected == 302:
        assert response["Location"].startswith(reverse("admin:login"))
