"""Where the rankings of a phase disagree: the Spearman heatmap of a column set (Opitz 2024,
Figure 2), the rank chart, a comparison of two columns, and the same for the API.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from leaderboard import charts, exports, stability
from leaderboard.models import Phase
from leaderboard.pages.results import board_data_of, compare
from leaderboard.results_cache import cached
from leaderboard.selectors.boards import BoardData, correlations_of, paired_columns, primary_column, team_values
from scoring.engine.aggregate import METHODS, winners
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


RANK_CHART_TEAMS = 50
"""The teams the rank chart draws at most (the top under the primary metric; the page offers
the top 10, 25 or 50, and adds the visitor's own team wherever it stands)."""


def correlations_api(*, phase: Phase, set_name: str) -> dict[str, Any]:
    """The API's correlations of a column set (cached): rho and the teams it is computed over
    for every pair of columns, and rho's intervals when current."""

    def compute() -> dict[str, Any]:
        columns = paired_columns(phase.task, paper_set=set_name == "paper")
        analysis = _set_analysis(phase, set_name).results
        matrix = analysis["matrix"]
        data = board_data_of(phase)
        intervals = stability.intervals_of(phase=phase, data=data)
        current = intervals.status == stability.CURRENT and intervals.shown
        return {
            "columns": [exports.column_json(column) for column in columns],
            "teams": len(data.names),
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


def _analysis(phase: Phase, *, columns: list[Column]) -> dict[str, Any]:
    """The disagreement page's costly part: the correlations of ``columns``, the heatmap (its
    hover with rho's bootstrap intervals), and what the page says of the intervals."""
    data = board_data_of(phase)
    teams, values = team_values(phase, columns, data=data)
    correlations = correlations_of(columns=columns, teams=teams, values=values)
    intervals = stability.intervals_of(phase=phase, data=data)
    return {
        "intervals": intervals.note(),
        "rho_intervals": {(a.id, b.id): intervals.rho(a, b) for a in columns for b in columns},
        "matrix": correlations.matrix,
        "heatmap": charts.correlation_heatmap(columns=columns, matrix=correlations.matrix, intervals=intervals),
    }


@dataclass(frozen=True)
class SetAnalysis:
    """The disagreement analysis of one column set, as cached, with what it was computed from."""

    set_name: str
    columns: list[Column]
    results: dict[str, Any]


def _set_analysis(phase: Phase, set_name: str | None) -> SetAnalysis:
    """The cached analysis of the column set ``set_name`` (the first set when unknown)."""
    set_name = set_name if set_name in COLUMN_SETS else next(iter(COLUMN_SETS))
    columns = paired_columns(phase.task, paper_set=set_name == "paper")
    results = cached(phase, "disagreements", (set_name,), lambda: _analysis(phase, columns=columns))
    return SetAnalysis(set_name=set_name, columns=columns, results=results)


def rank_chart(phase: Phase, columns: list[Column], *, team_id: int | None = None) -> str:
    """The rank chart of ``columns``: the top :data:`RANK_CHART_TEAMS` teams under the primary
    metric, and the team ``team_id`` wherever it stands; ranks on the whole board."""
    data = board_data_of(phase)
    order = data.order(primary_column(phase.task))
    rows = [row for row in order[:RANK_CHART_TEAMS].tolist() if data.submission_ids[row]]
    mine = data.row_of.get(team_id) if team_id is not None else None
    if mine is not None and mine not in rows and data.submission_ids[mine]:
        rows.append(mine)
    return charts.rank_lines(
        columns=columns,
        teams=[data.names[row] for row in rows],
        ranks={c.id: [data.rank(row, c) for row in rows] for c in columns},
        values={c.id: [data.value(row, c) for row in rows] for c in columns},
    )


def figure_stem(*, phase: Phase, figure: str, set_name: str) -> str:
    """The file name, without extension, of a disagreement figure downloaded as HTML, PNG or SVG:
    ``semeval-2017-4a-evaluation-heatmap-paper``. Slugs, figure and set names are ASCII letters,
    digits and hyphens already (URL patterns and the dicts above), so nothing needs quoting."""
    return f"{phase.task.slug}-{phase.slug}-{figure}-{set_name}"


def disagreement_figure(*, phase: Phase, set_name: str | None, figure: str) -> dict[str, Any]:
    """One figure of the disagreement page for download (``figure`` a key of
    :data:`DISAGREEMENT_FIGURES`): the same JSON the page draws, for the same column set."""
    analysis = _set_analysis(phase, set_name)
    key, heading = DISAGREEMENT_FIGURES[figure]
    drawn = analysis.results["heatmap"] if key == "heatmap" else rank_chart(phase, analysis.columns)
    return {
        "figure": drawn,
        "title": f"{heading} · {phase.task.title} · {phase.name}",
        "note": f"Metrics: {COLUMN_SETS[analysis.set_name]}."
        + ("" if key == "heatmap" else f" The top {RANK_CHART_TEAMS} teams under the primary metric."),
        "filename": figure_stem(phase=phase, figure=figure, set_name=analysis.set_name),
    }


OVERALL_SETS = {
    "table8": "the metrics of Table 8 (Opitz 2024)",
    "raw": "every raw ranking column defined for every team",
    "calibrated": "every calibrated ranking column defined for every team",
    "primary": "the primary metric alone",
}
"""The sets of columns whose overall winners the page compares
(:func:`scoring.engine.aggregate.column_sets`), as the page names them."""


@dataclass(frozen=True)
class OverallWinners:
    """Who an overall ranking puts first, for one set of columns and each method."""

    set_name: str
    description: str
    n_columns: int
    winners: dict[str, list[str]]
    """Method → the teams ranked first (ties all named; none where every team is undefined
    under some column of the set)."""


def overall_winners(phase: Phase, data: BoardData) -> list[OverallWinners]:
    """Does the overall winner depend on the set of metrics? The winners of mean rank and Borda
    over each set of :data:`OVERALL_SETS`, from the board's ranks: the set chooses the winner.
    Of each set, the columns every team has a value under (another would leave every team
    without an overall value)."""
    task = phase.task
    scored = np.flatnonzero(data.scored)

    def everywhere(column) -> bool:  # a column some team has no value under would rank no one overall
        return bool(np.all(data.ranks[scored, data.index[column.id]] > 0))

    sets = {
        name: [column for column in columns if everywhere(column)]
        for name, columns in task.scheme.column_sets(primary=task.primary_metric).items()
    }
    sets = {name: columns for name, columns in sets.items() if columns}

    def ranks_of(column) -> np.ndarray:  # 0 where undefined
        return data.ranks[scored, data.index[column.id]]

    found = {method: winners(method, sets, ranks_of) for method in METHODS}
    return [
        OverallWinners(
            set_name=name,
            description=OVERALL_SETS[name],
            n_columns=len(columns),
            winners={method: [data.names[scored[t]] for t in found[method][name]] for method in METHODS},
        )
        for name, columns in sets.items()
    ]


def disagreement_page(
    *, phase: Phase, set_name: str | None, first_id: str | None, second_id: str | None, team_id: int | None = None
) -> dict[str, Any]:
    """Where the rankings of a phase disagree: the Spearman heatmap of a column set (paper 000,
    Figure 2), the rank chart, and a comparison of two columns (by default the primary metric
    and the column that disagrees with it most)."""
    task = phase.task
    shown = _set_analysis(phase, set_name)
    columns, analysis = shown.columns, shown.results
    matrix = analysis["matrix"]
    every_column = paired_columns(task)
    by_id = {c.id: c for c in every_column}
    first = by_id.get(first_id or "") or primary_column(task)
    second = by_id.get(second_id or "") or most_disagreeing(first, columns, matrix) or first.counterpart()
    data = board_data_of(phase)
    comparison = cached(phase, "comparison", (first.id, second.id), lambda: compare(data, first, second))
    defined_counts = {c.id: matrix[c.id][c.id].n_teams for c in columns}
    n_scored = max(defined_counts.values(), default=0)
    mine = data.row_of.get(team_id) if team_id is not None else None
    return {
        "task": task,
        "phase": phase,
        "set_name": shown.set_name,
        "column_sets": COLUMN_SETS,
        "column_set_notes": COLUMN_SET_NOTES,
        "columns": columns,
        "every_column": every_column,
        "n_teams": int(data.scored.sum()),
        "n_scored": n_scored,
        "chart_teams": RANK_CHART_TEAMS,
        "partly_undefined": [(c, defined_counts[c.id]) for c in columns if defined_counts[c.id] < n_scored],
        "heatmap": analysis["heatmap"],
        "rank_chart": rank_chart(phase, columns, team_id=team_id),
        "my_team_name": data.names[mine] if mine is not None and data.submission_ids[mine] else None,
        "figure_stems": {
            name: figure_stem(phase=phase, figure=name, set_name=shown.set_name) for name in DISAGREEMENT_FIGURES
        },
        "first": first,
        "second": second,
        "comparison": comparison,
        "overall": cached(phase, "overall-winners", (), lambda: overall_winners(phase, data)),
        "methods": METHODS,
        "intervals": analysis["intervals"],
        "rho_interval": cached(
            phase,
            "rho-interval",
            (first.id, second.id),
            lambda: stability.intervals_of(phase=phase, data=data).rho(first, second),
        ),
    }
