"""The full suite of one matrix (suite.py) and the file-to-report entry point (scorer.py).

What this proves: a report holds every registered metric raw and calibrated, stored from the
registry's exact functions (of the matrix and of its exact calibration) and equal to the float
functions to rounding; supports are exact sums; undefined calibration leaves
every calibrated value ``None``; per-class tables carry support and predicted counts as ints
for count matrices, and their precision, recall, F1, MCC, BACC and DP equal values worked out
by hand; the micro- and macro-weighted averages of paper 004 (uniform, prevalence and
caller-chosen weights) equal values worked out by hand with exact fractions and values built
from scikit-learn, an oracle independent of the engine (DP with the natural logarithm); and
``score_files`` builds the hard or soft matrix from files.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    matthews_corrcoef,
    multilabel_confusion_matrix,
    precision_recall_fscore_support,
)

from scoring.engine.calibration import calibrate
from scoring.engine.canonical import ExactMatrix
from scoring.engine.registry import CLASS_MEASURES, METRICS
from scoring.engine.scorer import score_files
from scoring.engine.suite import plain_number, score_matrix, weighted_averages
from tests.scoring.strategies import close

MATRIX = np.array([[5, 1, 0], [2, 6, 1], [3, 3, 9]])
LABELS = ("a", "b", "c")


def test_report_holds_every_metric_raw_and_calibrated() -> None:
    """Stored values are the registry's metrics of the matrix and of its exact calibration
    (canonical values); of the displayed float calibration they agree to rounding."""
    report = score_matrix(MATRIX, labels=LABELS)
    assert list(report.metrics) == list(report.calibrated) == [metric.key for metric in METRICS]
    calibrated = calibrate(MATRIX)
    np.testing.assert_array_equal(report.calibrated_matrix, calibrated)
    exact_calibrated = ExactMatrix.of(MATRIX).calibrated()
    for metric in METRICS:
        assert report.metrics[metric.key] == metric(MATRIX)
        assert report.calibrated[metric.key] == metric(exact_calibrated)
        assert close(report.metrics[metric.key], metric(MATRIX), rel=1e-12), metric.key
        assert close(report.calibrated[metric.key], metric(calibrated), rel=1e-12), metric.key
    for measure in CLASS_MEASURES:
        assert [row[measure.key] for row in report.per_class.values()] == measure(MATRIX)
        assert [row[measure.key] for row in report.calibrated_per_class.values()] == measure(exact_calibrated)
    assert report.n_items == 30


def test_supports_are_exact_sums() -> None:
    """Counts stay ints; calibrated supports are exactly 1/n; soft masses are the correctly
    rounded sum of their cells (0.1 + 0.2 is not 0.30000000000000004 here)."""
    report = score_matrix(MATRIX, labels=LABELS)
    assert [row["support"] for row in report.calibrated_per_class.values()] == [1 / 3] * 3
    assert sum(row["predicted"] for row in report.calibrated_per_class.values()) == pytest.approx(1.0, rel=1e-15)
    soft = score_matrix(np.array([[0.1, 0.5], [0.2, 0.5]]), labels=("a", "b"))
    assert soft.per_class["a"]["support"] == float(Fraction(0.1) + Fraction(0.2))
    assert soft.per_class["b"]["support"] == 1
    assert type(soft.per_class["b"]["support"]) is int


def test_json_has_plain_numbers_and_the_matrix_in_contract_orientation() -> None:
    data = score_matrix(MATRIX, labels=LABELS).as_json()
    assert data["confusion_matrix"] == MATRIX.tolist()
    assert all(type(x) is int for row in data["confusion_matrix"] for x in row)
    assert data["per_class"]["c"]["support"] == 10 and data["per_class"]["c"]["predicted"] == 15
    assert data["per_class"]["a"]["recall"] == 0.5


def test_undefined_calibration_makes_every_calibrated_value_none() -> None:
    report = score_matrix(np.array([[2, 0], [1, 0]]), labels=("a", "b"))
    assert report.calibrated_matrix is None
    assert set(report.calibrated.values()) == {None}
    assert all(value is None for row in report.calibrated_per_class.values() for value in row.values())


def test_labels_must_match_the_matrix() -> None:
    with pytest.raises(ValueError, match="labels"):
        score_matrix(MATRIX, labels=("a", "b"))


def test_plain_number() -> None:
    assert type(plain_number(3.0)) is int
    assert plain_number(0.25) == 0.25


# --- weighted averages (paper 004, Tables 2 and 3) against independent oracles ----------------
#
# MATRIX worked out by hand (rows predicted, columns gold; N = 30; prevalences 10, 10, 10;
# biases 6, 9, 15). TP = diagonal cell, FP = rest of the row, FN = rest of the column,
# TN = N - TP - FP - FN:
#
#   class  TP   FP             FN             TN
#   a       5   1 + 0 = 1      2 + 3 = 5      30 - 5 - 1 - 5 = 19
#   b       6   2 + 1 = 3      1 + 3 = 4      30 - 6 - 3 - 4 = 17
#   c       9   3 + 3 = 6      0 + 1 = 1      30 - 9 - 6 - 1 = 14
#
# Per class: P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2TP/(2TP+FP+FN),
# MCC = (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)),
# BACC = (TP/(TP+FN) + TN/(TN+FP)) / 2, DP = sqrt(3)/pi ln((TP/FP)(TN/FN)) (natural log).

K = math.sqrt(3) / math.pi
"""The discriminant-power factor, written out here rather than taken from the engine."""

BY_HAND_PER_CLASS: dict[str, tuple[Fraction | float, ...]] = {
    "precision": (Fraction(5, 5 + 1), Fraction(6, 6 + 3), Fraction(9, 9 + 6)),
    "recall": (Fraction(5, 5 + 5), Fraction(6, 6 + 4), Fraction(9, 9 + 1)),
    "f1": (Fraction(10, 10 + 1 + 5), Fraction(12, 12 + 3 + 4), Fraction(18, 18 + 6 + 1)),
    "mcc": (
        (5 * 19 - 1 * 5) / math.sqrt(6 * 10 * 20 * 24),  # 90 / sqrt(28800) = 3 sqrt(2) / 8
        (6 * 17 - 3 * 4) / math.sqrt(9 * 10 * 20 * 21),  # 90 / sqrt(37800) = 3 / sqrt(42)
        (9 * 14 - 6 * 1) / math.sqrt(15 * 10 * 20 * 15),  # 120 / sqrt(45000) = 2 sqrt(2) / 5
    ),
    "bacc": (
        (Fraction(5, 10) + Fraction(19, 20)) / 2,  # 29/40
        (Fraction(6, 10) + Fraction(17, 20)) / 2,  # 29/40
        (Fraction(9, 10) + Fraction(14, 20)) / 2,  # 32/40
    ),
    "dp": (
        K * math.log(Fraction(5, 1) * Fraction(19, 5)),  # K ln 19
        K * math.log(Fraction(6, 3) * Fraction(17, 4)),  # K ln (17/2)
        K * math.log(Fraction(9, 6) * Fraction(14, 1)),  # K ln 21
    ),
}

# omega = (1/3, 1/3, 1/3): pooled TP = (5+6+9)/3 = 20/3, FP = (1+3+6)/3 = 10/3,
# FN = (5+4+1)/3 = 10/3, TN = (19+17+14)/3 = 50/3. Every prevalence is 10, so the prevalence
# weights 10/30 are these same weights.
BY_HAND_UNIFORM = {
    "micro": {
        "precision": Fraction(20, 20 + 10),  # 2/3 = accuracy
        "recall": Fraction(20, 20 + 10),  # 2/3
        "f1": Fraction(40, 40 + 10 + 10),  # 2/3
        "mcc": (20 * 50 - 10 * 10) / math.sqrt(30 * 30 * 60 * 60),  # 900 / 1800 = 1/2 (the 1/3s cancel)
        "bacc": (Fraction(20, 30) + Fraction(50, 60)) / 2,  # 3/4
        "dp": K * math.log(Fraction(20, 10) * Fraction(50, 10)),  # K ln 10
    },
    "macro": {
        "precision": (Fraction(5, 6) + Fraction(6, 9) + Fraction(9, 15)) / 3,  # 63/90 = 7/10
        "recall": (Fraction(5, 10) + Fraction(6, 10) + Fraction(9, 10)) / 3,  # 2/3
        "f1": (Fraction(10, 16) + Fraction(12, 19) + Fraction(18, 25)) / 3,  # 7511/11400
        "mcc": sum(BY_HAND_PER_CLASS["mcc"]) / 3,
        "bacc": (Fraction(29, 40) + Fraction(29, 40) + Fraction(32, 40)) / 3,  # 3/4
        "dp": K * (math.log(19) + math.log(Fraction(17, 2)) + math.log(21)) / 3,
    },
}

# omega = (1, 2, 3), normalised to (1/6, 2/6, 3/6): pooled TP = (5 + 2*6 + 3*9)/6 = 44/6,
# FP = (1 + 2*3 + 3*6)/6 = 25/6, FN = (5 + 2*4 + 3*1)/6 = 16/6, TN = (19 + 2*17 + 3*14)/6 = 95/6.
BY_HAND_ONE_TWO_THREE = {
    "micro": {
        "precision": Fraction(44, 44 + 25),  # 44/69
        "recall": Fraction(44, 44 + 16),  # 11/15
        "f1": Fraction(88, 88 + 25 + 16),  # 88/129
        "mcc": (44 * 95 - 25 * 16) / math.sqrt((44 + 25) * (44 + 16) * (95 + 25) * (95 + 16)),  # 3780 / sqrt(55144800)
        "bacc": (Fraction(44, 60) + Fraction(95, 120)) / 2,  # 61/80
        "dp": K * math.log(Fraction(44, 25) * Fraction(95, 16)),  # K ln (209/20)
    },
    "macro": {
        "precision": (1 * Fraction(5, 6) + 2 * Fraction(6, 9) + 3 * Fraction(9, 15)) / 6,  # 119/180
        "recall": (1 * Fraction(5, 10) + 2 * Fraction(6, 10) + 3 * Fraction(9, 10)) / 6,  # 11/15
        "f1": (1 * Fraction(10, 16) + 2 * Fraction(12, 19) + 3 * Fraction(18, 25)) / 6,  # 15383/22800
        "mcc": sum(w * x for w, x in zip((1, 2, 3), BY_HAND_PER_CLASS["mcc"], strict=True)) / 6,
        "bacc": (1 * Fraction(29, 40) + 2 * Fraction(29, 40) + 3 * Fraction(32, 40)) / 6,  # 183/240 = 61/80
        "dp": K * (1 * math.log(19) + 2 * math.log(Fraction(17, 2)) + 3 * math.log(21)) / 6,
    },
}

MEASURES = ("precision", "recall", "f1", "mcc", "bacc", "dp")


def test_per_class_tables_by_hand() -> None:
    per_class = score_matrix(MATRIX, labels=LABELS).per_class
    for i, label in enumerate(LABELS):
        assert per_class[label]["support"] == 10  # column sums
        assert per_class[label]["predicted"] == (6, 9, 15)[i]  # row sums
        for measure in MEASURES:
            expected = BY_HAND_PER_CLASS[measure][i]
            if isinstance(expected, Fraction):  # a rational value is stored correctly rounded
                assert per_class[label][measure] == float(expected), (label, measure)
            else:
                assert per_class[label][measure] == pytest.approx(expected, rel=1e-12), (label, measure)


def assert_close(actual: dict[str, dict], expected: dict[str, dict]) -> None:
    assert set(actual) == {"micro", "macro"}
    for average in ("micro", "macro"):
        assert set(actual[average]) == set(MEASURES)
        for measure in MEASURES:
            assert actual[average][measure] == pytest.approx(float(expected[average][measure]), rel=1e-12), (
                average,
                measure,
            )


def test_weighted_averages_by_hand_with_uniform_and_prevalence_weights() -> None:
    assert_close(weighted_averages(MATRIX, np.full(3, 1 / 3)), BY_HAND_UNIFORM)
    assert_close(weighted_averages(MATRIX, MATRIX.sum(axis=0) / MATRIX.sum()), BY_HAND_UNIFORM)
    # Weights are normalised: (7, 7, 7) is the same as (1/3, 1/3, 1/3).
    assert_close(weighted_averages(MATRIX, np.array([7.0, 7.0, 7.0])), BY_HAND_UNIFORM)


def test_weighted_averages_by_hand_with_caller_chosen_weights() -> None:
    assert_close(weighted_averages(MATRIX, np.array([1.0, 2.0, 3.0])), BY_HAND_ONE_TWO_THREE)
    assert_close(weighted_averages(MATRIX, np.array([1 / 6, 2 / 6, 3 / 6])), BY_HAND_ONE_TWO_THREE)


# --- the same, with scikit-learn as the oracle -----------------------------------------------

SKEWED = np.array([[7, 1, 0], [2, 3, 1], [1, 2, 4]])
"""Prevalences 10, 6, 5: here prevalence weights differ from uniform ones."""


def sklearn_labels(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y_true, y_pred) of a count matrix m[i, j] = predicted i, gold j: gold j and predicted i
    repeated m[i, j] times (scikit-learn puts gold in rows, we put it in columns)."""
    n = len(matrix)
    y_true = np.repeat(np.tile(np.arange(n), n), np.asarray(matrix).ravel())
    y_pred = np.repeat(np.repeat(np.arange(n), n), np.asarray(matrix).ravel())
    return y_true, y_pred


def sklearn_one_vs_rest(y_true: np.ndarray, y_pred: np.ndarray, weight=None) -> dict[str, float]:
    """The six measures of one binary (positive = True) problem, from scikit-learn (DP from its
    confusion counts with the natural logarithm)."""
    p, r, f, _ = precision_recall_fscore_support(
        y_true, y_pred, average="binary", pos_label=True, sample_weight=weight, zero_division=0
    )
    (tn, fp), (fn, tp) = confusion_matrix(y_true, y_pred, labels=[False, True], sample_weight=weight)
    return {
        "precision": p,
        "recall": r,
        "f1": f,
        "mcc": matthews_corrcoef(y_true, y_pred, sample_weight=weight),
        "bacc": balanced_accuracy_score(y_true, y_pred, sample_weight=weight),
        "dp": K * math.log((tp / fp) * (tn / fn)),
    }


def sklearn_micro(matrix: np.ndarray, weights: np.ndarray) -> dict[str, float]:
    """Micro-weighted measures: the one-vs-rest measures of the pooled counts
    sum_i omega_i TP_i, sum_i omega_i FP_i, ..., given to scikit-learn as four weighted samples."""
    y_true, y_pred = sklearn_labels(matrix)
    n = len(matrix)
    omega = np.asarray(weights, dtype=float) / np.sum(weights)
    # multilabel_confusion_matrix gives [[TN, FP], [FN, TP]] per class.
    counts = multilabel_confusion_matrix(y_true, y_pred, labels=range(n)).reshape(n, 4)
    tn, fp, fn, tp = omega @ counts
    pooled_true = np.array([True, False, True, False])
    pooled_pred = np.array([True, True, False, False])
    return sklearn_one_vs_rest(pooled_true, pooled_pred, weight=np.array([tp, fp, fn, tn]))


def sklearn_macro(matrix: np.ndarray, weights: np.ndarray) -> dict[str, float]:
    """Macro-weighted measures sum_i omega_i M_i over the one-vs-rest measures of each class."""
    y_true, y_pred = sklearn_labels(matrix)
    omega = np.asarray(weights, dtype=float) / np.sum(weights)
    per_class = [sklearn_one_vs_rest(y_true == i, y_pred == i) for i in range(len(matrix))]
    return {key: sum(w * values[key] for w, values in zip(omega, per_class, strict=True)) for key in MEASURES}


@pytest.mark.parametrize("matrix", [MATRIX, SKEWED], ids=["balanced", "skewed"])
@pytest.mark.parametrize("scheme", ["uniform", "prevalence", "one-two-three"])
def test_weighted_averages_agree_with_sklearn(matrix: np.ndarray, scheme: str) -> None:
    n = len(matrix)
    weights = {
        "uniform": np.full(n, 1.0 / n),
        "prevalence": matrix.sum(axis=0) / matrix.sum(),  # omega_i = prevalence(i) / N
        "one-two-three": np.array([1.0, 2.0, 3.0]),
    }[scheme]
    expected = {"micro": sklearn_micro(matrix, weights), "macro": sklearn_macro(matrix, weights)}
    assert_close(weighted_averages(matrix, weights), expected)


@pytest.mark.parametrize("matrix", [MATRIX, SKEWED], ids=["balanced", "skewed"])
def test_weighted_averages_match_sklearn_averaging_modes(matrix: np.ndarray) -> None:
    """Uniform weights are scikit-learn's "macro", prevalence weights its "weighted", and
    uniform micro precision, recall and F1 its "micro" (all three equal to accuracy)."""
    y_true, y_pred = sklearn_labels(matrix)
    n = len(matrix)
    uniform = weighted_averages(matrix, np.full(n, 1.0 / n))
    by_prevalence = weighted_averages(matrix, matrix.sum(axis=0))
    for average, ours in (
        ("macro", uniform["macro"]),
        ("weighted", by_prevalence["macro"]),
        ("micro", uniform["micro"]),
    ):
        p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average=average, zero_division=0)
        assert (ours["precision"], ours["recall"], ours["f1"]) == pytest.approx((p, r, f), rel=1e-12), average
    assert uniform["micro"]["precision"] == pytest.approx(accuracy_score(y_true, y_pred), rel=1e-12)
    assert uniform["macro"]["bacc"] == pytest.approx(
        np.mean([balanced_accuracy_score(y_true == i, y_pred == i) for i in range(n)]), rel=1e-12
    )


def test_weighted_averages_with_a_class_never_predicted() -> None:
    """Class c is never predicted: its precision is 0 (as scikit-learn's zero_division=0), its
    MCC and DP are undefined, so every average that gives c a positive weight is undefined."""
    matrix = np.array([[4, 1, 2], [1, 3, 1], [0, 0, 0]])
    y_true, y_pred = sklearn_labels(matrix)
    weights = np.array([1.0, 2.0, 3.0])
    ours = weighted_averages(matrix, weights)
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average=None, labels=range(3), zero_division=0)
    omega = weights / weights.sum()
    assert (ours["macro"]["precision"], ours["macro"]["recall"], ours["macro"]["f1"]) == pytest.approx(
        (omega @ p, omega @ r, omega @ f), rel=1e-12
    )
    assert ours["macro"]["mcc"] is None and ours["macro"]["dp"] is None
    # The pooled counts have no zero, so every micro average is defined.
    assert ours["micro"] == pytest.approx(sklearn_micro(matrix, weights), rel=1e-12)
    # Without weight on c the macro averages are those of a and b alone.
    a = sklearn_one_vs_rest(y_true == 0, y_pred == 0)
    b = sklearn_one_vs_rest(y_true == 1, y_pred == 1)
    expected = {key: (1 * a[key] + 2 * b[key]) / 3 for key in MEASURES}
    assert weighted_averages(matrix, np.array([1.0, 2.0, 0.0]))["macro"] == pytest.approx(expected, rel=1e-12)


def test_score_files_hard_and_soft() -> None:
    gold = b"id,label\n1,a\n2,b\n3,b\n"
    hard = score_files(gold, b"id,label\n3,a\n2,b\n1,a\n")
    assert hard.matrix.tolist() == [[1, 1], [0, 1]]
    soft = score_files(gold, b"id,a,b\n1,0.5,0.5\n2,0.25,0.75\n3,0,1\n")
    assert soft.matrix.tolist() == [[0.5, 0.25], [0.5, 1.75]]
    assert soft.n_items == 3
    fixed = score_files(gold, b"id,label\n1,a\n2,b\n3,b\n", labels=["b", "a", "c"])
    assert fixed.labels == ("b", "a", "c")
    assert fixed.matrix.tolist() == [[2, 0, 0], [0, 1, 0], [0, 0, 0]]
