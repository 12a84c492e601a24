"""Taking part in a task: registration open or on approval, terms and their versions,
announcements (escaped, e-mailed from the queue, opt-out), and who may download the data."""

from __future__ import annotations

import json
from html import escape
from importlib import import_module

import pytest
from django.apps import apps
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django_tasks import task_backends

from leaderboard import errors
from leaderboard.errors import problem_codes
from leaderboard.models import Announcement, Participant, PhaseFile, Task
from leaderboard.selectors.participation import participation_problem
from leaderboard.services import registrations
from leaderboard.services.registrations import (
    announcement_emails_set,
    announcement_post,
    registration_decide,
    registration_request,
)
from leaderboard.services.tasks import phase_file_add, task_update
from leaderboard.services.teams import team_create
from tests.conftest import PERFECT

pytestmark = [pytest.mark.django_db, pytest.mark.both_kinds]

TERMS = "The data is licensed CC BY-NC 4.0.\nOne system description paper per team."


def codes_of(call) -> set[str]:
    with pytest.raises(ValidationError) as caught:
        call()
    return problem_codes(caught.value)


@pytest.fixture
def approval_task(make_task):
    return make_task("gated", registration=Task.Registration.APPROVAL, terms=TERMS)


@pytest.fixture
def alice(make_user):
    return make_user("alice", email="alice@example.org")


@pytest.fixture
def bob(make_user):
    return make_user("bob", email="bob@example.org")


def test_an_open_task_without_terms_needs_no_registration_and_registers_team_members(task, alice):
    assert not task.needs_registration
    assert participation_problem(task=task, user=alice) is None
    team_create(task=task, user=alice, name="Alpha")
    participant = task.community.participants.get(user=alice)
    assert participant.status == Participant.Status.APPROVED
    assert participant.announcement_emails


def test_on_approval_nothing_is_possible_before_the_organisers_approve(approval_task, alice, organiser, submit):
    assert codes_of(lambda: team_create(task=approval_task, user=alice, name="A")) == {"NOT_REGISTERED"}
    assert codes_of(lambda: registration_request(task=approval_task, user=alice, accept_terms=False)) == {
        "TERMS_NOT_ACCEPTED"
    }
    participant = registration_request(task=approval_task, user=alice, accept_terms=True)
    assert participant.status == Participant.Status.PENDING
    assert codes_of(lambda: team_create(task=approval_task, user=alice, name="A")) == {"REGISTRATION_PENDING"}

    registration_decide(participant=participant, organiser=organiser, approve=True)
    team = team_create(task=approval_task, user=alice, name="A")
    assert submit(approval_task, alice, PERFECT).team == team
    assert alice.notifications.filter(message__contains="is approved").exists()


def test_a_refusal_needs_a_reason_that_the_person_reads(
    approval_task, alice, organiser, django_capture_on_commit_callbacks
):
    participant = registration_request(task=approval_task, user=alice, accept_terms=True)
    assert codes_of(lambda: registration_decide(participant=participant, organiser=organiser, approve=False)) == {
        "REASON_REQUIRED"
    }
    with django_capture_on_commit_callbacks(execute=True):
        registration_decide(participant=participant, organiser=organiser, approve=False, reason="no affiliation given")
    problem = participation_problem(task=approval_task, user=alice)
    assert problem.messages == [errors.REGISTRATION_REFUSED.format(reason="no affiliation given")]
    assert [m.to for m in mail.outbox] == [["alice@example.org"]]
    assert "no affiliation given" in mail.outbox[0].body


def test_only_organisers_decide(approval_task, alice, bob):
    participant = registration_request(task=approval_task, user=alice, accept_terms=True)
    with pytest.raises(PermissionDenied):
        registration_decide(participant=participant, organiser=bob, approve=True)


def test_terms_acceptance_is_recorded_and_a_change_asks_for_it_again(make_task, alice, submit):
    task = make_task("termed", terms=TERMS)
    community = task.community
    assert community.terms_version == 1 and task.needs_registration
    participant = registration_request(task=task, user=alice, accept_terms=True)
    assert participant.status == Participant.Status.APPROVED  # open registration
    team_create(task=task, user=alice, name="Alpha")
    first = community.terms_acceptances.get(user=alice)
    assert (first.version, first.terms) == (1, TERMS)

    task_update(task=community.task, settings={"terms": TERMS + "\nNo manual labelling of the test data."})
    assert community.terms_version == 2
    assert codes_of(lambda: submit(task, alice, PERFECT)) == {"TERMS_CHANGED"}
    registration_request(task=task, user=alice, accept_terms=True)
    assert submit(task, alice, PERFECT).status == "scored"
    assert list(community.terms_acceptances.filter(user=alice).values_list("version", flat=True)) == [2, 1]

    task_update(task=community.task, settings={"terms": TERMS + "\nNo manual labelling of the test data.  "})
    assert community.terms_version == 2, "spaces around the terms are no change"


def test_registering_twice_is_refused_with_the_status(make_task, alice):
    task = make_task("termed", terms=TERMS)
    registration_request(task=task, user=alice, accept_terms=True)
    assert codes_of(lambda: registration_request(task=task, user=alice, accept_terms=True)) == {"ALREADY_REGISTERED"}


def test_organisers_do_not_register(approval_task, organiser):
    assert codes_of(lambda: registration_request(task=approval_task, user=organiser, accept_terms=True)) == {
        "ORGANISERS_DO_NOT_REGISTER"
    }


def test_data_downloads_are_for_approved_participants_and_organisers(client, approval_task, alice, organiser, bob):
    phase = approval_task.current_phase()
    data = phase_file_add(phase=phase, title="inputs", name="inputs.csv", content=b"id\n1\n")
    urls = [
        reverse("leaderboard:phase_file_download", args=[approval_task.slug, phase.slug, data.pk]),
        reverse("leaderboard:sample_download", args=[approval_task.slug, phase.slug, "labels"]),
    ]
    for url in urls:
        assert client.get(url).status_code == 403  # a visitor
    client.force_login(alice)
    participant = registration_request(task=approval_task, user=alice, accept_terms=True)
    for url in urls:
        response = client.get(url)
        assert response.status_code == 403
        assert escape(errors.REGISTRATION_PENDING) in response.content.decode()
    registration_decide(participant=participant, organiser=organiser, approve=True)
    assert [client.get(url).status_code for url in urls] == [200, 200]
    client.force_login(organiser)
    assert [client.get(url).status_code for url in urls] == [200, 200]
    assert PhaseFile.objects.count() == 1


def test_the_task_page_shows_the_terms_and_the_request_button(client, approval_task, alice):
    client.force_login(alice)
    page = client.get(approval_task.get_absolute_url()).content.decode()
    assert "Terms (version 1)" in page and "One system description paper per team." in page
    assert "Request to take part" in page
    assert "Register for the task below to download its data" in page
    register = reverse("leaderboard:register", args=[approval_task.community.task.slug])  # a subtask's: its parent's
    assert f'action="{register}"' in page
    assert client.post(register, {"accept_terms": "on"}).status_code == 302
    page = client.get(approval_task.get_absolute_url()).content.decode()
    assert "waiting for the organisers' approval" in page


def test_the_organisers_list_approves_and_refuses(client, approval_task, alice, bob, organiser):
    for person in (alice, bob):
        registration_request(task=approval_task, user=person, accept_terms=True)
    client.force_login(organiser)
    url = reverse("leaderboard:registrations", args=[approval_task.community.task.slug])
    assert f'href="{url}"' in client.get(approval_task.get_absolute_url()).content.decode()  # "Participants"
    page = client.get(url).content.decode()
    assert "2 waiting" in page and "alice@example.org" in page
    alice_row = Participant.objects.get(user=alice)
    bob_row = Participant.objects.get(user=bob)
    assert client.post(url, {"participant": alice_row.pk, "decision": "approve"}).status_code == 302
    # A subtask's own address is its parent's list too.
    own = reverse("leaderboard:registrations", args=[approval_task.slug])
    refusal = {"participant": bob_row.pk, "decision": "refuse", "reason": "duplicate account"}
    assert client.post(own, refusal).status_code == 302
    alice_row.refresh_from_db()
    bob_row.refresh_from_db()
    assert (alice_row.status, alice_row.decided_by) == (Participant.Status.APPROVED, organiser)
    assert (bob_row.status, bob_row.reason) == (Participant.Status.REFUSED, "duplicate account")
    client.force_login(alice)
    assert client.get(url).status_code == 403


def test_announcements_are_shown_escaped_newest_first(client, task, organiser):
    announcement_post(task=task, author=organiser, title="First", body="Trial data\nis out", email=False)
    announcement_post(task=task, author=organiser, title="<b>Second</b>", body="<script>alert(1)</script>", email=False)
    page = client.get(task.get_absolute_url()).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;Second&lt;/b&gt;" in page
    assert page.index("Second") < page.index("First")
    assert "Trial data<br>is out" in page


def test_only_organisers_post_announcements(task, make_user):
    with pytest.raises(PermissionDenied):
        announcement_post(task=task, author=make_user("mallory"), title="x", body="y", email=False)
    assert codes_of(
        lambda: announcement_post(task=task, author=task.community.organisers.get(), title=" ", body="y", email=False)
    ) == {"ANNOUNCEMENT_EMPTY"}


def test_announcement_emails_go_through_the_queue_to_participants_who_did_not_opt_out(
    client, task, organiser, alice, bob, make_user, settings, django_capture_on_commit_callbacks
):
    team_create(task=task, user=alice, name="Alpha")
    team_create(task=task, user=bob, name="Beta")
    team_create(task=task, user=make_user("carol"), name="Gamma")  # no e-mail address
    client.force_login(bob)  # opts out on the task's page
    response = client.post(reverse("leaderboard:announcement_emails", args=[task.slug]), {"enabled": "0"})
    assert response["Location"] == task.get_absolute_url()
    assert not task.community.participants.get(user=bob).announcement_emails
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}

    with django_capture_on_commit_callbacks(execute=True):
        announcement = announcement_post(
            task=task, author=organiser, title="Deadline moved", body="One more week.", email=True
        )
    assert mail.outbox == [], "nothing is sent inside the request"
    queued = task_backends["default"].results
    assert [(r.task.name, r.args) for r in queued] == [("announcement_send", [announcement.pk])]

    assert registrations.announcement_send.call(announcement.pk) == 1
    assert [m.to for m in mail.outbox] == [["alice@example.org"]]
    assert mail.outbox[0].subject == f"[{task.community.task.title}] Deadline moved"  # a subtask's: its parent's
    assert "One more week." in mail.outbox[0].body and "opt out" in mail.outbox[0].body
    announcement.refresh_from_db()
    assert announcement.emailed_at is not None and announcement.recipients == 1
    assert registrations.announcement_send.call(announcement.pk) == 0, "a duplicate job sends nothing"
    assert len(mail.outbox) == 1


def test_an_organiser_cannot_flood_the_participants_inboxes(
    client, task, organiser, alice, settings, django_capture_on_commit_callbacks
):
    settings.ANNOUNCEMENTS_PER_RECIPIENT_PER_DAY = 3
    team_create(task=task, user=alice, name="Alpha")
    client.force_login(organiser)
    linked = reverse("leaderboard:announcements", args=[task.community.task.slug])  # a subtask's: its parent's
    assert linked in client.get(task.get_absolute_url()).content.decode()
    own = reverse("leaderboard:announcements", args=[task.slug])
    for number in range(8):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                (linked, own)[number % 2], {"title": f"News {number}", "body": "Read this.", "email": "on"}
            )
        assert response.status_code == 302
    assert task.community.announcements.count() == 8  # every one is on the task page
    assert len(mail.outbox) == 3 and all(m.to == ["alice@example.org"] for m in mail.outbox)


def test_opting_out_needs_a_registration(task, alice):
    assert codes_of(lambda: announcement_emails_set(task=task, user=alice, enabled=False)) == {"NOT_REGISTERED"}


def test_team_members_before_registration_existed_become_participants(task, alice):
    team_create(task=task, user=alice, name="Alpha")
    Participant.objects.all().delete()
    migration = import_module("leaderboard.migrations.0012_registration_terms_announcements")
    migration.register_team_members(apps, None)
    assert task.community.participants.get(user=alice).status == Participant.Status.APPROVED
    assert Announcement.objects.count() == 0


# --- changed terms, changed the way organisers change them -------------------------------------------


@pytest.fixture
def accepted(make_task, alice, client):
    """A task with terms that alice accepted (version 1) and a team of hers; her browser session."""
    task = make_task("termed", terms=TERMS)
    registration_request(task=task, user=alice, accept_terms=True)
    team_create(task=task, user=alice, name="Alpha")
    client.force_login(alice)
    return task


def assert_asked_again(client, task: Task) -> None:
    """Every route of a participant refuses until the new terms are accepted, and says so."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = client.post(
        reverse("leaderboard:submission_create", args=[task.slug]), {"file": SimpleUploadedFile("run.csv", PERFECT)}
    )
    assert upload.status_code == 302
    assert not task.submissions.exists()
    page = client.get(reverse("leaderboard:task_detail", args=[task.slug])).content.decode()
    assert "terms" in page and "accept" in page.lower()
    phase = task.current_phase()
    sample = client.get(reverse("leaderboard:sample_download", args=[task.slug, phase.slug, "labels"]))
    assert sample.status_code == 403
    client.post(reverse("leaderboard:register", args=[task.slug]), {"accept_terms": "on"})
    assert client.get(reverse("leaderboard:sample_download", args=[task.slug, phase.slug, "labels"])).status_code == 200


def test_terms_changed_on_the_settings_page_are_asked_again(accepted, client, organiser, alice):
    organiser_client = client.__class__()
    organiser_client.force_login(organiser)
    holder = accepted.community.task  # a subtask's terms are changed on its parent's settings page
    edit = reverse("leaderboard:task_edit", args=[holder.slug])
    assert 'name="terms"' in organiser_client.get(edit).content.decode()
    data = {
        "title": holder.title,
        "description": "",
        "primary_metric": "macro_f1",
        "registration": "open",
        "terms": TERMS + "\nNo manual labelling of the test data.",
    }
    response = organiser_client.post(edit, data)
    assert response.status_code == 302
    accepted.refresh_from_db()
    assert accepted.community.terms_version == 2
    assert_asked_again(client, accepted)
    assert accepted.community.terms_acceptances.filter(user=alice, version=2).exists()
    # Saving the same terms again (spaces aside) is no change.
    organiser_client.post(edit, {**data, "terms": data["terms"] + " "})
    accepted.refresh_from_db()
    assert accepted.community.terms_version == 2


def response_forms(response) -> list[dict]:
    """The management form and every inline form of an admin change page, as the browser posts them."""
    posted = []
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        management = {f"{formset.prefix}-{name}": value for name, value in formset.management_form.initial.items()}
        posted.append(management)
        for form in formset.forms:
            values = {}
            for name, field in form.fields.items():
                value = form.initial.get(name, field.initial)
                if value is None:
                    continue
                if hasattr(value, "strftime"):  # the admin's date and time boxes
                    values[form.add_prefix(name) + "_0"] = value.strftime("%Y-%m-%d")
                    values[form.add_prefix(name) + "_1"] = value.strftime("%H:%M:%S")
                    continue
                values[form.add_prefix(name)] = getattr(value, "pk", value)
            posted.append(values)
    return posted


def test_terms_changed_in_the_admin_are_asked_again(accepted, client, make_user):
    staff = make_user("staff", is_staff=True, is_superuser=True)
    admin = client.__class__()
    admin.force_login(staff)
    holder = accepted.community.task
    own = admin.get(reverse("admin:leaderboard_task_change", args=[accepted.pk])).context["adminform"].form
    assert ("terms" in own.fields) == (holder == accepted)  # a subtask's terms are its parent's, changed there
    url = reverse("admin:leaderboard_task_change", args=[holder.pk])
    form = admin.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields}
    data.update(
        {
            "terms": TERMS + "\nChanged by the admin.",
            "labels": json.dumps(holder.labels),
            "organisers": [accepted.community.organisers.first().pk],
            "phases-TOTAL_FORMS": "0",
            "phases-INITIAL_FORMS": "0",
        }
    )
    for phase_form in response_forms(admin.get(url)):
        data.update(phase_form)
    data = {key: value for key, value in data.items() if value is not None}
    response = admin.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    accepted.refresh_from_db()
    assert accepted.community.terms_version == 2
    assert_asked_again(client, accepted)
