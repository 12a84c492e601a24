"""Views for organisers and participants: tasks, teams, uploads and submission pages.

Each view parses its request, calls one service (a write) or selector (a read), and renders or
redirects; problems come back as ``ValidationError``\\ s keyed by form field.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from leaderboard import errors, services, uploads
from leaderboard.forms import (
    GoldReplaceForm,
    SubmissionForm,
    TaskCreateForm,
    TaskSettingsForm,
    TeamCreateForm,
    TeamJoinForm,
)
from leaderboard.models import Submission, Task
from leaderboard.permissions import can_view_submission
from leaderboard.selectors import pages, participation


def _task(slug: str) -> Task:
    return get_object_or_404(Task.objects.select_related("gold_file").defer("gold_file__content"), slug=slug)


def _organiser_task(request: HttpRequest, slug: str) -> Task:
    task = _task(slug)
    if not task.is_organiser(request.user):
        raise PermissionDenied(errors.NOT_ORGANISER)
    return task


def _refused(error: ValidationError) -> str:
    return " ".join(error.messages)


def task_list(request: HttpRequest) -> HttpResponse:
    return render(request, "leaderboard/task_list.html", {"tasks": participation.listed_tasks()})


@login_required
def task_create(request: HttpRequest) -> HttpResponse:
    form = TaskCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            task = services.task_create(organiser=request.user, **form.service_arguments())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"The task “{task.title}” is created.")
            return redirect(task)
    return render(request, "leaderboard/task_form.html", {"form": form, "creating": True})


@login_required
def task_edit(request: HttpRequest, slug: str) -> HttpResponse:
    task = _organiser_task(request, slug)
    form = TaskSettingsForm(request.POST or None, instance=task)
    if request.method == "POST" and form.is_valid():
        try:
            services.task_update(task=task, settings=form.cleaned_data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, "The task settings are saved.")
            return redirect(task)
    return render(request, "leaderboard/task_form.html", {"form": form, "task": task, "creating": False})


@login_required
def gold_replace(request: HttpRequest, slug: str) -> HttpResponse:
    """Two steps: upload and preview what the new gold file changes, then confirm."""
    task = _organiser_task(request, slug)
    if request.method == "POST" and request.POST.get("confirm"):
        try:
            count = services.gold_confirm(task=task)
        except ValidationError as error:
            messages.error(request, _refused(error))
            return redirect("leaderboard:gold_replace", slug=task.slug)
        messages.success(request, f"The gold file is replaced; {count} submission(s) are being scored again.")
        return redirect(task)
    form = GoldReplaceForm(request.POST or None, request.FILES or None)
    context = {"form": form, "task": task}
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["gold"]
        try:
            change = services.gold_preview(task=task, gold_name=upload.name, gold_content=upload.read())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            context.update(pages.gold_change_page(task=task, change=change))
    return render(request, "leaderboard/gold_form.html", context)


@login_required
def gold_download(request: HttpRequest, slug: str) -> HttpResponse:
    """The gold file, for the task's organisers only; everyone else gets a 404."""
    task = _task(slug)
    if not task.is_organiser(request.user):
        raise Http404("No such file.")
    response = HttpResponse(uploads.gold_bytes(task), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{task.slug}-gold.csv"'
    return response


@login_required
@require_POST
def task_rescore(request: HttpRequest, slug: str) -> HttpResponse:
    task = _organiser_task(request, slug)
    count = services.task_rescore(task=task)
    messages.success(request, f"{count} submission(s) are queued for scoring; those already scored stay as they are.")
    return redirect(task)


def task_detail(request: HttpRequest, slug: str) -> HttpResponse:
    task = _task(slug)
    context = pages.task_page(task=task, user=request.user)
    context.update(submission_form=SubmissionForm(), team_form=TeamCreateForm(), join_form=TeamJoinForm())
    return render(request, "leaderboard/task_detail.html", context)


def _team_action(request: HttpRequest, task: Task, *, form, action, success: str, invalid: str) -> HttpResponse:
    """Run a team service on a valid form and report the outcome as a message on the task page."""
    if form.is_valid():
        try:
            team = action(form.cleaned_data)
        except ValidationError as error:
            messages.error(request, _refused(error))
        else:
            messages.success(request, success.format(team=team))
    else:
        messages.error(request, invalid)
    return redirect(task)


@login_required
@require_POST
def team_create(request: HttpRequest, slug: str) -> HttpResponse:
    task = _task(slug)
    return _team_action(
        request,
        task,
        form=TeamCreateForm(request.POST),
        action=lambda data: services.team_create(task=task, user=request.user, name=data["name"]),
        success="You created the team “{team.name}”. Invite code: {team.invite_code}",
        invalid="Give the team a name of at most 80 characters.",
    )


@login_required
@require_POST
def team_join(request: HttpRequest, slug: str) -> HttpResponse:
    task = _task(slug)
    return _team_action(
        request,
        task,
        form=TeamJoinForm(request.POST),
        action=lambda data: services.team_join(task=task, user=request.user, invite_code=data["invite_code"]),
        success="You joined the team “{team.name}”.",
        invalid="Enter the team's invite code.",
    )


@login_required
@require_POST
def submission_create(request: HttpRequest, slug: str) -> HttpResponse:
    task = _task(slug)
    form = SubmissionForm(request.POST, request.FILES)
    if not form.is_valid():
        for field_errors in form.errors.values():
            messages.error(request, "The file was refused: " + " ".join(field_errors))
        return redirect(task)
    upload = form.cleaned_data["file"]
    try:
        submission = services.submission_create(
            task=task,
            user=request.user,
            name=upload.name,
            content=upload.read(),
            description=form.cleaned_data["description"],
        )
    except ValidationError as error:
        messages.error(request, "The file was refused: " + _refused(error))
        return redirect(task)
    messages.success(request, f"Submission #{submission.pk} is stored and {submission.get_status_display()}.")
    return redirect(submission)


def _submission(request: HttpRequest, slug: str, pk: int) -> Submission:
    submission = get_object_or_404(
        Submission.objects.select_related("task", "team", "file").defer("file__content"), task__slug=slug, pk=pk
    )
    if not can_view_submission(request.user, submission):
        raise Http404("No such submission.")
    return submission


def submission_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    submission = _submission(request, slug, pk)
    context = pages.submission_scorecard(submission=submission, user=request.user)
    return render(request, "leaderboard/submission_detail.html", context)


def submission_status(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    submission = _submission(request, slug, pk)
    return JsonResponse({"id": submission.pk, "status": submission.status, "failure": submission.failure or None})


@login_required
@require_POST
def submission_choose(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    submission = _submission(request, slug, pk)
    try:
        services.submission_choose(submission=submission, user=request.user)
    except ValidationError as error:
        messages.error(request, _refused(error))
    else:
        messages.success(request, f"Submission #{submission.pk} now counts for your team.")
    return redirect(submission)
