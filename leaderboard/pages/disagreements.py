"""Where the rankings of a phase disagree: the Spearman heatmap of a column set (Opitz 2024,
Figure 2), the rank chart, a comparison of two columns, and the same for the API.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from leaderboard import charts, exports, stability
from leaderboard.models import Phase
from leaderboard.results_cache import cached
from leaderboard.selectors.boards import (
    compare_values,
    correlations_of,
    paired_columns,
    primary_column,
    team_values,
)
from scoring.engine.columns import PAPER_SET_KEYS, Column
from scoring.engine.formatting import json_value
from scoring.engine.ranking import Correlation
from scoring.engine.registry import BY_KEY

COLUMN_SETS: dict[str, str] = {"paper": "Opitz's SemEval-2017 set (Table 8)", "all": "all metrics"}
"""The heatmap's column sets (``?set=``); the first is the default."""


COLUMN_SET_NOTES: dict[str, str] = {
    "paper": "The metrics of @opitz-overview, Table 8 and Figure 2 ("
    + ", ".join(BY_KEY[key].symbol for key in PAPER_SET_KEYS)
    + ", then each class's recall), each beside its prevalence-calibrated version.",
    "all": "Every ranking metric of the suite, then each class's recall, each beside its prevalence-calibrated "
    "version.",
}
"""One line per column set saying which metrics it holds (``@key`` cites a reference)."""


DISAGREEMENT_FIGURES: dict[str, tuple[str, str]] = {
    "heatmap": ("heatmap", "Rank correlation between metrics"),
    "rank-chart": ("rank_chart", "Each team's rank under each metric"),
}
"""The disagreement page's figures that download as files: name (in URLs and file names) →
(key in the cached analysis, heading)."""


def correlations_api(*, phase: Phase, set_name: str) -> dict[str, Any]:
    """The API's correlations of a column set (cached): rho and the teams it is computed over
    for every pair of columns, and rho's intervals when current."""

    def compute() -> dict[str, Any]:
        columns = paired_columns(phase.task, paper_set=set_name == "paper")
        teams, values = team_values(phase, columns)
        matrix = correlations_of(columns=columns, teams=teams, values=values).matrix
        intervals = stability.intervals_of(phase=phase)
        current = intervals.status == stability.CURRENT and intervals.shown
        return {
            "columns": [exports.column_json(column) for column in columns],
            "teams": len(teams),
            "rho": [[json_value(matrix[a.id][b.id].rho) for b in columns] for a in columns],
            "n_teams": [[matrix[a.id][b.id].n_teams for b in columns] for a in columns],
            "intervals_status": intervals.status,
            "spearman_intervals": [[intervals.rho(a, b) for b in columns] for a in columns] if current else None,
        }

    return cached(phase, "api-correlations", (set_name,), compute)


def most_disagreeing(
    first: Column, columns: Iterable[Column], matrix: Mapping[str, Mapping[str, Correlation]]
) -> Column | None:
    """The column whose ranking is furthest from ``first``'s (lowest defined rho), if any."""
    row = matrix.get(first.id, {})
    candidates = [(row[c.id].rho, c) for c in columns if c.id != first.id and c.id in row and row[c.id].rho is not None]
    return min(candidates, key=lambda pair: pair[0])[1] if candidates else None


def _analysis(phase: Phase, *, columns: list[Column], every_column: list[Column]) -> dict[str, Any]:
    """The disagreement page's costly part: every column's team values, the correlations of
    ``columns`` and both figures (the heatmap's hover with rho's bootstrap intervals), and the
    intervals of rho between every two columns."""
    teams, values = team_values(phase, every_column)
    correlations = correlations_of(columns=columns, teams=teams, values=values)
    intervals = stability.intervals_of(phase=phase)
    return {
        "teams": teams,
        "values": values,
        "intervals": intervals.note(),
        "rho_intervals": {(a.id, b.id): intervals.rho(a, b) for a in every_column for b in every_column},
        "matrix": correlations.matrix,
        "heatmap": charts.correlation_heatmap(columns=columns, matrix=correlations.matrix, intervals=intervals),
        "rank_chart": charts.rank_lines(
            columns=columns, teams=teams, values=correlations.values, order_by=primary_column(phase.task)
        ),
    }


@dataclass(frozen=True)
class SetAnalysis:
    """The disagreement analysis of one column set, as cached, with what it was computed from."""

    set_name: str
    columns: list[Column]
    every_column: list[Column]
    results: dict[str, Any]


def _set_analysis(phase: Phase, set_name: str | None) -> SetAnalysis:
    """The cached analysis of the column set ``set_name`` (the first set when unknown)."""
    set_name = set_name if set_name in COLUMN_SETS else next(iter(COLUMN_SETS))
    columns = paired_columns(phase.task, paper_set=set_name == "paper")
    every_column = paired_columns(phase.task)
    results = cached(
        phase,
        "disagreements",
        (set_name,),
        lambda: _analysis(phase, columns=columns, every_column=every_column),
    )
    return SetAnalysis(set_name=set_name, columns=columns, every_column=every_column, results=results)


def figure_stem(*, phase: Phase, figure: str, set_name: str) -> str:
    """The file name, without extension, of a disagreement figure downloaded as HTML, PNG or SVG:
    ``semeval-2017-4a-evaluation-heatmap-paper``. Slugs, figure and set names are ASCII letters,
    digits and hyphens already (URL patterns and the dicts above), so nothing needs quoting."""
    return f"{phase.task.slug}-{phase.slug}-{figure}-{set_name}"


def disagreement_figure(*, phase: Phase, set_name: str | None, figure: str) -> dict[str, Any]:
    """One figure of the disagreement page for download (``figure`` a key of
    :data:`DISAGREEMENT_FIGURES`): the same cached JSON the page draws, for the same column set."""
    analysis = _set_analysis(phase, set_name)
    key, heading = DISAGREEMENT_FIGURES[figure]
    return {
        "figure": analysis.results[key],
        "title": f"{heading} · {phase.task.title} · {phase.name}",
        "note": f"Metrics: {COLUMN_SETS[analysis.set_name]}.",
        "filename": figure_stem(phase=phase, figure=figure, set_name=analysis.set_name),
    }


def disagreement_page(
    *, phase: Phase, set_name: str | None, first_id: str | None, second_id: str | None
) -> dict[str, Any]:
    """Where the rankings of a phase disagree: the Spearman heatmap of a column set (paper 000,
    Figure 2), the rank chart, and a comparison of two columns (by default the primary metric
    and the column that disagrees with it most)."""
    task = phase.task
    shown = _set_analysis(phase, set_name)
    columns, analysis = shown.columns, shown.results
    matrix = analysis["matrix"]
    by_id = {c.id: c for c in shown.every_column}
    first = by_id.get(first_id or "") or primary_column(task)
    second = by_id.get(second_id or "") or most_disagreeing(first, columns, matrix) or first.counterpart()
    comparison = compare_values(first=first, second=second, teams=analysis["teams"], values=analysis["values"])
    defined_counts = {c.id: matrix[c.id][c.id].n_teams for c in columns}
    n_scored = max(defined_counts.values(), default=0)
    return {
        "task": task,
        "phase": phase,
        "set_name": shown.set_name,
        "column_sets": COLUMN_SETS,
        "column_set_notes": COLUMN_SET_NOTES,
        "columns": columns,
        "every_column": shown.every_column,
        "n_teams": len(analysis["teams"]),
        "n_scored": n_scored,
        "partly_undefined": [(c, defined_counts[c.id]) for c in columns if defined_counts[c.id] < n_scored],
        "heatmap": analysis["heatmap"],
        "rank_chart": analysis["rank_chart"],
        "figure_stems": {
            name: figure_stem(phase=phase, figure=name, set_name=shown.set_name) for name in DISAGREEMENT_FIGURES
        },
        "first": first,
        "second": second,
        "comparison": comparison,
        "intervals": analysis["intervals"],
        "rho_interval": analysis["rho_intervals"].get((first.id, second.id)),
    }
