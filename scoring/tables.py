"""What the standalone scorer prints as text (``python -m scoring``): plain tables, a file's report,
a board's values and ranks, the rho matrix, and the error line; and a board scored with the
columns and the overall ranking its options ask for, as every kind of task shares them."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import numpy as np

from scoring.engine.aggregate import Aggregate
from scoring.engine.board import Board, BoardError, PredictionFilesError, choose_columns
from scoring.engine.canonical import matrix_value
from scoring.engine.columns import Column
from scoring.engine.formatting import mass_text, rank_text, rho_text, value_text
from scoring.engine.io import InputFileError
from scoring.engine.metrics import macro_f1_gap_closed_form
from scoring.engine.references import plain
from scoring.engine.registry import CLASS_MEASURES, suite_metrics
from scoring.engine.suite import Report
from scoring.engine.whatif import WhatIf


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        first, *rest = (str(c) for c in cells)
        return "  ".join([first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))])

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def matrix_table(matrix: np.ndarray, labels: Sequence[str]) -> str:
    rows = [[f"pred {label}", *(mass_text(x) for x in row)] for label, row in zip(labels, matrix, strict=True)]
    return table(["", *(f"gold {label}" for label in labels)], rows)


def text_report(report: Report) -> str:
    labels = report.labels
    sections = [
        f"{report.n_items} items, {len(labels)} classes: {', '.join(labels)}",
        "Confusion matrix (rows: predicted, columns: gold)\n" + matrix_table(report.matrix, labels),
    ]
    if report.calibrated_matrix is not None:
        sections.append(
            f"Prevalence-calibrated matrix ({plain('@opitz-overview, Eq. 6')})\n"
            + matrix_table(report.calibrated_matrix, labels)
        )
    else:
        sections.append("Prevalence calibration is undefined: a class has no gold item.")
    metric_rows = [
        [metric.name, metric.key, value_text(report.metrics[metric.key]), value_text(report.calibrated[metric.key])]
        for metric in suite_metrics(ordinal=report.ordinal)
    ]
    sections.append("Metrics\n" + table(["metric", "key", "raw", "calibrated"], metric_rows))
    sections.append(
        f"The two macro F1s ({plain('@opitz-burst-note')}): Δ = F1 of averages − averaged F1 = "
        f"{value_text(report.metrics['macro_f1_gap'], 6)}; by the closed form of its Lemma (Eq. 4): "
        f"{value_text(matrix_value(macro_f1_gap_closed_form, report.matrix), 6)}"
    )
    class_rows = [
        [
            label,
            *(value_text(report.per_class[label][m.key]) for m in CLASS_MEASURES),
            mass_text(report.per_class[label]["support"]),
            mass_text(report.per_class[label]["predicted"]),
        ]
        for label in labels
    ]
    header = ["class", *(m.key for m in CLASS_MEASURES), "support", "predicted"]
    sections.append(
        f"Per class (one-vs-rest, {plain('@measures-table')}, Table 1; dp uses the natural log)\n"
        + table(header, class_rows)
    )
    return "\n\n".join(sections) + "\n"


def board_table(board: Board | WhatIf, columns: Sequence[Column]) -> str:
    """A row per column, a cell per team: the value and, in parentheses, the team's rank (of a
    board, or of a what-if at its target)."""
    rows = []
    for column in columns:
        ranks = board.ranks(column)
        cells = [
            f"{value_text(value)} ({rank_text(ranks[team])})"
            for team, value in zip(board.teams, board.values(column), strict=True)
        ]
        rows.append([column.id, column.symbol, *cells])
    return table(["column", "symbol", *board.teams], rows)


def rho_table(board: Board, columns: Sequence[Column]) -> str:
    """Spearman's rho between every pair of columns; the columns are numbered to keep it narrow."""
    matrix = board.correlations(columns)
    width = len(str(len(columns)))
    rows = [
        [f"{number:>{width}} {row.id}", *(rho_text(matrix[row.id][column.id].rho) for column in columns)]
        for number, row in enumerate(columns, start=1)
    ]
    return table(["", *(str(number) for number in range(1, len(columns) + 1))], rows)


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def file_problem(error: Exception) -> str:
    """A file's problem as the error line says it: where, and what."""
    if isinstance(error, OSError):
        return f"cannot read {error.filename}: {error.strerror}"
    return str(error)


def scored_board(score: Callable[[], Board], *, metrics: str | None, aggregate: str | None):
    """``score()``'s board, the columns ``--metrics`` chose (``None``: every one) and the overall
    ranking ``--aggregate`` asked for; or, after printing every problem, the exit status 2."""
    try:
        board = score()
    except PredictionFilesError as errors:
        for error in errors.errors:
            fail(file_problem(error))
        return 2
    except (BoardError, InputFileError, OSError) as error:
        return fail(file_problem(error))
    try:
        columns = choose_columns(metrics, board.ranking_columns(calibrated=None)) if metrics else None
    except BoardError as error:
        return fail(f"--metrics: {error}")
    overall = Aggregate(aggregate, tuple(columns or board.ranking_columns(calibrated=False))) if aggregate else None
    return board, columns, overall
