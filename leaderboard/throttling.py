"""Log-in throttling: django-axes, plus the three pieces it needs here (wired in settings).

- ``normalised_username``: axes counts failures per user name *as Django reads it*. The log-in
  forms (ours and the admin's) clean the name with ``UsernameField`` (strip, then NFKC), so
  ``ｖictim`` (fullwidth v), ``𝐯ictim`` (mathematical bold v) and `` victim `` are all the account
  ``victim``; counting the raw POSTed text would give each spelling a fresh set of tries.
- ``ThrottleHandler``: axes' database handler with the check and the count made one atomic step.
  Axes as shipped checks "is this user name and address locked?" in its authentication
  backend, lets the password be checked, and counts the failure afterwards, in the
  ``user_login_failed`` signal. That check-then-count is a race: N parallel attempts all pass
  the check before any failure is counted, so all N passwords are evaluated against a limit of
  10 (the counting itself, ``select_for_update`` + ``F() + 1``, is safe; the gap between check
  and count is not, and no axes setting closes it). Here the backend's check *takes a slot*:
  under a lock held for one user name and address (``pg_advisory_xact_lock`` on PostgreSQL —
  the row to lock may not exist yet, so ``select_for_update`` cannot serve; on SQLite the
  database's single write lock, taken by the transaction's first statement), it reads the
  failures within the cool-off and, if below the limit, counts this attempt *before* the
  password is checked. At most ``AXES_FAILURE_LIMIT`` attempts get a slot, however many run at
  once; the others are refused without a password check. A failed attempt is then not counted
  a second time; a successful log-in resets the count (``AXES_RESET_ON_SUCCESS``), so a correct
  password costs nothing. A correct password refused afterwards by the form (a non-staff user
  at the admin's log-in) keeps its slot counted, as a failure.
- ``lockout_response``: HTTP 429 with our page, saying when log-in from this address opens again
  (and a ``Retry-After`` header).

Only SQLite and PostgreSQL are supported (the project's databases); another database raises
``ImproperlyConfigured`` at the first log-in.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager

from axes.conf import settings
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import (
    get_client_str,
    get_client_username,
    get_cool_off,
    get_failure_limit,
    get_query_str,
)
from axes.models import AccessAttempt
from axes.signals import user_locked_out
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UsernameField
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, router, transaction
from django.db.models import F, Max, Value
from django.db.models.functions import Concat
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

log = logging.getLogger(__name__)

USERNAME_KEY = "username"
"""The name of the user-name field in both log-in forms' POST data and in the credentials they
pass to ``authenticate`` (Django's ``AuthenticationForm`` and the admin's subclass of it)."""

SEPARATOR = "\n---------\n"
"""Between the request data of successive failures of one attempt row, as axes writes it."""


def normalised_username(request: HttpRequest, credentials: dict | None = None) -> str | None:
    """The user name exactly as Django's log-in form cleans it (``AXES_USERNAME_CALLABLE``).

    From ``credentials`` when axes has them (what the form passed to ``authenticate``, already
    cleaned; cleaning again changes nothing), else from the POSTed form field, as axes would.
    """
    source = credentials if credentials else getattr(request, "data", request.POST)
    raw = source.get(USERNAME_KEY)
    if raw is None:
        return None
    user_model = get_user_model()
    max_length = user_model._meta.get_field(user_model.USERNAME_FIELD).max_length
    # AuthenticationForm.__init__ gives its field the model field's max_length (or 254); the
    # length matters because UsernameField leaves over-long names unnormalised.
    return UsernameField(max_length=max_length or 254).to_python(raw)


def _lock_id(username: str | None, ip_address: str | None) -> int:
    """A signed 64-bit key for PostgreSQL's advisory lock, one per user name and address."""
    digest = hashlib.sha256(f"axes\0{username}\0{ip_address}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextmanager
def serialised(username: str | None, ip_address: str | None) -> Iterator[None]:
    """A transaction during which no other check-and-count for this user name and address runs."""
    alias = router.db_for_write(AccessAttempt)
    connection = connections[alias]
    with transaction.atomic(using=alias):
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_id(username, ip_address)])
            elif connection.vendor == "sqlite":
                # SQLite has one writer at a time. A write as the transaction's first statement
                # takes that lock now (what BEGIN IMMEDIATE does), whatever the connection's
                # transaction mode: concurrent check-and-counts queue for it (busy timeout). With
                # a deferred BEGIN and a read first, two of them would both read the count, and
                # one would fail to upgrade its read lock ("database is locked"; tested).
                table = connection.ops.quote_name(AccessAttempt._meta.db_table)
                cursor.execute(f"UPDATE {table} SET id = id WHERE 0 = 1")
            else:
                raise ImproperlyConfigured(
                    f"leaderboard.throttling supports SQLite and PostgreSQL, not {connection.vendor}."
                )
        yield


class ThrottleHandler(AxesDatabaseHandler):
    """Axes' database handler whose check counts the attempt, under a lock (see the module)."""

    def is_allowed(self, request, credentials: dict | None = None) -> bool:
        """Called by ``AxesStandaloneBackend`` before any other backend checks the password.

        True means this attempt has taken one of the limit's slots (it is counted as a failure
        now, and reset if it succeeds); False means the user name is locked at this address.
        """
        if settings.AXES_ONLY_ADMIN_SITE and not self.is_admin_request(request):
            return True
        if self.is_blacklisted(request, credentials):
            return False
        if self.is_whitelisted(request, credentials):
            return True
        username = get_client_username(request, credentials)
        with serialised(username, request.axes_ip_address):
            self.clean_expired_user_attempts(request, credentials)
            if self.is_locked(request, credentials):
                return False
            self._count_failure(request, username)
        request.axes_counted_before_check = True
        return True

    def _count_failure(self, request, username: str | None) -> None:
        get_data = get_query_str(request.GET).replace("\0", "0x00")
        post_data = get_query_str(request.POST).replace("\0", "0x00")
        attempt, created = AccessAttempt.objects.get_or_create(
            username=username,
            ip_address=request.axes_ip_address,
            user_agent=request.axes_user_agent,
            defaults={
                "get_data": get_data,
                "post_data": post_data,
                "http_accept": request.axes_http_accept,
                "path_info": request.axes_path_info,
                "failures_since_start": 1,
                "attempt_time": request.axes_attempt_time,
            },
        )
        if not created:
            AccessAttempt.objects.filter(pk=attempt.pk).update(
                get_data=Concat("get_data", Value(SEPARATOR + get_data)),
                post_data=Concat("post_data", Value(SEPARATOR + post_data)),
                http_accept=request.axes_http_accept,
                path_info=request.axes_path_info,
                failures_since_start=F("failures_since_start") + 1,
                attempt_time=request.axes_attempt_time,
            )

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs):
        """A failure already counted by ``is_allowed`` only decides whether to lock out now."""
        if request is None or not getattr(request, "axes_counted_before_check", False):
            # Not counted yet: refused while locked out (axes records nothing, since
            # AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT is off), whitelisted, or no request.
            return super().user_login_failed(sender, credentials, request, **kwargs)
        username = get_client_username(request, credentials)
        client = get_client_str(
            username, request.axes_ip_address, request.axes_user_agent, request.axes_path_info, request
        )
        failures = self.get_failures(request, credentials)
        request.axes_failures_since_start = failures
        log.warning("AXES: Login failure %d by %s.", failures, client)
        if settings.AXES_LOCK_OUT_AT_FAILURE and failures >= get_failure_limit(request, credentials):
            log.warning("AXES: Locking out %s after repeated login failures.", client)
            request.axes_locked_out = True
            request.axes_credentials = credentials
            user_locked_out.send("axes", request=request, username=username, ip_address=request.axes_ip_address)
        return None

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        """The reset after a successful log-in, under the same lock as the check-and-count."""
        with serialised(get_client_username(request, credentials), request.axes_ip_address):
            return super().reset_user_attempts(request, credentials)


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: our page, HTTP 429, and when log-in opens again.

    Refused attempts are not counted, so the lock ends one cool-off after the last counted
    failure of this user name at this address.
    """
    username = get_client_username(request, credentials) or ""
    cool_off = get_cool_off(request)
    last = AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address).aggregate(
        last=Max("attempt_time")
    )["last"]
    now = timezone.now()
    retry_at = (last or now) + cool_off
    seconds = max(1, math.ceil((retry_at - now).total_seconds()))
    context = {
        "username": username,
        "failure_limit": get_failure_limit(request, credentials),
        "retry_at": retry_at,
        "minutes": math.ceil(seconds / 60),
    }
    response = render(request, "registration/locked_out.html", context, status=settings.AXES_HTTP_RESPONSE_CODE)
    response["Retry-After"] = str(seconds)
    return response
