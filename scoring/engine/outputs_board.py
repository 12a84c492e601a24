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
board does; the item metrics are in ``ranks.raw`` only. :meth:`OutputsBoard.analysis` is what
the runs got wrong together (``--analysis``: its JSON in :mod:`scoring.multi_output`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring.engine import bootstrap
from scoring.engine.analysis import Analysis
from scoring.engine.board import Board, PredictionFilesError, team_names
from scoring.engine.columns import Column, output_columns, output_paired_columns
from scoring.engine.io import InputFileError
from scoring.engine.outputs import read_output_predictions, read_outputs, score_outputs
from scoring.engine.outputs_analysis import analyse_outputs
from scoring.engine.schemes import Output, outputs_are_labels


@dataclass(frozen=True)
class OutputsBoard(Board):
    """Teams and their reports against the gold of a task with several outputs (``gold_codes`` and
    each team's ``predicted`` items × outputs codes)."""

    outputs: tuple[Output, ...] = ()

    def ranking_columns(self, *, calibrated: bool | None = False) -> list[Column]:
        return output_columns(labels=outputs_are_labels(self.outputs), calibrated=calibrated)

    def heatmap_columns(self) -> list[Column]:
        return output_paired_columns(labels=outputs_are_labels(self.outputs))

    def stability(self, *, replicates: int, seed: int, aggregates=(), keep_replicates: bool = False):
        """Paired bootstrap intervals of every column, as a board's
        (:mod:`scoring.engine.output_replicates`); needs a board scored from items."""
        return bootstrap.bootstrap(
            self.gold_codes,
            [self.predicted[team] for team in self.teams],
            labels=(),
            outputs=self.outputs,
            replicates=replicates,
            seed=seed,
            aggregates=aggregates,
            keep_replicates=keep_replicates,
        )

    def analysis(self) -> Analysis:
        """What the runs got wrong together (:func:`scoring.engine.outputs_analysis.analyse_outputs`);
        needs a board scored from items (:func:`score_outputs_board`)."""
        if self.gold_codes is None or self.predicted is None:
            raise ValueError("an analysis needs the items: build the board with score_outputs_board")
        codes = np.stack([self.predicted[team] for team in self.teams])
        return analyse_outputs(self.gold_codes, codes, outputs=self.outputs)

    def as_json(self, *, stability=None, aggregate=None) -> dict:
        """A board's JSON object with the outputs in place of the labels (the module docstring)."""
        board = super().as_json(stability=stability, aggregate=aggregate)
        del board["labels"]
        return {"outputs": [output.as_json() for output in self.outputs], **board}


def score_outputs_board(
    gold: str | Path, predictions: Sequence[str | Path], *, labels: Mapping[str, Sequence[str]] | None = None
) -> OutputsBoard:
    """Score every prediction file against the gold file (read once) and rank them; the errors
    as :func:`scoring.engine.board.score_board` raises them."""
    teams = team_names(predictions)
    gold_file = read_outputs(gold, labels=labels)
    reports, predicted, errors = {}, {}, []
    for team, path in zip(teams, predictions, strict=True):
        try:
            predicted[team] = read_output_predictions(path, gold=gold_file)
            reports[team] = score_outputs(gold_file.codes, predicted[team], outputs=gold_file.outputs)
        except (InputFileError, OSError) as error:
            errors.append(error)
    if errors:
        raise PredictionFilesError(errors)
    return OutputsBoard(
        labels=(),
        n_items=gold_file.n_items,
        teams=tuple(teams),
        reports=reports,
        gold_codes=gold_file.codes,
        predicted=predicted,
        gold=gold_file,
        outputs=gold_file.outputs,
    )
