"""A task as everybody sees it: the list of tasks, a task's page, and its phases' data files and
sample submissions (for whoever may take part, once the phase has opened).

Each view parses its request, calls one service (a write) or page builder (a read), and renders
or redirects; problems come back as ``ValidationError``\\ s keyed by form field.
"""

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from leaderboard import errors, samples
from leaderboard.forms import (
    SubmissionForm,
    TeamCreateForm,
    TeamJoinForm,
)
from leaderboard.models import Phase, PhaseFile
from leaderboard.pages import overview
from leaderboard.selectors import participation
from leaderboard.views.common import download, phase_or_404, refusal, task_or_404


def task_list(request: HttpRequest) -> HttpResponse:
    return render(request, "leaderboard/task_list.html", {"tasks": participation.listed_tasks()})


def task_detail(request: HttpRequest, slug: str) -> HttpResponse:
    task = task_or_404(slug)
    context = overview.task_page(task=task, user=request.user)
    context.update(
        submission_form=SubmissionForm(phase=context["open_phase"]),
        team_form=TeamCreateForm(),
        join_form=TeamJoinForm(),
    )
    return render(request, "leaderboard/task_detail.html", context)


def _data_phase(request: HttpRequest, slug: str, phase: str) -> Phase:
    """The phase whose data is asked for, if this person may download it (organisers, and
    whoever may take part: registered, approved, with the current terms accepted), once it has
    opened (before, for its organisers only: 404 to everyone else, as if it had none)."""
    task = task_or_404(slug)
    if not participation.may_download_data(task=task, user=request.user):
        problem = participation.participation_problem(task=task, user=request.user)
        raise PermissionDenied(refusal(problem) if problem else errors.NOT_REGISTERED.format(approval=""))
    found = phase_or_404(task, phase)
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
    if kind not in samples.sample_kinds(phase_row.task.scheme):
        raise Http404("A task with several labels an item takes labels only: no sample of probabilities.")
    if phase_row.waits_for_gold:
        raise Http404(errors.WAITS_FOR_GOLD.format(phase=phase_row.name))
    return download(
        samples.sample_file(phase=phase_row, kind=kind), filename=samples.sample_name(phase=phase_row, kind=kind)
    )
