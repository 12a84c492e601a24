"""Reference classifiers from the gold counts: each expected matrix has the gold counts as its
column sums and the scores the papers give a chance classifier."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.engine import baselines
from scoring.engine.registry import get

COUNTS = np.array([2.0, 5.0, 3.0])


def test_every_baseline_keeps_the_gold_counts() -> None:
    for kind, matrix in baselines.baseline_matrices(COUNTS).items():
        assert matrix.sum(axis=0).tolist() == pytest.approx(COUNTS.tolist()), kind


def test_majority_predicts_the_most_frequent_class_only() -> None:
    matrix = baselines.majority_matrix(COUNTS)
    assert matrix.tolist() == [[0, 0, 0], [2, 5, 3], [0, 0, 0]]
    assert get("accuracy")(matrix) == pytest.approx(0.5)  # 5 of 10
    assert get("macro_recall")(matrix) == pytest.approx(1 / 3)
    assert get("kappa")(matrix) == pytest.approx(0.0)
    assert get("mcc")(matrix) is None  # one predicted class: MCC is 0/0


def test_random_baselines_are_at_chance() -> None:
    uniform = baselines.uniform_matrix(COUNTS)
    np.testing.assert_allclose(uniform, [[2 / 3, 5 / 3, 1.0]] * 3, rtol=1e-15)
    prevalence = baselines.prevalence_matrix(COUNTS)
    # predicted class i with probability 2/10, 5/10, 3/10 whatever the gold class
    assert prevalence[:, 1].tolist() == pytest.approx([1.0, 2.5, 1.5])
    for matrix in (uniform, prevalence):
        assert get("macro_recall")(matrix) == pytest.approx(1 / 3)
        assert get("kappa")(matrix) == pytest.approx(0.0, abs=1e-15)


def test_names_say_which_class_the_majority_baseline_predicts() -> None:
    names = baselines.baseline_names(COUNTS, ["neg", "neu", "pos"])
    assert names[baselines.MAJORITY] == "Majority class (always 'neu')"
    assert set(names) == set(baselines.baseline_matrices(COUNTS))
