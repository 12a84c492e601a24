"""Teams: creating and joining one, and a member's team page (its profile, invite code, leaving).

Each view parses its request, calls one service (a write) or page builder (a read), and renders
or redirects; problems come back as ``ValidationError``\\ s keyed by form field.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from leaderboard import errors
from leaderboard.forms import (
    TeamCreateForm,
    TeamJoinForm,
    TeamProfileForm,
)
from leaderboard.models import Task, Team
from leaderboard.pages import overview
from leaderboard.selectors import participation
from leaderboard.services import teams as team_service
from leaderboard.views.common import refusal, task_or_404


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
        action=lambda data: team_service.team_create(task=task, user=request.user, name=data["name"]),
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
        action=lambda data: team_service.team_join(task=task, user=request.user, invite_code=data["invite_code"]),
        success="You joined the team “{team.name}”.",
        invalid="Enter the team's invite code.",
    )


@login_required
def team_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """A member's team page: members, invite code, system description, submissions, quota."""
    task = task_or_404(slug)
    context = overview.team_page(task=task, user=request.user)
    if context is None:
        messages.error(request, errors.NO_TEAM)
        return redirect(task)
    form = TeamProfileForm(request.POST or None, instance=context["team"])
    if request.method == "POST" and form.is_valid():
        try:
            team_service.team_update(team=context["team"], user=request.user, changes=form.cleaned_data)
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
    code = team_service.team_invite_regenerate(team=team, user=request.user)
    messages.success(request, f"The new invite code is {code}; the old one no longer works.")
    return redirect("leaderboard:team_detail", slug=task.slug)


@login_required
@require_POST
def team_leave(request: HttpRequest, slug: str) -> HttpResponse:
    task = task_or_404(slug)
    team = _own_team(request, task)
    try:
        team_service.team_leave(team=team, user=request.user)
    except ValidationError as error:
        messages.error(request, refusal(error))
        return redirect("leaderboard:team_detail", slug=task.slug)
    messages.success(request, f"You left the team “{team.name}”.")
    return redirect(task)
