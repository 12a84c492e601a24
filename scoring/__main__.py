"""The standalone scorer: ``python -m scoring GOLD PRED [PRED ...] [--format text|json|latex]``.

With one prediction file it prints the full metric suite of that file against the gold file,
as readable tables or as one JSON object (contract, see
:meth:`scoring.engine.suite.Report.as_json`). With two or more it scores each and ranks them
as the site does (:mod:`scoring.engine.board`): a team per file, named by the file's stem; the
board and the Spearman matrix as tables, or one JSON object (contract, see
:meth:`scoring.engine.board.Board.as_json`). ``--format latex`` prints the board as a table in
the style of paper 000's Table 8 (:mod:`scoring.engine.latex`), its columns chosen with
``--metrics``. ``--ordinal`` reads the labels, in ``--labels`` order, as an ordered scale and
adds its errors (MAE^M and MAE^µ of SemEval-2017 Task 4C, :mod:`scoring.engine.metrics`).
``--aggregate mean_rank|borda`` adds an overall ranking across the ``--metrics`` columns
(:mod:`scoring.engine.aggregate`). ``--bootstrap B --seed S`` adds paired-bootstrap intervals
to a JSON board, and who is significantly behind each column's leader
(:mod:`scoring.engine.bootstrap`); ``--prevalence`` re-scores and re-ranks a board's teams at a
target class distribution (:mod:`scoring.engine.whatif`). ``--analysis`` adds what the runs got
wrong together (:mod:`scoring.engine.analysis`): their majority vote and the oracle, scored and
placed among the teams, kappa between every two runs and its clustering, and the hardest items;
a LaTeX table gains the majority vote and the oracle below a rule.

With ``--analysis`` the JSON board gains one key (contract)::

    "analysis": {"teams": T,
      "majority_vote": {"ties": n, <the single-file report object>,
                        "would_rank": {"raw": {id: rank}, "calibrated": {...}}},
      "oracle": {"accuracy": a, "macro_recall": r, <the single-file report object>, "would_rank": {...}},
      "unsolved": {label: items no run got right},
      "agreement": {"teams": [...], "kappa": [[...]], "clustering": {"method": "average", "order": [...],
                    "merges": [{"left": [...], "right": [...], "kappa": mean}]}},
      "hardest": [{"id", "gold", "right", "labels": {team: label}}]}

``would_rank`` is the competition rank the row would take among the teams without taking a place
from any (``null`` where undefined), keyed like ``ranks``; ``kappa`` is ``null`` where undefined
(two runs that give every item one same label); a merge's ``kappa`` is the mean over its pairs, an
undefined one counted as 1. Exit status 0 on success; 2 with a
message naming the file, the line and the problem on bad input (every bad prediction file of a
board is named).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

import numpy as np

from scoring import multi_output
from scoring.engine.aggregate import METHODS, Aggregate
from scoring.engine.board import Board, score_board
from scoring.engine.columns import Column, table8_columns
from scoring.engine.formatting import rank_text, value_text
from scoring.engine.io import InputFileError
from scoring.engine.latex import latex_table
from scoring.engine.references import plain
from scoring.engine.registry import get
from scoring.engine.scorer import score_files
from scoring.engine.suite import Report, weighted_averages
from scoring.engine.whatif import GOLD, UNIFORM, TargetError, WhatIf, exact_share, parse_target, what_if
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


def extras(report: Report, *, weights: list[float] | None, prevalence: str | None) -> dict:
    """Optional sections: averages with caller-given class weights (paper 004) and every metric
    after scaling the gold columns to a target class distribution (paper 000, Eq. 5), by the
    board's exact what-if (:mod:`scoring.engine.whatif`): equal shares give the calibrated values
    to the last bit. Raises :class:`TargetError` for a target that cannot be used."""
    out: dict = {}
    if weights is not None:
        out["weighted"] = {"weights": weights, **weighted_averages(report.matrix, weights)}
    if prevalence is not None:
        gold_counts = [report.per_class[label]["support"] for label in report.labels]
        target = parse_target(prevalence, labels=report.labels, gold_counts=gold_counts)
        scenario = what_if({"": report.matrix}, labels=report.labels, target=target, ordinal=report.ordinal)
        written = prevalence.split(",")
        as_given = len(written) == len(report.labels) and prevalence.strip().lower() not in (UNIFORM, GOLD)
        shares = target
        if as_given:
            shares = [exact_share(text, label=label) for text, label in zip(written, report.labels, strict=True)]
        metrics = dict(scenario.suite("").metrics)
        out["scaled"] = {"prevalence": [float(share) for share in shares], "metrics": metrics}
    return out


def extras_text(sections: dict) -> str:
    parts = []
    if "weighted" in sections:
        weighted = sections["weighted"]
        rows = [
            [key, value_text(weighted["micro"][key]), value_text(weighted["macro"][key])] for key in weighted["micro"]
        ]
        parts.append(
            f"Weighted averages with class weights ω = {weighted['weights']} "
            f"({plain('@measures-table')}, Tables 2 and 3)\n"
            + table(["measure", "micro-weighted", "macro-weighted"], rows)
        )
    if "scaled" in sections:
        scaled = sections["scaled"]
        rows = [[get(key).name, key, value_text(value)] for key, value in scaled["metrics"].items()]
        parts.append(
            f"Metrics after scaling the gold columns to the class shares {scaled['prevalence']} "
            f"({plain('@opitz-overview, Eq. 5')})\n" + table(["metric", "key", "scaled"], rows)
        )
    return "".join("\n" + part + "\n" for part in parts)


def number_list(text: str, *, what: str, n: int) -> list[float]:
    """Parse "1,2,3" into n non-negative numbers, not all 0, or exit with status 2 and a message
    naming the option."""
    try:
        values = [float(item) for item in text.split(",")]
    except ValueError:
        values = []
    if len(values) != n or any(not (v >= 0 and np.isfinite(v)) for v in values) or sum(values) <= 0:
        message = f"{what} needs {n} comma-separated non-negative numbers, one per label, got {text!r}"
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)
    return values


def board_text(board: Board, columns: Sequence[Column] | None, aggregate: Aggregate | None = None) -> str:
    """The board (raw, then calibrated), the overall ranking if asked, and the rho matrix;
    ``columns`` narrows the board and the matrix."""
    raw = [c for c in columns if not c.calibrated] if columns else board.ranking_columns(calibrated=False)
    calibrated = [c for c in columns if c.calibrated] if columns else board.ranking_columns(calibrated=True)
    heatmap = list(columns) if columns else board.heatmap_columns()
    sections = [
        f"{len(board.teams)} teams, {board.n_items} items, {len(board.labels)} classes: {', '.join(board.labels)}",
    ]
    if raw:
        sections.append(
            "Scores and ranks (competition ranks: 1, 2, 2, 4; – for an undefined value)\n" + board_table(board, raw)
        )
    if calibrated:
        sections.append(
            f"Prevalence-calibrated scores and ranks ({plain('@opitz-overview, Eq. 6')})\n"
            + board_table(board, calibrated)
        )
    if aggregate is not None:
        better = "higher" if aggregate.direction.higher_is_better else "lower"
        sections.append(
            f"Overall ranking: {aggregate.metric.name.lower()} over {len(aggregate.columns)} columns, {better} is "
            f"better, ties as ties; a team undefined under one of them has none "
            f"({', '.join(column.id for column in aggregate.columns)})\n" + board_table(board, [aggregate])
        )
    sections.append(
        "Spearman's rho between the team rankings (average ranks for ties; undefined with fewer than two teams "
        "or a ranking that is all ties)\n" + rho_table(board, heatmap)
    )
    return "\n\n".join(sections) + "\n"


def moves_table(scenario: WhatIf, columns: Sequence[Column]) -> str:
    """A row per column, a cell per team: its rank today, or ``3 → 1 *`` for a team that moves
    from 3rd today to 1st at the target."""
    rows = []
    for column in columns:
        today, at_target = scenario.ranks_today(column), scenario.ranks(column)
        cells = [
            rank_text(today[team])
            if today[team] == at_target[team]
            else f"{rank_text(today[team])} → {rank_text(at_target[team])} *"
            for team in scenario.teams
        ]
        rows.append([column.id, column.symbol, *cells])
    return table(["column", "symbol", *scenario.teams], rows)


def what_if_text(scenario: WhatIf, columns: Sequence[Column]) -> str:
    """The board re-scored at the target distribution, then its ranks next to today's."""
    pairs = zip(scenario.labels, scenario.target, strict=True)
    shares = ", ".join(f"{label} {value_text(float(share))}" for label, share in pairs)
    return (
        f"\nWhat if the classes had the shares {shares} ({plain('@opitz-overview, Eq. 5')}; precision from "
        f"recall and the target shares, {plain('@opitz-overview, Eq. 26-27')})\n"
        f"Scores and ranks at the target\n{board_table(scenario, columns)}\n\n"
        f"Ranks today → at the target (* a team that moves)\n{moves_table(scenario, columns)}\n"
    )


def board_what_if(board: Board, text: str) -> WhatIf:
    """The board's teams at the target distribution that ``--prevalence`` names (``gold``: the
    shares of the gold file's items)."""
    gold_counts = np.bincount(board.gold_codes, minlength=len(board.labels))
    target = parse_target(text, labels=board.labels, gold_counts=gold_counts.tolist())
    matrices = {team: board.reports[team].matrix for team in board.teams}
    return what_if(matrices, labels=board.labels, target=target, ordinal=board.ordinal)


ORDINAL_NEEDS_LABELS = (
    "--ordinal reads the labels as a scale in the order --labels gives them: name that order, e.g. "
    "--labels -2,-1,0,1,2 (the gold file's own order sorts names, not a scale)"
)


def parser() -> argparse.ArgumentParser:
    """The command line's options: ``--help`` and the manual's reference are written from them."""
    command = argparse.ArgumentParser(
        prog="python -m scoring",
        description="Score a prediction file against a gold file with the full metric suite; with several "
        "prediction files, score and rank them as a board (a team per file, named by its stem).",
    )
    command.add_argument("gold", help="gold file: CSV or TSV with the header id,label")
    command.add_argument(
        "predictions",
        nargs="+",
        help="predictions: id,label, or id plus one probability column per label; two or more files make a "
        "board, each file a team named by its stem",
    )
    command.add_argument(
        "--format",
        choices=("text", "json", "latex"),
        default="text",
        help="output format (default: text); latex: a table in the style of Table 8 of " + plain("@opitz-overview"),
    )
    command.add_argument(
        "--labels",
        action="append",
        help="comma-separated label order (default: the gold file's labels in natural order, class2 before class10); "
        "with --multi-label, OUTPUT=a,b,c for an output, once per output to give (the others read from the gold)",
    )
    command.add_argument(
        "--multi-label",
        action="store_true",
        help="a task with several labels an item: the gold and prediction files hold an id and one column per "
        "output; an output of 0 and 1 is a label (1: present). Reports each output's suite, every metric's mean "
        "over the outputs, the exact match ratio and the Hamming loss, and for 0/1 labels the label-set metrics "
        "(micro and macro P/R/F1 over the labels, the Jaccard index and F1 of each item's labels)",
    )
    command.add_argument(
        "--ordinal",
        action="store_true",
        help="the labels, in the order --labels gives, are an ordered scale (e.g. --labels -2,-1,0,1,2): also score "
        "the errors of SemEval-2017 Task 4C, macro_mae (MAE^M) and mae (MAE^µ), lower is better",
    )
    command.add_argument(
        "--metrics",
        help="comma-separated column ids for the latex table or the text board, e.g. "
        "macro_recall,kappa_c,recall[neutral] (default for latex: Table 8's columns)",
    )
    command.add_argument(
        "--aggregate",
        choices=tuple(METHODS),
        help="add an overall ranking across the --metrics columns (default: every raw ranking column): mean_rank, "
        "the mean of a team's competition ranks (lower is better), or borda, the number of teams it beats under "
        "each column, summed (higher is better); with --bootstrap, its intervals too",
    )
    command.add_argument(
        "--bootstrap",
        type=int,
        metavar="REPLICATES",
        help="with a JSON board: add paired-bootstrap 95%% intervals of every score, rank and rho over this many "
        "resampled test sets (e.g. 1000), and under every column who is significantly behind its leader "
        "(behind_leader: the difference's interval and a Holm-adjusted p-value per team)",
    )
    command.add_argument(
        "--seed", type=int, default=0, help="seed of the bootstrap's random numbers (default: 0); same seed, same JSON"
    )
    command.add_argument(
        "--bootstrap-replicates",
        metavar="FILE",
        help="with --bootstrap: also write every replicate's value and rank of every column and team to FILE, a CSV "
        "(replicate,column,team,value,rank) that numpy and pandas read, to recompute any interval",
    )
    command.add_argument(
        "--analysis",
        action="store_true",
        help="with a board: what the runs got wrong together: their majority vote (a tie to the first label) and "
        "the oracle (an item right when any run got it right), each scored and placed among the teams; Cohen's "
        "kappa between every two runs and their clustering; the items no run got right, per gold label and one by "
        "one. A probability file counts as its arg-max label, a tie to the first label in the label order. With "
        "--multi-label, output by output, with the exact-match oracle (the items one run got entirely right) and "
        "kappa the mean of each output's. With --format latex: the majority vote and the oracle below a rule",
    )
    command.add_argument("--weights", help="comma-separated class weights ω, in label order: adds their averages")
    command.add_argument(
        "--prevalence",
        help="comma-separated target class shares, in label order (0.2,0.3,0.5 or 1/3,1/3,1/3), or 'uniform' or "
        "'gold': adds every metric scaled to them, exactly; with a board, every team re-scored and re-ranked at them, "
        "its ranks next to today's",
    )
    return command


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    return parser().parse_args(values_attached(sys.argv[1:] if argv is None else list(argv), VALUE_OPTIONS))


VALUE_OPTIONS = ("--labels", "--metrics", "--weights", "--prevalence", "--format", "--bootstrap-replicates")
"""Options that take one value, which may start with a minus (``--labels -1,0,1``)."""


def values_attached(argv: list[str], options: Sequence[str]) -> list[str]:
    """``--labels -1,0,1`` as ``--labels=-1,0,1``: argparse reads an argument that starts with
    a minus and is not a plain negative number as an option, so the labels of an ordinal scale
    would be refused as a missing value."""
    out: list[str] = []
    index = 0
    while index < len(argv):
        argument = argv[index]
        value = argv[index + 1] if index + 1 < len(argv) else None
        if argument in options and value is not None and value.startswith("-") and value != "--":
            out.append(f"{argument}={value}")
            index += 2
            continue
        if argument == "--":
            out.extend(argv[index:])
            break
        out.append(argument)
        index += 1
    return out


def single_file(args: argparse.Namespace, labels: list[str] | None) -> int:
    """One prediction file: its full report, as before boards existed (unchanged output)."""
    try:
        report = score_files(args.gold, args.predictions[0], labels=labels, ordinal=args.ordinal)
    except (InputFileError, OSError) as error:
        return fail(file_problem(error))
    n = len(report.labels)
    weights = number_list(args.weights, what="--weights", n=n) if args.weights else None
    try:
        more = extras(report, weights=weights, prevalence=args.prevalence)
    except TargetError as error:
        return fail(f"--prevalence: {error}")
    if args.format == "json":
        json.dump({**report.as_json(), **more}, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text_report(report) + extras_text(more))
    return 0


def board(args: argparse.Namespace, labels: list[str] | None) -> int:
    """Several prediction files (or one, as a LaTeX table): scored, ranked, correlated."""
    if args.weights:
        return fail("--weights applies to a single prediction file")
    if args.prevalence and args.format == "latex":
        return fail("--prevalence re-ranks a text or JSON board; --format latex prints the board as it is")
    if problem := bootstrap_problem(args):
        return fail(problem)
    if args.analysis and len(args.predictions) < 2:
        return fail(ANALYSIS_NEEDS_BOARD)
    if args.metrics and args.format == "json" and not args.aggregate:
        return fail(
            "--metrics chooses the columns of --format latex or text, or those of --aggregate; the JSON board "
            "holds every column"
        )
    found = scored_board(
        lambda: score_board(args.gold, args.predictions, labels=labels, ordinal=args.ordinal),
        metrics=args.metrics,
        aggregate=args.aggregate,
    )
    if isinstance(found, int):
        return found
    scored, columns, aggregate = found
    try:
        scenario = board_what_if(scored, args.prevalence) if args.prevalence else None
    except TargetError as error:
        return fail(f"--prevalence: {error}")
    what_if_columns = [c for c in columns if not c.calibrated] if columns else scored.ranking_columns()
    if scenario is not None and not what_if_columns:
        return fail("--prevalence re-estimates raw columns, and --metrics names only calibrated ones")
    if args.format == "json":
        output = board_json(args, scored, aggregate)
        if isinstance(output, int):
            return output
        if scenario is not None:
            output["prevalence_what_if"] = scenario.as_json()
        if args.analysis:
            output["analysis"] = scored.analysis_json(scored.analysis())
        json.dump(output, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    elif args.format == "latex":
        columns = [*(columns or table8_columns(scored.labels)), *([aggregate] if aggregate else [])]
        values = {column.id: scored.values(column) for column in columns}
        ensembles = ensemble_rows(scored.analysis(), columns) if args.analysis else []
        sys.stdout.write(latex_table(teams=scored.teams, columns=columns, values=values, ensembles=ensembles))
    else:
        sys.stdout.write(board_text(scored, columns, aggregate))
        if scenario is not None:
            sys.stdout.write(what_if_text(scenario, what_if_columns))
        if args.analysis:
            sys.stdout.write(analysis_text(scored, scored.analysis(), columns))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.multi_label:
        return multi_output.main(args)
    if args.labels and len(args.labels) > 1:
        return fail("--labels is given once: the labels of the one label column (several outputs: --multi-label)")
    labels = [label.strip() for label in args.labels[0].split(",")] if args.labels else None
    if args.ordinal and labels is None:
        return fail(ORDINAL_NEEDS_LABELS)
    if len(args.predictions) == 1 and args.format != "latex":
        if args.bootstrap is not None:
            return fail("--bootstrap applies to a board (two or more prediction files) with --format json")
        if args.metrics:
            return fail("--metrics applies to a board (two or more prediction files) or to --format latex")
        if args.aggregate:
            return fail("--aggregate ranks the teams of a board (two or more prediction files) or of --format latex")
        if args.analysis:
            return fail(ANALYSIS_NEEDS_BOARD)
        return single_file(args, labels)
    return board(args, labels)


def run() -> None:
    """The command line's entry point: :func:`main`, then its status, leaving through
    ``os._exit`` once every output is flushed. Arrow's thread pools (C++ threads that read the
    files) may still be winding down when a short run ends; an interpreter that exits normally
    runs C++'s static destructors, which abort the process ("terminate called without an active
    exception", status 134) when they meet a thread still joinable, about once in 300 runs of a
    one-line file. Nothing is left to do at that point but leave."""
    try:
        status = main()
    except SystemExit as leaving:
        status = leaving.code if isinstance(leaving.code, int) else (0 if leaving.code is None else 1)
        if not isinstance(leaving.code, int | None):
            print(leaving.code, file=sys.stderr)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        status = status or 1
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    run()
