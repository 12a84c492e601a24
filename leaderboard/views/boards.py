"""Leaderboards and their analyses: the board, its exports, a metric's page, the disagreements.

Every view here shows the results of one phase (named in the URL, or the task's current phase),
so every view goes through :func:`board_view`, on every request and before anything is read
from the results cache: an unknown task or phase is a 404, and a phase whose results are still
hidden answers 403 with a page that says until when, rather than a bare error. The costly parts
of each page come from the results cache (:mod:`leaderboard.results_cache`); the page around
them is rendered for each visitor.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.gzip import re_accepts_gzip
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.utils.text import compress_string
from django.views.decorators.http import require_safe

from leaderboard import charts, errors, exports
from leaderboard.models import Phase
from leaderboard.pages import analysis as analysis_page
from leaderboard.pages import disagreements as disagreements_page
from leaderboard.pages import results as results_page
from leaderboard.pages import shifts as shifts_page
from leaderboard.permissions import can_view_board, can_view_hardest_items, phase_using_gold
from leaderboard.results_cache import cached
from leaderboard.selectors.boards import overall_key, overall_of, paired_columns, shown_columns, sorted_by
from leaderboard.selectors.participation import team_of
from leaderboard.views.common import compressed_once, download, phase_or_404, task_or_404
from scoring.engine.aggregate import Aggregate

BoardView = Callable[..., HttpResponse]


def board_view(view: BoardView | None = None, *, download: bool = False) -> BoardView:
    """Resolve ``slug`` and ``phase`` (absent: the current phase) and check that the phase has a
    board and that its results may be shown to this person. A phase that waits for its gold file
    has none: its pages say so (a page of the site may link to them), its downloads
    (``download``) answer 404 with the same words rather than a file."""
    if view is None:
        return functools.partial(board_view, download=download)

    @functools.wraps(view)
    def wrapper(request: HttpRequest, slug: str, phase: str | None = None, **kwargs: Any) -> HttpResponse:
        task = task_or_404(slug)
        resolved = phase_or_404(task, phase)
        context = {"task": task, "phase": resolved}
        if resolved.waits_for_gold:
            context["is_organiser"] = task.is_organiser(request.user)
            return render(request, "leaderboard/waiting.html", context, status=404 if download else 200)
        if not can_view_board(request.user, resolved):
            return render(request, "leaderboard/hidden.html", context, status=403)
        return view(request, resolved, **kwargs)

    return require_safe(wrapper)


def _team_id(request: HttpRequest, phase: Phase) -> int | None:
    team = team_of(task=phase.task, user=request.user)
    return team.pk if team else None


@board_view
def leaderboard(request: HttpRequest, phase: Phase) -> HttpResponse:
    """The board, a page of it (``?page=``), or the teams whose name holds ``?q=``, sorted by
    any column (``?sort=``), raw or calibrated (``?calibrated=1``); the visitor's team's row is
    always shown (the rows are the same for everybody; the visitor's team is marked here)."""
    options = _board_options(request, phase)

    def context() -> dict:
        return results_page.board_page(phase=phase, team_id=_team_id(request, phase), **options)

    key = _shared_board_key(phase, options)
    if key is None:  # a made-up page: its reader's own
        return render(request, "leaderboard/leaderboard.html", context())
    return _render_shared(request, phase, "leaderboard/leaderboard.html", context, key, reads=BOARD_READS)


BOARD_READS = {"calibrated", "sort", "overall", "over", "page", "contrastive"}
"""The parameters of a board page kept rendered for everyone (a search is the visitor's own)."""


def _board_options(request: HttpRequest, phase: Phase) -> dict:
    """The board's options in the query string, as :func:`results_page.board_page` takes them."""
    return {
        "calibrated": request.GET.get("calibrated") == "1",
        "sort": request.GET.get("sort"),
        "page": request.GET.get("page"),
        "query": request.GET.get("q"),
        "contrastive": _contrastive(request),
        "overall": _overall(request, phase),
    }


def _shared_board_key(phase: Phase, options: dict) -> tuple | None:
    """The options, parsed, that a board page kept for everyone is kept under; ``None`` for a
    page number beyond :data:`SHARED_PAGES` or not a number."""
    page = "1" if options["page"] is None else options["page"]
    if not (page.isdigit() and 0 < int(page) <= SHARED_PAGES):
        return None
    columns = shown_columns(phase.task, calibrated=options["calibrated"], overall=options["overall"])
    sort = sorted_by(phase.task, columns, options["sort"]).id
    return (options["calibrated"], sort, overall_key(options["overall"]), int(page), options["contrastive"])


SHARED_PAGES = 100
"""The pages of a board (of 100 teams) kept rendered for everyone: a made-up page number is
rendered for its reader."""


def _render_shared(
    request: HttpRequest, phase: Phase, template: str, context: Callable[[], dict], params: tuple, *, reads: set[str]
) -> HttpResponse:
    """The page rendered from ``context()``. For a visitor who is nobody in particular (not
    logged in, no message waiting, no session) asking with no parameter but those the page
    ``reads``, the page is the same for everyone who reads it at ``params`` (those parameters,
    parsed): it is rendered once per version of the task and kept in the results cache, so that
    a deadline's readers cost a look-up each."""
    personal = request.user.is_authenticated or "messages" in request.COOKIES or not request.session.is_empty()
    if personal or not set(request.GET) <= reads:
        return render(request, template, context())

    def rendered() -> bytes:  # gzipped once for every reader: the cache holds a tenth of the page
        return compress_string(render(request, template, context()).content)

    gzipped = cached(phase, f"page:{template}", params, rendered)
    if re_accepts_gzip.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
        # the page holds no secret (no session, no form token): one gzip stream serves all
        response = HttpResponse(gzipped, headers={"Content-Encoding": "gzip"})
    else:
        response = HttpResponse(gzip.decompress(gzipped))
    patch_vary_headers(response, ("Accept-Encoding",))
    return response


def _overall(request: HttpRequest, phase: Phase) -> Aggregate | None:
    """The board's overall column: the organisers' choice, or the visitor's (``?overall=``: a
    method, or ``off``; ``?over=``: a named set of columns or column ids)."""
    return overall_of(phase.task, request.GET.get("overall"), request.GET.get("over"))


def _contrastive(request: HttpRequest) -> bool:
    """Whether the teams' contrastive runs are listed (``?contrastive=0`` leaves them out)."""
    return request.GET.get("contrastive") != "0"


@board_view(download=True)
def leaderboard_csv(request: HttpRequest, phase: Phase) -> HttpResponse:
    return download(
        results_page.export(
            phase=phase, kind="csv", contrastive=_contrastive(request), overall=_overall(request, phase)
        ),
        content_type="text/csv; charset=utf-8",
        filename=exports.download_name(phase, "csv"),
    )


@board_view(download=True)
def leaderboard_json(request: HttpRequest, phase: Phase) -> HttpResponse:
    return download(
        results_page.export(
            phase=phase, kind="json", contrastive=_contrastive(request), overall=_overall(request, phase)
        ),
        content_type="application/json",
        filename=exports.download_name(phase, "json"),
    )


@board_view(download=True)
def leaderboard_tex(request: HttpRequest, phase: Phase) -> HttpResponse:
    """The board as a LaTeX table in the style of Table 8 of Opitz 2024: the columns the page shows (raw,
    or calibrated with ``?calibrated=1``), teams with a scored submission in the page's order; with
    ``?analysis=1``, the teams' majority vote and the oracle below a rule."""
    calibrated = request.GET.get("calibrated") == "1"
    table = results_page.export(
        phase=phase,
        kind="tex",
        calibrated=calibrated,
        sort=request.GET.get("sort"),
        contrastive=_contrastive(request),
        overall=_overall(request, phase),
        analysis=request.GET.get("analysis") == "1",
    )
    return download(table, content_type="text/x-tex; charset=utf-8", filename=exports.download_name(phase, "tex"))


@board_view
def metric_detail(request: HttpRequest, phase: Phase, column: str) -> HttpResponse:
    context = results_page.metric_page(
        phase=phase,
        column_id=column,
        page=request.GET.get("page"),
        query=request.GET.get("q"),
        team_id=_team_id(request, phase),
    )
    if context is None:
        raise Http404("This task has no such metric column.")
    return render(request, "leaderboard/metric_detail.html", context)


@board_view
def disagreements(request: HttpRequest, phase: Phase) -> HttpResponse:
    def context() -> dict:
        return disagreements_page.disagreement_page(
            phase=phase,
            set_name=request.GET.get("set"),
            first_id=request.GET.get("a"),
            second_id=request.GET.get("b"),
            team_id=_team_id(request, phase),
        )

    ids = {column.id for column in paired_columns(phase.task)}
    chosen = [request.GET.get(name) for name in ("set", "a", "b")]
    params = (
        chosen[0] if chosen[0] in disagreements_page.COLUMN_SETS else None,
        *(column if column in ids else None for column in chosen[1:]),
    )
    reads = {"set", "a", "b"}
    return _render_shared(request, phase, "leaderboard/disagreements.html", context, params, reads=reads)


@board_view
def what_if(request: HttpRequest, phase: Phase) -> HttpResponse:
    """Every team re-ranked at a class distribution of the visitor's choosing (``?target=``:
    shares in label order, or the form's ``share`` fields; ``?metric=``: a raw column id;
    ``?output=``: the output of a task with several labels an item)."""
    shares = request.GET.getlist("share")
    target = ",".join(shares) if shares else request.GET.get("target")
    context = shifts_page.what_if_page(
        phase=phase,
        target_text=target,
        column_id=request.GET.get("metric"),
        page=request.GET.get("page"),
        query=request.GET.get("q"),
        output_name=request.GET.get("output"),
    )
    return render(request, "leaderboard/what_if.html", context)


@board_view
def shake_up(request: HttpRequest, phase: Phase) -> HttpResponse:
    """Ranks on the public part of a split test set against the final ranking: after the close
    for everyone who may see the board, at any time for the organisers."""
    if not phase.has_split:
        raise Http404("This phase has no public/private split of its test set.")
    if not (phase.is_closed() or phase.task.is_organiser(request.user)):
        raise PermissionDenied(errors.SHAKE_UP_AFTER_CLOSE.format(closes_at=phase.closes_at))
    context = shifts_page.shakeup_page(
        phase=phase, column_id=request.GET.get("metric"), page=request.GET.get("page"), query=request.GET.get("q")
    )
    return render(request, "leaderboard/shake_up.html", context)


@board_view(download=True)
def disagreement_figure(request: HttpRequest, phase: Phase, figure: str) -> HttpResponse:
    """A figure of the disagreement page (``figure``: ``heatmap`` or ``rank-chart``, from the
    URL) for the column set ``?set=``, as one HTML file with plotly.js inlined: it opens offline."""
    wanted = disagreements_page.disagreement_figure(phase=phase, set_name=request.GET.get("set"), figure=figure)
    figure, title, note, stem = (wanted[key] for key in ("figure", "title", "note", "filename"))
    return _offline_figure(request, figure, title=title, note=note, stem=stem)


def _offline_figure(request: HttpRequest, figure: str, *, title: str, note: str, stem: str) -> HttpResponse:
    """A figure as one HTML file with plotly.js inlined (:func:`charts.standalone_html`), written
    and compressed once for everyone (:func:`compressed_once`)."""
    return compressed_once(
        request,
        lambda: charts.standalone_html(figure, title=title, note=note, filename=stem),
        made_of=("standalone_html", charts.PLOTLY_VERSION, figure, title, note),
        filename=f"{stem}.html",
        content_type="text/html; charset=utf-8",
    )


@board_view
def analysis(request: HttpRequest, phase: Phase) -> HttpResponse:
    """What the teams got wrong together: the majority vote and the oracle against the winner,
    the items no team got right, kappa between the teams; the hardest items, with their gold
    labels, for those who may see them."""
    show = can_view_hardest_items(request.user, phase)
    context = analysis_page.analysis_page(phase=phase, show_hardest=show)
    organiser = phase.task.is_organiser(request.user)
    context |= {
        "is_organiser": organiser,
        "gold_user": phase_using_gold(phase) if organiser or phase.hardest_published else None,
    }
    return render(request, "leaderboard/analysis.html", context)


@board_view
def analysis_json(request: HttpRequest, phase: Phase) -> HttpResponse:
    """The analysis as one JSON file (the API's object): the hardest items only for those who may
    see them."""
    found = analysis_page.analysis_api(phase=phase, show_hardest=can_view_hardest_items(request.user, phase))
    return download(
        json.dumps(found, ensure_ascii=False, allow_nan=False),
        content_type="application/json",
        filename=exports.download_name(phase, "json").replace("-leaderboard.", "-analysis."),
    )


@board_view
def analysis_hardest_csv(request: HttpRequest, phase: Phase) -> HttpResponse:
    """Every hardest item with its gold label and each team's label, for those who may see them."""
    if not can_view_hardest_items(request.user, phase):
        raise PermissionDenied(errors.HARDEST_HIDDEN.format(phase=phase.name))
    content = analysis_page.hardest_csv(phase)
    if content is None:
        raise Http404("This phase has no analysis yet.")
    return download(content, filename=exports.download_name(phase, "csv").replace("-leaderboard.", "-hardest-items."))


KAPPA_NOTE = "Cohen's kappa between every two teams' labels, the teams in the order of their clustering."


@board_view
def analysis_heatmap(request: HttpRequest, phase: Phase) -> HttpResponse:
    """The kappa heatmap as one HTML file with plotly.js inlined: it opens offline."""
    summary = analysis_page.analysis_summary(phase)
    if not summary["applies"]:
        raise Http404("This phase has no analysis of two teams or more yet.")
    return _offline_figure(
        request,
        summary["heatmap"],
        title=f"Agreement between the teams · {phase.task.full_title} · {phase.name}",
        note=f"{KAPPA_NOTE} {phase.description}".strip(),
        stem=f"{phase.task.slug}-{phase.slug}-kappa",
    )
