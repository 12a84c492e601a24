"""Taking part in a task: registration (open or on approval), its terms, and announcements.

A task whose registration is open and which has no terms needs no registration: whoever forms
or joins a team is registered then, approved, so that announcement e-mails reach them and they
can opt out. Otherwise a person registers first (accepting the terms), and only approved
participants whose accepted terms are the current ones form teams, download data and upload
(:func:`leaderboard.selectors.participation.participation_problem`).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django_tasks import task as background

from leaderboard import errors
from leaderboard.models import (
    Announcement,
    Community,
    Notification,
    Participant,
    Registration,
    SentMail,
    Task,
    TermsAcceptance,
)
from leaderboard.services.notifications import Mail, email_send_later, mail_allowed, send_quietly

logger = logging.getLogger(__name__)

DECIDED = {
    Participant.Status.APPROVED: "Your request to take part in “{task}” is approved: form or join a team on its page.",
    Participant.Status.REFUSED: "Your request to take part in “{task}” is refused: {reason}",
}


def _record_terms(*, community: Community, user) -> None:
    TermsAcceptance.objects.create(
        task=community.task, user=user, version=community.terms_version, terms=community.terms
    )


@transaction.atomic
def registration_request(*, task: Task, user, accept_terms: bool) -> Participant:
    """Ask to take part in ``task``: approved at once when registration is open, else waiting
    for the organisers. The terms, if any, must be accepted; the acceptance (which version,
    when) is recorded. Registering again after the terms changed accepts the new version. One
    registration covers every subtask: it is the parent's."""
    community = task.community
    if task.is_organiser(user):
        raise errors.ORGANISERS_DO_NOT_REGISTER.error()
    if community.terms.strip() and not accept_terms:
        raise errors.TERMS_NOT_ACCEPTED.error("accept_terms")
    existing = community.participants.select_for_update().filter(user=user).first()
    if existing is not None:
        if existing.terms_version == community.terms_version:
            raise errors.ALREADY_REGISTERED.error(status=existing.get_status_display())
        _record_terms(community=community, user=user)
        existing.terms_version = community.terms_version
        existing.save(update_fields=["terms_version"])
        return existing
    approved = community.registration == Registration.OPEN
    participant = Participant.objects.create(
        task=community.task,
        user=user,
        status=Participant.Status.APPROVED if approved else Participant.Status.PENDING,
        terms_version=community.terms_version,
        decided_at=timezone.now() if approved else None,
    )
    if community.terms.strip():
        _record_terms(community=community, user=user)
    return participant


def register_implicitly(*, task: Task, user) -> None:
    """Where no registration is needed, the person forming or joining a team is registered
    then (approved), so that announcements reach them and they can opt out."""
    community = task.community
    if not community.needs_registration:
        Participant.objects.get_or_create(
            task=community.task,
            user=user,
            defaults={"status": Participant.Status.APPROVED, "decided_at": timezone.now()},
        )


@transaction.atomic
def registration_decide(*, participant: Participant, organiser, approve: bool, reason: str = "") -> Participant:
    """Approve or refuse a request to take part (a refusal needs a reason, which the person
    reads); the person gets a note on the site and an e-mail."""
    task = participant.task
    if not task.is_organiser(organiser):
        raise PermissionDenied(errors.NOT_ORGANISER)
    reason = reason.strip()
    if not approve and not reason:
        raise errors.REASON_REQUIRED.error("reason")
    participant.status = Participant.Status.APPROVED if approve else Participant.Status.REFUSED
    participant.reason = "" if approve else reason
    participant.decided_at = timezone.now()
    participant.decided_by = organiser
    participant.save(update_fields=["status", "reason", "decided_at", "decided_by"])
    message = DECIDED[participant.status].format(task=task.title, reason=reason)
    Notification.objects.create(user=participant.user, message=message, link=task.get_absolute_url())
    if participant.user.email:
        recipient = participant.user.email
        transaction.on_commit(
            lambda: email_send_later(subject=f"[{task.title}] your registration", body=message, recipient=recipient)
        )
    return participant


@transaction.atomic
def announcement_emails_set(*, task: Task, user, enabled: bool) -> None:
    """Opt in to or out of the task's announcement e-mails (the site still shows them)."""
    updated = task.community.participants.filter(user=user).update(announcement_emails=enabled)
    if not updated:
        raise errors.NOT_REGISTERED.error(approval="")


@transaction.atomic
def announcement_post(*, task: Task, author, title: str, body: str, email: bool) -> Announcement:
    """Post an announcement on the task; with ``email``, it is sent from the background queue
    to every approved participant who has not opted out, once the post is committed. A task's
    announcements are one stream for all its subtasks (the parent's)."""
    if not task.is_organiser(author):
        raise PermissionDenied(errors.NOT_ORGANISER)
    title, body = " ".join(title.split()), body.strip()
    if not title or not body:
        raise errors.ANNOUNCEMENT_EMPTY.error()
    announcement = Announcement.objects.create(
        task=task.community.task, author=author, title=title[:200], body=body, email=email
    )
    if email:
        transaction.on_commit(lambda: _enqueue_announcement(announcement.pk))
    return announcement


def _enqueue_announcement(announcement_id: int) -> None:
    try:
        announcement_send.enqueue(announcement_id)
    except Exception:  # the queue is down: the row says it is not sent yet (emailed_at is empty)
        logger.exception("could not enqueue announcement %s", announcement_id)


def announcement_recipients(task: Task) -> list[str]:
    """The addresses of the task's approved participants who want its announcements."""
    wanted = task.community.participants.filter(status=Participant.Status.APPROVED, announcement_emails=True)
    wanted = wanted.exclude(user__email="")
    return sorted(set(wanted.values_list("user__email", flat=True)))


@background()
def announcement_send(announcement_id: int) -> int:
    """E-mail an announcement to its task's participants, once: the row is claimed under a lock,
    so a duplicate job sends nothing. Returns how many e-mails went."""
    with transaction.atomic():
        announcement = (
            Announcement.objects.select_for_update().select_related("task").filter(pk=announcement_id).first()
        )
        if announcement is None or announcement.emailed_at is not None:
            return 0
        task = announcement.task
        # Within each recipient's daily limit: an organiser cannot flood an inbox.
        recipients = [
            address
            for address in announcement_recipients(task)
            if mail_allowed(recipient=address, kind=SentMail.Kind.ANNOUNCEMENT)
        ]
        Announcement.objects.filter(pk=announcement.pk).update(emailed_at=timezone.now(), recipients=len(recipients))
    link = settings.SITE_URL + task.get_absolute_url()
    body = (
        f"{announcement.body}\n\n— the organisers of “{task.title}”, {link}\n\n"
        "You receive this because you take part in the task; opt out of its announcement e-mails on its page."
    )
    subject = f"[{task.title}] {announcement.title}"
    return send_quietly([Mail(subject=subject, body=body, recipient=address) for address in recipients])
