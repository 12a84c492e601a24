"""A team is told when its submission is scored or fails: a note on the site for every member and
an e-mail to every member with an address, never with a number in it, and never at the cost of
the scoring when the mail server fails."""

from __future__ import annotations

import datetime as dt
import logging
import re
import smtplib

import pytest
from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.urls import reverse
from django.utils import timezone

from leaderboard.models import Notification, Phase, Submission
from leaderboard.selectors.notifications import notifications_of
from leaderboard.services import notifications as notification_service
from leaderboard.services.notifications import FAILED, RESCORED, SCORED, email_send_later, notifications_mark_read
from leaderboard.services.tasks import gold_replace
from leaderboard.services.teams import team_create, team_join
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db

SITE = "https://leaderboard.example.org"


class BrokenSMTPBackend(BaseEmailBackend):
    """A mail server that refuses every message."""

    def send_messages(self, email_messages):
        raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")


@pytest.fixture(autouse=True)
def site_url(settings):
    settings.SITE_URL = SITE


@pytest.fixture
def team(task, make_user):
    """Alpha: alice (with an e-mail address) and bob (without one)."""
    alice = make_user("alice", email="alice@example.org")
    bob = make_user("bob")
    created = team_create(task=task, user=alice, name="Alpha")
    team_join(task=task, user=bob, invite_code=created.invite_code)
    return created


def members(team):
    return {member.username: member for member in team.members.all()}


def numbers_in(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:\.\d+)?", text))


def test_a_scored_submission_is_noted_for_every_member_and_e_mailed_to_those_with_an_address(task, team, submit):
    alice, bob = members(team)["alice"], members(team)["bob"]
    submission = submit(task, alice, MOSTLY_A)
    assert submission.status == Submission.Status.SCORED

    expected = SCORED.format(
        number=submission.pk, file="run.csv", team="Alpha", task=task.title, phase=task.current_phase().name
    )
    for member in (alice, bob):
        [note] = notifications_of(user=member)
        assert (note.message, note.link, note.submission_id) == (expected, submission.get_absolute_url(), submission.pk)
        assert note.read_at is None
    [email] = mail.outbox
    assert email.to == ["alice@example.org"]
    assert email.subject == f"Scored: submission #{submission.pk} to “{task.title}”"
    assert expected in email.body
    assert SITE + submission.get_absolute_url() in email.body


@pytest.mark.parametrize("feedback", list(Phase.Feedback.values))
def test_no_note_or_e_mail_holds_a_score_whatever_the_feedback_policy(make_task, make_user, submit, feedback):
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE, feedback=feedback)
    alice = make_user("alice", email="alice@example.org")
    team_create(task=task, user=alice, name="Alpha")
    submission = submit(task, alice, MOSTLY_A)
    assert submission.metrics  # scored, with numbers a note could have leaked
    [note] = notifications_of(user=alice)
    [email] = mail.outbox
    assert numbers_in(note.message) == {str(submission.pk)}
    assert numbers_in(email.subject + email.body) == {str(submission.pk)}


def test_a_failed_submission_is_noted_and_e_mailed_with_the_reason(
    task, team, submit, django_capture_on_commit_callbacks
):
    alice = members(team)["alice"]
    submission = submit(task, alice, PERFECT)
    mail.outbox.clear()
    fewer = b"\n".join(GOLD.splitlines()[:-2]) + b"\n"  # the organisers drop ids 7 and 8
    with django_capture_on_commit_callbacks(execute=True):
        gold_replace(phase=task.current_phase(), gold_name="fewer.csv", gold_content=fewer)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.FAILED

    expected = FAILED.format(
        number=submission.pk,
        file="run.csv",
        team="Alpha",
        task=task.title,
        phase=task.current_phase().name,
        reason=submission.failure,
    )
    newest = notifications_of(user=alice).first()
    assert newest.message == expected
    assert "counts against no limit" in newest.message
    [email] = mail.outbox
    assert email.subject == f"Failed: submission #{submission.pk} to “{task.title}”"
    assert submission.failure in email.body


def test_a_submission_scored_again_against_a_new_gold_file_says_so(
    task, team, submit, django_capture_on_commit_callbacks
):
    alice = members(team)["alice"]
    submission = submit(task, alice, PERFECT)
    with django_capture_on_commit_callbacks(execute=True):
        gold_replace(phase=task.current_phase(), gold_name="new.csv", gold_content=GOLD.replace(b"8,a", b"8,b"))
    newest = notifications_of(user=alice).first()
    assert newest.message == RESCORED.format(
        number=submission.pk, file="run.csv", team="Alpha", task=task.title, phase=task.current_phase().name
    )
    assert Notification.objects.filter(user=alice).count() == 2


def test_a_failing_mail_server_does_not_fail_the_scoring(task, team, submit, settings, caplog):
    settings.EMAIL_BACKEND = f"{__name__}.BrokenSMTPBackend"
    alice = members(team)["alice"]
    with caplog.at_level(logging.ERROR, logger="leaderboard.services.notifications"):
        submission = submit(task, alice, MOSTLY_A)
    assert submission.status == Submission.Status.SCORED and submission.metrics
    assert Notification.objects.filter(submission=submission).count() == 2  # the notes are there
    assert mail.outbox == []
    [record] = caplog.records
    assert "could not send 1 e-mail" in record.getMessage()
    assert "SMTPServerDisconnected" in record.exc_text


def test_a_request_s_e_mail_is_sent_even_when_the_queue_cannot_be_reached(monkeypatch, caplog):
    class Unreachable:
        def enqueue(self, *args, **kwargs):
            raise ConnectionError("Redis is down")

    monkeypatch.setattr(notification_service, "email_send", Unreachable())
    with caplog.at_level(logging.ERROR, logger="leaderboard.services.notifications"):
        email_send_later(subject="Hello", body="A body", recipient="someone@example.org")
    [email] = mail.outbox
    assert (email.subject, email.to) == ("Hello", ["someone@example.org"])
    assert "could not enqueue" in caplog.records[0].getMessage()


# --- the page and the header -------------------------------------------------------------------


def test_the_page_lists_notes_newest_first_and_marks_them_read(client, task, team, submit):
    alice, bob = members(team)["alice"], members(team)["bob"]
    first = submit(task, alice, MOSTLY_A)
    second = submit(task, alice, PERFECT)
    Notification.objects.create(user=bob, message="only for bob")
    client.force_login(alice)

    header = client.get(reverse("leaderboard:task_list")).content.decode()
    assert 'aria-label="Notifications: 2 unread"' in header

    response = client.get(reverse("notifications"))
    content = response.content.decode()
    assert [note.submission_id for note in response.context["notes"]] == [second.pk, first.pk]
    assert content.index(f"submission #{second.pk} ") < content.index(f"submission #{first.pk} ")
    assert content.count(">new</span>") == 2  # new on this showing
    assert "only for bob" not in content
    assert f'href="{first.get_absolute_url()}"' in content
    assert not Notification.objects.filter(user=alice).unread().exists()
    assert Notification.objects.filter(user=bob).unread().count() == 3  # bob reads his own

    again = client.get(reverse("notifications")).content.decode()
    assert ">new</span>" not in again
    assert "unread" not in client.get(reverse("leaderboard:task_list")).content.decode()


def test_marking_read_keeps_the_time_a_note_was_first_read(make_user):
    alice = make_user("alice")
    read_at = timezone.now() - dt.timedelta(days=1)
    old = Notification.objects.create(user=alice, message="old", read_at=read_at)
    new = Notification.objects.create(user=alice, message="new")
    assert notifications_mark_read(user=alice, ids=[old.pk, new.pk]) == 1
    old.refresh_from_db()
    assert old.read_at == read_at


def test_the_page_needs_a_log_in(client):
    response = client.get(reverse("notifications"))
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={reverse('notifications')}"


def test_the_page_says_when_there_is_nothing_yet(client, make_user):
    client.force_login(make_user("carol"))
    assert "Nothing yet" in client.get(reverse("notifications")).content.decode()
