"""Views for organisers and participants: tasks, teams, uploads and submission pages."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from leaderboard import services
from leaderboard.confusion_chart import confusion_heatmap
from leaderboard.forms import (
    GoldReplaceForm,
    SubmissionForm,
    TaskCreateForm,
    TaskSettingsForm,
    TeamCreateForm,
    TeamJoinForm,
)
from leaderboard.models import StoredFile, Submission, Task
from leaderboard.permissions import can_view_board, can_view_submission, is_member
from leaderboard.selectors import columns_of, leaderboard, metric_value, visible_submissions
from scoring.engine.registry import BY_KEY


def _task(slug: str) -> Task:
    return get_object_or_404(Task.objects.select_related("gold_file").defer("gold_file__content"), slug=slug)


def _organiser_task(request: HttpRequest, slug: str) -> Task:
    task = _task(slug)
    if not task.is_organiser(request.user):
        raise PermissionDenied("Only the task's organisers may do this.")
    return task


def _add_errors(form, error: ValidationError, field: str | None = None) -> None:
    for message in error.messages:
        form.add_error(field, message)


def task_list(request: HttpRequest) -> HttpResponse:
    tasks = Task.objects.defer("description").prefetch_related("teams")
    return render(request, "leaderboard/task_list.html", {"tasks": tasks})


@login_required
def task_create(request: HttpRequest) -> HttpResponse:
    form = TaskCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            task = services.task_create(
                organiser=request.user,
                slug=data["slug"],
                title=data["title"],
                description=data["description"],
                labels=form.cleaned_labels(),
                gold_name=data["gold"].name,
                gold_content=data["gold"].read(),
                primary_metric=data["primary_metric"],
                opens_at=data["opens_at"],
                closes_at=data["closes_at"],
                max_per_day=data["max_per_day"],
                max_total=data["max_total"],
                counting=data["counting"],
                visibility=data["visibility"],
            )
        except ValidationError as error:
            _add_errors(form, error, "gold" if error.code not in {"TOO_FEW_LABELS", "DUPLICATE_LABEL"} else "labels")
        else:
            messages.success(request, f"The task “{task.title}” is created.")
            return redirect(task)
    return render(request, "leaderboard/task_form.html", {"form": form, "creating": True})


@login_required
def task_edit(request: HttpRequest, slug: str) -> HttpResponse:
    task = _organiser_task(request, slug)
    form = TaskSettingsForm(request.POST or None, instance=task)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "The task settings are saved.")
        return redirect(task)
    return render(request, "leaderboard/task_form.html", {"form": form, "task": task, "creating": False})


@login_required
def gold_replace(request: HttpRequest, slug: str) -> HttpResponse:
    task = _organiser_task(request, slug)
    form = GoldReplaceForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["gold"]
        try:
            count = services.gold_replace(task=task, gold_name=upload.name, gold_content=upload.read())
        except ValidationError as error:
            _add_errors(form, error, "gold")
        else:
            messages.success(request, f"The gold file is replaced; {count} submission(s) are being scored again.")
            return redirect(task)
    return render(request, "leaderboard/gold_form.html", {"form": form, "task": task})


@login_required
def gold_download(request: HttpRequest, slug: str) -> HttpResponse:
    """The gold file, for the task's organisers only; everyone else gets a 404."""
    task = _task(slug)
    if not task.is_organiser(request.user):
        raise Http404("No such file.")
    gold = task.gold_file
    response = HttpResponse(bytes(StoredFile.objects.get(pk=gold.pk).content), content_type="text/csv; charset=utf-8")
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
    team = services.team_of(task=task, user=request.user)
    context = {
        "task": task,
        "team": team,
        "is_organiser": task.is_organiser(request.user),
        "board_visible": can_view_board(request.user, task),
        "submissions": visible_submissions(task=task, user=request.user).filter(team=team) if team else [],
        "submission_form": SubmissionForm(),
        "team_form": TeamCreateForm(),
        "join_form": TeamJoinForm(),
        "primary_metric": BY_KEY[task.primary_metric],
    }
    if context["is_organiser"]:
        context["all_submissions"] = visible_submissions(task=task, user=request.user)[:200]
    return render(request, "leaderboard/task_detail.html", context)


def _team_action(request: HttpRequest, task: Task, *, form, action, success: str, invalid: str) -> HttpResponse:
    """Run a team service on a valid form and report the outcome as a message on the task page."""
    if form.is_valid():
        try:
            team = action(form.cleaned_data)
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
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
    if form.is_valid():
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
            messages.error(request, "The file was refused: " + " ".join(error.messages))
        else:
            messages.success(request, f"Submission #{submission.pk} is stored and {submission.get_status_display()}.")
            return redirect(submission)
    else:
        for errors in form.errors.values():
            messages.error(request, "The file was refused: " + " ".join(errors))
    return redirect(task)


def _submission(request: HttpRequest, slug: str, pk: int) -> Submission:
    submission = get_object_or_404(
        Submission.objects.select_related("task", "team", "file").defer("file__content"), task__slug=slug, pk=pk
    )
    if not can_view_submission(request.user, submission):
        raise Http404("No such submission.")
    return submission


def submission_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    submission = _submission(request, slug, pk)
    task = submission.task
    context = {"task": task, "submission": submission, "is_member": is_member(request.user, submission)}
    if submission.status == Submission.Status.SCORED:
        board = leaderboard(task=task, calibrated=None) if can_view_board(request.user, task) else None
        ranks = {}
        if board is not None:
            entry = next((e for e in board.entries if e.submission and e.submission.pk == submission.pk), None)
            ranks = entry.ranks if entry else {}
        rows = []
        for raw, calibrated in zip(columns_of(task, calibrated=False), columns_of(task, calibrated=True), strict=True):
            rows.append(
                {
                    "column": raw,
                    "calibrated_column": calibrated,
                    "raw": metric_value(submission, raw),
                    "calibrated": metric_value(submission, calibrated),
                    "rank": ranks.get(raw.id),
                    "calibrated_rank": ranks.get(calibrated.id),
                }
            )
        board_for_ranks = board is not None and entry is not None
        context.update(
            rows=rows,
            ranked=board_for_ranks,
            n_teams=len(board.entries) if board else 0,
            labels=task.labels,
            heatmap_raw=confusion_heatmap(submission.confusion_matrix, task.labels, title="Raw counts"),
            heatmap_calibrated=confusion_heatmap(
                submission.calibrated_matrix(), task.labels, title="Prevalence-calibrated"
            ),
            f1_averaged=submission.metrics.get("macro_f1"),
            f1_of_averages=submission.metrics.get("macro_f1_of_averages"),
            f1_gap=submission.metrics.get("macro_f1_gap"),
        )
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
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, f"Submission #{submission.pk} now counts for your team.")
    return redirect(submission)
