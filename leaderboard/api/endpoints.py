"""The API's endpoints. Each one parses its request, calls the selector or service that the
page of the same thing calls, and returns what that page would show, as JSON.

Visibility: a board (leaderboard, correlations) goes through :func:`can_view_board`, as every
board page does (unknown task 404, hidden results 403 saying until when, none yet 409 while its
phase waits for its gold file); a submission
through :func:`can_view_submission` (404 otherwise, as its page); what a team sees of its
scores through :func:`feedback_level` and :func:`primary_text`, as its page.
"""

from __future__ import annotations

import logging
import math
from typing import Literal

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from ninja import File, Form, NinjaAPI, Query, Status, Swagger
from ninja.errors import AuthenticationError, HttpError, Throttled
from ninja.errors import ValidationError as NinjaValidationError
from ninja.files import UploadedFile

from leaderboard import archives, errors, unavailable
from leaderboard.api import problems, schemas
from leaderboard.api.auth import ApiAuth, Caller
from leaderboard.api.problems import ApiError
from leaderboard.api.throttling import TokenRate
from leaderboard.forms import SubmissionForm
from leaderboard.models import Phase, Submission, Task
from leaderboard.pages import analysis as analysis_page
from leaderboard.pages import disagreements as disagreements_page
from leaderboard.pages import overview
from leaderboard.pages import results as results_page
from leaderboard.pages import shifts as shifts_page
from leaderboard.permissions import can_view_board, can_view_hardest_items, can_view_submission, is_member, runs_scope
from leaderboard.selectors import boards as board_selectors
from leaderboard.selectors import participation
from leaderboard.selectors import runs as runs_selectors
from leaderboard.selectors.feedback import feedback_level, primary_text
from leaderboard.services import submissions as submission_service
from leaderboard.views.common import streaming_download
from scoring.engine.formatting import json_value
from scoring.engine.whatif import TargetError, parse_target

log = logging.getLogger(__name__)

api = NinjaAPI(
    title="Shared-task leaderboard API",
    version="1",
    description=(
        "Tasks, leaderboards (every metric, raw or prevalence-calibrated), rank correlations, uploads and "
        "their scores, under the same visibility and feedback rules as the pages. Send "
        "`Authorization: Bearer <token>` (tokens: your account page); reading also works with the browser's "
        "session or anonymously. Errors are JSON: `{code, message}`."
    ),
    urls_namespace="api",
    auth=ApiAuth(),
    throttle=[TokenRate()],
    docs=Swagger(settings={"validatorUrl": None}),  # no badge fetched from validator.swagger.io: works offline
)

ERRORS = {status: schemas.ErrorOut for status in (400, 401, 403, 404, 409, 429)}


def _error(request: HttpRequest, error: ApiError) -> HttpResponse:
    response = JsonResponse(error.body(), status=error.status)
    for name, value in error.headers.items():
        response[name] = value
    return response


@api.exception_handler(ApiError)
def api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    return _error(request, exc)


PARAMETER_PLACES = frozenset({"query", "path", "form", "file", "body", "header", "cookie"})


def _field(location: tuple) -> str:
    """The parameter a validation error is about: its location without the place it came from."""
    parts = [str(part) for part in location]
    return ".".join(parts[1:] if parts and parts[0] in PARAMETER_PLACES else parts)


@api.exception_handler(NinjaValidationError)
def request_invalid(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    items = [{"field": _field(e.get("loc", ())), "code": e.get("type"), "message": e.get("msg")} for e in exc.errors]
    details = "; ".join(f"{item['field'] or 'request'}: {item['message']}" for item in items)
    error = ApiError.of(400, problems.BAD_REQUEST, details=details)
    error.problems = items
    return _error(request, error)


@api.exception_handler(DjangoValidationError)
def refused(request: HttpRequest, exc: DjangoValidationError) -> HttpResponse:
    """A service's refusal: the page's message, each problem with its field and code."""
    items = [
        {"field": None if field == "__all__" else field, "code": item.code, "message": " ".join(item.messages)}
        for field, field_errors in exc.update_error_dict({}).items()
        for item in field_errors
    ]
    codes = sorted(errors.problem_codes(exc))
    message = " ".join(item["message"] for item in items)
    return _error(request, ApiError(400, codes[0] if len(codes) == 1 else "INVALID", message, problems=items))


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error(request, ApiError(404, "NOT_FOUND", str(exc) or "Not found."))


@api.exception_handler(PermissionDenied)
def forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return _error(request, ApiError(403, "FORBIDDEN", str(exc) or "You may not do this."))


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _error(request, ApiError.of(401, problems.TOKEN_REQUIRED))


@api.exception_handler(Throttled)
def token_throttled(request: HttpRequest, exc: Throttled) -> HttpResponse:
    """A token past its rate (:class:`TokenRate`); ninja adds ``Retry-After``."""
    limit, window = settings.API_TOKEN_RATE_LIMIT, settings.API_TOKEN_RATE_WINDOW
    wait = math.ceil(exc.wait or 1)
    return _error(request, ApiError.of(429, problems.TOKEN_THROTTLED, limit=limit, window=window, wait=wait))


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return _error(request, ApiError(exc.status_code, "HTTP_ERROR", str(exc)))


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def database_unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
    log.warning("database unavailable on %s %s: %s", request.method, request.path, exc)
    response = _error(request, ApiError(503, "UNAVAILABLE", unavailable.MESSAGE))
    return unavailable.unavailable(response)


@api.exception_handler(Exception)
def server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    log.exception("API error on %s %s", request.method, request.path)
    return _error(request, ApiError.of(500, problems.SERVER_ERROR))


def api_not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any other address under /api/: a JSON 404, not the site's HTML page."""
    return _error(request, ApiError.of(404, problems.UNKNOWN_ENDPOINT, path=request.path))


# Helpers


def _user(request: HttpRequest):
    caller: Caller = request.auth  # set by ApiAuth
    return caller.user


def _task(slug: str) -> Task:
    task = participation.task_by_slug(slug)
    if task is None:
        raise ApiError.of(404, problems.UNKNOWN_TASK, slug=slug)
    return task


def _phase(task: Task, slug: str | None) -> Phase:
    """The task's phase ``slug``, or (``None``) its current one."""
    phase = participation.phase_named(task, slug)
    if phase is None:
        raise ApiError(404, errors.NO_SUCH_PHASE.code, participation.no_such_phase(task, slug))
    return phase


def _board_phase(request: HttpRequest, slug: str, phase: str | None) -> Phase:
    """The phase (default: the current one), if it has a board (409 while it waits for its gold
    file) and this person may see its results (as every board page decides)."""
    found = _phase(_task(slug), phase)
    if found.waits_for_gold:
        raise ApiError(409, errors.WAITS_FOR_GOLD.code, errors.WAITS_FOR_GOLD.format(phase=found.name))
    if not can_view_board(_user(request), found):
        raise ApiError.of(
            403, problems.RESULTS_HIDDEN, title=found.task.title, phase=found.name, closes_at=found.closes_at
        )
    return found


def _phase_out(phase: Phase) -> dict:
    return {
        "slug": phase.slug,
        "name": phase.name,
        "counting": phase.counting,
        "visibility": phase.visibility,
        "feedback": phase.feedback,
        "opens_at": phase.opens_at,
        "closes_at": phase.closes_at,
        "max_per_day": phase.max_per_day,
        "max_total": phase.max_total,
        "contrastive_runs": phase.contrastive_runs,
        "is_open": phase.is_open() and not phase.waits_for_gold,
        "results_public": phase.results_public(),
        "waits_for_gold": phase.waits_for_gold,
    }


_PHASE_FIELDS = tuple(schemas.PhaseOut.model_fields)


def _task_out(request: HttpRequest, task: Task, teams: int) -> dict:
    """A task with its phases; the fields of the current phase are repeated at the top level
    (``null`` for a task of subtasks, which has no phases of its own)."""
    current = task.current_phase()
    phase_fields = dict.fromkeys(_PHASE_FIELDS) if current is None else _phase_out(current)
    return {
        "slug": task.slug,
        "title": task.title,
        "parent": task.parent.slug if task.parent_id else None,
        "subtasks": [subtask.slug for subtask in task.subtasks.all()],
        "labels": list(task.labels),
        "outputs": task.outputs or [],
        "primary_metric": task.primary_metric,
        **{key: value for key, value in phase_fields.items() if key not in ("slug", "name")},
        "phase": current.slug if current else None,
        "phases": [_phase_out(phase) for phase in task.ordered_phases()],
        "teams": teams,
        "url": request.build_absolute_uri(task.get_absolute_url()),
    }


def _submission_url(request: HttpRequest, submission: Submission) -> str:
    return request.build_absolute_uri(reverse("api:submission", args=[submission.pk]))


# Tasks


@api.get("/tasks", response={200: list[schemas.TaskOut], **ERRORS}, tags=["tasks"])
def task_list(request: HttpRequest):
    """Every task with its phases, as the home page lists them."""
    return [
        _task_out(request, listed, task.team_count)
        for task in participation.listed_tasks()
        for listed in (task, *task.subtasks.all())
    ]


@api.get("/tasks/{slug}", response={200: schemas.TaskDetailOut, **ERRORS}, tags=["tasks"])
def task_detail(request: HttpRequest, slug: str):
    """A task, and what you see on its page: your team, its submissions (primary scores as the
    feedback policy shows them), whether you may see the board."""
    task = _task(slug)
    user = _user(request)
    page = overview.task_page(task=task, user=user)
    team = page["team"]
    current = page["phase"]
    sections = {section.phase.pk: section for section in page["sections"]}
    quota = sections[current.pk].quota if current.pk in sections and current.is_open() else None
    return {
        **_task_out(request, task, task.community.teams.count()),
        "description": task.description,
        "you": {
            "team": team.name if team else None,
            "is_organiser": page["is_organiser"],
            "board_visible": not current.waits_for_gold and can_view_board(user, current),
            "feedback": str(feedback_level(phase=current, user=user)),
            "submissions": [
                {
                    "id": row.submission.pk,
                    "phase": section.phase.slug,
                    "status": row.submission.status,
                    "created_at": row.submission.created_at,
                    "file_name": row.submission.file.name,
                    "description": row.submission.description,
                    "primary": row.primary,
                    "counts": row.counts,
                }
                for section in page["sections"]
                for row in section.rows
            ],
            "quota": None
            if quota is None
            else {
                "used_today": quota.used_today,
                "left_today": quota.left_today,
                "used_total": quota.used_total,
                "left_total": quota.left_total,
                "resets_at": quota.resets_at,
            },
        },
    }


# Boards


@api.get("/tasks/{slug}/leaderboard", response={200: schemas.BoardOut, **ERRORS}, tags=["boards"], by_alias=True)
def leaderboard(
    request: HttpRequest,
    slug: str,
    calibrated: bool = False,
    sort: str | None = None,
    phase: str | None = None,
    page: int = Query(1, ge=1),
    per_page: int = Query(100, ge=0, le=1000),
    overall: str | None = Query(None, description="an overall ranking first: mean_rank, borda, or off"),
    over: str | None = Query(None, description="its columns: table8, raw, calibrated, or column ids with commas"),
):
    """The leaderboard of a phase (``phase``: its slug; default the current phase): a column per
    ranking metric (raw, or prevalence-calibrated with ``calibrated=true``), each team's value
    and rank, then the baselines and the teams' majority vote and oracle (never ranked; see
    ``/analysis``); rows sorted by ``sort`` (a column id; default
    the primary metric), ``per_page`` teams a page (``page``; 0: every team on one page). The
    rows are those of the JSON download; the intervals are those of the page's teams. First
    the organisers' overall ranking, if they chose one, or ``overall`` over ``over``."""
    found = _board_phase(request, slug, phase)
    task = found.task
    method, chosen = task.overall_method if overall is None else overall, None
    try:
        if method not in ("", "off"):
            chosen = task.scheme.overall(method, over or task.overall_columns, primary=task.primary_metric)
    except ValueError as error:
        raise ApiError.of(400, problems.BAD_OVERALL, why=str(error)) from None
    columns = board_selectors.shown_columns(task, calibrated=calibrated, overall=chosen)
    if sort and board_selectors.column_by_id(task, sort) not in columns and not (chosen and sort == chosen.id):
        raise ApiError.of(400, problems.UNKNOWN_COLUMN, column=sort, columns=", ".join(column.id for column in columns))
    return results_page.board_api(
        phase=found, calibrated=calibrated, sort=sort, page=page, per_page=per_page, overall=chosen
    )


@api.get(
    "/tasks/{slug}/correlations", response={200: schemas.CorrelationsOut, **ERRORS}, tags=["boards"], by_alias=True
)
def correlations(
    request: HttpRequest,
    slug: str,
    column_set: Literal["paper", "all"] = Query("paper", alias="set"),
    phase: str | None = None,
):
    """Spearman's rho between the team rankings of every pair of columns in a phase (default
    the current one), each metric beside its calibrated version, as the disagreement page's
    heatmap (``set``: the paper's Table 8 metrics, or all)."""
    found = _board_phase(request, slug, phase)
    return {
        "phase": found.slug,
        "set": column_set,
        **disagreements_page.correlations_api(phase=found, set_name=column_set),
    }


@api.get("/tasks/{slug}/analysis", response={200: schemas.AnalysisOut, **ERRORS}, tags=["boards"], by_alias=True)
def analysis(request: HttpRequest, slug: str, phase: str | None = None):
    """What the teams of a phase (default the current one) got wrong together, as its analysis
    page shows it and the CLI's ``--analysis`` computes it: the majority vote of the teams and
    the oracle, each scored under every metric with the rank it would take, the items no team
    got right per gold label, Cohen's kappa between the teams and its clustering; the hardest
    items only for those who may see their gold labels."""
    found = _board_phase(request, slug, phase)
    show = can_view_hardest_items(_user(request), found)
    return analysis_page.analysis_api(phase=found, show_hardest=show)


@api.get("/tasks/{slug}/what-if", response={200: schemas.WhatIfOut, **ERRORS}, tags=["boards"], by_alias=True)
def what_if(
    request: HttpRequest,
    slug: str,
    prevalence: str = "uniform",
    phase: str | None = None,
    page: int = Query(1, ge=1),
    per_page: int = Query(100, ge=0, le=1000),
    output: str | None = None,
):
    """Every team of a phase's board (default the current phase) re-scored at another class
    distribution of the gold (paper 000, Eq. 5 and 26-27): ``prevalence`` is shares in label
    order (``0.2,0.3,0.5``, fractions such as ``1/3``, any positive weights), ``uniform`` (the
    calibrated scores) or ``gold`` (today's). Per ranking column, each team's value and rank at
    the target and its rank today; the teams that move; per class, each team's measures there.
    Teams in the order of the primary metric at the target, ``per_page`` a page (``page``; 0:
    every team on one page). A task with several labels an item: the what-if of one ``output``
    (default the first), its labels' shares, under that output's own metrics."""
    found = _board_phase(request, slug, phase)
    try:
        chosen = shifts_page.chosen_output(found.task, output)
    except shifts_page.UnknownOutput as error:
        raise ApiError.of(400, errors.NO_SUCH_OUTPUT, **error.params) from None
    try:
        labels, counts = shifts_page.what_if_classes(found, chosen)
        target = parse_target(prevalence, labels=labels, gold_counts=counts)
        answer = shifts_page.what_if_api(phase=found, target=target, page=page, per_page=per_page, output=chosen)
    except TargetError as error:  # a bad target, or a class without gold items in the part shown
        raise ApiError.of(400, problems.BAD_TARGET, details=str(error)) from None
    return {"phase": found.slug, **answer}


# Submissions


@api.post("/tasks/{slug}/submissions", response={201: schemas.SubmissionCreatedOut, **ERRORS}, tags=["submissions"])
def submission_create(request: HttpRequest, slug: str, file: File[UploadedFile], description: Form[str] = ""):
    """Upload a prediction file (multipart: ``file``, optional ``description``) for your team to
    the phase open now. A bad file is refused at once (400) with the page's line-precise message
    and its code, and counts against no limit. Needs a token."""
    task = _task(slug)
    form = SubmissionForm({"description": description}, {"file": file})
    if not form.is_valid():
        raise DjangoValidationError(form.errors.as_data())
    upload = form.cleaned_data["file"]
    submission = submission_service.submission_create(
        task=task,
        user=_user(request),
        name=upload.name,
        content=upload.read(),
        description=form.cleaned_data["description"],
    )
    return Status(
        201,
        {
            "id": submission.pk,
            "phase": submission.phase.slug,
            "status": submission.status,
            "url": _submission_url(request, submission),
            "page": request.build_absolute_uri(submission.get_absolute_url()),
        },
    )


def _metrics(*, submission: Submission, user, level) -> list[dict]:
    """Every metric raw and calibrated, with ranks where the board may be shown and this
    submission counts: the rows of its page's table, with the page's precision while results are
    hidden (:func:`overview.submission_scores`)."""
    return [
        {
            "column": row.column.id,
            "calibrated_column": row.calibrated_column.id,
            "name": row.column.name,
            "raw": json_value(row.raw),
            "calibrated": json_value(row.calibrated),
            "rank": row.rank,
            "calibrated_rank": row.calibrated_rank,
        }
        for row in overview.submission_scores(submission=submission, user=user, level=level).rows
    ]


@api.get(
    "/submissions/{pk}", response={200: schemas.SubmissionOut, **ERRORS}, tags=["submissions"], url_name="submission"
)
def submission_detail(request: HttpRequest, pk: int):
    """A submission's status and, once scored, what the task's feedback policy lets you see:
    every metric (full, or results public), the primary score rounded, or only that it was
    scored. Matrices only once results are public (or to organisers)."""
    user = _user(request)
    submission = (
        Submission.objects.select_related("phase__task", "team", "file").defer("file__content").filter(pk=pk).first()
    )
    if submission is None or not can_view_submission(user, submission):
        raise ApiError.of(404, problems.UNKNOWN_SUBMISSION, pk=pk)
    task = submission.task
    level = feedback_level(phase=submission.phase, user=user)
    scored = submission.status == Submission.Status.SCORED
    data = {
        "id": submission.pk,
        "task": task.slug,
        "phase": submission.phase.slug,
        "part": submission.phase.shown_part(),
        "team": submission.team.name,
        "status": submission.status,
        "failure": submission.failure or None,
        "kind": submission.kind,
        "file_name": submission.file.name,
        # The team's own note on the run: for the team and the organisers, as on its page.
        "description": submission.description if is_member(user, submission) or task.is_organiser(user) else None,
        "created_at": submission.created_at,
        "scored_at": submission.scored_at,
        "feedback": str(level),
        "primary_metric": task.primary_metric,
        "primary": primary_text(submission, level),
        "page": request.build_absolute_uri(submission.get_absolute_url()),
    }
    if scored and level.shows_metrics:
        data["metrics"] = _metrics(submission=submission, user=user, level=level)
    if scored and level.shows_matrices:
        shown = submission.shown_scores()
        data["confusion_matrix"] = shown.confusion_matrix if shown else None
        data["calibrated_matrix"] = shown.calibrated_matrix() if shown else None
    return data


ZIP_RESPONSE = {
    "responses": {
        200: {
            "description": "a zip archive, streamed",
            "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
        }
    }
}


@api.get("/tasks/{slug}/submissions.zip", response={**ERRORS}, tags=["submissions"], openapi_extra=ZIP_RESPONSE)
def submissions_archive(
    request: HttpRequest,
    slug: str,
    phase: str | None = None,
    runs: Literal["all", "counting"] = "all",
    team: list[str] = Query(None),  # noqa: B008 (ninja reads its parameters' defaults)
):
    """Every run of a phase (default the current one) in one zip, streamed as it is written:
    each file as uploaded under ``<team>/<run id>-<original name>``, an index ``runs.csv``
    (every metric raw and calibrated with its rank, the board's numbers) and a README. ``runs``:
    every run or only those that count; ``team`` (repeatable, by name): some teams only. The
    task's organisers get any team's runs; a team member gets their own team's (as the feedback
    policy shows their scores). Needs an account: a token, or the browser's session."""
    user = _user(request)
    found = _phase(_task(slug), phase)
    if not user.is_authenticated:
        raise ApiError.of(401, problems.RUNS_NEED_ACCOUNT, headers={"WWW-Authenticate": 'Bearer realm="api"'})
    names = {name.casefold(): pk for pk, name in found.task.community.teams.values_list("pk", "name")}
    unknown = [name for name in team or [] if name.casefold() not in names]
    if unknown:
        raise ApiError.of(400, problems.UNKNOWN_TEAM, name=unknown[0])
    teams = frozenset(names[name.casefold()] for name in team) if team else None
    scope = runs_scope(user, found)
    if scope is not None and (not scope or (teams is not None and not teams <= scope)):
        raise ApiError(403, errors.RUNS_NOT_YOURS.code, str(errors.RUNS_NOT_YOURS))
    view = runs_selectors.runs_view(phase=found, user=user, which=runs, team_ids=teams or scope)
    own = None if scope is None else view.team_names.get(next(iter(scope)))
    return streaming_download(archives.runs_archive(view, team=own), filename=archives.archive_name(found, team=own))
