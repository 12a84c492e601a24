"""Accounts: sign-up with an e-mail address, password reset and change (Django's own views),
address confirmation by signed link (none / optional / mandatory), and the header's log-in and
sign-up links that bring a newcomer back to the page they were on."""

from __future__ import annotations

import datetime as dt
import html
import re

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.core import mail
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from freezegun import freeze_time

from leaderboard import errors
from leaderboard.models import ConfirmedEmail, Submission
from leaderboard.selectors.notifications import email_is_confirmed
from leaderboard.services.notifications import account_email_change, email_confirm, email_confirmation_token
from leaderboard.services.teams import team_create
from tests.conftest import MOSTLY_A

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-test-password"  # the password of every conftest user
NEW_PASSWORD = "correct-horse-battery-9"
LINK = re.compile(r"https?://testserver(/\S+)")


def signup_data(**changes) -> dict:
    fields = {"username": "newcomer", "email": "newcomer@example.org"}
    return {**fields, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD, **changes}


def link_in(message) -> str:
    """The path of the one link of an e-mail."""
    [path] = LINK.findall(message.body)
    return path


@pytest.fixture
def alice(make_user):
    return make_user("alice", email="alice@example.org")


# --- sign-up -----------------------------------------------------------------------------------


def test_sign_up_stores_the_address_and_sends_a_confirmation_link(client):
    response = client.post(reverse("signup"), signup_data(email="Newcomer@EXAMPLE.org"), follow=True)
    user = get_user_model().objects.get(username="newcomer")
    assert user.email == "Newcomer@example.org"  # the domain in lower case, as Django normalises it
    assert response.context["user"] == user
    [message] = mail.outbox
    assert message.to == ["Newcomer@example.org"]
    assert reverse("email_confirm", args=["x"]).rsplit("x", 1)[0] in link_in(message)
    assert "We sent a link to Newcomer@example.org" in response.content.decode()
    assert not email_is_confirmed(user=user)


@pytest.mark.parametrize(
    ("email", "problem"),
    [("", errors.EMAIL_REQUIRED), ("newcomer", errors.EMAIL_INVALID), ("newcomer@", errors.EMAIL_INVALID)],
)
def test_sign_up_refuses_a_missing_or_invalid_address_with_a_clear_message(client, email, problem):
    response = client.post(reverse("signup"), signup_data(email=email))
    assert response.status_code == 200
    assert response.context["form"].errors["email"] == [problem]
    assert problem in html.unescape(response.content.decode())
    assert not get_user_model().objects.filter(username="newcomer").exists()
    assert mail.outbox == []


@pytest.mark.parametrize("email", ["alice@example.org", "ALICE@Example.ORG", " alice@example.org "])
def test_sign_up_refuses_an_address_another_account_has_whatever_its_case(client, alice, email):
    response = client.post(reverse("signup"), signup_data(email=email))
    assert response.context["form"].errors["email"] == [errors.EMAIL_TAKEN]
    assert not get_user_model().objects.filter(username="newcomer").exists()


def test_with_verification_off_sign_up_sends_nothing(client, settings):
    settings.EMAIL_VERIFICATION = "none"
    client.post(reverse("signup"), signup_data())
    assert get_user_model().objects.filter(username="newcomer").exists()
    assert mail.outbox == []


def test_the_sign_up_page_asks_for_the_address(client):
    content = client.get(reverse("signup")).content.decode()
    assert 'type="email" name="email"' in content and "required" in content


# --- password reset and change -------------------------------------------------------------------


def test_password_reset_end_to_end(client, alice):
    response = client.post(reverse("password_reset"), {"email": "ALICE@example.org"})
    assert response["Location"] == reverse("password_reset_done")
    [message] = mail.outbox
    assert message.to == ["alice@example.org"]
    assert message.subject == "Set a new password for the shared-task leaderboard"

    link = client.get(link_in(message))  # Django moves the token into the session
    assert link.status_code == 302
    form_page = client.get(link["Location"])
    assert form_page.context["validlink"] and "alice" in form_page.content.decode()
    done = client.post(link["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done["Location"] == reverse("password_reset_complete")

    assert client.post(reverse("login"), {"username": "alice", "password": PASSWORD}).status_code == 200
    logged_in = client.post(reverse("login"), {"username": "alice", "password": NEW_PASSWORD})
    assert logged_in.status_code == 302 and logged_in.wsgi_request.user == alice
    # the link works once
    assert client.get(link_in(message), follow=True).context["validlink"] is False


def test_password_reset_says_the_same_for_an_unknown_address(client, alice):
    response = client.post(reverse("password_reset"), {"email": "nobody@example.org"})
    assert response["Location"] == reverse("password_reset_done")
    assert mail.outbox == []


def test_a_password_can_be_changed_when_logged_in(client, alice):
    client.force_login(alice)
    response = client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response["Location"] == reverse("password_change_done")
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)


def test_log_in_still_goes_through_django_s_form_and_axes_counts_failures(client, alice):
    response = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert isinstance(response.context["form"], AuthenticationForm)
    assert AccessAttempt.objects.get(username="alice").failures_since_start == 1


# --- confirming the address --------------------------------------------------------------------


def test_a_valid_link_shows_what_it_confirms_and_confirms_on_post(client, alice):
    url = reverse("email_confirm", args=[email_confirmation_token(user=alice)])
    page = client.get(url)
    assert page.status_code == 200
    assert "alice@example.org" in page.content.decode()
    assert not email_is_confirmed(user=alice)  # opening the link confirms nothing
    response = client.post(url)
    assert response["Location"] == reverse("login")
    assert email_is_confirmed(user=alice)
    assert client.post(url).status_code == 302  # following it again is harmless
    assert ConfirmedEmail.objects.filter(user=alice).count() == 1
    assert "confirmed already" in client.get(url).content.decode()


def test_the_link_in_the_sign_up_e_mail_confirms_the_address(client):
    client.post(reverse("signup"), signup_data())
    [message] = mail.outbox
    client.post(link_in(message))
    assert email_is_confirmed(user=get_user_model().objects.get(username="newcomer"))


def test_a_tampered_link_is_refused(client, alice):
    token = email_confirmation_token(user=alice)
    for bad in (token[:-1] + ("A" if token[-1] != "A" else "B"), token[: len(token) // 2], "nonsense"):
        for method in (client.get, client.post):
            response = method(reverse("email_confirm", args=[bad]))
            assert response.status_code == 400
            assert errors.EMAIL_LINK_INVALID in html.unescape(response.content.decode())
    assert not email_is_confirmed(user=alice)


def test_an_expired_link_is_refused(client, alice, settings):
    with freeze_time(dt.datetime.now(dt.UTC) - settings.EMAIL_VERIFICATION_MAX_AGE - dt.timedelta(minutes=1)):
        token = email_confirmation_token(user=alice)
    response = client.post(reverse("email_confirm", args=[token]))
    assert response.status_code == 400
    expected = errors.EMAIL_LINK_EXPIRED.format(days=settings.EMAIL_VERIFICATION_MAX_AGE.days)
    assert expected in html.unescape(response.content.decode())
    assert not email_is_confirmed(user=alice)


def test_a_link_for_an_old_address_is_refused(client, alice):
    token = email_confirmation_token(user=alice)
    account_email_change(user=alice, email="alice@elsewhere.org", base_url="http://testserver/")
    with pytest.raises(ValidationError) as caught:
        email_confirm(token=token)
    assert errors.problem_codes(caught.value) == {errors.EMAIL_LINK_STALE.code}


def test_changing_the_address_needs_a_new_confirmation(client, alice):
    email_confirm(token=email_confirmation_token(user=alice))
    client.force_login(alice)
    response = client.post(reverse("account"), {"email": "alice@elsewhere.org"}, follow=True)
    alice.refresh_from_db()
    assert alice.email == "alice@elsewhere.org"
    assert not email_is_confirmed(user=alice)
    assert "not confirmed yet" in response.content.decode()
    [message] = mail.outbox
    assert message.to == ["alice@elsewhere.org"]
    client.post(link_in(message))
    assert email_is_confirmed(user=alice)


def test_the_account_page_refuses_an_address_another_account_has(client, alice, make_user):
    make_user("bob", email="bob@example.org")
    client.force_login(alice)
    response = client.post(reverse("account"), {"email": "BOB@example.org"})
    assert response.context["form"].errors["email"] == [errors.EMAIL_TAKEN]


def test_a_new_link_can_be_asked_for(client, alice):
    client.force_login(alice)
    client.post(reverse("email_confirmation_resend"))
    [message] = mail.outbox
    client.post(link_in(message))
    assert email_is_confirmed(user=alice)


# --- mandatory confirmation blocks uploads -------------------------------------------------------


@pytest.fixture
def in_a_team(task, alice):
    team_create(task=task, user=alice, name="Alpha")
    return alice


def test_with_mandatory_confirmation_an_unconfirmed_address_cannot_upload(client, task, in_a_team, settings, submit):
    settings.EMAIL_VERIFICATION = "mandatory"
    with pytest.raises(ValidationError) as caught:
        submit(task, in_a_team, MOSTLY_A)
    assert errors.problem_codes(caught.value) == {errors.EMAIL_NOT_VERIFIED.code}
    assert caught.value.messages == [errors.EMAIL_NOT_VERIFIED.format(email="alice@example.org")]
    assert not Submission.objects.exists()

    client.force_login(in_a_team)
    page = client.post(
        reverse("leaderboard:submission_create", args=[task.slug]),
        {"file": SimpleUploadedFile("run.csv", MOSTLY_A, content_type="text/csv")},
        follow=True,
    )
    assert errors.EMAIL_NOT_VERIFIED.format(email="alice@example.org") in html.unescape(page.content.decode())

    email_confirm(token=email_confirmation_token(user=in_a_team))
    assert submit(task, in_a_team, MOSTLY_A).status == Submission.Status.SCORED


def test_with_mandatory_confirmation_an_account_without_an_address_is_told_to_add_one(
    task, make_user, settings, submit
):
    settings.EMAIL_VERIFICATION = "mandatory"
    carol = make_user("carol")
    team_create(task=task, user=carol, name="Gamma")
    with pytest.raises(ValidationError) as caught:
        submit(task, carol, MOSTLY_A)
    assert caught.value.messages == [errors.EMAIL_MISSING]


@pytest.mark.parametrize("mode", ["none", "optional"])
def test_otherwise_an_unconfirmed_address_can_upload(task, in_a_team, settings, submit, mode):
    settings.EMAIL_VERIFICATION = mode
    assert submit(task, in_a_team, MOSTLY_A).status == Submission.Status.SCORED


# --- next= ---------------------------------------------------------------------------------------


def header_links(content: str) -> dict[str, str]:
    nav = re.search(r'<nav class="account-nav".*?</nav>', content, flags=re.S).group(0)
    pairs = re.findall(r'href="([^"]*)"[^>]*>([^<]*)<', nav)
    return {html.unescape(text).strip(): html.unescape(href) for href, text in pairs}


def test_the_header_s_log_in_and_sign_up_links_keep_the_current_page(client, task):
    links = header_links(client.get(task.get_absolute_url(), {"tab": "a b"}).content.decode())
    assert links["Log in"] == f"{reverse('login')}?next=/tasks/{task.slug}/%3Ftab%3Da%2Bb"
    assert links["Sign up"] == f"{reverse('signup')}?next=/tasks/{task.slug}/%3Ftab%3Da%2Bb"


@pytest.mark.parametrize("view", ["login", "signup", "password_reset"])
def test_on_the_way_in_the_header_passes_on_the_next_it_was_given(client, task, view):
    links = header_links(client.get(reverse(view), {"next": task.get_absolute_url()}).content.decode())
    assert links["Log in"] == f"{reverse('login')}?next={task.get_absolute_url()}"
    assert links["Sign up"] == f"{reverse('signup')}?next={task.get_absolute_url()}"
    off_site = header_links(client.get(reverse(view), {"next": "https://evil.example/"}).content.decode())
    assert off_site == {"Log in": reverse("login"), "Sign up": reverse("signup")}


def test_a_newcomer_follows_the_header_s_sign_up_link_and_lands_back_on_the_task(client, task):
    sign_up = header_links(client.get(task.get_absolute_url()).content.decode())["Sign up"]
    form = client.get(sign_up)
    assert f'name="next" value="{task.get_absolute_url()}"' in form.content.decode()
    response = client.post(sign_up, signup_data(next=task.get_absolute_url()))
    assert response["Location"] == task.get_absolute_url()


def test_a_member_follows_the_header_s_log_in_link_and_lands_back_on_the_task(client, task, alice):
    log_in = header_links(client.get(task.get_absolute_url()).content.decode())["Log in"]
    form = client.get(log_in)
    assert f'name="next" value="{task.get_absolute_url()}"' in form.content.decode()
    response = client.post(log_in, {"username": "alice", "password": PASSWORD, "next": task.get_absolute_url()})
    assert response["Location"] == task.get_absolute_url()


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "javascript:alert(1)"])
@pytest.mark.parametrize("view", ["signup", "login"])
def test_an_external_next_is_ignored(client, alice, view, target):
    log_in = {"username": "alice", "password": PASSWORD, "next": target}
    data = signup_data(next=target) if view == "signup" else log_in
    response = client.post(reverse(view), data)
    assert response["Location"] == reverse("leaderboard:task_list")


def test_the_header_links_the_account_and_notifications_when_logged_in(client, alice):
    client.force_login(alice)
    links = header_links(client.get(reverse("leaderboard:task_list")).content.decode())
    assert links["alice"] == reverse("account")
    assert links["Notifications"] == reverse("notifications")


def test_the_same_address_in_other_capitals_stays_confirmed(alice):
    email_confirm(token=email_confirmation_token(user=alice))
    assert not account_email_change(user=alice, email="Alice@example.org", base_url="http://testserver/")
    assert email_is_confirmed(user=alice)
    assert mail.outbox == []


# --- the site cannot be used to flood an inbox ------------------------------------------------------


def test_password_reset_requests_cannot_flood_an_inbox(alice, settings):
    settings.MAIL_PER_RECIPIENT_PER_HOUR = 3
    for number in range(10):  # from ten addresses, so that the per-address limit is not what stops it
        response = Client(REMOTE_ADDR=f"203.0.113.{number}").post(
            reverse("password_reset"), {"email": "alice@example.org"}
        )
        assert response["Location"] == reverse("password_reset_done")  # the page says what it always says
    assert len(mail.outbox) == 3 and {m.to[0] for m in mail.outbox} == {"alice@example.org"}


def test_one_address_cannot_flood_many_inboxes(make_user, settings):
    settings.MAIL_PER_ADDRESS_PER_HOUR = 4
    for number in range(8):
        make_user(f"user{number}", email=f"user{number}@example.org")
        Client(REMOTE_ADDR="203.0.113.50").post(reverse("password_reset"), {"email": f"user{number}@example.org"})
    assert len(mail.outbox) == 4


def test_asking_for_confirmation_links_again_and_again_sends_a_few(client, alice, settings):
    settings.MAIL_PER_RECIPIENT_PER_HOUR = 2
    client.force_login(alice)
    said = []
    for _ in range(5):
        response = client.post(reverse("email_confirmation_resend"), follow=True)
        said.append(str(next(iter(response.context["messages"]))))
    assert len(mail.outbox) == 2
    assert said[:2] == [f"A new link is on its way to {alice.email}. Links sent earlier still work."] * 2
    assert all("as many e-mails as it may in an hour" in message for message in said[2:])
