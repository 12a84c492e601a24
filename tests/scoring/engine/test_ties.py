"""Ties are ties: values equal as exact fractions are the same stored double (issue "Equal is equal").

What this proves: the issue's example (two 5-class teams whose class recalls are permutations
of each other, macro recall exactly 1/5, which the float path reads as 0.20000000000000004 and
0.19999999999999998) stores the identical value for both teams, raw and calibrated, so they
share a rank and every Spearman rho between algebraically identical metrics is exactly 1; on
random count matrices, renaming the classes (one permutation of rows and columns) leaves every
stored value identical (==, no tolerance), calibrated accuracy is exactly macro recall and
accuracy exactly prevalence-weighted recall (paper 000, Eq. 14-16), and calibrated kappa ranks
teams exactly as macro recall does (rho == 1.0).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from scoring.engine import ranking
from scoring.engine.suite import Report, score_matrix
from tests.scoring.strategies import PROPERTY, count_matrices, permute_classes, supported_matrices


def matrix_with_recalls(recalls: list[tuple[int, int]]) -> np.ndarray:
    """Gold class j has ``gold`` items, ``correct`` of them predicted j and the rest predicted
    j + 1 (mod n): class j's recall is correct/gold (rows = predictions, columns = gold)."""
    n = len(recalls)
    matrix = np.zeros((n, n), dtype=np.int64)
    for j, (correct, gold) in enumerate(recalls):
        matrix[j, j] = correct
        matrix[(j + 1) % n, j] += gold - correct
    return matrix


# Recalls 1/2, 1/9, 1/9, 1/9, 1/6 in two orders: the mean is exactly 1/5 for both.
TEAM_A = matrix_with_recalls([(1, 2), (1, 9), (1, 9), (1, 9), (1, 6)])
TEAM_B = matrix_with_recalls([(1, 9), (1, 9), (1, 2), (1, 9), (1, 6)])
TEAM_C = matrix_with_recalls([(1, 2), (1, 2), (1, 2), (1, 2), (1, 2)])
LABELS = ("a", "b", "c", "d", "e")


def report(matrix: np.ndarray, labels: tuple[str, ...] | None = None) -> Report:
    return score_matrix(matrix, labels=labels or tuple(f"k{i}" for i in range(len(matrix))))


def float_macro_recall(matrix: np.ndarray) -> float:
    return float(np.mean(np.diag(matrix) / matrix.sum(axis=0)))


def test_float_arithmetic_shows_the_noise_of_the_issue() -> None:
    """The example is the issue's: in floats the two equal macro recalls differ."""
    assert float_macro_recall(TEAM_A) == 0.20000000000000004
    assert float_macro_recall(TEAM_B) == 0.19999999999999998


def test_macro_recall_of_one_fifth_is_one_value_for_both_teams() -> None:
    a, b = report(TEAM_A, LABELS), report(TEAM_B, LABELS)
    assert a.metrics["macro_recall"] == b.metrics["macro_recall"] == 0.2
    # Calibrated accuracy is macro recall (Eq. 14-16), calibrated kappa (5 macR - 1)/4 = 0.
    assert a.calibrated["accuracy"] == b.calibrated["accuracy"] == 0.2
    assert a.calibrated["kappa"] == b.calibrated["kappa"] == 0.0
    # The recall-based metrics see the same multiset of class recalls.
    for key in ("macro_recall", "gmean_recall", "hmean_recall"):
        assert a.metrics[key] == b.metrics[key] == a.calibrated[key] == b.calibrated[key], key


def test_tied_teams_share_ranks_and_identical_metrics_correlate_exactly() -> None:
    reports = [report(matrix, LABELS) for matrix in (TEAM_A, TEAM_B, TEAM_C)]
    macro_recall = [r.metrics["macro_recall"] for r in reports]
    assert ranking.competition_ranks(macro_recall) == [2, 2, 1]
    assert ranking.average_ranks(macro_recall).tolist() == [2.5, 2.5, 1.0]
    for identical in (
        [r.calibrated["accuracy"] for r in reports],
        [r.calibrated["kappa"] for r in reports],
        [r.calibrated["weighted_recall"] for r in reports],
    ):
        assert ranking.competition_ranks(identical) == [2, 2, 1]
        assert ranking.spearman(macro_recall, identical).rho == 1.0
    accuracy = [r.metrics["accuracy"] for r in reports]
    assert ranking.spearman(accuracy, [r.metrics["weighted_recall"] for r in reports]).rho == 1.0


@PROPERTY
@given(data=st.data(), matrix=st.one_of(count_matrices(min_n=2), supported_matrices(min_n=2)))
def test_renaming_the_classes_leaves_every_stored_value_identical(data: st.DataObject, matrix: np.ndarray) -> None:
    order = data.draw(st.permutations(range(len(matrix))))
    labels = tuple(f"k{i}" for i in range(len(matrix)))
    before = report(matrix, labels)
    after = report(permute_classes(matrix, order), tuple(labels[i] for i in order))
    assert after.metrics == before.metrics
    assert after.calibrated == before.calibrated
    assert after.per_class == before.per_class
    assert after.calibrated_per_class == before.calibrated_per_class


@PROPERTY
@given(st.one_of(count_matrices(), supported_matrices()))
def test_algebraically_equal_metrics_are_the_same_double(matrix: np.ndarray) -> None:
    # Without items accuracy is undefined while weighted recall is a mean of zero recalls.
    assume(matrix.sum() > 0)
    r = report(matrix)
    assert r.metrics["accuracy"] == r.metrics["weighted_recall"]
    assert r.calibrated["accuracy"] == r.calibrated["weighted_recall"]
    if r.calibrated_matrix is not None:
        assert r.calibrated["accuracy"] == r.metrics["macro_recall"]
        assert r.calibrated["macro_recall"] == r.metrics["macro_recall"]  # macro recall has PIV
        for label in r.labels:  # class recall is prevalence invariant (paper 000, B.4)
            assert r.calibrated_per_class[label]["recall"] == r.per_class[label]["recall"]


@PROPERTY
@given(data=st.data(), n=st.integers(min_value=2, max_value=5))
def test_calibrated_kappa_ranks_exactly_as_macro_recall(data: st.DataObject, n: int) -> None:
    """Calibrated kappa = (n macR - 1)/(n - 1) (paper 000, Section 4): the same ranks, rho 1."""
    teams = data.draw(st.lists(supported_matrices(min_n=n, max_n=n), min_size=2, max_size=8))
    reports = [report(matrix) for matrix in teams]
    macro_recall = [r.metrics["macro_recall"] for r in reports]
    for key in ("kappa", "accuracy"):
        calibrated = [r.calibrated[key] for r in reports]
        assert ranking.competition_ranks(calibrated) == ranking.competition_ranks(macro_recall), key
        if len(set(macro_recall)) >= 2:
            assert ranking.spearman(calibrated, macro_recall).rho == 1.0, key


# Two 9-item 3-class matrices (rows predicted, columns gold) whose macro MCC is exactly
# (-1/4 - √10/4)/3: the per-class MCCs are (-1/4, 0, -√10/4) and (-√10/4, 0, -1/4). The mean of
# rounded per-class values split them: -0.34685647168069833 and -0.3468564716806983, ranks 2, 1.
MACRO_MCC_TWINS = (np.array([[0, 0, 1], [0, 1, 2], [3, 2, 0]]), np.array([[0, 1, 0], [0, 1, 3], [3, 1, 0]]))


def test_equal_macro_mccs_are_one_double_and_tie_raw_and_calibrated() -> None:
    first, second = (report(matrix, ("a", "b", "c")) for matrix in MACRO_MCC_TWINS)
    exact = (-0.25 - math.sqrt(10) / 4) / 3
    assert first.metrics["macro_mcc"] == second.metrics["macro_mcc"]
    assert first.metrics["macro_mcc"] == pytest.approx(exact, rel=1e-15)
    assert first.calibrated["macro_mcc"] == second.calibrated["macro_mcc"]
    for side in ("metrics", "calibrated"):
        values = [getattr(r, side)["macro_mcc"] for r in (first, second)]
        assert ranking.competition_ranks(values) == [1, 1]
