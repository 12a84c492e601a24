"""A person's notes (``/accounts/notifications/``) and what the header needs on every page."""

from __future__ import annotations

from functools import partial

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from leaderboard.selectors import notifications as notification_selectors
from leaderboard.services import notifications as notification_service
from leaderboard.views.accounts import safe_next

PER_PAGE = 25

AUTHENTICATION_PAGES = frozenset(
    {
        "login",
        "signup",
        "password_reset",
        "password_reset_done",
        "password_reset_confirm",
        "password_reset_complete",
        "email_confirm",
    }
)
"""Pages that are a step on the way in: the header's log-in and sign-up links pass on the
``next`` they were given rather than pointing back at themselves."""


@login_required
def notification_list(request: HttpRequest) -> HttpResponse:
    """Newest first; the notes shown are marked read once listed (and still marked "new" on
    this showing)."""
    page = Paginator(notification_selectors.notifications_of(user=request.user), PER_PAGE).get_page(
        request.GET.get("page")
    )
    notes = list(page.object_list)
    notification_service.notifications_mark_read(
        user=request.user, ids=[note.pk for note in notes if note.read_at is None]
    )
    return render(request, "registration/notifications.html", {"page": page, "notes": notes})


def header(request: HttpRequest) -> dict:
    """Context processor: the unread count (counted only when a template shows it) and the
    path the header's "Log in" and "Sign up" links bring a person back to."""
    match = request.resolver_match
    if match is not None and match.url_name in AUTHENTICATION_PAGES:
        back_to = safe_next(request) or ""
    else:
        back_to = request.get_full_path()
    context = {"next_path": back_to}
    if request.user.is_authenticated:
        context["unread_notifications"] = partial(notification_selectors.unread_count, user=request.user)
    return context
