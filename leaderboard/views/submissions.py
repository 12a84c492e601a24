"""Submissions: uploading a file, its page and status, choosing the one that counts, its file and its
note (for its team).

Each view parses its request, calls one service (a write) or page builder (a read), and renders
or redirects; problems come back as ``ValidationError``\\ s keyed by form field.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from leaderboard import uploads
from leaderboard.forms import (
    SubmissionForm,
    SubmissionNoteForm,
)
from leaderboard.models import Submission
from leaderboard.pages import overview
from leaderboard.permissions import can_view_submission, is_member
from leaderboard.services import submissions as submission_service
from leaderboard.views.common import download, refusal, task_or_404


@login_required
@require_POST
def submission_create(request: HttpRequest, slug: str) -> HttpResponse:
    task = task_or_404(slug)
    form = SubmissionForm(request.POST, request.FILES, phase=task.open_phase())
    if not form.is_valid():
        for field_errors in form.errors.values():
            messages.error(request, "The file was refused: " + " ".join(field_errors))
        return redirect(task)
    upload = form.cleaned_data["file"]
    try:
        submission = submission_service.submission_create(
            task=task,
            user=request.user,
            name=upload.name,
            content=upload.read(),
            description=form.cleaned_data["description"],
            mark=form.cleaned_data.get("mark") or None,
        )
    except ValidationError as error:
        messages.error(request, "The file was refused: " + refusal(error))
        return redirect(task)
    messages.success(
        request,
        f"Submission #{submission.pk} to the {submission.phase.name} phase is stored and "
        f"{submission.get_status_display()}.",
    )
    return redirect(submission)


def _submission(request: HttpRequest, slug: str, pk: int) -> Submission:
    submission = get_object_or_404(
        Submission.objects.select_related("phase__task", "team", "file").defer("file__content"),
        phase__task__slug=slug,
        pk=pk,
    )
    if not can_view_submission(request.user, submission):
        raise Http404("No such submission.")
    return submission


def submission_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    submission = _submission(request, slug, pk)
    context = overview.submission_scorecard(submission=submission, user=request.user)
    return render(request, "leaderboard/submission_detail.html", context)


def submission_status(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    submission = _submission(request, slug, pk)
    return JsonResponse({"id": submission.pk, "status": submission.status, "failure": submission.failure or None})


@login_required
@require_POST
def submission_choose(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    submission = _submission(request, slug, pk)
    try:
        submission_service.submission_choose(submission=submission, user=request.user)
    except ValidationError as error:
        messages.error(request, refusal(error))
    else:
        messages.success(request, f"Submission #{submission.pk} now counts for your team.")
    return redirect(submission)


@login_required
@require_POST
def submission_mark(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """A member marks one of the team's runs primary, contrastive k, or neither."""
    submission = _submission(request, slug, pk)
    mark = request.POST.get("mark", "")
    try:
        submission_service.submission_mark(submission=submission, user=request.user, mark=mark)
    except ValidationError as error:
        messages.error(request, refusal(error))
    else:
        marks = dict(submission.phase.run_marks())
        messages.success(request, f"Submission #{submission.pk} is marked: {marks[mark]}.")
    return redirect(submission)


@login_required
def submission_file(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The file a team uploaded, for its members (and the task's organisers) only."""
    submission = _submission(request, slug, pk)
    if not (is_member(request.user, submission) or submission.task.is_organiser(request.user)):
        raise Http404("No such file.")
    return download(uploads.submission_bytes(submission), filename=submission.file.name)


@login_required
@require_POST
def submission_note(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    submission = _submission(request, slug, pk)
    form = SubmissionNoteForm(request.POST)
    if form.is_valid():
        submission_service.submission_note(submission=submission, user=request.user, note=form.cleaned_data["note"])
        messages.success(request, "The note is saved.")
    else:
        messages.error(request, "A note has at most 200 characters.")
    return redirect(submission)
