"""The bootstrap's intervals in the board's JSON (the layout is the contract of
:mod:`scoring.engine.board`): what the CLI prints with ``--bootstrap`` and the site stores.

Built from the arrays a column (or a pair) at a time, the doubles read once into Python floats:
at 3,000 teams a result holds hundreds of thousands of pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from scoring.engine.aggregate import Aggregate
from scoring.engine.bootstrap import BLOCK_SIZE, PERCENTILE_METHOD, Stability
from scoring.engine.columns import Column
from scoring.engine.significance import BehindLeader


def interval_json(bounds: np.ndarray, *, integral: bool = False) -> list[float] | list[int] | None:
    """A ``[lo, hi]`` pair for JSON, ``None`` when undefined (NaN)."""
    return _pairs(np.asarray(bounds)[np.newaxis], integral=integral)[0]


def _pairs(bounds: np.ndarray, *, integral: bool = False) -> list[list[float] | list[int] | None]:
    """Each row of (n, 2) ``bounds`` as :func:`interval_json` gives it."""
    undefined = np.isnan(bounds).any(axis=-1)
    pairs = (np.where(undefined[:, np.newaxis], 0, bounds).astype(np.int64) if integral else bounds).tolist()
    for row in np.flatnonzero(undefined).tolist():
        pairs[row] = None
    return pairs


def behind_leader_json(behind: BehindLeader, teams: Sequence[str]) -> dict:
    """One column's ``behind_leader`` object: every team but the leader."""
    differences = _pairs(behind.difference)
    return {
        team: {"difference": difference, "p_holm": None if p != p else p}
        for t, (team, difference, p) in enumerate(zip(teams, differences, behind.p_holm.tolist(), strict=True))
        if t != behind.leader
    }


def aggregate_intervals_json(stability: Stability, aggregate: Aggregate, teams: Sequence[str]) -> dict:
    """An overall ranking's intervals: ``{team: {"value": [lo, hi], "rank": [best, worst]}}``."""
    values, ranks = stability.aggregate_intervals(aggregate)
    return {
        team: {"value": value, "rank": rank}
        for team, value, rank in zip(teams, _pairs(values), _pairs(ranks, integral=True), strict=True)
    }


def stability_json(stability: Stability, teams: Sequence[str], raw: Sequence[Column]) -> dict:
    """The bootstrap's part of the board's JSON object, of the ``raw`` columns and their
    calibrated counterparts (of those that have one)."""

    def sections(of_column: Callable[[Column], object]) -> dict:
        return {
            "raw": {column.id: of_column(column) for column in raw},
            "calibrated": {column.id: of_column(column.counterpart()) for column in raw if column.has_twin},
        }

    def intervals(column: Column) -> dict:
        index = stability.index(column)
        scores, ranks = _pairs(stability.scores[index]), _pairs(stability.ranks[index], integral=True)
        return {team: {"score": s, "rank": r} for team, s, r in zip(teams, scores, ranks, strict=True)}

    return {
        "bootstrap": {
            "replicates": stability.replicates,
            "seed": stability.seed,
            "confidence": stability.confidence,
            "percentile_method": PERCENTILE_METHOD,
            "block_size": BLOCK_SIZE,
        },
        "intervals": sections(intervals),
        "tied_with_leader": sections(lambda c: [teams[t] for t in stability.tied_with_leader(c)]),
        "indistinguishable": sections(lambda c: [[teams[t] for t in g] for g in stability.groups(c)]),
        "behind_leader": sections(lambda c: behind_leader_json(stability.behind_leader(c), teams)),
        "spearman_intervals": [_pairs(row) for row in stability.rho],
    }
