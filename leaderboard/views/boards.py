"""Leaderboards and their analyses: the board, its exports, a metric's page, the disagreements.

Every view here shows results, so every view goes through :func:`board_view`: an unknown task
is a 404, and a task whose results are still hidden answers 403 with a page that says until
when, rather than a bare error.
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_safe

from leaderboard import caching, charts, presenters, selectors
from leaderboard.models import Task
from leaderboard.permissions import can_view_board
from leaderboard.selectors import CALIBRATED_SUFFIX, Column, Entry
from scoring.engine.metrics import Value, defined
from scoring.engine.ranking import Correlation
from scoring.engine.registry import PROPERTY_NAMES

COLUMN_SETS: dict[str, str] = {"paper": "the paper's set", "all": "all metrics"}
"""The heatmap's column sets (``?set=``); the first is the default."""

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a text cell as a formula (CSV injection)."""

BoardView = Callable[..., HttpResponse]


def board_view(view: BoardView) -> BoardView:
    """Resolve ``slug`` to a task and check that its results may be shown to this person."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, slug: str, **kwargs: Any) -> HttpResponse:
        task = get_object_or_404(Task, slug=slug)
        if not can_view_board(request.user, task):
            return render(request, "leaderboard/hidden.html", {"task": task}, status=403)
        return view(request, task, **kwargs)

    return require_safe(wrapper)


def counterpart_id(column: Column) -> str:
    """The id of the same metric on the other side of the raw/calibrated switch."""
    return column.metric.key + ("" if column.calibrated else CALIBRATED_SUFFIX)


def _split(entries: Iterable[Entry]) -> tuple[list[Entry], list[Entry]]:
    """Teams with a scored submission, then teams without one (listed apart, never ranked)."""
    entries = list(entries)
    return [e for e in entries if e.submission is not None], [e for e in entries if e.submission is None]


# --- the board ---------------------------------------------------------------------------------


@board_view
def leaderboard(request: HttpRequest, task: Task) -> HttpResponse:
    calibrated = request.GET.get("calibrated") == "1"
    columns = selectors.columns_of(task, calibrated=calibrated)
    sort = selectors.sorted_by(task, columns, request.GET.get("sort"))
    rows = caching.cached(
        task,
        caching.scores_stamp(task),
        ("leaderboard", calibrated, sort.id),
        lambda: presenters.board_rows(selectors.leaderboard(task=task, calibrated=calibrated, sort=sort.id)),
    )
    context = {
        "task": task,
        "board": presenters.BoardPage(columns=columns, sort=sort, rows=rows),
        "calibrated": calibrated,
        "switch_sort": counterpart_id(sort),
    }
    return render(request, "leaderboard/leaderboard.html", context)


# --- exports -----------------------------------------------------------------------------------


def _export_rows(task: Task) -> tuple[list[Column], list[dict[str, Any]]]:
    """Every team (then every baseline) with all columns, raw and calibrated, and its ranks."""
    board = selectors.leaderboard(task=task, calibrated=None)
    ranked, unscored = _split(board.entries)
    rows = [
        {
            "name": entry.name,
            "kind": "team",
            "status": "scored" if entry.submission else "no scored submission",
            "submission": entry.submission.pk if entry.submission else None,
            "values": entry.values,
            "ranks": entry.ranks,
        }
        for entry in ranked + unscored
    ]
    rows += [
        {
            "name": entry.name,
            "kind": "baseline",
            "status": "baseline, not ranked",
            "submission": None,
            "values": entry.values,
            "ranks": dict.fromkeys(entry.values),
        }
        for entry in board.baselines
    ]
    return board.columns, rows


def _download_name(task: Task, extension: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", task.slug).strip("-") or "task"
    return f"{stem}-leaderboard.{extension}"


def _attach(response: HttpResponse, filename: str) -> HttpResponse:
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    return response


def csv_cell(value: Any) -> Any:
    """A cell a spreadsheet cannot run: text starting with a formula trigger gets a leading
    apostrophe. Numbers stay numbers, negative ones included; None is an empty cell."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


class _Echo:
    def write(self, value: str) -> str:
        return value


@board_view
def leaderboard_csv(request: HttpRequest, task: Task) -> HttpResponse:
    columns, rows = _export_rows(task)
    header = ["team", "kind", "status", "submission"]
    for column in columns:
        header += [column.id, f"{column.id} rank"]
    writer = csv.writer(_Echo())
    lines = [writer.writerow([csv_cell(cell) for cell in header])]
    for row in rows:
        cells = [row["name"], row["kind"], row["status"], row["submission"]]
        for column in columns:
            cells += [row["values"][column.id], row["ranks"][column.id]]
        lines.append(writer.writerow([csv_cell(cell) for cell in cells]))
    response = HttpResponse("".join(lines), content_type="text/csv; charset=utf-8")
    return _attach(response, _download_name(task, "csv"))


def _json_value(value: Value) -> float | None:
    return None if value is None else defined(value)


@board_view
def leaderboard_json(request: HttpRequest, task: Task) -> HttpResponse:
    columns, rows = _export_rows(task)
    data = {
        "task": {
            "slug": task.slug,
            "title": task.title,
            "labels": list(task.labels),
            "primary_metric": task.primary_metric,
            "counting": task.counting,
        },
        "columns": [
            {
                "id": column.id,
                "metric": column.metric.key,
                "name": column.metric.name,
                "symbol": column.label,
                "calibrated": column.calibrated,
                "formula": column.metric.formula_text,
            }
            for column in columns
        ],
        "rows": [
            {
                **{key: row[key] for key in ("name", "kind", "status", "submission")},
                "values": {column.id: _json_value(row["values"][column.id]) for column in columns},
                "ranks": {column.id: row["ranks"][column.id] for column in columns},
            }
            for row in rows
        ],
    }
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False, "indent": 1, "allow_nan": False})
    return _attach(response, _download_name(task, "json"))


# --- one metric --------------------------------------------------------------------------------


@board_view
def metric_detail(request: HttpRequest, task: Task, column: str) -> HttpResponse:
    chosen = selectors.column_by_id(task, column)
    if chosen is None:
        raise Http404("This task has no such metric column.")
    board = selectors.leaderboard(task=task, calibrated=chosen.calibrated, sort=chosen.id)
    ranked, unscored = _split(board.entries)
    primary = selectors.column_by_id(task, task.primary_metric)
    comparison = None
    if primary is not None and primary.id != chosen.id:
        comparison = selectors.compare_columns(task=task, first=primary, second=chosen)
    moves = {change.team: change for change in comparison.changes} if comparison else {}
    metric = chosen.metric
    n_classes = len(task.labels)
    context = {
        "task": task,
        "column": chosen,
        "metric": metric,
        "board": board,
        "rows": [(entry, moves.get(entry.name)) for entry in ranked],
        "unscored": unscored,
        "primary": primary,
        "comparison": comparison,
        "movers": [change for change in comparison.changes if change.shift] if comparison else [],
        "counterpart": selectors.column_by_id(task, counterpart_id(chosen)),
        "properties": [(code, name, metric.properties[code]) for code, name in PROPERTY_NAMES.items()],
        "n_classes": n_classes,
        "chance": metric.baseline.value(n_classes) if metric.baseline else None,
    }
    return render(request, "leaderboard/metric_detail.html", context)


# --- disagreements -----------------------------------------------------------------------------


def most_disagreeing(
    first: Column, columns: Iterable[Column], matrix: Mapping[str, Mapping[str, Correlation]]
) -> Column | None:
    """The column whose ranking is furthest from ``first``'s (lowest defined rho), if any."""
    row = matrix.get(first.id, {})
    candidates = [(row[c.id].rho, c) for c in columns if c.id != first.id and c.id in row and row[c.id].rho is not None]
    return min(candidates, key=lambda pair: pair[0])[1] if candidates else None


def astuple_shallow(comparison: selectors.Comparison) -> tuple:
    """A comparison's results without its columns: (changes, swaps, correlation)."""
    return comparison.changes, comparison.swaps, comparison.correlation


def _analysis(task: Task, *, columns: list[Column], every_column: list[Column]) -> dict[str, Any]:
    """The disagreements page's costly part: every column's team values, the correlations
    of ``columns`` and both figures."""
    teams, values = selectors.team_values(task, every_column)
    correlations = selectors.correlations_of(columns=columns, teams=teams, values=values)
    return {
        "teams": teams,
        "values": values,
        "matrix": correlations.matrix,
        "heatmap": charts.correlation_heatmap(columns=columns, matrix=correlations.matrix),
        "rank_chart": charts.rank_lines(columns=columns, teams=teams, values=correlations.values),
    }


@board_view
def disagreements(request: HttpRequest, task: Task) -> HttpResponse:
    set_name = request.GET.get("set") if request.GET.get("set") in COLUMN_SETS else next(iter(COLUMN_SETS))
    columns = selectors.paired_columns(task, paper_set=set_name == "paper")
    every_column = selectors.paired_columns(task)
    stamp = caching.scores_stamp(task)
    analysis = caching.cached(
        task,
        stamp,
        ("disagreements", [c.id for c in columns]),
        lambda: _analysis(task, columns=columns, every_column=every_column),
    )
    matrix = analysis["matrix"]
    by_id = {c.id: c for c in every_column}
    first = by_id.get(request.GET.get("a", "")) or by_id.get(task.primary_metric) or every_column[0]
    second = (
        by_id.get(request.GET.get("b", "")) or most_disagreeing(first, columns, matrix) or by_id[counterpart_id(first)]
    )
    # columns hold their metric's functions, which do not pickle: the cache keeps the rest
    changes, swaps, correlation = caching.cached(
        task,
        stamp,
        ("comparison", first.id, second.id),
        lambda: astuple_shallow(
            selectors.compare_values(first=first, second=second, teams=analysis["teams"], values=analysis["values"])
        ),
    )
    comparison = selectors.Comparison(first, second, changes, swaps, correlation)
    defined_counts = {c.id: matrix[c.id][c.id].n_teams for c in columns}
    n_scored = max(defined_counts.values(), default=0)
    context = {
        "task": task,
        "set_name": set_name,
        "column_sets": COLUMN_SETS,
        "columns": columns,
        "every_column": every_column,
        "n_teams": len(analysis["teams"]),
        "n_scored": n_scored,
        "partly_undefined": [(c, defined_counts[c.id]) for c in columns if defined_counts[c.id] < n_scored],
        "heatmap": analysis["heatmap"],
        "rank_chart": analysis["rank_chart"],
        "first": first,
        "second": second,
        "comparison": comparison,
    }
    return render(request, "leaderboard/disagreements.html", context)
