"""Ranking stability: paired bootstrap intervals of every team's scores and ranks.

A replicate resamples the test items with replacement (N draws from the N items) and scores
**every** team on the same resampled items (a paired bootstrap: what varies between replicates
is the test set, not the teams): the matrices and values of :mod:`scoring.engine.replicates`,
the ranks and rho of :mod:`scoring.engine.rank_order`.

Rules (stated here once, used by the CLI and the board's JSON):

* **Randomness.** ``numpy.random.default_rng(seed)``; each block of :data:`BLOCK_SIZE`
  replicates draws its ``BLOCK_SIZE × N`` item indices with ``rng.integers`` and counts them
  (``np.bincount``) into multinomial weights. The block size is fixed, so the same seed and
  replicate count give the same numbers on any machine.
* **Intervals.** Percentile intervals at 2.5 % and 97.5 % (``confidence=0.95``) over the
  replicates, ``numpy.quantile(..., method="inverted_cdf")`` (Hyndman and Fan's type 1, the
  plain empirical quantile), so every bound is a value some replicate took: a rank interval is
  the [best, worst] rank seen in the central 95 % of replicates.
* **Ranks per replicate** are the engine's competition ranks (1, 2, 2, 4; equal floats tie, no
  tolerance; :mod:`scoring.engine.ranking`); rho per replicate is Spearman's rho on average
  ranks over the teams defined under both columns, undefined with fewer than two such teams or
  a ranking that is all ties, as :func:`scoring.engine.ranking.spearman`. Replicate values are
  correctly rounded as the board's are (:class:`scoring.engine.canonical.StackValues`), so two
  matrices whose value is the same fraction tie in a replicate as they tie on the board.
* **Undefined.** A team's value that is undefined in a replicate has no rank there (the others
  are ranked without it). An interval (score, rank or rho) is undefined (``None``) when its
  quantity is undefined in **any** replicate: the variability of the test set then reaches a
  test set on which the metric says nothing, and a percentile of the remaining replicates would
  hide it.
* **Tied with the leader.** A team is statistically tied with the leader under a column when its
  rank interval includes rank 1 (its best rank is 1).
* **Indistinguishable groups.** Per column, the teams whose rank intervals overlap, chained:
  the connected components of "rank intervals overlap", each listed by best rank. Two teams in
  different groups never share a rank in the central 95 % of replicates; within a group, some
  chain of teams does. (The grouping of WMT's human-evaluation clusters.)
* **Overall rankings** (:meth:`Stability.aggregate_intervals`): the mean rank or Borda count of
  :mod:`scoring.engine.aggregate`, computed in every replicate from that replicate's
  competition ranks, and the teams ranked by it in that replicate; intervals as above.
* **Behind the leader** (:meth:`Stability.behind_leader`): per column, the paired differences
  between the leader on the full test set and every other team in every replicate, their
  intervals as above, and one-sided p-values with Holm's correction across the column's teams
  (method, assumptions and sources: :mod:`scoring.engine.significance`). The full test set is
  evaluated like a replicate (each item's weight 1, no random draw), so the stream of random
  numbers is unchanged; its values are the board's (:attr:`Stability.observed`).

**Memory: the same for 100 teams as for 10,000.** Every team's values in every replicate are
kept on disk (:mod:`scoring.engine.team_rows`), and the work goes in passes over blocks whose
size is fixed by the memory they take, never by the number of teams
(:mod:`scoring.engine.replicate_passes`): the values a block of teams at a time; where each team
stands in each replicate (its :class:`~scoring.engine.rank_order.Ties`: how many teams are
better, how many tied) a block of replicates at a time; every interval a block of teams at a
time. What grows with the teams is what the result holds (intervals, a few numbers a team and
column) and each overall ranking's totals (4 bytes a team and replicate).

**A new run in seconds.** The replicates' weights are fixed by the seed, so a team's values in
every replicate depend on its predictions alone: a ``store`` kept between two computations
(a phase's, on the site) holds them, with the weights and every team's ties as a recent
computation wrote them. The next computation computes the values of the new or re-scored runs
only, and moves every other team's ties by one where a team that came (or left) since is (or
was) better or tied, instead of sorting every replicate again (and writes its own ties once
three teams came or went: before, it saves the writing); a team's score intervals, and its
differences to a leader that did not change, are kept too.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from scoring.engine.aggregate import Aggregate
from scoring.engine.columns import Column
from scoring.engine.items import compact
from scoring.engine.output_replicates import OutputReplicates
from scoring.engine.ranking import signs
from scoring.engine.replicate_passes import (
    BLOCK_SIZE,
    TIES_WRITTEN_FROM,
    UPDATED_TEAMS,
    Found,
    Replicates,
    interval_of,
    matching,
)
from scoring.engine.replicates import ReplicateMatrices
from scoring.engine.schemes import Output, Scheme
from scoring.engine.significance import BehindLeader
from scoring.engine.team_rows import ReplicateStore, team_key

CONFIDENCE = 0.95
PERCENTILE_METHOD = "inverted_cdf"


def order_statistics(replicates: int, confidence: float | Fraction) -> tuple[int, int]:
    """The 1-based ranks of the order statistics that bound the central ``confidence`` interval
    of ``replicates`` values (Hyndman and Fan's type 1, numpy's ``inverted_cdf``): the
    ceil(B·a)-th and ceil(B·(1 - a))-th with a = (1 - confidence)/2, in exact arithmetic (a
    confidence is read as the decimal it is written as: 0.95 is 19/20), so that 1,000
    replicates give the 25th and the 975th."""
    level = Fraction(repr(confidence)) if isinstance(confidence, float) else Fraction(confidence)
    tail = (1 - level) / 2
    low = max(1, math.ceil(replicates * tail))
    high = max(1, math.ceil(replicates * (1 - tail)))
    return low, high


def percentile_interval(
    samples: np.ndarray, *, undefined: np.ndarray, confidence: float = CONFIDENCE, axis: int = 0
) -> np.ndarray:
    """The central ``confidence`` percentile interval over the replicates' ``axis``
    (:func:`order_statistics`): shape (*rest, 2); NaN where ``undefined`` (same shape as
    ``samples``) holds in any replicate."""
    bounds = order_statistics(samples.shape[axis], confidence)
    return interval_of(np.moveaxis(samples, axis, -1), undefined=np.moveaxis(undefined, axis, -1), bounds=bounds)


@dataclass(frozen=True)
class Stability:
    """Bootstrap intervals of a board: per column and team, of the score and of the rank; per
    pair of heatmap columns, of rho; per overall ranking asked for, of its value and rank.
    Intervals are (lo, hi) pairs, NaN where undefined."""

    replicates: int
    seed: int
    confidence: float
    columns: tuple[Column, ...]
    scores: np.ndarray
    """(columns, teams, 2) score intervals."""
    ranks: np.ndarray
    """(columns, teams, 2) rank intervals: [best, worst]."""
    heatmap: tuple[Column, ...]
    rho: np.ndarray
    """(heatmap, heatmap, 2) rho intervals, symmetric."""
    observed: np.ndarray | None = field(default=None, repr=False, compare=False)
    """(columns, teams) the values on the full test set (each item once), NaN where undefined:
    the board's values."""
    behind: tuple[BehindLeader, ...] = field(default=(), repr=False, compare=False)
    """Per column, the comparisons with its leader (:mod:`scoring.engine.significance`)."""
    aggregates: dict[Aggregate, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False, compare=False)
    """Per overall ranking asked for, its (teams, 2) value and rank intervals."""
    replicate_values: np.ndarray | None = field(default=None, repr=False, compare=False)
    """With ``keep_replicates``: (replicates, columns, teams) every replicate's values, NaN
    where undefined."""
    replicate_ranks: np.ndarray | None = field(default=None, repr=False, compare=False)
    """With ``keep_replicates``: (replicates, columns, teams) every replicate's competition
    ranks, 0 where undefined."""

    def behind_leader(self, column: Column) -> BehindLeader:
        """The column's leader, and each team's difference to it and adjusted p-value."""
        return self.behind[self.index(column)]

    def index(self, column: Column) -> int:
        return self.columns.index(column)

    def aggregate_intervals(self, aggregate: Aggregate) -> tuple[np.ndarray, np.ndarray]:
        """The overall ranking's intervals from the same replicates (rules in
        :mod:`scoring.engine.aggregate`): its value in every replicate from the replicate's
        competition ranks under the aggregate's columns, its rank among the teams in that
        replicate; (teams, 2) value intervals and (teams, 2) rank intervals [best, worst], NaN
        where undefined. The ranking must have been asked of :func:`bootstrap`."""
        if aggregate not in self.aggregates:
            raise KeyError(f"the bootstrap was not asked for the overall ranking {aggregate.id} of {aggregate.name}")
        return self.aggregates[aggregate]

    def tied_with_leader(self, column: Column) -> list[int]:
        """The teams (indexes) whose rank interval includes 1 (see the module's rules)."""
        best = self.ranks[self.index(column), :, 0]
        return [int(team) for team in np.flatnonzero(best == 1)]

    def groups(self, column: Column) -> list[list[int]]:
        """Teams (indexes) that cannot be told apart: connected components of overlapping rank
        intervals, by best rank; teams with an undefined rank interval are in no group."""
        best, worst = self.ranks[self.index(column)].T
        ranked = np.flatnonzero(~np.isnan(best))
        ranked = ranked[np.lexsort((ranked, worst[ranked], best[ranked]))]
        reach = np.maximum.accumulate(worst[ranked])  # the worst rank of the teams so far
        starts = np.flatnonzero(best[ranked][1:] > reach[:-1]) + 1
        return [group.tolist() for group in np.split(ranked, starts)] if len(ranked) else []


def store_stamp(
    gold: np.ndarray, *, labels: Sequence[str], columns: Sequence[Column], replicates: int, seed: int, bounds: tuple
) -> str:
    """A digest of what every team's replicate values and score intervals (between the order
    statistics ``bounds``) depend on besides its predictions."""
    inputs = (list(labels), [c.id for c in columns], replicates, seed, BLOCK_SIZE, bounds)
    digest = hashlib.sha256(repr(inputs).encode())
    digest.update(np.ascontiguousarray(gold, dtype=np.int64).tobytes())
    return digest.hexdigest()


def bootstrap(
    gold: np.ndarray,
    predicted: Sequence[np.ndarray],
    *,
    labels: Sequence[str],
    replicates: int,
    seed: int,
    confidence: float = CONFIDENCE,
    columns: Sequence[Column] | None = None,
    heatmap: Sequence[Column] | None = None,
    aggregates: Sequence[Aggregate] = (),
    keep_replicates: bool = False,
    store: Path | str | None = None,
    keys: Sequence[str] | None = None,
    outputs: Sequence[Output] = (),
) -> Stability:
    """Paired bootstrap intervals of every ranking column (default: raw and calibrated, as the
    board ranks them), of rho between every pair of ``heatmap`` columns (default: the site's
    heatmap) and of the overall rankings ``aggregates``. ``gold`` holds gold codes;
    ``predicted`` one entry per team, codes or probability rows aligned to ``gold`` (any
    sequence: an entry is read when its team's values are computed, and to name them).

    ``store``: a directory where the replicates are kept for the next computation (see the
    module docstring), one computation at a time; by default a temporary one. ``keys``: each
    team's :func:`~scoring.engine.team_rows.team_key` of its predictions, when the caller knows
    them (then only the teams whose values are computed are read).
    ``keep_replicates``: also return every replicate's values and ranks (their memory grows
    with the teams). ``outputs``: a task with several (``gold`` and each team's entry items ×
    outputs codes; ``labels`` unused), its values from :mod:`scoring.engine.output_replicates`."""
    if replicates < 1:
        raise ValueError("the bootstrap needs at least one replicate")
    scheme = Scheme(labels=tuple(labels), outputs=tuple(outputs))
    labels = [output.as_json() for output in outputs] if outputs else list(labels)
    columns = tuple(scheme.ranking_columns(calibrated=None) if columns is None else columns)
    heatmap = tuple(scheme.paired_columns() if heatmap is None else heatmap)
    aggregates = tuple(dict.fromkeys(aggregates))
    bounds = order_statistics(replicates, confidence)
    stamp = store_stamp(gold, labels=labels, columns=columns, replicates=replicates, seed=seed, bounds=bounds)
    n_teams = len(predicted)
    sizes = [len(output.labels) for output in outputs] or [len(labels)]
    with ReplicateStore.open(store, stamp=stamp, rows=replicates + 1, width=len(columns)) as kept:
        if keys is None:
            keys = [team_key(compact(predicted[t], max(sizes))) for t in range(n_teams)]
        slots, new = kept.assign(list(keys))
        passes = Replicates(
            kept,
            OutputReplicates(gold, outputs) if outputs else ReplicateMatrices(gold, n_classes=len(labels)),
            replicates=replicates,
            seed=seed,
            columns=columns,
            signs=signs([column.direction for column in columns]),
            heatmap=[columns.index(column) for column in heatmap],
            aggregates=[(a, [columns.index(column) for column in a.columns]) for a in aggregates],
            bounds=bounds,
        )
        passes.fill(predicted, slots, set(new.values()), labels)
        kept.commit()
        found, written = _ranked(kept, passes, slots, keep_replicates)
        if kept.persistent and written:
            kept.finish(slots, **found.for_next)
    rows, cols = np.triu_indices(len(heatmap))
    pair_intervals = np.concatenate(
        [
            percentile_interval(r, undefined=np.isnan(r), confidence=confidence)
            for r in np.array_split(found.rho, 32, axis=1)
        ]
    )
    rho_intervals = np.empty((len(heatmap), len(heatmap), 2))
    rho_intervals[rows, cols] = pair_intervals
    rho_intervals[cols, rows] = pair_intervals
    return Stability(
        replicates=replicates,
        seed=seed,
        confidence=confidence,
        columns=columns,
        heatmap=heatmap,
        rho=rho_intervals,
        scores=found.scores,
        ranks=found.ranks,
        observed=found.observed,
        behind=found.behind,
        aggregates=found.aggregates,
        replicate_values=found.replicate_values,
        replicate_ranks=found.replicate_ranks,
    )


def _ranked(kept: ReplicateStore, passes: Replicates, slots: list[int], keep_replicates: bool) -> tuple[Found, bool]:
    """Passes 2 and 3 (:mod:`scoring.engine.replicate_passes`): with the last written ties when
    few teams changed since, else from a sort; rho of the pairs with an undefined team ranked
    again over the teams defined under both. Whether this computation's ties were written (then
    they are the next computation's to start from; else the last ones still are)."""
    n_columns, n_teams = len(passes.columns), len(slots)
    last = kept.last["slots"]
    changed, before, removed = matching(last, slots)
    earlier = kept.ties(columns=n_columns, teams=len(last), last=True) if last else None
    changes = len(removed) + n_teams - len(changed)
    sort = earlier is None or changes > UPDATED_TEAMS
    later = kept.ties(columns=n_columns, teams=n_teams, last=False)[0] if sort or changes >= TIES_WRITTEN_FROM else None
    was = np.full(n_teams, -1)
    was[changed] = before
    shared = {"keep_replicates": keep_replicates, "last": earlier[1] if earlier else None, "was": was}
    try:
        if sort:
            counts = passes.ties_by_sort(slots, later)
            same = np.arange(n_teams)
            found = passes.by_team(
                slots, earlier=later, later=None, counts=counts, kept=same, before=same, removed=[], **shared
            )
        else:
            found = passes.by_team(
                slots, earlier=earlier[0], later=later, counts=earlier[1]["counts"], kept=changed, before=before,
                removed=[last[i] for i in removed], **shared,
            )  # fmt: skip
    finally:
        if later is not None:
            later.close()
        if earlier is not None:
            earlier[0].close()
    complete = (found.for_next["counts"][:, passes.heatmap] == n_teams).all(axis=0)
    rows, cols = np.triu_indices(len(passes.heatmap))
    incomplete = [pair for pair, (a, b) in enumerate(zip(rows, cols, strict=True)) if not (complete[a] and complete[b])]
    if incomplete:
        found.rho[:, incomplete] = passes.restricted(slots, [(int(rows[p]), int(cols[p])) for p in incomplete])
    return found, later is not None


def write_replicates(path: str, stability: Stability, *, teams: Sequence[str]) -> None:
    """Every replicate's value and rank of every column and team, as a CSV that numpy and pandas
    read: ``replicate,column,team,value,rank``, one line each, replicates numbered from 1 in the
    order they were drawn, columns by id (``kappa_c`` calibrated), values as the shortest
    decimals that read back as the same doubles, empty where undefined (no rank either). The
    intervals are order statistics of these (:func:`order_statistics`), and rho of a replicate
    is Spearman's over average ranks of the values (:func:`scoring.engine.rank_order.spearman_replicates`).
    Needs the replicates kept (``bootstrap(..., keep_replicates=True)``)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    values, ranks = stability.replicate_values, stability.replicate_ranks
    count, n_columns, n_teams = values.shape
    column_ids = pa.array([column.id for column in stability.columns])
    team_names = pa.array(list(teams))
    column_index = np.broadcast_to(np.arange(n_columns)[None, :, None], values.shape).ravel()
    team_index = np.broadcast_to(np.arange(n_teams)[None, None, :], values.shape).ravel()
    undefined = np.isnan(values).ravel()
    table = pa.table(
        {
            "replicate": np.repeat(np.arange(1, count + 1), n_columns * n_teams),
            "column": column_ids.take(pa.array(column_index)),
            "team": team_names.take(pa.array(team_index)),
            "value": pa.array(values.ravel(), mask=undefined),
            "rank": pa.array(ranks.ravel().astype(np.int64), mask=undefined | (ranks.ravel() == 0)),
        }
    )
    pa_csv.write_csv(table, path)
