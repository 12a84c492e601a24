"""Taking part in a task: registering (accepting its terms), the organisers' approvals, the
task's announcements and the opt-out of their e-mails."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from leaderboard.forms import AnnouncementForm, RegistrationForm
from leaderboard.models import Participant
from leaderboard.selectors import organisers
from leaderboard.services import registrations as registration_service
from leaderboard.views.common import organiser_task, refusal, task_or_404


@login_required
@require_POST
def register(request: HttpRequest, slug: str) -> HttpResponse:
    """Ask to take part (or accept changed terms); approved at once where registration is open."""
    task = task_or_404(slug)
    form = RegistrationForm(request.POST)
    form.is_valid()
    try:
        participant = registration_service.registration_request(
            task=task, user=request.user, accept_terms=form.cleaned_data.get("accept_terms", False)
        )
    except ValidationError as error:
        messages.error(request, refusal(error))
    else:
        if participant.status == Participant.Status.APPROVED:
            messages.success(request, "You take part in this task: form or join a team below.")
        else:
            messages.success(request, "Your request is sent; the organisers will approve it or say why not.")
    return redirect(task)


@login_required
@require_POST
def announcement_emails(request: HttpRequest, slug: str) -> HttpResponse:
    task = task_or_404(slug)
    enabled = request.POST.get("enabled") == "1"
    try:
        registration_service.announcement_emails_set(task=task, user=request.user, enabled=enabled)
    except ValidationError as error:
        messages.error(request, refusal(error))
    else:
        messages.success(
            request,
            "Announcements will be e-mailed to you." if enabled else "Announcements will no longer be e-mailed to you.",
        )
    return redirect(task)


@login_required
def registrations(request: HttpRequest, slug: str) -> HttpResponse:
    """The organisers' list of requests to take part: approve, or refuse with a reason."""
    task = organiser_task(request, slug)
    if request.method == "POST":
        participant = get_object_or_404(task.community.participants, pk=request.POST.get("participant") or 0)
        approve = request.POST.get("decision") == "approve"
        try:
            registration_service.registration_decide(
                participant=participant, organiser=request.user, approve=approve, reason=request.POST.get("reason", "")
            )
        except ValidationError as error:
            messages.error(request, refusal(error))
        else:
            verb = "approved" if approve else "refused"
            messages.success(request, f"The request of {participant.user.username} is {verb}.")
        return redirect(request.get_full_path())
    context = organisers.registrations_page(task=task, status=request.GET.get("status"))
    return render(request, "leaderboard/registrations.html", context)


@login_required
def announcements(request: HttpRequest, slug: str) -> HttpResponse:
    """Post an announcement on the task (optionally e-mailed from the background queue)."""
    task = organiser_task(request, slug)
    form = AnnouncementForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            posted = registration_service.announcement_post(task=task, author=request.user, **form.cleaned_data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            sent = " It is being e-mailed to the participants." if posted.email else ""
            messages.success(request, f"The announcement “{posted.title}” is posted.{sent}")
            return redirect(task)
    context = {"task": task, "form": form, "announcements": task.community.announcements.select_related("author")}
    return render(request, "leaderboard/announcements.html", context)
