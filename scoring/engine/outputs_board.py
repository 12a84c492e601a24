"""A board of a task with several outputs, scored from files (``python -m scoring GOLD PRED ...
--multi-label``): each file scored by :func:`scoring.engine.outputs.score_outputs`, ranked and
correlated with the rules of every board (:mod:`scoring.engine.board`) under the columns of such
a task (:func:`scoring.engine.columns.output_columns`: each suite metric's mean over the outputs,
raw and calibrated, then the metrics read from the items).

JSON (contract)::

    {"outputs": [{"name": ..., "labels": [...]}, ...], "n_items": N, "teams": [...],
     "reports": {team: <the single-file object of a task with several outputs>},
     "ranks": {"raw": {id: {team: rank or null}}, "calibrated": {id: {team: rank or null}}},
     "spearman": {"columns": [...], "rho": [[...], ...]}}

``ranks.calibrated`` holds the columns that have a calibrated twin, under their raw ids, as every
board does; the item metrics are in ``ranks.raw`` only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scoring.engine.board import Board, PredictionFilesError, team_names
from scoring.engine.columns import Column, output_columns, output_paired_columns
from scoring.engine.io import InputFileError
from scoring.engine.outputs import read_output_predictions, read_outputs, score_outputs
from scoring.engine.schemes import Output, outputs_are_labels


@dataclass(frozen=True)
class OutputsBoard(Board):
    """Teams and their reports against the gold of a task with several outputs."""

    outputs: tuple[Output, ...] = ()

    def ranking_columns(self, *, calibrated: bool | None = False) -> list[Column]:
        return output_columns(labels=outputs_are_labels(self.outputs), calibrated=calibrated)

    def heatmap_columns(self) -> list[Column]:
        return output_paired_columns(labels=outputs_are_labels(self.outputs))

    def stability(self, **options):
        raise NotImplementedError("the bootstrap of a task with several outputs")

    def analysis(self):
        raise NotImplementedError("the analysis of a task with several outputs")

    def as_json(self, *, stability=None, aggregate=None) -> dict:
        raw = self.ranking_columns(calibrated=False)
        heatmap = self.heatmap_columns()
        matrix = self.correlations(heatmap)
        board = {
            "outputs": [{"name": output.name, "labels": list(output.labels)} for output in self.outputs],
            "n_items": self.n_items,
            "teams": list(self.teams),
            "reports": {team: self.reports[team].as_json() for team in self.teams},
            "ranks": {
                "raw": {column.id: self.ranks(column) for column in raw},
                "calibrated": {
                    column.id: self.ranks(column.counterpart()) for column in raw if column.metric.scope == "matrix"
                },
            },
            "spearman": {
                "columns": [column.id for column in heatmap],
                "rho": [[matrix[row.id][column.id].rho for column in heatmap] for row in heatmap],
            },
        }
        if aggregate is not None:
            board["aggregate"] = self.aggregate_json(aggregate)
        return board


def score_outputs_board(
    gold: str | Path, predictions: Sequence[str | Path], *, labels: Mapping[str, Sequence[str]] | None = None
) -> OutputsBoard:
    """Score every prediction file against the gold file (read once) and rank them; the errors
    as :func:`scoring.engine.board.score_board` raises them."""
    teams = team_names(predictions)
    gold_file = read_outputs(gold, labels=labels)
    reports, errors = {}, []
    for team, path in zip(teams, predictions, strict=True):
        try:
            items = read_output_predictions(path, gold=gold_file)
            reports[team] = score_outputs(gold_file.codes, items, outputs=gold_file.outputs)
        except (InputFileError, OSError) as error:
            errors.append(error)
    if errors:
        raise PredictionFilesError(errors)
    return OutputsBoard(
        labels=(), n_items=gold_file.n_items, teams=tuple(teams), reports=reports, outputs=gold_file.outputs
    )
