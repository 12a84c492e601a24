"""Telling people things: notes on the site, e-mails, and the address they go to.

- :func:`submission_finished_notify` — called by the scoring task when a submission is scored or
  fails: a note for every member of the team, written in the scoring transaction, and an e-mail
  to each member with an address, sent once that transaction has committed. Neither ever holds
  a number: what a team may see of its scores depends on the task's feedback policy, which the
  submission's page applies, so the note says what happened and where to look.
- :func:`email_send_later` — the e-mails a request asks for (password reset, address
  confirmation) go through the tasks queue (:func:`email_send`): with RQ a worker sends them and
  the request never waits for the SMTP server; with the immediate backend they are sent at once.
- :func:`email_confirmation_send`, :func:`email_confirm`, :func:`account_email_change` — the
  optional address confirmation (``settings.EMAIL_VERIFICATION``), by signed links.

Sending never raises: an SMTP server that is down or slow (``EMAIL_TIMEOUT``) is logged, and the
scoring, the sign-up or the reset that asked for the e-mail goes on.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django_tasks import task

from leaderboard.models import ConfirmedEmail, Notification, SentMail, Submission
from leaderboard.selectors.notifications import EMAIL_CONFIRMATION_SALT, email_confirmation_claim, email_is_confirmed

logger = logging.getLogger(__name__)

SCORED = "Scored: submission #{number} ({file}) of {team} to “{task}”, {phase} phase. Its page has the details."
RESCORED = (
    "Scored again, against the organisers' new gold file: submission #{number} ({file}) of {team} to “{task}”, "
    "{phase} phase. Its page has the details."
)
FAILED = "Failed: submission #{number} ({file}) of {team} to “{task}”, {phase} phase. {reason}"


@dataclass(frozen=True)
class Mail:
    """One e-mail, as plain values (what the queue can carry)."""

    subject: str
    body: str
    recipient: str

    def message(self) -> EmailMessage:
        return EmailMessage(self.subject, self.body, to=[self.recipient])


def send_quietly(mails: list[Mail]) -> int:
    """Send ``mails`` over one connection; how many went. A failure is logged, never raised."""
    if not mails:
        return 0
    try:
        with get_connection() as connection:
            return connection.send_messages([mail.message() for mail in mails]) or 0
    except Exception:  # an e-mail is a courtesy: whatever the server does, the caller's work stands
        logger.exception("could not send %d e-mail(s): %s", len(mails), mails[0].subject)
        return 0


@task()
def email_send(subject: str, body: str, recipient: str) -> int:
    """The queued sending of one e-mail a request asked for."""
    return send_quietly([Mail(subject=subject, body=body, recipient=recipient)])


def mail_allowed(
    *, recipient: str, kind: str, requested_from: str | None = None, now: dt.datetime | None = None
) -> bool:
    """Whether the site may send one more e-mail of ``kind`` to ``recipient`` that the client at
    ``requested_from`` asked for, and if so count it: account e-mails at most
    ``MAIL_PER_RECIPIENT_PER_HOUR`` per recipient and ``MAIL_PER_ADDRESS_PER_HOUR`` per asking
    address, announcements ``ANNOUNCEMENTS_PER_RECIPIENT_PER_DAY`` per recipient."""
    now = now or timezone.now()
    recipient = recipient.strip().lower()
    sent = SentMail.objects.filter(kind=kind)
    if kind == SentMail.Kind.ANNOUNCEMENT:
        if sent.filter(recipient=recipient, created_at__gt=now - dt.timedelta(days=1)).count() >= (
            settings.ANNOUNCEMENTS_PER_RECIPIENT_PER_DAY
        ):
            return False
    else:
        hour = sent.filter(created_at__gt=now - dt.timedelta(hours=1))
        if hour.filter(recipient=recipient).count() >= settings.MAIL_PER_RECIPIENT_PER_HOUR:
            return False
        if requested_from and hour.filter(requested_from=requested_from).count() >= settings.MAIL_PER_ADDRESS_PER_HOUR:
            return False
    SentMail.objects.create(recipient=recipient, requested_from=requested_from or "", kind=kind, created_at=now)
    return True


def email_send_later(*, subject: str, body: str, recipient: str, requested_from: str | None = None) -> bool:
    """Hand an account e-mail that a request asked for to the tasks queue (if the queue cannot
    be reached, send it here), within the limits of :func:`mail_allowed`; whether it went."""
    if not mail_allowed(recipient=recipient, kind=SentMail.Kind.ACCOUNT, requested_from=requested_from):
        logger.warning("not sent, over the limit for %s or its asker %s: %s", recipient, requested_from, subject)
        return False
    try:
        email_send.enqueue(subject, body, recipient)
    except Exception:  # Redis down: better late in this request than never
        logger.exception("could not enqueue an e-mail (%s); sending it now", subject)
        send_quietly([Mail(subject=subject, body=body, recipient=recipient)])
    return True


def _finished_message(submission: Submission, file_name: str) -> str:
    values = {
        "number": submission.pk,
        "file": file_name,
        "team": submission.team.name,
        "task": submission.task.title,
        "phase": submission.phase.name,
    }
    if submission.status == Submission.Status.FAILED:
        return FAILED.format(**values, reason=submission.failure)
    return (RESCORED if submission.score_count > 1 else SCORED).format(**values)


def submission_finished_notify(*, submission: Submission, file_name: str) -> list[Notification]:
    """A note for each member of the submission's team saying that its file ``file_name`` was
    scored or failed, and the same by e-mail to each member with an address once the current
    transaction commits.

    Called by the scoring task inside the transaction that writes the outcome, so a submission
    is never finished without its notes, nor noted without being finished.
    """
    message = _finished_message(submission, file_name)
    link = submission.get_absolute_url()
    members = list(submission.team.members.order_by("pk"))
    notes = Notification.objects.bulk_create(
        Notification(user=member, submission=submission, message=message, link=link) for member in members
    )
    outcome = submission.get_status_display().capitalize()
    subject = f"{outcome}: submission #{submission.pk} to “{submission.task.title}”"
    context = {"message": message, "url": settings.SITE_URL + link, "team": submission.team.name}
    mails = [
        Mail(
            subject=subject,
            body=render_to_string("registration/submission_finished_email.txt", {**context, "user": member}),
            recipient=member.email,
        )
        for member in members
        if member.email
    ]
    transaction.on_commit(lambda: send_quietly(mails), robust=True)
    return notes


@transaction.atomic
def notifications_mark_read(*, user, ids: list[int]) -> int:
    """Mark these notes of ``user`` read (those already read keep their time)."""
    return Notification.objects.filter(user=user, pk__in=ids).unread().update(read_at=timezone.now())


def email_confirmation_token(*, user) -> str:
    """A signed, timestamped claim that ``user`` owns its current address."""
    return signing.dumps({"user": user.pk, "email": user.email}, salt=EMAIL_CONFIRMATION_SALT, compress=True)


def email_confirmation_send(*, user, base_url: str, requested_from: str | None = None) -> bool:
    """E-mail ``user`` a link that confirms its address, unless confirmation is switched off
    (``EMAIL_VERIFICATION = "none"``), there is no address, or the limits of e-mails to that
    address (or asked from ``requested_from``) are reached. ``base_url``: scheme and host.
    Whether the link went."""
    if settings.EMAIL_VERIFICATION == "none" or not user.email:
        return False
    path = reverse("email_confirm", args=[email_confirmation_token(user=user)])
    context = {
        "user": user,
        "url": base_url.rstrip("/") + path,
        "days": settings.EMAIL_VERIFICATION_MAX_AGE.days,
        "mandatory": settings.EMAIL_VERIFICATION == "mandatory",
    }
    subject = "".join(render_to_string("registration/email_confirmation_subject.txt", context).splitlines())
    body = render_to_string("registration/email_confirmation_email.txt", context)
    return email_send_later(subject=subject, body=body, recipient=user.email, requested_from=requested_from)


@transaction.atomic
def email_confirm(*, token: str) -> ConfirmedEmail:
    """Record that the owner of the account in a valid confirmation link reads its address.
    Following a link twice is harmless. Raises the ``ValidationError`` of a bad link."""
    claim = email_confirmation_claim(token=token)
    confirmed, _ = ConfirmedEmail.objects.get_or_create(
        user=claim.user, email__iexact=claim.email, defaults={"email": claim.email}
    )
    return confirmed


def account_email_change(*, user, email: str, base_url: str, requested_from: str | None = None) -> bool:
    """Give the account a new address (already checked by the form) and send it a confirmation
    link unless it is confirmed already (the same address in other capitals); the old address's
    confirmation no longer counts. True if a link was sent."""
    with transaction.atomic():
        user.email = email
        user.save(update_fields=["email"])
    if email_is_confirmed(user=user):
        return False
    return email_confirmation_send(user=user, base_url=base_url, requested_from=requested_from)
