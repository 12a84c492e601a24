"""The standalone scorer on a task with several labels an item: ``python -m scoring GOLD PRED ...
--multi-label`` (:mod:`scoring.engine.outputs`).

One prediction file: each suite metric's mean over the outputs (raw and calibrated), the metrics
read from the items, then each output's own report; as JSON (contract)::

    {"n_items": N,
     "outputs": {output: <the single-file report object of that column>},
     "metrics": {key: mean over the outputs, ..., "exact_match": e, "hamming_loss": h,
                 "label_micro_precision": ..., "jaccard": j, "samples_f1": s},
     "calibrated": {key: mean over the outputs of the calibrated value}}

the label-set keys only where every output is a 0/1 label. Several files: a board
(:mod:`scoring.engine.outputs_board`), as text, JSON or LaTeX, with ``--metrics`` and
``--aggregate`` as for any board. ``--labels OUTPUT=a,b,c`` (once per output, as needed) gives an
output's labels in order; the others are read from the gold file.

``--analysis`` on a board adds what the runs got wrong together, output by output (rules:
:mod:`scoring.engine.analysis`, "A task with several outputs"); the JSON board gains one key
(contract), as a single-label board's (:mod:`scoring.__main__`) but for::

    "analysis": {"teams": T,
      "majority_vote": {"ties": item-output cells tied, "ties_per_output": {output: n},
                        <the single-file object of a task with several outputs>, "would_rank": {...}},
      "oracle": {"accuracy": mean over the outputs, "macro_recall": mean over the outputs,
                 "exact_match_one_run": share of the items one run got entirely right,
                 <the single-file object>, "would_rank": {...}},
      "unsolved": {output: {label: items no run got right on that output}},
      "agreement": {... "kappa": each the mean over the outputs of each output's kappa ...},
      "hardest": [{"id", "gold": {output: label}, "right": runs entirely right,
                   "labels": {team: {output: label}}}]}

``would_rank.calibrated`` holds the columns with a calibrated twin, as ``ranks.calibrated`` does.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence

from scoring.engine.aggregate import Aggregate
from scoring.engine.formatting import value_text
from scoring.engine.io import InputFileError
from scoring.engine.latex import latex_table
from scoring.engine.outputs import OutputsReport, score_output_files
from scoring.engine.outputs_board import OutputsBoard, score_outputs_board
from scoring.engine.registry import item_metrics, suite_metrics
from scoring.tables import (
    ANALYSIS_NEEDS_BOARD,
    analysis_text,
    board_json,
    board_table,
    bootstrap_problem,
    ensemble_rows,
    fail,
    file_problem,
    rho_table,
    scored_board,
    table,
    text_report,
)

NOT_WITH_OUTPUTS = ("--prevalence", "--weights", "--ordinal")
"""Options of a single-label task that a task with several outputs does not take."""
LABELS_NEED_OUTPUT = "--labels with --multi-label names an output and its labels: OUTPUT=a,b,c, got {given!r}"


def output_labels(given: Sequence[str] | None) -> dict[str, list[str]] | str:
    """The ``--labels OUTPUT=a,b,c`` values as output → labels, or the message of a bad one."""
    found: dict[str, list[str]] = {}
    for text in given or ():
        output, sep, labels = text.partition("=")
        if not sep or not output.strip() or not labels.strip():
            return LABELS_NEED_OUTPUT.format(given=text)
        found[output.strip()] = [label.strip() for label in labels.split(",")]
    return found


def report_text(report: OutputsReport) -> str:
    """Means and item metrics, then every output's own report."""
    outputs = ", ".join(f"{output.name} ({', '.join(output.labels)})" for output in report.outputs)
    rows = [
        [metric.name, metric.key, value_text(report.metrics[metric.key]), value_text(report.calibrated[metric.key])]
        for metric in suite_metrics()
    ]
    items = [
        [metric.name, metric.key, value_text(report.metrics[metric.key])]
        for metric in item_metrics(labels=report.labels)
    ]
    sections = [
        f"{report.n_items} items, {len(report.outputs)} outputs: {outputs}",
        "Each metric's mean over the outputs\n" + table(["metric", "key", "raw", "calibrated"], rows),
        "Read from the items (no calibrated twin)\n" + table(["metric", "key", "value"], items),
    ]
    sections += [f"Output {name!r}\n" + text_report(single) for name, single in report.reports.items()]
    return "\n\n".join(sections) + "\n"


def board_text(board: OutputsBoard, columns: Sequence | None, aggregate: Aggregate | None) -> str:
    raw = [c for c in columns if not c.calibrated] if columns else board.ranking_columns(calibrated=False)
    calibrated = [c for c in columns if c.calibrated] if columns else board.ranking_columns(calibrated=True)
    outputs = ", ".join(output.name for output in board.outputs)
    sections = [f"{len(board.teams)} teams, {board.n_items} items, {len(board.outputs)} outputs: {outputs}"]
    if raw:
        sections.append(
            "Scores and ranks (each metric of the suite the mean over the outputs)\n" + board_table(board, raw)
        )
    if calibrated:
        sections.append("Prevalence-calibrated means and ranks\n" + board_table(board, calibrated))
    if aggregate is not None:
        sections.append(f"Overall ranking: {aggregate.metric.name.lower()}\n" + board_table(board, [aggregate]))
    heatmap = list(columns) if columns else board.heatmap_columns()
    sections.append("Spearman's rho between the team rankings\n" + rho_table(board, heatmap))
    return "\n\n".join(sections) + "\n"


def main(args: argparse.Namespace) -> int:
    """The scorer on a task with several outputs (see the module)."""
    refused = [option for option in NOT_WITH_OUTPUTS if getattr(args, option[2:].replace("-", "_"))]
    if refused:
        return fail(f"{refused[0]} does not apply with --multi-label")
    labels = output_labels(args.labels)
    if isinstance(labels, str):
        return fail(labels)
    if args.analysis and len(args.predictions) < 2:
        return fail(ANALYSIS_NEEDS_BOARD)
    if problem := bootstrap_problem(args):
        return fail(problem)
    if len(args.predictions) == 1 and args.format != "latex":
        if args.metrics or args.aggregate:
            return fail("--metrics and --aggregate apply to a board (two or more prediction files)")
        return single_file(args, labels)
    return board(args, labels)


def single_file(args: argparse.Namespace, labels: Mapping[str, Sequence[str]]) -> int:
    try:
        report = score_output_files(args.gold, args.predictions[0], labels=labels)
    except (InputFileError, OSError) as error:
        return fail(file_problem(error))
    if args.format == "json":
        json.dump(report.as_json(), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report_text(report))
    return 0


def board(args: argparse.Namespace, labels: Mapping[str, Sequence[str]]) -> int:
    found = scored_board(
        lambda: score_outputs_board(args.gold, args.predictions, labels=labels),
        metrics=args.metrics,
        aggregate=args.aggregate,
    )
    if isinstance(found, int):
        return found
    scored, columns, aggregate = found
    analysis = scored.analysis() if args.analysis else None
    if args.format == "json":
        output = board_json(args, scored, aggregate)
        if isinstance(output, int):
            return output
        if analysis is not None:
            output["analysis"] = scored.analysis_json(analysis)
        json.dump(output, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    elif args.format == "latex":
        columns = [*(columns or scored.ranking_columns(calibrated=False)), *([aggregate] if aggregate else [])]
        values = {column.id: scored.values(column) for column in columns}
        ensembles = ensemble_rows(analysis, columns) if analysis is not None else []
        sys.stdout.write(latex_table(teams=scored.teams, columns=columns, values=values, ensembles=ensembles))
    else:
        sys.stdout.write(board_text(scored, columns, aggregate))
        if analysis is not None:
            sys.stdout.write(analysis_text(scored, analysis, columns))
    return 0
