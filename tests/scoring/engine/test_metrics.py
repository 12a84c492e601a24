"""The metric functions compute the formulas their docstrings cite, and the Theorem of paper 002.

What this proves: on hand-worked matrices every metric equals the value written out from its
paper's formula (with exact fractions); zero denominators give 0 for per-class P, R, F1 and
``None`` where a value is undefined, for float masses as well as counts; invalid matrices and
weights are rejected. Property tests check the Theorem of paper 002 against an exact rational
computation: F1 of averages >= averaged F1, equality iff P_i = R_i for every class, the bound
0.5 / 0.5 - 1/(2n^2) on the gap (approached by the proof's construction), and the Lemma's
closed form of the gap.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import metrics as m
from scoring.engine import registry
from tests.scoring.strategies import PROPERTY, count_matrices, float_matrices, matrices
from tests.scoring.values import formula_value, metric, numbers, per_class, quantities

# Rows = predicted a, b, c; columns = gold a, b, c. Every class has 10 gold items.
M = np.array([[5, 1, 0], [2, 6, 1], [3, 3, 9]])
BIAS = [6, 9, 15]
PRECISION = [Fraction(5, 6), Fraction(6, 9), Fraction(9, 15)]
RECALL = [Fraction(5, 10), Fraction(6, 10), Fraction(9, 10)]


def harmonic(a: Fraction, b: Fraction) -> Fraction:
    return 2 * a * b / (a + b) if a + b else Fraction(0)


def mean(values: list[Fraction]) -> Fraction:
    return sum(values, Fraction(0)) / len(values)


def approx(value: Fraction | float) -> object:
    return pytest.approx(float(value), rel=1e-12, abs=1e-15)


# --- basic quantities and per-class P, R, F1 ----------------------------------------------------


def test_bias_prevalence_and_correct_follow_the_orientation() -> None:
    q = quantities(M)
    assert numbers(q.bias) == BIAS
    assert numbers(q.prevalence) == [10, 10, 10]
    assert numbers(q.correct) == [5, 6, 9]


def test_per_class_precision_recall_and_f1() -> None:
    assert per_class("precision", M).tolist() == approx_list(PRECISION)
    assert per_class("recall", M).tolist() == approx_list(RECALL)
    assert per_class("f1", M).tolist() == approx_list([harmonic(p, r) for p, r in zip(PRECISION, RECALL, strict=True)])


def approx_list(values: list[Fraction]) -> object:
    return pytest.approx([float(v) for v in values], rel=1e-12)


def test_a_class_never_predicted_nor_seen_scores_zero_and_still_counts_in_the_mean() -> None:
    absent = np.array([[2, 1, 0], [1, 3, 0], [0, 0, 0]])
    for key in ("precision", "recall", "f1"):
        assert per_class(key, absent)[2] == 0.0
    assert metric("macro_recall", absent) == approx(mean([Fraction(2, 3), Fraction(3, 4), Fraction(0)]))
    assert metric("macro_precision", absent) == approx(mean([Fraction(2, 3), Fraction(3, 4), Fraction(0)]))


def test_precision_is_zero_for_a_class_never_predicted_and_recall_for_a_class_never_gold() -> None:
    never_predicted = np.array([[3, 2], [0, 0]])  # class b is gold twice, never predicted
    assert per_class("precision", never_predicted).tolist() == [0.6, 0.0]
    assert per_class("recall", never_predicted).tolist() == [1.0, 0.0]
    never_gold = never_predicted.T  # class b is predicted twice, never gold
    assert per_class("recall", never_gold).tolist() == [0.6, 0.0]
    assert per_class("precision", never_gold).tolist() == [1.0, 0.0]


# --- overall metrics ------------------------------------------------------------------------


def test_accuracy_macro_averages_and_the_two_macro_f1s() -> None:
    assert metric("accuracy", M) == approx(Fraction(20, 30))
    assert metric("macro_precision", M) == approx(mean(PRECISION))
    assert metric("macro_recall", M) == approx(mean(RECALL))
    f1s = [harmonic(p, r) for p, r in zip(PRECISION, RECALL, strict=True)]
    assert metric("macro_f1", M) == approx(mean(f1s))
    assert metric("macro_f1_of_averages", M) == approx(harmonic(mean(PRECISION), mean(RECALL)))
    assert metric("macro_f1_gap", M) == approx(harmonic(mean(PRECISION), mean(RECALL)) - mean(f1s))


def test_accuracy_is_undefined_without_items() -> None:
    assert metric("accuracy", np.zeros((2, 2))) is None


def test_generalised_means_of_recall() -> None:
    recalls = [0.5, 0.6, 0.9]
    assert metric("gmean_recall", M) == approx(math.prod(recalls) ** (1 / 3))
    assert metric("hmean_recall", M) == approx(3 / sum(1 / r for r in recalls))
    one_class_missed = np.array([[4, 3], [0, 0]])  # recall of b is 0
    assert metric("gmean_recall", one_class_missed) == 0.0
    assert metric("hmean_recall", one_class_missed) == 0.0


def one_hot(codes: np.ndarray, n: int) -> np.ndarray:
    return np.eye(n)[codes]


def gorodkin_mcc(matrix: np.ndarray) -> float:
    """MCC as Gorodkin defines it: the correlation of the one-hot prediction and gold matrices."""
    rows, cols = np.nonzero(matrix)
    counts = np.asarray(matrix)[rows, cols]
    x = one_hot(np.repeat(rows, counts), len(matrix))
    y = one_hot(np.repeat(cols, counts), len(matrix))
    x, y = x - x.mean(axis=0), y - y.mean(axis=0)
    return float(np.sum(x * y) / math.sqrt(np.sum(x * x) * np.sum(y * y)))


def cohen_kappa(matrix: np.ndarray) -> float:
    """Cohen (1960): (p_o - p_e) / (1 - p_e) with p_e = sum_k P(pred k) P(gold k)."""
    total = matrix.sum()
    observed = np.trace(matrix) / total
    expected = float(np.sum(matrix.sum(axis=1) * matrix.sum(axis=0))) / total**2
    return (observed - expected) / (1 - expected)


@pytest.mark.parametrize("matrix", [M, M.T, np.array([[3, 1], [4, 0]]), np.array([[0, 5, 1], [2, 0, 0], [1, 1, 0]])])
def test_kappa_and_mcc_follow_their_textbook_definitions(matrix: np.ndarray) -> None:
    assert metric("kappa", matrix) == approx(cohen_kappa(matrix))
    assert metric("mcc", matrix) == approx(gorodkin_mcc(matrix))


def test_kappa_and_mcc_are_undefined_on_degenerate_matrices() -> None:
    assert metric("kappa", np.array([[0, 0], [0, 7]])) is None  # one class, predicted and gold
    assert metric("mcc", np.array([[3, 5], [0, 0]])) is None  # one predicted class
    assert metric("mcc", np.array([[3, 0], [5, 0]])) is None  # one gold class
    assert metric("kappa", np.array([[3, 5], [0, 0]])) is not None  # kappa is defined there
    for key in ("kappa", "mcc"):
        assert metric(key, np.zeros((3, 3))) is None


@PROPERTY
@given(float_matrices(min_n=2))
def test_one_predicted_class_makes_mcc_undefined_for_any_masses(matrix: np.ndarray) -> None:
    """Whether MCC is defined must not depend on how sums of float masses round."""
    only_first_row = np.zeros_like(matrix)
    only_first_row[0] = matrix.sum(axis=0) + 1e-3
    assert metric("mcc", only_first_row) is None
    assert metric("mcc", only_first_row.T) is None


# --- one-vs-rest measures (paper 004, Table 1) ----------------------------------------------


def test_one_vs_rest_counts() -> None:
    tp, fp, fn, tn = quantities(M).one_vs_rest
    assert numbers(tp) == [5, 6, 9]
    assert numbers(fp) == [1, 3, 6]
    assert numbers(fn) == [5, 4, 1]
    assert numbers(tn) == [19, 17, 14]


def test_one_vs_rest_mcc_bacc_and_dp_of_class_a() -> None:
    tp, fp, fn, tn = 5, 1, 5, 19
    margins = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    assert per_class("mcc", M)[0] == approx((tp * tn - fp * fn) / math.sqrt(margins))
    assert per_class("bacc", M)[0] == approx((tp / (tp + fn) + tn / (tn + fp)) / 2)
    dp = math.sqrt(3) / math.pi * math.log(tp / fp * tn / fn)
    assert per_class("dp", M)[0] == approx(dp)
    # PyCM's log10 convention gives our value divided by ln 10.
    assert per_class("dp", M)[0] / math.log(10) == approx(math.sqrt(3) / math.pi * math.log10(tp / fp * tn / fn))


def test_one_vs_rest_measures_are_undefined_on_a_zero_margin_or_cell() -> None:
    # class a: TP 3, FP 0 (row a has no error), so DP is undefined; MCC and BACC are defined.
    matrix = np.array([[3, 0], [2, 4]])
    assert np.isnan(per_class("dp", matrix)[0])
    assert not np.isnan(per_class("mcc", matrix)[0])
    # class b never gold: recall (sensitivity) has a zero denominator.
    never_gold = np.array([[3, 0], [2, 0]])
    assert np.isnan(per_class("bacc", never_gold)[1])
    assert np.isnan(per_class("mcc", never_gold)[1])


@PROPERTY
@given(data=st.data(), matrix=float_matrices(min_n=2))
def test_a_class_without_true_negatives_has_undefined_dp_for_any_masses(
    data: st.DataObject, matrix: np.ndarray
) -> None:
    """TN_i = 0 when every item is predicted i or gold i; the rounding of float sums must not
    turn the undefined ln(0) into a large finite number."""
    i = data.draw(st.integers(0, len(matrix) - 1))
    keep = np.zeros_like(matrix, dtype=bool)
    keep[i, :] = keep[:, i] = True
    no_negatives = np.where(keep, matrix, 0.0)
    assert numbers(quantities(no_negatives).one_vs_rest[3])[i] == 0.0
    assert np.isnan(per_class("dp", no_negatives)[i])
    assert metric("macro_dp", no_negatives) is None


# --- weighted averages (paper 004, Tables 2 and 3) ------------------------------------------


THIRDS = [Fraction(1, 3)] * 3


def micro(of_counts, matrix: np.ndarray, weights: list[Fraction]) -> float | None:
    return formula_value(lambda q: m.micro_weighted(q, of_counts, weights), matrix)


def macro(of_counts, matrix: np.ndarray, weights: list[Fraction]) -> float | None:
    return formula_value(lambda q: m.macro_weighted(q.xp, q.of(m.per_class(of_counts)), weights), matrix)


def test_micro_precision_recall_and_f1_equal_accuracy_with_uniform_weights() -> None:
    for of_counts in (m.precision_of_counts, m.recall_of_counts, m.f1_of_counts):
        assert micro(of_counts, M, THIRDS) == approx(Fraction(20, 30)), of_counts.__name__
        assert micro(of_counts, M, THIRDS) == metric("accuracy", M)  # the same fraction, the same double


def test_micro_mcc_is_the_mcc_of_pooled_counts() -> None:
    tp, fp, fn, tn = 20, 10, 10, 50  # column sums of the one-vs-rest counts of M
    expected = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert micro(m.mcc_of_counts, M, THIRDS) == approx(expected)
    assert micro(m.mcc_of_counts, M, THIRDS) == metric("micro_mcc", M)
    # Non-uniform weights weigh the counts: class a alone gives class a's own MCC.
    assert micro(m.mcc_of_counts, M, [Fraction(1), Fraction(0), Fraction(0)]) == per_class("mcc", M)[0]


def test_macro_weighted_average() -> None:
    matrix = np.array([[3, 0, 0], [2, 4, 0], [0, 0, 0]])  # recall (3/5, 1, 0); MCC of class c undefined
    assert macro(m.recall_of_counts, matrix, [Fraction(1), Fraction(3), Fraction(0)]) == approx(
        Fraction(1, 4) * Fraction(3, 5) + Fraction(3, 4)
    )
    assert macro(m.mcc_of_counts, matrix, [Fraction(1), Fraction(1), Fraction(1)]) is None
    assert macro(m.mcc_of_counts, matrix, [Fraction(1), Fraction(1), Fraction(0)]) is not None  # c weighs nothing
    assert macro(m.recall_of_counts, np.eye(6), [Fraction(1, 6)] * 6) == 1.0  # never 1.0000000000000002


def test_unknown_class_measures_are_named_in_the_error() -> None:
    with pytest.raises(KeyError, match="unknown per-class measure 'accuracy'; known: precision, recall"):
        registry.class_measure("accuracy")


# --- validation and helpers -----------------------------------------------------------------


@pytest.mark.parametrize(
    "matrix", [np.zeros((0, 0)), np.zeros((2, 3)), np.zeros(4), [[1, -1], [0, 1]], [[1, np.nan], [0, 1]], [[np.inf]]]
)
def test_as_matrix_rejects_what_is_not_a_confusion_matrix(matrix: object) -> None:
    with pytest.raises(ValueError, match="confusion matrix"):
        m.as_matrix(matrix)


def test_as_matrix_returns_floats() -> None:
    assert m.as_matrix([[1, 2], [3, 4]]).dtype == np.float64


def test_defined_turns_nan_and_inf_into_none() -> None:
    assert m.defined(float("nan")) is None
    assert m.defined(np.inf) is None
    value = m.defined(np.float64(0.25))
    assert value == 0.25 and type(value) is float


# --- the Theorem of paper 002 --------------------------------------------------------------


def exact_precision_recall(matrix: np.ndarray) -> tuple[list[Fraction], list[Fraction]]:
    """P_i and R_i as exact fractions (paper 002, Eq. 1; 0 on a zero denominator)."""
    rows = [int(x) for x in matrix.sum(axis=1)]
    cols = [int(x) for x in matrix.sum(axis=0)]
    diag = [int(x) for x in np.diagonal(matrix)]
    precision = [Fraction(d, r) if r else Fraction(0) for d, r in zip(diag, rows, strict=True)]
    recall = [Fraction(d, c) if c else Fraction(0) for d, c in zip(diag, cols, strict=True)]
    return precision, recall


def exact_macro_f1s(matrix: np.ndarray) -> tuple[Fraction, Fraction]:
    """(F1 of averages, averaged F1) in exact arithmetic (paper 002, Eq. 3 and 2)."""
    precision, recall = exact_precision_recall(matrix)
    averaged = mean([harmonic(p, r) for p, r in zip(precision, recall, strict=True)])
    return harmonic(mean(precision), mean(recall)), averaged


def supremum(n: int) -> float:
    """Paper 002, Theorem 3."""
    return 0.5 if n % 2 == 0 else 0.5 - 1 / (2 * n * n)


def errs_both_ways(precision: list[Fraction], recall: list[Fraction]) -> bool:
    """Theorem 2 (iii): some class has P < R and another P > R."""
    pairs = list(zip(precision, recall, strict=True))
    return any(p < r for p, r in pairs) and any(p > r for p, r in pairs)


@PROPERTY
@given(count_matrices())
def test_theorem_on_exact_fractions_and_the_engine_agrees(matrix: np.ndarray) -> None:
    f1_of_averages, averaged = exact_macro_f1s(matrix)
    precision, recall = exact_precision_recall(matrix)
    gap = f1_of_averages - averaged
    # Theorem 1 and 3, exactly.
    assert 0 <= gap <= supremum(len(matrix))
    # The Lemma: the gap is 0 iff P_x R_y = P_y R_x for every pair of classes.
    pairs = list(zip(precision, recall, strict=True))
    proportional = all(px * ry == py * rx for (px, rx), (py, ry) in itertools.product(pairs, repeat=2))
    assert (gap == 0) == proportional
    # Theorem 2 as printed needs every class to have a correct item (see the counterexamples).
    if errs_both_ways(precision, recall):
        assert gap > 0
    if np.all(np.diagonal(matrix) > 0):
        assert (gap == 0) == (precision == recall)
        assert (gap > 0) == errs_both_ways(precision, recall)
    # The engine computes the same numbers, and its gap is 0 exactly where the Theorem says so.
    assert metric("macro_f1_of_averages", matrix) == approx(f1_of_averages)
    assert metric("macro_f1", matrix) == approx(averaged)
    assert metric("macro_f1_gap", matrix) == pytest.approx(float(gap), rel=1e-9, abs=1e-15)
    assert formula_value(m.macro_f1_gap_closed_form, matrix) == pytest.approx(float(gap), rel=1e-9, abs=1e-15)
    if gap == 0:
        assert metric("macro_f1_gap", matrix) < 1e-15


def test_theorem_2_fails_when_a_class_has_no_correct_item() -> None:
    """Counterexamples to paper 002, Theorem 2 as printed: a class with m_ii = 0 has
    P_i = R_i = 0 and drops out of the Lemma's sum, yet it absorbs the difference between
    total bias and total prevalence that the proof (Appendix B, (ii) => (iii)) relies on."""
    equal_but_p_differs_from_r = np.array([[1, 1], [0, 0]])  # P = (1/2, 0), R = (1, 0)
    assert exact_precision_recall(equal_but_p_differs_from_r) == ([Fraction(1, 2), 0], [1, 0])
    f1_of_averages, averaged = exact_macro_f1s(equal_but_p_differs_from_r)
    assert f1_of_averages == averaged == Fraction(1, 3)
    assert metric("macro_f1_gap", equal_but_p_differs_from_r) == 0.0

    gap_without_opposite_errors = np.array([[1, 0, 1], [0, 1, 3], [0, 0, 0]])  # P < R for a and b
    precision, recall = exact_precision_recall(gap_without_opposite_errors)
    assert not errs_both_ways(precision, recall)
    f1_of_averages, averaged = exact_macro_f1s(gap_without_opposite_errors)
    assert (f1_of_averages, averaged) == (Fraction(4, 11), Fraction(16, 45))
    assert metric("macro_f1_gap", gap_without_opposite_errors) == approx(Fraction(4, 11) - Fraction(16, 45))


@PROPERTY
@given(matrices())
def test_gap_is_never_negative_and_within_the_supremum(matrix: np.ndarray) -> None:
    gap = metric("macro_f1_gap", matrix)
    assert 0.0 <= gap <= supremum(len(matrix))
    assert metric("macro_f1_of_averages", matrix) >= metric("macro_f1", matrix) - 1e-12
    assert formula_value(m.macro_f1_gap_closed_form, matrix) == pytest.approx(gap, rel=1e-9, abs=1e-12)


@PROPERTY
@given(matrices())
def test_symmetric_matrices_have_no_gap(matrix: np.ndarray) -> None:
    """m = m^T makes bias = prevalence, so P_i = R_i for every class (Theorem 2)."""
    symmetric = matrix + matrix.T
    assert metric("macro_f1_gap", symmetric) < 1e-15
    assert formula_value(m.macro_f1_gap_closed_form, symmetric) < 1e-15


def near_supremum(n: int, large: float = 1e6) -> np.ndarray:
    """The proof's extreme configuration: the first n//2 classes with (P, R) -> (1, 0), the
    others with (P, R) -> (0, 1). Each class is predicted correctly once; every class of the
    second group also takes ``large`` items of every class of the first group."""
    first = n // 2
    matrix = np.eye(n)
    matrix[first:, :first] = large
    return matrix


@pytest.mark.parametrize("n", range(2, 9))
def test_the_gap_approaches_its_supremum(n: int) -> None:
    gap = metric("macro_f1_gap", near_supremum(n))
    assert supremum(n) - 1e-4 < gap <= supremum(n)
    assert formula_value(m.macro_f1_gap_closed_form, near_supremum(n)) == pytest.approx(gap, rel=1e-9)


def test_closed_form_of_a_hollow_matrix_is_zero() -> None:
    hollow = np.array([[0, 3, 1], [2, 0, 5], [1, 1, 0]])
    assert formula_value(m.macro_f1_gap_closed_form, hollow) == 0.0
    assert metric("macro_f1", hollow) == metric("macro_f1_of_averages", hollow) == 0.0
