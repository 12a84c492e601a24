"""Reads about what people are told and where: their notes, the header's unread count, and
whether their e-mail address is confirmed (the check ``EMAIL_VERIFICATION = "mandatory"`` makes
before an upload).

Confirmation links are ``django.core.signing`` tokens (HMAC with ``SECRET_KEY``, a salt of their
own and a timestamp): reading one needs no table, and a link for an old address stops working
once the account's address changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.db.models import QuerySet

from leaderboard import errors
from leaderboard.models import ConfirmedEmail, Notification

EMAIL_CONFIRMATION_SALT = "leaderboard.email-confirmation"
"""Keeps confirmation tokens apart from every other value signed with the same key."""


def notifications_of(*, user) -> QuerySet[Notification]:
    """A person's notes, newest first."""
    return Notification.objects.filter(user=user).order_by("-created_at", "-id")


def unread_count(*, user) -> int:
    return Notification.objects.filter(user=user).unread().count()


def email_is_confirmed(*, user) -> bool:
    """The account has an address and its owner has followed a confirmation link for it."""
    return bool(user.email) and ConfirmedEmail.objects.filter(user=user, email__iexact=user.email).exists()


@dataclass(frozen=True)
class EmailClaim:
    """What a valid confirmation link says: this account owns this address."""

    user: object
    email: str


def email_confirmation_claim(*, token: str) -> EmailClaim:
    """The account and address a confirmation link is for.

    Raises the ``ValidationError`` of ``EMAIL_LINK_INVALID`` (altered or cut short),
    ``EMAIL_LINK_EXPIRED`` (older than ``EMAIL_VERIFICATION_MAX_AGE``) or ``EMAIL_LINK_STALE``
    (the account's address has changed since the link was sent).
    """
    max_age = settings.EMAIL_VERIFICATION_MAX_AGE
    try:
        claim = signing.loads(token, salt=EMAIL_CONFIRMATION_SALT, max_age=max_age)
    except signing.SignatureExpired:
        raise errors.EMAIL_LINK_EXPIRED.plain(days=max_age.days) from None
    except signing.BadSignature:
        raise errors.EMAIL_LINK_INVALID.plain() from None
    user = get_user_model().objects.filter(pk=claim["user"], is_active=True).first()
    if user is None:
        raise errors.EMAIL_LINK_INVALID.plain()
    if user.email.casefold() != claim["email"].casefold():
        raise errors.EMAIL_LINK_STALE.plain(email=claim["email"])
    return EmailClaim(user=user, email=claim["email"])
