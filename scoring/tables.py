"""What the standalone scorer prints as text (``python -m scoring``): plain tables, a file's report,
a board's values and ranks, the rho matrix, a board's analysis, and the error line; and a board
scored with the columns and the overall ranking its options ask for, as every kind of task shares
them."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import numpy as np

from scoring.engine.aggregate import Aggregate
from scoring.engine.analysis import HARDEST_AT_LEAST, Analysis, unsolved_rows
from scoring.engine.board import Board, PredictionFilesError
from scoring.engine.bootstrap import write_replicates
from scoring.engine.canonical import matrix_value
from scoring.engine.columns import Column
from scoring.engine.formatting import mass_text, rank_text, rho_text, value_text
from scoring.engine.io import InputFileError
from scoring.engine.metrics import Value, macro_f1_gap_closed_form
from scoring.engine.outputs_analysis import labels_text
from scoring.engine.ranking import rank_among
from scoring.engine.references import plain
from scoring.engine.registry import CLASS_MEASURES, suite_metrics
from scoring.engine.schemes import BoardError, choose_columns
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


ENSEMBLE_NAMES = ("Majority vote of the teams", "Oracle (any team right)")
"""How a board names the two rows of :mod:`scoring.engine.analysis` that are never ranked."""
ANALYSIS_NEEDS_BOARD = "--analysis compares the runs of a board: give two or more prediction files"


def bootstrap_problem(args) -> str | None:
    """Why the command line's bootstrap options cannot be used as given, if they cannot."""
    if args.bootstrap is not None and (args.format != "json" or len(args.predictions) < 2):
        return "--bootstrap adds intervals to a JSON board: two or more prediction files and --format json"
    if args.bootstrap is not None and args.bootstrap < 1:
        return f"--bootstrap needs a positive number of replicates, got {args.bootstrap}"
    if args.bootstrap_replicates and args.bootstrap is None:
        return "--bootstrap-replicates writes the replicates of --bootstrap"
    return None


def board_json(args, scored: Board, aggregate: Aggregate | None) -> dict | int:
    """The board's JSON object, with the bootstrap's intervals when ``args`` ask for them (and
    every replicate written to ``--bootstrap-replicates``); the exit status of a failure."""
    stability = None
    if args.bootstrap is not None:
        stability = scored.stability(
            replicates=args.bootstrap,
            seed=args.seed,
            aggregates=[aggregate] if aggregate else [],
            keep_replicates=bool(args.bootstrap_replicates),
        )
        if args.bootstrap_replicates:
            try:
                write_replicates(args.bootstrap_replicates, stability, teams=scored.teams)
            except OSError as error:
                return fail(file_problem(error))
    return scored.as_json(stability=stability, aggregate=aggregate)


def ensemble_rows(analysis: Analysis, columns: Sequence[Column | Aggregate]) -> list[tuple[str, dict[str, Value]]]:
    """The majority vote's and the oracle's values under ``columns`` (an overall ranking has none),
    as a LaTeX table's rows below the teams."""
    return [
        (name, {column.id: column.value(report) for column in columns if isinstance(column, Column)})
        for name, report in zip(ENSEMBLE_NAMES, (analysis.majority_vote, analysis.oracle), strict=True)
    ]


def analysis_text(board: Board, analysis: Analysis, columns: Sequence[Column] | None) -> str:
    """The analysis as tables: the majority vote and the oracle against the best team under each
    column, the items no run got right per gold label (of several outputs, per output and gold
    label), kappa in the clustering's order with its merges, and the hardest items (the first
    :data:`HARDEST_AT_LEAST`)."""
    rows = []
    for column in columns or board.ranking_columns(calibrated=None):
        values = board.values(column)
        best = [team for team, rank in board.ranks(column).items() if rank == 1]
        cells = [
            f"{value_text(value)} ({rank_text(rank_among(values, value, column.direction))})"
            for value in (column.value(analysis.majority_vote), column.value(analysis.oracle))
        ]
        best_value = next((value for value, team in zip(values, board.teams, strict=True) if team in best), None)
        rows.append([column.id, column.symbol, f"{value_text(best_value)} ({', '.join(best) or '–'})", *cells])
    outputs = analysis.outputs
    unsolved = [
        [name, str(count), f"{unsolved} ({value_text(unsolved / count if count else None)})"]
        for name, count, unsolved in unsolved_rows(
            labels=board.labels, outputs=outputs, gold_counts=analysis.gold_counts, unsolved=analysis.unsolved
        )
    ]
    runs = [board.teams[run] for run in analysis.agreement.runs]
    order = analysis.agreement.clustering.order
    kappa = analysis.agreement.kappa
    kappa_rows = [[runs[i], *(rho_text(kappa[i][j]) for j in order)] for i in order]
    merges = [
        f"{step:>3}. {' + '.join(runs[r] for r in merge.left)}  with  {' + '.join(runs[r] for r in merge.right)}: "
        f"mean κ {rho_text(merge.kappa)}"
        for step, merge in enumerate(analysis.agreement.clustering.merges, start=1)
    ]
    shown = analysis.hardest[:HARDEST_AT_LEAST].tolist()
    ids = board.gold.ids if board.gold is not None else range(board.n_items)

    def text(codes: int | list[int]) -> str:
        return labels_text(codes, labels=board.labels, outputs=outputs)

    hardest = [
        [
            str(ids[item]),
            text(analysis.gold[item].tolist()),
            str(analysis.right[item]),
            *(text(codes) for codes in analysis.hardest_codes[:, h].tolist()),
        ]
        for h, item in enumerate(shown)
    ]
    n_unsolved = int(analysis.n_items - np.count_nonzero(analysis.right))
    if outputs:
        tied = ", ".join(f"{output.name} {ties}" for output, ties in zip(outputs, analysis.output_ties, strict=True))
        about = (
            f"\nWhat the {analysis.n_runs} runs got wrong together (each output on its own; an item right for a run "
            "when every output is)\n\n"
            f"{ENSEMBLE_NAMES[0]}: each output of each item labelled as most runs labelled it, a tie to the output's "
            f"first label ({analysis.vote_ties} item-output cells tied: {tied}). {ENSEMBLE_NAMES[1]}: an output of "
            "an item right when some run got it right. Exact-match oracle, the items one run got entirely right: "
            f"{value_text(analysis.exact_match_one_run)}. "
        )
        unsolved_title, unsolved_header = " on an output, per output and gold label", "output: gold label"
        kappa_title, hardest_title = " (the mean over the outputs of each output's κ)", "entirely right"
    else:
        about = (
            f"\nWhat the {analysis.n_runs} runs got wrong together (probability files read as their arg-max label, "
            "a tie to the first label)\n\n"
            f"{ENSEMBLE_NAMES[0]}: each item labelled as most runs labelled it, a tie to the first label "
            f"({analysis.vote_ties} items tied). {ENSEMBLE_NAMES[1]}: an item right when some run got it right. "
        )
        unsolved_title, unsolved_header, kappa_title, hardest_title = ", per gold label", "gold label", "", "right"
    return (
        about
        + "Neither is ranked; in parentheses, the rank each would take among the teams.\n"
        + table(["column", "symbol", "best team", "majority vote", "oracle"], rows)
        + f"\n\nItems no run labelled right{unsolved_title}\n"
        + table([unsolved_header, "items", "no run right"], unsolved)
        + f"\n\nCohen's kappa between the runs{kappa_title}, in the order of their clustering (average linkage of "
        "1 − κ; undefined)\n"
        + table(["", *(runs[j] for j in order)], kappa_rows)
        + ("\n\nThe groups, as they join (mean κ over their pairs)\n" + "\n".join(merges) if merges else "")
        + f"\n\nThe hardest items: {n_unsolved} no run got {hardest_title}; the first {len(shown)} of "
        f"{len(analysis.hardest)} (all of them with --format json)\n"
        + table(["id", "gold", "right", *board.teams], hardest)
        + "\n"
    )
