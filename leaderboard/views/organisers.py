"""The organisers' pages: creating a task and changing its settings, its phases (settings, data
files, gold file: preview, confirm, download; every run in one zip), re-scoring, every
submission with the decisions about it, the participants' list, and the task as a bundle
(export, and import with a preview: a task of this site, CodaLab or Codabench).

Each view parses its request, calls one service (a write) or page builder (a read), and renders
or redirects; problems come back as ``ValidationError``\\ s keyed by form field.
"""

from dataclasses import replace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from leaderboard import archives, errors, exports, uploads
from leaderboard.bundles import pending as pending_imports
from leaderboard.bundles.export import bundle_name, task_bundle
from leaderboard.bundles.plan import subtask_slug
from leaderboard.bundles.task_bundle import SOURCE as EXPORTED_TASK
from leaderboard.bundles.zips import ZipLimits
from leaderboard.forms import (
    BundleUploadForm,
    GoldReplaceForm,
    PhaseCreateForm,
    PhaseFileForm,
    PhaseSettingsForm,
    RunsArchiveForm,
    SubtaskCreateForm,
    TaskCreateForm,
    TaskImportForm,
    TaskSettingsForm,
    TaskWithSubtasksForm,
)
from leaderboard.models import Phase, PhaseFile, Task
from leaderboard.pages import overview
from leaderboard.permissions import runs_scope
from leaderboard.selectors import organisers
from leaderboard.selectors import runs as runs_selectors
from leaderboard.services import analysis as analysis_service
from leaderboard.services import imports as import_service
from leaderboard.services import organisers as organiser_service
from leaderboard.services import tasks as task_service
from leaderboard.views.common import (
    download,
    organiser_task,
    phase_or_404,
    refusal,
    streaming_download,
    task_or_404,
)


def _organiser_phase(request: HttpRequest, slug: str, phase: str) -> Phase:
    return phase_or_404(organiser_task(request, slug), phase)


@login_required
def task_create(request: HttpRequest) -> HttpResponse:
    """A new task: one leaderboard with its first phase, or (``?subtasks=1``) a task divided
    into subtasks, which are added from its page."""
    if request.GET.get("subtasks") == "1":
        form = TaskWithSubtasksForm(request.POST or None)
        create = task_service.task_with_subtasks_create
    else:
        form = TaskCreateForm(request.POST or None, request.FILES or None)
        create = task_service.task_create
    if request.method == "POST" and form.is_valid():
        arguments = form.service_arguments() if isinstance(form, TaskCreateForm) else form.cleaned_data
        try:
            task = create(organiser=request.user, **arguments)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"The task “{task.title}” is created.")
            return redirect(task)
    context = {"form": form, "creating": True, "with_subtasks": isinstance(form, TaskWithSubtasksForm)}
    return render(request, "leaderboard/task_form.html", context)


@login_required
def subtask_create(request: HttpRequest, slug: str) -> HttpResponse:
    """A new subtask of a task divided into subtasks, with its labels, metric and first phase."""
    parent = organiser_task(request, slug)
    form = SubtaskCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            task = task_service.task_create(organiser=request.user, parent=parent, **form.service_arguments())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"The subtask “{task.title}” of “{parent.title}” is created.")
            return redirect(task)
    return render(request, "leaderboard/task_form.html", {"form": form, "creating": True, "parent": parent})


@login_required
def task_edit(request: HttpRequest, slug: str) -> HttpResponse:
    task = organiser_task(request, slug)
    form = TaskSettingsForm(request.POST or None, instance=task)
    if request.method == "POST" and form.is_valid():
        task_service.task_update(task=task, settings=form.cleaned_data)
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
            phase = task_service.phase_create(task=task, **form.service_arguments())
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
            task_service.phase_update(phase=phase_row, settings=form.cleaned_data)
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
        task_service.phase_file_remove(data_file=data_file)
        messages.success(request, f"“{data_file.title}” is removed.")
        return redirect("leaderboard:phase_files", slug=slug, phase=phase)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            added = task_service.phase_file_add(
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


@login_required
def gold_replace(request: HttpRequest, slug: str, phase: str) -> HttpResponse:
    """Two steps: upload and preview what a phase's new gold file changes (or, for a phase that
    waits for its first, what it holds), then confirm."""
    phase_row = _organiser_phase(request, slug, phase)
    task = phase_row.task
    if request.method == "POST" and request.POST.get("confirm"):
        first = phase_row.waits_for_gold
        try:
            count = task_service.gold_confirm(phase=phase_row)
        except ValidationError as error:
            messages.error(request, refusal(error))
            return redirect("leaderboard:gold_replace", slug=task.slug, phase=phase_row.slug)
        if first:
            messages.success(
                request, f"The {phase_row.name} phase has its gold file: it takes uploads and shows its board."
            )
        else:
            messages.success(request, f"The gold file is replaced; {count} submission(s) are being scored again.")
        return redirect(task)
    form = GoldReplaceForm(request.POST or None, request.FILES or None, phase=phase_row)
    context = {"form": form, "task": task, "phase": phase_row}
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["gold"]
        try:
            change = task_service.gold_preview(phase=phase_row, gold_name=upload.name, gold_content=upload.read())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            context.update(overview.gold_change_page(phase=phase_row, change=change))
    return render(request, "leaderboard/gold_form.html", context)


@login_required
def gold_download(request: HttpRequest, slug: str, phase: str) -> HttpResponse:
    """A phase's gold file, for the task's organisers only; everyone else gets a 404."""
    task = task_or_404(slug)
    if not task.is_organiser(request.user):
        raise Http404("No such file.")
    phase_row = phase_or_404(task, phase)
    if phase_row.waits_for_gold:
        raise Http404(errors.WAITS_FOR_GOLD.format(phase=phase_row.name))
    return download(uploads.gold_bytes(phase_row), filename=f"{task.slug}-{phase_row.slug}-gold.csv")


@login_required
@require_POST
def hardest_publish(request: HttpRequest, slug: str, phase: str) -> HttpResponse:
    """Publish a phase's hardest items (``publish=1``) or hide them again."""
    found = _organiser_phase(request, slug, phase)
    published = request.POST.get("publish") == "1"
    try:
        analysis_service.hardest_publish(phase=found, published=published)
    except ValidationError as error:
        messages.error(request, refusal(error))
    else:
        shown = "everyone who sees the board" if published else "the organisers only"
        messages.success(request, f"The hardest items of the {found.name} phase are shown to {shown}.")
    return redirect("leaderboard:analysis", found.task.slug, found.slug)


@login_required
@require_POST
def task_rescore(request: HttpRequest, slug: str) -> HttpResponse:
    task = organiser_task(request, slug)
    count = task_service.task_rescore(task=task)
    messages.success(request, f"{count} submission(s) are queued for scoring; those already scored stay as they are.")
    return redirect(task)


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
            submission = get_object_or_404(task.submissions, pk=request.POST["submission"])
            organiser_service.submission_disqualify(submission=submission, user=request.user, reason=reason)
            messages.success(request, f"Submission #{submission.pk} is disqualified.")
        else:
            team = get_object_or_404(task.community.teams, pk=request.POST.get("team") or 0)
            organiser_service.team_remove(team=team, user=request.user, reason=reason)
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


@login_required
def phase_runs(request: HttpRequest, slug: str, phase: str) -> HttpResponse:
    """Every run of a phase in one download: choose every run or those that count, and teams."""
    phase_row = _organiser_phase(request, slug, phase)
    context = {**runs_selectors.runs_page(phase=phase_row), "form": RunsArchiveForm(task=phase_row.task)}
    return render(request, "leaderboard/phase_runs.html", context)


@login_required
def runs_download(request: HttpRequest, slug: str, phase: str) -> HttpResponse:
    """A phase's runs as one zip, streamed as it is written: the organisers choose which
    (every run or those that count, every team or some); a team gets its own runs."""
    task = task_or_404(slug)
    phase_row = phase_or_404(task, phase)
    form = RunsArchiveForm(request.GET, task=task)
    if not form.is_valid():
        return HttpResponseBadRequest(refusal(ValidationError(form.errors)), content_type="text/plain; charset=utf-8")
    scope = runs_scope(request.user, phase_row)
    teams = form.team_ids()
    if scope is not None and (not scope or (teams is not None and not teams <= scope)):
        raise PermissionDenied(errors.RUNS_NOT_YOURS)
    view = runs_selectors.runs_view(phase=phase_row, user=request.user, which=form.which(), team_ids=teams or scope)
    team = None if scope is None else view.team_names.get(next(iter(scope)))
    return streaming_download(
        archives.runs_archive(view, team=team), filename=archives.archive_name(phase_row, team=team)
    )


@login_required
def task_archive(request: HttpRequest, slug: str) -> HttpResponse:
    """The task as a bundle (with or without its teams and runs), and every run of each phase (of
    each subtask)."""
    task = organiser_task(request, slug)
    phases = sorted(task.every_phase(), key=lambda phase: (phase.task.slug, phase.opens_at))  # subtask by subtask
    return render(request, "leaderboard/task_archive.html", {"task": task, "phases": phases})


@login_required
def task_bundle_download(request: HttpRequest, slug: str) -> HttpResponse:
    """The task as one zip, streamed as it is written (``?runs=1``: with its teams and runs); a
    task divided into subtasks with every subtask."""
    task = organiser_task(request, slug)
    with_runs = request.GET.get("runs") == "1"
    return streaming_download(
        task_bundle(task, with_runs=with_runs, user=request.user), filename=bundle_name(task, with_runs=with_runs)
    )


@login_required
def task_import(request: HttpRequest) -> HttpResponse:
    """Upload a bundle to import as a new task; a bad one is refused at once, saying which file,
    which field and what was expected."""
    form = BundleUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["bundle"]
        try:
            pending = import_service.import_upload(user=request.user, name=upload.name, content=upload.read())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            return redirect("leaderboard:task_import_preview", pk=pending.pk)
    return render(request, "leaderboard/task_import.html", {"form": form, "limits": ZipLimits.from_settings()})


@login_required
def task_import_preview(request: HttpRequest, pk: int) -> HttpResponse:
    """What an uploaded bundle creates and what cannot come over; the organiser answers its
    questions (address, dates, columns of reference files, gold files), checks again, and
    confirms."""
    pending = pending_imports.pending_import(user=request.user, pk=pk)
    if pending is None:
        raise Http404(errors.IMPORT_NOT_PENDING)
    if request.method == "POST" and request.POST.get("action") == "discard":
        import_service.import_discard(pending=pending)
        messages.success(request, "The upload is discarded; nothing was created.")
        return redirect("leaderboard:task_import")
    options = pending_imports.import_options(pending)
    try:
        plan = pending_imports.import_plan(pending=pending, options=options)
    except ValidationError as error:
        messages.error(request, refusal(error))
        return redirect("leaderboard:task_import")
    if not options.slug:
        options = replace(options, slug=pending_imports.free_slug(plan.slug))
    exported = plan.source == EXPORTED_TASK
    form = TaskImportForm(request.POST or None, request.FILES or None, plan=plan, options=options, exported=exported)
    if request.method == "POST" and form.is_valid():
        return _import_answered(request, pending, form)
    context = _preview_context(pending=pending, plan=plan, options=options, form=form, exported=exported)
    return render(request, "leaderboard/task_import_preview.html", context)


def _import_answered(request: HttpRequest, pending, form: TaskImportForm) -> HttpResponse:
    """Keep the organiser's answers and, to "confirm", create the task; back to the preview
    with the refusal when something is wrong."""
    chosen, golds = form.import_options()
    try:
        import_service.import_choose(pending=pending, options=chosen, golds=golds)
        if request.POST.get("action") == "confirm":
            task = import_service.import_confirm(pending=pending, options=pending_imports.import_options(pending))
            messages.success(request, f"The task “{task.title}” is created.")
            return redirect(task)
    except ValidationError as error:
        messages.error(request, refusal(error))
    return redirect("leaderboard:task_import_preview", pk=pending.pk)


def _preview_context(*, pending, plan, options, form: TaskImportForm, exported: bool) -> dict:
    """What the preview shows: the plan, each part with its new address, the form of questions."""
    return {
        "pending": pending,
        "plan": plan,
        "form": form,
        "exported": exported,
        "parts": [
            (part, subtask_slug(parent=options.slug, old_parent=plan.slug, old=part.slug) if plan.divided else "")
            for part in plan.parts()
        ],
        "n_runs": sum(len(part.runs) for part in plan.parts()),
        "waiting": plan.waiting(),
        "needs_labels": errors.IMPORT_NEEDS_LABELS,
    }
