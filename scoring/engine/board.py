"""A board scored from files: several prediction files against one gold file, ranked.

This is what ``python -m scoring GOLD PRED [PRED ...]`` prints, so that an organiser can
reproduce a shared task's table (paper 000, Table 8) and its rank correlations (Figure 2)
from a folder of files. It uses the site's engine and rules unchanged: each file is scored by
the suite (:func:`scoring.engine.suite.score_matrix`; for labels declared an ordered scale,
``ordinal``, the suite holds the ordinal errors ``macro_mae`` and ``mae`` too), its columns are
the site's ranking columns (:mod:`scoring.engine.columns`), and ranks, ties and Spearman's rho
come from :mod:`scoring.engine.ranking` (competition ranks 1, 2, 2, 4, rank 1 the best by each
column's direction, the lowest error of an ordinal error; average ranks for rho; values equal
as fractions are the same double, so ties are exact).

Ranking stability (optional, ``--bootstrap``): :meth:`Board.stability` runs the paired bootstrap
of :mod:`scoring.engine.bootstrap` on the items the board was scored from, and
:meth:`Board.as_json` then adds the intervals (rules: percentiles, undefined intervals, the
tie with the leader and the groups, in that module's docstring).

A team is named by its file's stem (``runs/team-a.csv`` is ``team-a``), in argument order; two
files with the same stem are refused (:data:`DUPLICATE_TEAM`), naming both. The gold file is
read once.

JSON (contract, see :meth:`Board.as_json`)::

    {"labels": [...], "n_items": N, "teams": ["A", "B", ...],
     "reports": {team: <the single-file report object, unchanged>},
     "ranks": {"raw": {key: {team: rank or null}}, "calibrated": {key: {team: rank or null}}},
     "spearman": {"columns": ["accuracy", "accuracy_c", ...], "rho": [[...], ...]}}

``ranks`` holds every ranking column under its raw column id in both sections: each ranking
metric under its registry key, each class's recall under ``recall[label]`` (the calibrated
section says that the ranks are those of the calibrated values; the ids carry no ``_c``).
``spearman.columns`` are the column ids of the site's heatmap of every metric, in its order
(:func:`scoring.engine.columns.paired_columns`: each column followed by its calibrated
version, ``_c``); ``rho[i][j]`` is ``null`` where rho is undefined (fewer than two teams
defined under both columns, or a ranking that is all ties).

With a bootstrap (:meth:`Board.as_json` given a :class:`~scoring.engine.bootstrap.Stability`)
the object also holds, ``[lo, hi]`` pairs being ``null`` where undefined::

    "bootstrap": {"replicates": B, "seed": S, "confidence": 0.95, "percentile_method": "inverted_cdf",
                  "block_size": 200},
    "intervals": {"raw": {id: {team: {"score": [lo, hi], "rank": [best, worst]}}}, "calibrated": {...}},
    "tied_with_leader": {"raw": {id: [team, ...]}, "calibrated": {...}},
    "indistinguishable": {"raw": {id: [[team, ...], ...]}, "calibrated": {...}},
    "behind_leader": {"raw": {id: {team: {"difference": [lo, hi], "p_holm": p}}}, "calibrated": {...}},
    "spearman_intervals": [[[lo, hi], ...], ...]

keyed like ``ranks`` (raw column ids in both sections); ``spearman_intervals`` has the layout of
``spearman.rho`` (same ``spearman.columns``) with a ``[lo, hi]`` cell for each rho.
``behind_leader`` holds, per column, every team but the column's leader (the team ranked 1,
the first of them in team order on a tie): the interval of the paired bootstrap difference
leader − team (positive when the leader is better, by the column's direction: for an error it
is the team's error minus the leader's) and the one-sided p-value of "the team is not behind
the leader" with Holm's correction across the column's teams, ``null`` where undefined (the
method and its assumptions: :mod:`scoring.engine.significance`). A team with ``p_holm`` at most
0.05 is significantly behind the leader; above, it is not. The interval is the team's own (not
adjusted for the column's other teams); the p-value is adjusted.

With an overall ranking (:meth:`Board.as_json` given an
:class:`~scoring.engine.aggregate.Aggregate`; rules in :mod:`scoring.engine.aggregate`), the
object also holds::

    "aggregate": {"method": "mean_rank" | "borda", "columns": [id, ...],
                  "value": {team: number or null}, "rank": {team: rank or null}}

and with a bootstrap besides, the same replicates' intervals::

    "aggregate_intervals": {team: {"value": [lo, hi], "rank": [best, worst]}}

``columns`` are the column ids the ranking is over (``kappa_c`` for a calibrated one);
``value`` is the mean rank (lower is better) or the Borda points (higher is better), ``null``
for a team without a rank under one of the columns, and ``rank`` its competition rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scoring.engine import bootstrap
from scoring.engine.aggregate import Aggregate
from scoring.engine.analysis import Analysis, analyse, hard_labels
from scoring.engine.columns import Column, paired_columns, ranking_columns
from scoring.engine.intervals_json import aggregate_intervals_json, stability_json
from scoring.engine.io import IdsFile, InputFileError, read_labels, read_predictions
from scoring.engine.metrics import Value
from scoring.engine.ranking import Correlation, competition_ranks, rank_among, spearman_matrix
from scoring.engine.schemes import BoardError
from scoring.engine.scorer import report_of
from scoring.engine.suite import Report

if TYPE_CHECKING:
    from scoring.engine.outputs import OutputsReport

DUPLICATE_TEAM = "{first} and {second} would both be team {team!r} (a team is named by its file's stem); rename one"


class PredictionFilesError(ValueError):
    """One or more prediction files are bad: ``errors`` holds each file's problem, in argument
    order (an :class:`~scoring.engine.io.InputFileError` naming the file and the line, or the
    ``OSError`` of a file that cannot be read)."""

    def __init__(self, errors: Sequence[Exception]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(error) for error in self.errors))


def team_names(paths: Sequence[str | Path]) -> list[str]:
    """Each prediction file's team: its stem, in argument order; duplicates are refused."""
    first_file: dict[str, str] = {}
    names = []
    for path in paths:
        name = Path(path).stem
        if name in first_file:
            raise BoardError(DUPLICATE_TEAM, first=first_file[name], second=str(path), team=name)
        first_file[name] = str(path)
        names.append(name)
    return names


@dataclass(frozen=True)
class Board:
    """Teams (in argument order) and their reports, all against the same gold labels."""

    labels: tuple[str, ...]
    n_items: int
    teams: tuple[str, ...]
    reports: Mapping[str, Report]
    gold_codes: np.ndarray | None = field(default=None, repr=False, compare=False)
    """The gold codes the board was scored against (items in the gold file's order)."""
    predicted: Mapping[str, np.ndarray] | None = field(default=None, repr=False, compare=False)
    """Each team's aligned predictions: class codes, or probability rows."""
    ordinal: bool = False
    """Whether the labels, in their order, are an ordered scale: the ordinal errors are then
    columns too."""
    gold: IdsFile | None = field(default=None, repr=False, compare=False)
    """The gold file read (its ids name the items of an analysis)."""

    def values(self, column: Column | Aggregate) -> list[Value]:
        """The teams' values under ``column``, in team order (``None`` where undefined); an
        overall ranking's values come from the board's ranks under its columns."""
        if isinstance(column, Aggregate):
            return column.values([list(self.ranks(chosen).values()) for chosen in column.columns])
        return [column.value(self.reports[team]) for team in self.teams]

    def ranks(self, column: Column | Aggregate) -> dict[str, int | None]:
        """Competition ranks under ``column`` (1, 2, 2, 4, best first by the column's direction),
        ``None`` for an undefined value."""
        return dict(zip(self.teams, competition_ranks(self.values(column), column.direction), strict=True))

    def ranking_columns(self, *, calibrated: bool | None = False) -> list[Column]:
        """The site's ranking columns for these labels: raw, calibrated, or (``None``) both."""
        return ranking_columns(self.labels, calibrated=calibrated, ordinal=self.ordinal)

    def heatmap_columns(self) -> list[Column]:
        """The columns of the rho heatmap: each ranking column followed by its calibrated version."""
        return paired_columns(self.labels, ordinal=self.ordinal)

    def correlations(self, columns: Sequence[Column]) -> dict[str, dict[str, Correlation]]:
        """Spearman's rho between the team rankings of every pair of ``columns``, by column id
        (each ranked best first by its direction)."""
        values = {column.id: self.values(column) for column in columns}
        return spearman_matrix(values, directions={column.id: column.direction for column in columns})

    def stability(
        self, *, replicates: int, seed: int, aggregates: Sequence[Aggregate] = (), keep_replicates: bool = False
    ) -> bootstrap.Stability:
        """Paired bootstrap intervals of every ranking column (raw and calibrated), of the
        heatmap's rho and of the overall rankings ``aggregates``; needs a board scored from
        items (:func:`score_board`). ``keep_replicates``: with every replicate's values and
        ranks (:func:`scoring.engine.bootstrap.write_replicates`)."""
        if self.gold_codes is None or self.predicted is None:
            raise ValueError("a bootstrap needs the items: build the board with score_board")
        return bootstrap.bootstrap(
            self.gold_codes,
            [self.predicted[team] for team in self.teams],
            labels=self.labels,
            replicates=replicates,
            seed=seed,
            columns=self.ranking_columns(calibrated=None),
            heatmap=self.heatmap_columns(),
            aggregates=aggregates,
            keep_replicates=keep_replicates,
        )

    def analysis(self) -> Analysis:
        """What the runs got wrong together (:mod:`scoring.engine.analysis`): their majority vote,
        the oracle, kappa between every two runs and its clustering, the hardest items; a
        probability file as its arg-max labels. Needs a board scored from items
        (:func:`score_board`)."""
        if self.gold_codes is None or self.predicted is None:
            raise ValueError("an analysis needs the items: build the board with score_board")
        codes = np.stack([hard_labels(self.predicted[team]) for team in self.teams])
        return analyse(self.gold_codes, codes, labels=self.labels, ordinal=self.ordinal)

    def would_rank(self, report: Report | OutputsReport) -> dict:
        """Where a row that is never ranked (the majority vote, the oracle) would stand among the
        teams under every ranking column (:func:`~scoring.engine.ranking.rank_among`), keyed
        like ``ranks`` (a column without a calibrated twin, raw only)."""
        return {
            section: {
                column.id: rank_among(self.values(chosen), chosen.value(report), chosen.direction)
                for column in self.ranking_columns(calibrated=False)
                if section == "raw" or column.metric.scope == "matrix"
                for chosen in (column.counterpart() if section == "calibrated" else column,)
            }
            for section in ("raw", "calibrated")
        }

    def analysis_json(self, analysis: Analysis) -> dict:
        """The ``analysis`` object of the board's JSON (contract: :mod:`scoring.__main__`)."""
        ids = self.gold.ids if self.gold is not None else [str(item) for item in range(self.n_items)]
        found = analysis.as_json(runs=self.teams, ids=ids)
        found["majority_vote"]["would_rank"] = self.would_rank(analysis.majority_vote)
        found["oracle"]["would_rank"] = self.would_rank(analysis.oracle)
        return found

    def as_json(self, *, stability: bootstrap.Stability | None = None, aggregate: Aggregate | None = None) -> dict:
        """The board's JSON object (contract: see the module docstring), with the bootstrap's
        intervals when ``stability`` is given, and an overall ranking when ``aggregate`` is."""
        raw = self.ranking_columns(calibrated=False)
        heatmap = self.heatmap_columns()
        matrix = self.correlations(heatmap)
        board = {
            "labels": list(self.labels),
            "n_items": self.n_items,
            "teams": list(self.teams),
            "reports": {team: self.reports[team].as_json() for team in self.teams},
            "ranks": {
                "raw": {column.id: self.ranks(column) for column in raw},
                "calibrated": {column.id: self.ranks(column.counterpart()) for column in raw if column.has_twin},
            },
            "spearman": {
                "columns": [column.id for column in heatmap],
                "rho": [[matrix[row.id][column.id].rho for column in heatmap] for row in heatmap],
            },
        }
        if aggregate is not None:
            board["aggregate"] = self.aggregate_json(aggregate)
        if stability is None:
            return board
        board |= stability_json(stability, self.teams, raw)
        if aggregate is not None:
            board["aggregate_intervals"] = aggregate_intervals_json(stability, aggregate, self.teams)
        return board

    def aggregate_json(self, aggregate: Aggregate) -> dict:
        """The overall ranking's part of the JSON object (see the module docstring)."""
        return {
            "method": aggregate.method,
            "columns": [column.id for column in aggregate.columns],
            "value": dict(zip(self.teams, self.values(aggregate), strict=True)),
            "rank": self.ranks(aggregate),
        }


def score_board(
    gold: str | Path, predictions: Sequence[str | Path], *, labels: Sequence[str] | None = None, ordinal: bool = False
) -> Board:
    """Score every prediction file against the gold file (read once) and rank them; ``ordinal``:
    the labels, in their order, are an ordered scale (the ordinal errors are scored and ranked).

    Raises :class:`BoardError` for two files with one stem (before reading any file); the
    gold file's :class:`~scoring.engine.io.InputFileError` or ``OSError`` as they come; and,
    after trying every prediction file, :class:`PredictionFilesError` with the problem of
    each bad one, so that an organiser fixes a folder in one pass.
    """
    teams = team_names(predictions)
    gold_file = read_labels(gold, labels=labels)
    reports = {}
    predicted_items: dict[str, np.ndarray] = {}
    errors: list[Exception] = []
    for team, path in zip(teams, predictions, strict=True):
        try:
            predicted = read_predictions(path, gold=gold_file)
        except (InputFileError, OSError) as error:
            errors.append(error)
            continue
        reports[team] = report_of(gold_file, predicted, ordinal=ordinal)
        predicted_items[team] = predicted.probabilities if predicted.is_soft else predicted.codes
    if errors:
        raise PredictionFilesError(errors)
    return Board(
        labels=gold_file.labels,
        n_items=gold_file.n_items,
        teams=tuple(teams),
        reports=reports,
        gold_codes=gold_file.codes,
        predicted=predicted_items,
        ordinal=ordinal,
        gold=gold_file,
    )
