"""API tokens: creating, revoking and touching them (their reads are in
:mod:`leaderboard.selectors.tokens`).

A secret is ``lbt_`` and 43 random URL-safe characters (256 bits), shown once; the database
keeps its SHA-256 only, so a leaked database backup gives no working token. A plain hash (not
a slow password hash) is right here: the secret is random, not guessable, and every API
request must look it up by its hash.
"""

from __future__ import annotations

import datetime as dt
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from leaderboard import errors
from leaderboard.models import ApiToken

SHOWN_PREFIX_LENGTH = 10
"""Characters of the secret kept in clear to tell tokens apart: ``lbt_`` and six random ones."""
TOUCH_EVERY = dt.timedelta(minutes=1)
"""``last_used_at`` is written at most this often per token, not on every request."""


def new_secret() -> str:
    return ApiToken.SECRET_PREFIX + secrets.token_urlsafe(32)


@transaction.atomic
def token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """A new token of ``user`` and its secret (to show once; it is not stored).

    Refused (``TOKEN_LIMIT``) when the person already holds ``API_TOKENS_PER_USER`` active tokens.
    """
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one creation at a time per person
    if ApiToken.objects.active().filter(user=user).count() >= settings.API_TOKENS_PER_USER:
        raise errors.TOKEN_LIMIT.error("name", limit=settings.API_TOKENS_PER_USER)
    secret = new_secret()
    token = ApiToken.objects.create(
        user=user, name=name.strip()[:80], key_hash=ApiToken.hash_of(secret), prefix=secret[:SHOWN_PREFIX_LENGTH]
    )
    return token, secret


def token_revoke(*, user, token_id: int) -> ApiToken:
    """Revoke one of ``user``'s tokens (from now on it is refused); revoking twice keeps the
    first date. Another person's token is a 404, as if it did not exist."""
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        raise Http404("No such token.")
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db()
    return token


def token_touch(*, token: ApiToken, now: dt.datetime | None = None) -> None:
    """Note that ``token`` was used (at most once per :data:`TOUCH_EVERY`)."""
    now = now or timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= TOUCH_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
