"""Bootstrap replicates of a task with several outputs (scoring.engine.output_replicates): a
replicate's values are those of the test set it stands for, the items repeated by their weights,
scored exactly (scoring.engine.outputs)."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.engine import output_replicates
from scoring.engine.bootstrap import bootstrap
from scoring.engine.columns import output_columns
from scoring.engine.output_replicates import OutputReplicates, _groups
from scoring.engine.outputs import score_outputs
from scoring.engine.schemes import LABEL_VALUES, Output
from scoring.engine.twofold import Approx

LABELS = tuple(Output(name, LABEL_VALUES) for name in ("anger", "joy", "fear", "trust"))
MIXED = (Output("hate", LABEL_VALUES), Output("target", ("group", "individual", "none")))


def _runs(outputs, n_items: int, n_teams: int, seed: int):
    rng = np.random.default_rng(seed)
    sizes = [len(output.labels) for output in outputs]
    gold = np.stack([rng.integers(0, n, n_items) for n in sizes], axis=1)
    gold[:3] = 0  # items with no label in the gold
    runs = []
    for _ in range(n_teams):
        run = np.where(rng.random(gold.shape) < 0.7, gold, np.stack([rng.integers(0, n, n_items) for n in sizes], 1))
        run[3:5] = 0  # items predicted with none
        runs.append(run.astype(np.uint8))  # as the site stores them
    runs[0][:, 0] = 0  # a label never predicted
    return gold.astype(np.uint8), runs


def _expected(gold, run, outputs, weights, columns):
    """The run's values on the test set of the items repeated by ``weights``, scored exactly."""
    report = score_outputs(np.repeat(gold, weights, axis=0), np.repeat(run, weights, axis=0), outputs=outputs)
    return [(report.calibrated if column.calibrated else report.metrics)[column.metric.key] for column in columns]


@pytest.mark.parametrize("outputs", [LABELS, MIXED], ids=["labels", "mixed"])
def test_a_replicate_is_its_test_set_scored_exactly(outputs):
    gold, runs = _runs(outputs, n_items=60, n_teams=3, seed=5)
    source = OutputReplicates(gold, outputs)
    columns = output_columns(labels=all(output.is_label for output in outputs), calibrated=None)
    weights = np.vstack([np.ones(len(gold), dtype=np.int32), source.weights(np.random.default_rng(1), 6)])
    values = source.values(weights.astype(np.float32), source.parts(runs), columns)
    for replicate, row in enumerate(weights):
        for team, run in enumerate(runs):
            found = [None if np.isnan(v) else float(v) for v in values[:, replicate, team]]
            assert found == _expected(gold, run, outputs, row, columns), (replicate, team)


@pytest.mark.parametrize("outputs", [LABELS, MIXED], ids=["labels", "mixed"])
def test_a_rounding_left_open_is_decided_exactly(outputs, monkeypatch):
    """Where the pairs of doubles leave a rounding open (here: everywhere), the exact evaluation
    gives the same values."""
    gold, runs = _runs(outputs, n_items=40, n_teams=2, seed=8)
    source = OutputReplicates(gold, outputs)
    columns = output_columns(labels=all(output.is_label for output in outputs), calibrated=None)
    weights = source.weights(np.random.default_rng(2), 3)
    rounded = Approx.rounded
    monkeypatch.setattr(Approx, "rounded", lambda self: (rounded(self)[0], np.ones(np.shape(self.hi), dtype=bool)))
    values = source.values(weights.astype(np.float32), source.parts(runs), columns)
    for replicate, row in enumerate(weights):
        for team, run in enumerate(runs):
            found = [None if np.isnan(v) else float(v) for v in values[:, replicate, team]]
            assert found == _expected(gold, run, outputs, row, columns)


def test_fraction_sums_split_where_one_scale_would_not_be_exact(monkeypatch):
    """With a bound so low that each denominator needs a column of its own, the sums are still
    exact (and the groups are what the bound allows)."""
    assert _groups(np.array([1, 2, 3, 4, 6]), n_items=10) == [([1, 2, 3, 4, 6], 12)]
    monkeypatch.setattr(output_replicates, "EXACT_DOUBLE", 70)
    assert _groups(np.array([1, 2, 3, 4, 6]), n_items=10) == [([1, 2, 3], 6), ([4], 4), ([6], 6)]
    gold, runs = _runs(LABELS, n_items=30, n_teams=2, seed=9)
    source = OutputReplicates(gold, LABELS)
    parts = source.parts(runs)
    assert max(len(columns) for columns in parts.overlap.columns) > 1
    columns = output_columns(labels=True)
    weights = source.weights(np.random.default_rng(3), 4)
    values = source.values(weights.astype(np.float32), parts, columns)
    for replicate, row in enumerate(weights):
        for team, run in enumerate(runs):
            found = [None if np.isnan(v) else float(v) for v in values[:, replicate, team]]
            assert found == _expected(gold, run, LABELS, row, columns)


def test_the_bootstrap_of_outputs_observes_the_board(tmp_path):
    """The full test set's values are the board's, and every interval holds them or is undefined."""
    gold, runs = _runs(LABELS, n_items=80, n_teams=4, seed=2)
    stability = bootstrap(gold, runs, labels=(), outputs=LABELS, replicates=50, seed=1, store=tmp_path / "store")
    assert [column.id for column in stability.columns] == [
        column.id for column in output_columns(labels=True, calibrated=None)
    ]
    for index, column in enumerate(stability.columns):
        for team, run in enumerate(runs):
            report = score_outputs(gold, run, outputs=LABELS)
            value = (report.calibrated if column.calibrated else report.metrics)[column.metric.key]
            observed = stability.observed[index, team]
            assert (None if np.isnan(observed) else float(observed)) == value
    assert not np.any(stability.ranks[..., 0] > stability.ranks[..., 1])
    assert np.isfinite(stability.scores).any()
    again = bootstrap(gold, runs, labels=(), outputs=LABELS, replicates=50, seed=1, store=tmp_path / "store")
    assert np.array_equal(again.scores, stability.scores, equal_nan=True)
