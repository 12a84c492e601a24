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

from leaderboard import errors, exports, samples, services, uploads
from leaderboard.forms import (
    GoldReplaceForm,
    PhaseCreateForm,
    PhaseFileForm,
    PhaseSettingsForm,
    SubmissionForm,
    SubmissionNoteForm,
    TaskCreateForm,
    TaskSettingsForm,
    TeamCreateForm,
    TeamJoinForm,
    TeamProfileForm,
)
from leaderboard.models import Phase, PhaseFile, Submission, Task, Team
from leaderboard.permissions import can_view_submission, is_member
from leaderboard.selectors import organisers, pages, participation
from leaderboard.views.common import download, organiser_task, refusal, task_or_404


def _organiser_phase(request: HttpRequest, slug: str, phase: str) -> Phase:
    return participation.phase_of(organiser_task(request, slug), phase)


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
    task = organiser_task(request, slug)
    form = TaskSettingsForm(request.POST or None, instance=task)
    if request.method == "POST" and form.is_valid():
        services.task_update(task=task, settings=form.cleaned_data)
        messages.success(request, "The task settings are saved.")
        return redirect(task)
    context = {"form": form, "task": task, "creating": False, "phases": task.ordered_phases()}
    return render(request, "leaderboard/task_form.html", context)


@login_required
def phase_create(request: HttpRequest, slug: str) -> HttpResponse:
    task = organiser_task(request, slug)
    form = PhaseCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            phase = services.phase_create(task=task, **form.service_arguments())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"The phase “{phase.name}” is added.")
            return redirect(task)
    return render(request, "leaderboard/phase_form.html", {"form": form, "task": task, "creating": True})


@login_required
def phase_edit(request: HttpRequest, slug: str, phase: str) -> HttpResponse:
    phase_row = _organiser_phase(request, slug, phase)
    form = PhaseSettingsForm(request.POST or None, instance=phase_row)
    if request.method == "POST" and form.is_valid():
        try:
            services.phase_update(phase=phase_row, settings=form.cleaned_data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"The settings of the phase “{phase_row.name}” are saved.")
            return redirect(phase_row.task)
    context = {"form": form, "task": phase_row.task, "phase": phase_row, "creating": False}
    return render(request, "leaderboard/phase_form.html", context)


@login_required
def phase_files(request: HttpRequest, slug: str, phase: str) -> HttpResponse:
    """The files participants download for a phase: attach one, or take one off."""
    phase_row = _organiser_phase(request, slug, phase)
    form = PhaseFileForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and request.POST.get("remove"):
        data_file = get_object_or_404(PhaseFile, phase=phase_row, pk=request.POST["remove"])
        services.phase_file_remove(data_file=data_file)
        messages.success(request, f"“{data_file.title}” is removed.")
        return redirect("leaderboard:phase_files", slug=slug, phase=phase)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            added = services.phase_file_add(
                phase=phase_row, title=form.cleaned_data["title"], name=upload.name, content=upload.read()
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"“{added.title}” is attached to the phase “{phase_row.name}”.")
            return redirect("leaderboard:phase_files", slug=slug, phase=phase)
    files = phase_row.data_files.select_related("file").defer("file__content")
    context = {"form": form, "task": phase_row.task, "phase": phase_row, "files": files}
    return render(request, "leaderboard/phase_files.html", context)


def _data_phase(request: HttpRequest, slug: str, phase: str) -> Phase:
    """The phase whose data is asked for, if this person may download it (organisers, and
    whoever may take part: registered, approved, with the current terms accepted), once it has
    opened (before, for its organisers only: 404 to everyone else, as if it had none)."""
    task = task_or_404(slug)
    if not participation.may_download_data(task=task, user=request.user):
        problem = participation.participation_problem(task=task, user=request.user)
        raise PermissionDenied(refusal(problem) if problem else errors.NOT_REGISTERED.format(approval=""))
    found = participation.phase_of(task, phase)
    if not participation.may_download_phase_data(phase=found, user=request.user):
        raise Http404(f"The data of the phase “{found.name}” is published when it opens.")
    return found


def phase_file_download(request: HttpRequest, slug: str, phase: str, pk: int) -> HttpResponse:
    """A phase's data file, for anyone who can see the task."""
    phase_row = _data_phase(request, slug, phase)
    data_file = get_object_or_404(PhaseFile.objects.select_related("file"), phase=phase_row, pk=pk)
    return download(
        bytes(data_file.file.content), filename=data_file.file.name, content_type="application/octet-stream"
    )


def sample_download(request: HttpRequest, slug: str, phase: str, kind: str) -> HttpResponse:
    """A generated sample submission of a phase: every gold id with a valid label, or with a
    probability for each label (:mod:`leaderboard.samples`)."""
    if kind not in samples.SAMPLE_KINDS:
        raise Http404("No such sample file.")
    phase_row = _data_phase(request, slug, phase)
    return download(
        samples.sample_file(phase=phase_row, kind=kind), filename=samples.sample_name(phase=phase_row, kind=kind)
    )


@login_required
def gold_replace(request: HttpRequest, slug: str, phase: str) -> HttpResponse:
    """Two steps: upload and preview what a phase's new gold file changes, then confirm."""
    phase_row = _organiser_phase(request, slug, phase)
    task = phase_row.task
    if request.method == "POST" and request.POST.get("confirm"):
        try:
            count = services.gold_confirm(phase=phase_row)
        except ValidationError as error:
            messages.error(request, refusal(error))
            return redirect("leaderboard:gold_replace", slug=task.slug, phase=phase_row.slug)
        messages.success(request, f"The gold file is replaced; {count} submission(s) are being scored again.")
        return redirect(task)
    form = GoldReplaceForm(request.POST or None, request.FILES or None)
    context = {"form": form, "task": task, "phase": phase_row}
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["gold"]
        try:
            change = services.gold_preview(phase=phase_row, gold_name=upload.name, gold_content=upload.read())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            context.update(pages.gold_change_page(phase=phase_row, change=change))
    return render(request, "leaderboard/gold_form.html", context)


@login_required
def gold_download(request: HttpRequest, slug: str, phase: str) -> HttpResponse:
    """A phase's gold file, for the task's organisers only; everyone else gets a 404."""
    task = task_or_404(slug)
    if not task.is_organiser(request.user):
        raise Http404("No such file.")
    phase_row = participation.phase_of(task, phase)
    return download(uploads.gold_bytes(phase_row), filename=f"{task.slug}-{phase_row.slug}-gold.csv")


@login_required
@require_POST
def task_rescore(request: HttpRequest, slug: str) -> HttpResponse:
    task = organiser_task(request, slug)
    count = services.task_rescore(task=task)
    messages.success(request, f"{count} submission(s) are queued for scoring; those already scored stay as they are.")
    return redirect(task)


def task_detail(request: HttpRequest, slug: str) -> HttpResponse:
    task = task_or_404(slug)
    context = pages.task_page(task=task, user=request.user)
    context.update(submission_form=SubmissionForm(), team_form=TeamCreateForm(), join_form=TeamJoinForm())
    return render(request, "leaderboard/task_detail.html", context)


def _team_action(request: HttpRequest, task: Task, *, form, action, success: str, invalid: str) -> HttpResponse:
    """Run a team service on a valid form and report the outcome as a message on the task page."""
    if form.is_valid():
        try:
            team = action(form.cleaned_data)
        except ValidationError as error:
            messages.error(request, refusal(error))
        else:
            messages.success(request, success.format(team=team))
    else:
        messages.error(request, invalid)
    return redirect(task)


@login_required
@require_POST
def team_create(request: HttpRequest, slug: str) -> HttpResponse:
    task = task_or_404(slug)
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
    task = task_or_404(slug)
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
    task = task_or_404(slug)
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
        messages.error(request, refusal(error))
    else:
        messages.success(request, f"Submission #{submission.pk} now counts for your team.")
    return redirect(submission)


@login_required
def team_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """A member's team page: members, invite code, system description, submissions, quota."""
    task = task_or_404(slug)
    context = pages.team_page(task=task, user=request.user)
    if context is None:
        messages.error(request, errors.NO_TEAM)
        return redirect(task)
    form = TeamProfileForm(request.POST or None, instance=context["team"])
    if request.method == "POST" and form.is_valid():
        try:
            services.team_update(team=context["team"], user=request.user, changes=form.cleaned_data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, "The team is saved.")
            return redirect("leaderboard:team_detail", slug=task.slug)
    context["form"] = form
    return render(request, "leaderboard/team_detail.html", context)


def _own_team(request: HttpRequest, task: Task) -> Team:
    team = participation.team_of(task=task, user=request.user)
    if team is None:
        raise Http404("You have no team in this task.")
    return team


@login_required
@require_POST
def team_invite_regenerate(request: HttpRequest, slug: str) -> HttpResponse:
    task = task_or_404(slug)
    team = _own_team(request, task)
    code = services.team_invite_regenerate(team=team, user=request.user)
    messages.success(request, f"The new invite code is {code}; the old one no longer works.")
    return redirect("leaderboard:team_detail", slug=task.slug)


@login_required
@require_POST
def team_leave(request: HttpRequest, slug: str) -> HttpResponse:
    task = task_or_404(slug)
    team = _own_team(request, task)
    try:
        services.team_leave(team=team, user=request.user)
    except ValidationError as error:
        messages.error(request, refusal(error))
        return redirect("leaderboard:team_detail", slug=task.slug)
    messages.success(request, f"You left the team “{team.name}”.")
    return redirect(task)


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
        services.submission_note(submission=submission, user=request.user, note=form.cleaned_data["note"])
        messages.success(request, "The note is saved.")
    else:
        messages.error(request, "A note has at most 200 characters.")
    return redirect(submission)


@login_required
def organiser_submissions(request: HttpRequest, slug: str) -> HttpResponse:
    """Every submission of the task for its organisers, filtered by team and status, paginated;
    each can be disqualified, each team removed, with a reason the board shows."""
    task = organiser_task(request, slug)
    if request.method == "POST":
        return _organiser_decision(request, task)
    where = organisers.SubmissionFilter.parse(request.GET)
    context = organisers.submissions_page(task=task, where=where, page=request.GET.get("page"))
    return render(request, "leaderboard/organiser_submissions.html", context)


def _organiser_decision(request: HttpRequest, task: Task) -> HttpResponse:
    reason = request.POST.get("reason", "")
    try:
        if request.POST.get("submission"):
            submission = get_object_or_404(Submission, phase__task=task, pk=request.POST["submission"])
            services.submission_disqualify(submission=submission, user=request.user, reason=reason)
            messages.success(request, f"Submission #{submission.pk} is disqualified.")
        else:
            team = get_object_or_404(Team, task=task, pk=request.POST.get("team") or 0)
            services.team_remove(team=team, user=request.user, reason=reason)
            messages.success(request, f"The team “{team.name}” is removed from the board.")
    except ValidationError as error:
        messages.error(request, refusal(error))
    return redirect(request.get_full_path())


@login_required
def participants_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """Teams and their members with e-mail addresses, for the task's mailing list."""
    task = organiser_task(request, slug)
    return download(
        exports.participants_csv(organisers.participants(task=task)), filename=f"{task.slug}-participants.csv"
    )
