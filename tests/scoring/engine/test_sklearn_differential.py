"""Differential tests: the engine against scikit-learn on random confusion matrices.

What this proves: on random count and float matrices (fed to scikit-learn as one weighted
sample per cell, so float masses are compared too) accuracy, per-class / macro / weighted
precision, recall and F1, Cohen's kappa, multi-class MCC (Gorodkin), balanced accuracy and the
one-vs-rest MCC of every class agree with scikit-learn wherever both are defined, and where ours
is undefined scikit-learn returns its stand-in (0 for MCC, NaN for kappa). The hard confusion
matrix equals scikit-learn's ``confusion_matrix`` transposed: scikit-learn puts gold in rows,
we put predictions in rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import assume, given, settings
from sklearn import metrics as sk

from scoring.engine.confusion import hard_confusion
from scoring.engine.registry import get
from tests.scoring.strategies import PROPERTY, count_matrices, labels_from_matrix, matrices
from tests.scoring.values import metric, per_class

TOL = {"rel": 1e-9, "abs": 1e-12}
DIFFERENTIAL = settings(PROPERTY, max_examples=80)
"""scikit-learn's input validation costs about a millisecond a call: fewer, richer examples."""


def quietly(function: Callable[..., float], *args: object, **kwargs: object) -> float:
    """scikit-learn warns where a value is undefined; the tests assert what it returns instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def weighted_samples(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gold, predicted, weight): one sample per cell, weighted by the cell's mass.

    Every label occurs in both arrays (with weight 0 where the cell is empty), so scikit-learn
    sees all n classes, as the engine does.
    """
    predicted, gold = np.indices(matrix.shape)
    return gold.ravel(), predicted.ravel(), np.asarray(matrix, dtype=np.float64).ravel()


def with_mass(matrix: np.ndarray) -> np.ndarray:
    assume(matrix.sum() > 0)
    return matrix


@DIFFERENTIAL
@given(count_matrices())
def test_hard_confusion_is_sklearns_matrix_transposed(matrix: np.ndarray) -> None:
    predicted, gold = labels_from_matrix(matrix)
    n = len(matrix)
    ours = hard_confusion(predicted, gold, n)
    np.testing.assert_array_equal(ours, matrix)
    if len(gold):
        np.testing.assert_array_equal(ours, quietly(sk.confusion_matrix, gold, predicted, labels=range(n)).T)


@DIFFERENTIAL
@given(matrices())
def test_accuracy(matrix: np.ndarray) -> None:
    gold, predicted, weight = weighted_samples(with_mass(matrix))
    expected = quietly(sk.accuracy_score, gold, predicted, sample_weight=weight)
    assert metric("accuracy", matrix) == pytest.approx(expected, **TOL)


@DIFFERENTIAL
@given(matrices())
def test_per_class_precision_recall_and_f1(matrix: np.ndarray) -> None:
    gold, predicted, weight = weighted_samples(with_mass(matrix))
    precision, recall, f1, support = sk.precision_recall_fscore_support(
        gold, predicted, labels=range(len(matrix)), sample_weight=weight, zero_division=0.0
    )
    np.testing.assert_allclose(per_class("precision", matrix), precision, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(per_class("recall", matrix), recall, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(per_class("f1", matrix), f1, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(matrix, dtype=float).sum(axis=0), support, rtol=1e-12)


AVERAGED = {
    "macro": ("macro_precision", "macro_recall", "macro_f1"),
    "weighted": ("weighted_precision", "weighted_recall", "weighted_f1"),
}


@DIFFERENTIAL
@given(matrices())
def test_macro_and_weighted_averages(matrix: np.ndarray) -> None:
    gold, predicted, weight = weighted_samples(with_mass(matrix))
    for average, keys in AVERAGED.items():
        expected = sk.precision_recall_fscore_support(
            gold, predicted, labels=range(len(matrix)), average=average, sample_weight=weight, zero_division=0.0
        )[:3]
        for key, value in zip(keys, expected, strict=True):
            assert get(key)(matrix) == pytest.approx(value, **TOL), key


@DIFFERENTIAL
@given(matrices())
def test_cohen_kappa(matrix: np.ndarray) -> None:
    gold, predicted, weight = weighted_samples(with_mass(matrix))
    expected = quietly(sk.cohen_kappa_score, gold, predicted, labels=range(len(matrix)), sample_weight=weight)
    ours = metric("kappa", matrix)
    if ours is None:
        assert np.isnan(expected)
    else:
        assert ours == pytest.approx(expected, **TOL)


@DIFFERENTIAL
@given(matrices())
def test_multiclass_mcc_is_gorodkins(matrix: np.ndarray) -> None:
    gold, predicted, weight = weighted_samples(with_mass(matrix))
    expected = quietly(sk.matthews_corrcoef, gold, predicted, sample_weight=weight)
    ours = metric("mcc", matrix)
    if ours is None:
        assert expected == 0.0  # scikit-learn's stand-in for an undefined MCC
    else:
        assert ours == pytest.approx(expected, **TOL)


@DIFFERENTIAL
@given(matrices())
def test_one_vs_rest_mcc_of_every_class(matrix: np.ndarray) -> None:
    gold, predicted, weight = weighted_samples(with_mass(matrix))
    ours = per_class("mcc", matrix)
    for i in range(len(matrix)):
        expected = quietly(sk.matthews_corrcoef, gold == i, predicted == i, sample_weight=weight)
        if np.isnan(ours[i]):
            assert expected == 0.0, i
        else:
            # TP·TN − FP·FN cancels near MCC = 0: both sides lose digits there, so the absolute
            # tolerance is that of a value in [-1, 1] rather than of its tiny result.
            assert ours[i] == pytest.approx(expected, rel=TOL["rel"], abs=1e-9), i


@DIFFERENTIAL
@given(matrices())
def test_balanced_accuracy_is_macro_recall_when_every_class_occurs(matrix: np.ndarray) -> None:
    """scikit-learn averages recall over the classes present in the gold labels only; the
    engine over all n classes (recall 0 for an absent one), so they agree when all occur."""
    gold, predicted, weight = weighted_samples(matrix)
    assume(np.all(np.asarray(matrix, dtype=float).sum(axis=0) > 0))
    expected = quietly(sk.balanced_accuracy_score, gold, predicted, sample_weight=weight)
    assert metric("macro_recall", matrix) == pytest.approx(expected, **TOL)


@settings(PROPERTY, max_examples=50)
@given(count_matrices())
def test_label_arrays_and_weighted_cells_give_the_same_scores(matrix: np.ndarray) -> None:
    """The cell-weighted trick above is faithful: unweighted label arrays give the same values."""
    predicted, gold = labels_from_matrix(matrix)
    assume(len(gold) > 0)
    labels = range(len(matrix))
    assert metric("accuracy", matrix) == pytest.approx(quietly(sk.accuracy_score, gold, predicted), **TOL)
    assert metric("macro_f1", matrix) == pytest.approx(
        sk.f1_score(gold, predicted, labels=labels, average="macro", zero_division=0.0), **TOL
    )
    ours = metric("mcc", matrix)
    assert (0.0 if ours is None else ours) == pytest.approx(quietly(sk.matthews_corrcoef, gold, predicted), **TOL)
