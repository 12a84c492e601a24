"""Log-in throttling (django-axes, ``leaderboard.throttling``) against the attacks it must stop.

Each test is an attack through the real log-in pages: spellings of one user name that Django
reads as the same account, the admin's log-in, 60 attempts at once, and a stranger trying to
lock a user out from another address. The limit is the configured one (LOGIN_RATE_LIMIT, 10
failures per user name and address), the cool-off LOGIN_RATE_WINDOW (300 s).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.db import connections
from django.db.models import Sum
from django.test import Client
from django.urls import reverse
from django.utils import timezone

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-test-password"  # the password of every conftest user
LIMIT = 10
HOME = "198.51.100.7"
"""The address the account's owner logs in from."""
STRANGER = "203.0.113.9"
SPELLINGS = ("ｖictim", "𝐯ictim", "victim", " victim ")
"""Fullwidth v, mathematical bold v, plain, padded: Django's log-in form reads each as ``victim``."""
ATTACKERS = 60
PASSWORD_CHECK_S = 0.05
"""How long each password check is made to take in the parallel test. The test hasher (MD5) is
instant; production's PBKDF2 takes longer than this, which is what leaves room for a race."""


def attempt(client: Client, username: str, password: str, *, address: str = HOME, url: str | None = None):
    data = {"username": username, "password": password}
    return client.post(url or reverse("login"), data, REMOTE_ADDR=address)


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def fail_until_locked(client: Client, username: str, *, address: str = HOME, url: str | None = None) -> None:
    """LIMIT wrong passwords: the first LIMIT - 1 are answered as usual, the last locks out."""
    for _ in range(LIMIT - 1):
        response = attempt(client, username, "wrong", address=address, url=url)
        assert response.status_code == 200
        assert response.context["form"].non_field_errors()
    assert attempt(client, username, "wrong", address=address, url=url).status_code == 429


def counted_failures(username: str, address: str = HOME) -> int:
    rows = AccessAttempt.objects.filter(username=username, ip_address=address)
    return rows.aggregate(total=Sum("failures_since_start"))["total"] or 0


def move_failures_back(seconds: int) -> None:
    AccessAttempt.objects.update(attempt_time=timezone.now() - dt.timedelta(seconds=seconds))


@pytest.fixture
def victim(make_user):
    return make_user("victim")


@pytest.fixture
def password_checks(monkeypatch) -> list[str]:
    """The user name of every password check (Django's ModelBackend.authenticate), in order."""
    checks: list[str] = []
    lock = threading.Lock()
    original = ModelBackend.authenticate

    def counted(self, request, username=None, password=None, **kwargs):
        with lock:
            checks.append(username)
        return original(self, request, username=username, password=password, **kwargs)

    monkeypatch.setattr(ModelBackend, "authenticate", counted)
    return checks


def test_the_limit_and_cool_off_come_from_the_login_rate_settings():
    assert settings.LOGIN_RATE_LIMIT == LIMIT
    assert settings.AXES_FAILURE_LIMIT == LIMIT
    assert settings.AXES_COOLOFF_TIME == dt.timedelta(seconds=settings.LOGIN_RATE_WINDOW) == dt.timedelta(minutes=5)


# --- one user name, however it is spelled -----------------------------------------------------


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_each_spelling_logs_in_as_the_victim(victim, spelling):
    """Why the spellings must share a counter: each one is the victim's account."""
    client = Client()
    assert attempt(client, spelling, PASSWORD).status_code == 302
    assert client.session["_auth_user_id"] == str(victim.pk)


@pytest.mark.parametrize(
    ("submitted", "counted_as"),
    [
        ("ｖictim", "victim"),
        ("𝐯ictim", "victim"),
        ("  victim\t", "victim"),
        ("ﬀ", "ff"),
        ("Ⅸ", "IX"),
        ("Victim", "Victim"),
    ],
)
def test_failures_are_counted_under_the_name_the_password_was_checked_for(submitted, counted_as, password_checks):
    """NFKC and stripped, as Django's form cleans it; case is kept (user names are case-sensitive)."""
    attempt(Client(), submitted, "wrong")
    assert password_checks == [counted_as]
    assert list(AccessAttempt.objects.values_list("username", flat=True)) == [counted_as]


def test_spellings_of_one_user_name_share_one_counter(victim):
    client = Client()
    for number in range(LIMIT - 1):
        assert attempt(client, SPELLINGS[number % len(SPELLINGS)], "wrong").status_code == 200
    assert attempt(client, "𝐯ictim", "wrong").status_code == 429  # the LIMIT-th failure, whatever the spelling
    assert counted_failures("victim") == LIMIT
    for spelling in SPELLINGS:
        response = attempt(client, spelling, PASSWORD)
        assert response.status_code == 429
        assert not logged_in(client)


# --- the admin's log-in ------------------------------------------------------------------------


def test_admin_log_in_failures_are_counted_and_locked(make_user, password_checks):
    make_user("keeper", is_staff=True)
    client = Client()
    fail_until_locked(client, "keeper", url=reverse("admin:login"))
    assert counted_failures("keeper") == LIMIT
    for url in (reverse("admin:login"), reverse("login")):  # one count for both log-in pages
        response = attempt(client, "keeper", PASSWORD, url=url)
        assert response.status_code == 429
        assert "Too many failed log-ins" in response.content.decode()
    assert not logged_in(client)
    assert client.get(reverse("admin:index")).status_code == 302
    assert len(password_checks) == LIMIT


def test_failures_on_both_log_in_pages_add_up(make_user):
    make_user("keeper", is_staff=True)
    client = Client()
    for number in range(LIMIT - 1):
        url = reverse("admin:login") if number % 2 else reverse("login")
        assert attempt(client, "keeper", "wrong", url=url).status_code == 200
    assert attempt(client, "ｋeeper", "wrong", url=reverse("admin:login")).status_code == 429


def test_a_staff_member_below_the_limit_reaches_the_admin(make_user):
    make_user("keeper", is_staff=True)
    client = Client()
    for _ in range(LIMIT - 1):
        attempt(client, "keeper", "wrong", url=reverse("admin:login"))
    response = attempt(client, "keeper", PASSWORD, url=reverse("admin:login"))
    assert response.status_code == 302
    assert client.get(reverse("admin:index")).status_code == 200
    assert counted_failures("keeper") == 0  # the success reset the count


# --- many attempts at once ---------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_sixty_parallel_attempts_get_at_most_ten_password_checks(victim, password_checks, monkeypatch):
    """60 clients send a wrong password at the same moment, in the victim's three spellings.

    Each request runs in its own thread with its own database connection, as in a threaded or
    multi-process server; each password check is slowed to production speed. Exactly LIMIT
    attempts may have their password checked; every other one is refused with 429, and so is
    the right password afterwards.
    """
    checked = ModelBackend.authenticate

    def slow(self, request, username=None, password=None, **kwargs):
        time.sleep(PASSWORD_CHECK_S)
        return checked(self, request, username=username, password=password, **kwargs)

    monkeypatch.setattr(ModelBackend, "authenticate", slow)
    start = threading.Barrier(ATTACKERS)

    def attack(number: int) -> int:
        try:
            client = Client()
            start.wait(timeout=60)
            return attempt(client, SPELLINGS[number % 3], "wrong").status_code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=ATTACKERS) as pool:
        statuses = list(pool.map(attack, range(ATTACKERS)))

    assert len(password_checks) == LIMIT
    assert set(statuses) <= {200, 429}
    assert statuses.count(200) <= LIMIT - 1  # answered as a wrong password; the rest refused
    assert statuses.count(429) >= ATTACKERS - (LIMIT - 1)
    assert counted_failures("victim") == LIMIT
    client = Client()
    assert attempt(client, "victim", PASSWORD).status_code == 429
    assert not logged_in(client)
    assert len(password_checks) == LIMIT


# --- whose address -----------------------------------------------------------------------------


def test_a_stranger_elsewhere_locks_out_only_himself(victim, password_checks):
    stranger = Client()
    fail_until_locked(stranger, "victim", address=STRANGER)
    assert attempt(stranger, "victim", PASSWORD, address=STRANGER).status_code == 429
    owner = Client()
    response = attempt(owner, "victim", "wrong", address=HOME)
    assert response.status_code == 200  # checked as usual, not locked
    assert attempt(owner, "victim", PASSWORD, address=HOME).status_code == 302
    assert owner.session["_auth_user_id"] == str(victim.pk)
    assert counted_failures("victim", STRANGER) == LIMIT  # the owner's success does not free the stranger
    assert attempt(Client(), "victim", PASSWORD, address=STRANGER).status_code == 429


# --- success, the page, and the end of a lock-out ------------------------------------------------


def test_a_successful_log_in_resets_the_count(victim):
    for _ in range(LIMIT - 1):
        assert attempt(Client(), "victim", "wrong").status_code == 200
    assert attempt(Client(), "victim", PASSWORD).status_code == 302
    assert counted_failures("victim") == 0
    fail_until_locked(Client(), "victim")  # a full LIMIT of tries again


def test_the_lock_out_page_says_when_to_try_again(victim):
    client = Client()
    fail_until_locked(client, "victim")
    response = attempt(client, "victim", PASSWORD)
    assert response.status_code == 429
    assert 295 <= int(response["Retry-After"]) <= 300
    page = response.content.decode()
    assert "Too many failed log-ins" in page
    assert "Try again in 5 minutes" in page
    assert "Log-in from other addresses is not affected." in page
    assert 'class="site-header"' in page  # our base.html
    assert "registration/locked_out.html" in [template.name for template in response.templates]


def test_refused_attempts_do_not_extend_the_lock_out_and_it_ends(victim, password_checks):
    client = Client()
    fail_until_locked(client, "victim")
    move_failures_back(200)
    response = attempt(client, "victim", "wrong")
    assert response.status_code == 429
    assert 95 <= int(response["Retry-After"]) <= 100
    assert "Try again in 2 minutes" in response.content.decode()
    assert counted_failures("victim") == LIMIT
    move_failures_back(301)
    assert attempt(client, "victim", PASSWORD).status_code == 302
    assert len(password_checks) == LIMIT + 1


# --- behind a reverse proxy ------------------------------------------------------------------------

PROXY = "10.0.0.2"


def via_proxy(client: Client, username: str, password: str, *, client_address: str, claimed: str = ""):
    """A log-in through the proxy: it appends the address it saw to whatever the client wrote."""
    forwarded = f"{claimed}, {client_address}" if claimed else client_address
    data = {"username": username, "password": password}
    return client.post(reverse("login"), data, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)


def test_behind_the_proxy_a_stranger_locks_out_only_himself(client, victim, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    for _ in range(LIMIT):
        via_proxy(Client(), "victim", "wrong", client_address=STRANGER)
    assert via_proxy(Client(), "victim", "wrong", client_address=STRANGER).status_code == 429
    owner = Client()
    via_proxy(owner, "victim", PASSWORD, client_address=HOME)
    assert logged_in(owner)
    assert counted_failures("victim", STRANGER) == LIMIT and counted_failures("victim", PROXY) == 0


def test_a_forged_forwarded_header_changes_nothing(client, victim, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    # Through the proxy, a claimed address lies to the left of the one the proxy appends.
    for number in range(LIMIT):
        via_proxy(Client(), "victim", "wrong", client_address=STRANGER, claimed=f"192.0.2.{number}")
    assert counted_failures("victim", STRANGER) == LIMIT
    # Straight to the server, the header is not read at all.
    for _ in range(LIMIT):
        Client().post(
            reverse("login"),
            {"username": "victim", "password": "wrong"},
            REMOTE_ADDR="203.0.113.77",
            HTTP_X_FORWARDED_FOR=HOME,
        )
    assert counted_failures("victim", "203.0.113.77") == LIMIT and counted_failures("victim", HOME) == 0
    owner = Client()
    via_proxy(owner, "victim", PASSWORD, client_address=HOME)
    assert logged_in(owner)


def test_without_trusted_proxies_the_connection_is_the_address(client, victim, settings):
    settings.TRUSTED_PROXIES = []
    via_proxy(Client(), "victim", "wrong", client_address=STRANGER)
    assert counted_failures("victim", PROXY) == 1 and counted_failures("victim", STRANGER) == 0
