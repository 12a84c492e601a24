"""API tokens: the page that creates and revokes them, what is stored, refusals and throttling."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard import errors
from leaderboard.api import problems
from leaderboard.models import ApiToken
from leaderboard.services.tokens import token_create

pytestmark = pytest.mark.django_db


def test_the_page_creates_a_token_shows_its_secret_once_and_revokes_it(make_user):
    user = make_user("alice")
    client = Client()
    client.force_login(user)
    assert reverse("api_tokens") in client.get(reverse("account")).content.decode()
    created = client.post(reverse("api_tokens"), {"name": "laptop"}).content.decode()
    secret = re.search(r'id="token-secret">(lbt_[\w-]+)<', created).group(1)
    token = ApiToken.objects.get(user=user)
    assert token.key_hash == ApiToken.hash_of(secret) and secret not in token.key_hash and token.prefix == secret[:10]
    listing = client.get(reverse("api_tokens")).content.decode()
    assert secret not in listing and "laptop" in listing and token.prefix in listing  # shown once only
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert api.get("/api/tasks").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None
    client.post(reverse("api_token_revoke", args=[token.pk]))
    token.refresh_from_db()
    assert token.revoked_at is not None
    refused = api.get("/api/tasks")
    assert refused.status_code == 401 and refused.json()["code"] == problems.TOKEN_INVALID.code


def test_nobody_revokes_another_persons_token(make_user):
    token, _ = token_create(user=make_user("alice"), name="x")
    mallory = Client()
    mallory.force_login(make_user("mallory"))
    assert mallory.post(reverse("api_token_revoke", args=[token.pk])).status_code == 404
    token.refresh_from_db()
    assert token.is_active


def test_the_page_needs_a_log_in():
    assert Client().get(reverse("api_tokens")).status_code == 302


def test_a_person_holds_a_bounded_number_of_tokens(make_user, settings):
    settings.API_TOKENS_PER_USER = 2
    user = make_user("alice")
    client = Client()
    client.force_login(user)
    for name in ("one", "two", "three"):
        response = client.post(reverse("api_tokens"), {"name": name})
    assert errors.TOKEN_LIMIT.format(limit=2) in response.content.decode()
    assert ApiToken.objects.filter(user=user).count() == 2


@pytest.mark.parametrize(
    ("header", "code"),
    [
        ("Bearer lbt_not-a-real-token", problems.TOKEN_INVALID.code),
        ("Bearer something-else", problems.TOKEN_INVALID.code),
        ("Token abc", problems.TOKEN_MALFORMED.code),
        ("Bearer ", problems.TOKEN_MALFORMED.code),
    ],
)
def test_a_bad_token_is_a_401_even_where_anonymous_reading_is_allowed(db, header, code):
    response = Client(HTTP_AUTHORIZATION=header).get("/api/tasks")
    assert response.status_code == 401 and response.json()["code"] == code
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_token_requests_are_throttled_per_token(make_user, settings):
    settings.API_TOKEN_RATE_LIMIT = 3
    secret = token_create(user=make_user("alice"), name="x")[1]
    other = token_create(user=make_user("bob"), name="x")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert [client.get("/api/tasks").status_code for _ in range(4)] == [200, 200, 200, 429]
    refused = client.get("/api/tasks")
    assert refused.json()["code"] == problems.TOKEN_THROTTLED.code
    assert 1 <= int(refused["Retry-After"]) <= settings.API_TOKEN_RATE_WINDOW
    assert Client(HTTP_AUTHORIZATION=f"Bearer {other}").get("/api/tasks").status_code == 200  # per token


def test_failed_token_requests_are_throttled_per_address(make_user, settings):
    settings.API_AUTH_FAILURE_LIMIT = 3
    secret = token_create(user=make_user("alice"), name="x")[1]
    guesser = Client(HTTP_AUTHORIZATION="Bearer lbt_guess", REMOTE_ADDR="10.1.1.1")
    assert [guesser.get("/api/tasks").status_code for _ in range(4)] == [401, 401, 401, 429]
    locked = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", REMOTE_ADDR="10.1.1.1").get("/api/tasks")
    assert locked.status_code == 429 and locked.json()["code"] == problems.AUTH_THROTTLED.code
    assert int(locked["Retry-After"]) >= 1
    elsewhere = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", REMOTE_ADDR="10.2.2.2").get("/api/tasks")
    assert elsewhere.status_code == 200


def test_behind_the_proxy_a_guesser_is_throttled_alone(make_user, settings):
    settings.API_AUTH_FAILURE_LIMIT = 3
    settings.TRUSTED_PROXIES = ["10.0.0.2"]
    secret = token_create(user=make_user("alice"), name="x")[1]

    def through_proxy(token: str, client_address: str, claimed: str = "") -> int:
        forwarded = f"{claimed}, {client_address}" if claimed else client_address
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded)
        return client.get("/api/tasks").status_code

    # The guesser writes a new address before the proxy's each time: it counts for him all the same.
    assert [through_proxy("lbt_guess", "203.0.113.9", f"192.0.2.{n}") for n in range(4)] == [401, 401, 401, 429]
    assert through_proxy(secret, "198.51.100.7") == 200  # everyone else behind the proxy goes on


def test_an_inactive_users_token_is_refused(make_user):
    user = make_user("alice")
    secret = token_create(user=user, name="x")[1]
    user.is_active = False
    user.save()
    assert Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get("/api/tasks").status_code == 401
