"""API tokens: a person's tokens, and the token a request carries (found by the SHA-256 of its
secret: the database keeps nothing else of it)."""

from __future__ import annotations

from django.db.models import QuerySet

from leaderboard.models import ApiToken


def tokens_of(*, user) -> QuerySet[ApiToken]:
    """A person's tokens, active and revoked, newest first."""
    return ApiToken.objects.filter(user=user)


def token_by_secret(secret: str) -> ApiToken | None:
    """The active token whose secret is ``secret``, with its user, if the user is active."""
    if not secret.startswith(ApiToken.SECRET_PREFIX):
        return None
    return (
        ApiToken.objects.active()
        .select_related("user")
        .filter(key_hash=ApiToken.hash_of(secret), user__is_active=True)
        .first()
    )
