"""Every stored value is the double nearest to its exact value; exactness at size; sums of cells.

What this proves: for every registered metric (the ordinal errors too) and per-class measure,
raw and calibrated, the
value a report stores is the double nearest to the exact value of an independent oracle written
from the papers (``tests/scoring/oracle.py``: fractions and 400-bit mpmath), and undefined
(``None``) in exactly the oracle's cases, on random count, float and corner-case matrices; an
exact matrix reads float cells as the binary fractions they are and
scales to any class distribution exactly (paper 000, Eq. 5), calibration (Eq. 6) being
scaling to equal shares; a DP whose odds ratio underflows a double is still
right; kappa and MCC of [[10^9, 3], [5, 7]] and [[10^12, 3], [5, 7]] are the correctly rounded
exact values, where float arithmetic is off from the 9th digit; and one-vs-rest counts are sums
of cells, so a soft mass of 1e-20 survives into TN and the DP of the issue's example is
√3/π · ln(10^-20) = −25.3896 for both classes.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from scoring.engine.canonical import ExactMatrix
from scoring.engine.confusion import soft_confusion
from scoring.engine.registry import CLASS_MEASURES, METRICS, suite_metrics
from scoring.engine.suite import score_matrix
from tests.scoring import oracle
from tests.scoring.strategies import PROPERTY, matrices, supported_matrices
from tests.scoring.values import metric, numbers, per_class, quantities

DIFFERENTIAL = settings(PROPERTY, max_examples=300)
K = math.sqrt(3) / math.pi
"""The DP factor, written out rather than taken from the engine."""

LARGE_COUNTS = st.integers(min_value=1, max_value=6).flatmap(
    lambda n: arrays(np.int64, (n, n), elements=st.integers(min_value=0, max_value=10**6))
)
"""Count matrices with up to a million items per cell, where the float path still keeps
about 15 digits (products stay below 2^53)."""

ANY_MATRIX = st.one_of(matrices(), supported_matrices(), supported_matrices(floats=True), LARGE_COUNTS)


def assert_correctly_rounded(matrix: np.ndarray) -> None:
    """Every metric and per-class measure, raw and calibrated, is the double nearest to the
    oracle's exact value, undefined exactly where the oracle's is."""
    exact = ExactMatrix.of(matrix)
    sides = [("raw", exact, oracle.cells(matrix)), ("calibrated", exact.calibrated(), None)]
    sides[1] = ("calibrated", sides[1][1], oracle.calibrated(sides[0][2]))
    for side, engine_matrix, oracle_matrix in sides:
        assert (engine_matrix is None) == (oracle_matrix is None), side
        if engine_matrix is None:
            continue
        for registered in suite_metrics(ordinal=True):
            expected = oracle.nearest_double(oracle.metric(oracle_matrix, registered.key))
            assert registered(engine_matrix) == expected, f"{registered.key} ({side}) of {matrix.tolist()}"
        for measure in CLASS_MEASURES:
            expected = [oracle.nearest_double(v) for v in oracle.per_class(oracle_matrix, measure.key)]
            assert measure(engine_matrix) == expected, f"{measure.key} ({side}) of {matrix.tolist()}"


@DIFFERENTIAL
@given(ANY_MATRIX)
def test_every_value_is_the_double_nearest_to_the_oracle_s_exact_value(matrix: np.ndarray) -> None:
    assert_correctly_rounded(matrix)


CORNER_CASES = {
    "1x1 zero": [[0]],
    "1x1 count": [[7]],
    "1x1 float": [[0.25]],
    "3x3 zero": np.zeros((3, 3)),
    "all right": np.diag([3, 1, 4]),
    "all wrong": [[0, 2], [5, 0]],
    "one predicted class": [[3, 5, 2], [0, 0, 0], [0, 0, 0]],
    "one gold class": [[0, 4, 0], [0, 3, 0], [0, 2, 0]],
    "tiny and huge masses": [[1e-30, 1e30], [1.0, 1e-20]],
}


@pytest.mark.parametrize("matrix", CORNER_CASES.values(), ids=CORNER_CASES)
def test_corner_cases_are_correctly_rounded(matrix: list) -> None:
    assert_correctly_rounded(np.asarray(matrix))


def test_metrics_accept_a_numpy_matrix_or_an_exact_one() -> None:
    matrix = np.array([[5, 1, 0], [2, 6, 1], [3, 3, 9]])
    for registered in METRICS:
        assert registered(matrix) == registered(ExactMatrix.of(matrix)), registered.key
    for measure in CLASS_MEASURES:
        assert measure(matrix) == measure(ExactMatrix.of(matrix)), measure.key


# --- reading and calibrating exactly -------------------------------------------------------


@PROPERTY
@given(supported_matrices(floats=True))
def test_an_exact_matrix_holds_the_float_cells_exactly(matrix: np.ndarray) -> None:
    exact = ExactMatrix.of(matrix)
    for row, exact_row in zip(matrix.tolist(), exact.cells, strict=True):
        for cell, integer in zip(row, exact_row, strict=True):
            assert Fraction(integer, exact.denominator) == Fraction(cell)


@PROPERTY
@given(supported_matrices(floats=True))
def test_exact_calibration_is_eq_6_in_fractions(matrix: np.ndarray) -> None:
    """m[i][j] / (n prevalence(j)), every cell and prevalence read as its exact fraction."""
    n = len(matrix)
    calibrated = ExactMatrix.of(matrix).calibrated()
    prevalence = [sum(Fraction(cell) for cell in column) for column in matrix.T.tolist()]
    for i in range(n):
        for j in range(n):
            expected = Fraction(matrix[i, j]) / (n * prevalence[j])
            assert Fraction(calibrated.cells[i][j], calibrated.denominator) == expected
    assert calibrated.mass(calibrated.prevalence[0]) == (1 if n == 1 else 1 / n)


@PROPERTY
@given(data=st.data(), matrix=supported_matrices(floats=True))
def test_exact_scaling_is_eq_5_in_fractions(data: st.DataObject, matrix: np.ndarray) -> None:
    """m[i][j]·share(j) / prevalence(j) for shares w / sum(w), each cell read as its exact fraction."""
    n = len(matrix)
    weights = data.draw(st.lists(st.integers(min_value=1, max_value=50), min_size=n, max_size=n))
    scaled = ExactMatrix.of(matrix).scaled_to(weights)
    prevalence = [sum(Fraction(cell) for cell in column) for column in matrix.T.tolist()]
    for i in range(n):
        for j in range(n):
            expected = Fraction(matrix[i, j]) * Fraction(weights[j], sum(weights)) / prevalence[j]
            assert Fraction(scaled.cells[i][j], scaled.denominator) == expected


def test_calibration_is_scaling_to_equal_shares() -> None:
    exact = ExactMatrix.of(np.array([[3, 1, 0], [2, 5, 1], [0, 4, 9]]))
    calibrated, scaled = exact.calibrated(), exact.scaled_to([1, 1, 1])
    assert (calibrated.cells, calibrated.denominator) == (scaled.cells, scaled.denominator)
    assert ExactMatrix.of(np.array([[1, 0], [1, 0]])).scaled_to([1, 2]) is None


def test_integer_arrays_are_read_as_they_are_beyond_float_precision() -> None:
    big = 2**60 + 1  # not a float64
    exact = ExactMatrix.of(np.array([[big, 1], [0, 1]], dtype=np.int64))
    assert exact.cells == [[big, 1], [0, 1]] and exact.denominator == 1
    assert exact.mass(exact.bias[0]) == big + 1


def test_invalid_matrices_are_rejected() -> None:
    for matrix in ([[1, -1], [0, 1]], [[1, np.nan], [0, 1]], np.zeros((2, 3))):
        with pytest.raises(ValueError, match="confusion matrix"):
            ExactMatrix.of(matrix)


# --- discriminant power beyond the range of doubles -------------------------------------------


def test_dp_of_an_odds_ratio_beyond_the_range_of_doubles() -> None:
    """TP = TN = 1e-200, FP = FN = 1: the odds ratio 1e-400 underflows a double, its logarithm
    does not."""
    matrix = np.array([[1e-200, 1.0], [1.0, 1e-200]])
    expected = K * (math.log(1e-200) * 2)
    values = per_class("dp", matrix)
    assert values[0] == pytest.approx(expected, rel=1e-14)
    assert values[1] == pytest.approx(expected, rel=1e-14)
    assert metric("macro_dp", matrix) == pytest.approx(expected, rel=1e-14)


# --- exact at any size (issue item 2) ----------------------------------------------------------


def kappa_and_mcc_by_hand(big: int) -> tuple[float, float]:
    """[[big, 3], [5, 7]]: s = big + 15, c = big + 7, bias (big + 3, 12), prevalence (big + 5, 10);
    kappa = (c s - p.b) / (s^2 - p.b), MCC = (c s - p.b) / sqrt((s^2 - p.p)(s^2 - b.b)).
    The kappa fraction is rounded once by ``float(Fraction)``; the MCC root is taken with 80
    significant digits, then rounded once."""
    s, c = big + 15, big + 7
    bias, prevalence = (big + 3, 12), (big + 5, 10)
    pb = bias[0] * prevalence[0] + bias[1] * prevalence[1]
    bb = bias[0] ** 2 + bias[1] ** 2
    pp = prevalence[0] ** 2 + prevalence[1] ** 2
    kappa = float(Fraction(c * s - pb, s * s - pb))
    with localcontext() as context:
        context.prec = 80
        mcc = Decimal(c * s - pb) / (Decimal(s * s - pp) * Decimal(s * s - bb)).sqrt()
    return kappa, float(mcc)


@pytest.mark.parametrize("big", [10**9, 10**12])
def test_kappa_and_mcc_are_correctly_rounded_at_any_size(big: int) -> None:
    matrix = np.array([[big, 3], [5, 7]])
    kappa, mcc = kappa_and_mcc_by_hand(big)
    assert metric("kappa", matrix) == kappa
    assert metric("mcc", matrix) == mcc
    report = score_matrix(matrix, labels=("a", "b"))
    assert report.metrics["kappa"] == kappa
    assert report.metrics["mcc"] == mcc
    # With two classes the one-vs-rest MCC of either class is Gorodkin's MCC: the same exact
    # num²/den, so the same double.
    assert report.per_class["a"]["mcc"] == report.per_class["b"]["mcc"] == mcc


# --- one-vs-rest counts are sums of cells (issue item 3) -------------------------------------


def issue_soft_matrix() -> np.ndarray:
    """Gold a, b, a with probability rows (0, 1), (1, 1e-20), (1, 0) over (a, b): item k adds
    q_k[i] to m[i][gold_k] (rows = predictions). Item 1 (gold a): m[a][a] += 0, m[b][a] += 1;
    item 2 (gold b): m[a][b] += 1, m[b][b] += 1e-20; item 3 (gold a): m[a][a] += 1, m[b][a] += 0.
    So m = [[1, 1], [1, 1e-20]]."""
    gold = [0, 1, 0]
    probabilities = [(0.0, 1.0), (1.0, 1e-20), (1.0, 0.0)]
    matrix = np.zeros((2, 2))
    for gold_class, row in zip(gold, probabilities, strict=True):
        matrix[:, gold_class] += row
    np.testing.assert_array_equal(matrix, [[1.0, 1.0], [1.0, 1e-20]])
    np.testing.assert_array_equal(soft_confusion(np.array(probabilities), np.array(gold)), matrix)
    return matrix


# Class a: TP = m[a][a] = 1, FP = m[a][b] = 1, FN = m[b][a] = 1, TN = m[b][b] = 1e-20.
# Class b: TP = m[b][b] = 1e-20, FP = m[b][a] = 1, FN = m[a][b] = 1, TN = m[a][a] = 1.
# Both: DP = √3/π · ln(TP·TN / (FP·FN)) = √3/π · ln(1e-20) = −20 ln(10) · √3/π.
ISSUE_DP = K * -20 * math.log(10)


def test_the_issue_dp_by_hand() -> None:
    assert pytest.approx(-25.3896, abs=1e-4) == ISSUE_DP


def test_a_tiny_soft_mass_survives_in_the_float_path() -> None:
    matrix = issue_soft_matrix()
    assert numbers(quantities(matrix).one_vs_rest[3]) == [1e-20, 1.0]
    dp = per_class("dp", matrix)
    assert dp[0] == dp[1]
    assert dp[0] == pytest.approx(ISSUE_DP, rel=1e-12)
    assert metric("macro_dp", matrix) == pytest.approx(ISSUE_DP, rel=1e-12)


def test_a_tiny_soft_mass_survives_in_the_suite() -> None:
    report = score_matrix(issue_soft_matrix(), labels=("a", "b"))
    assert report.per_class["a"]["dp"] == report.per_class["b"]["dp"]
    assert report.per_class["a"]["dp"] == pytest.approx(ISSUE_DP, rel=1e-12)
    assert report.metrics["macro_dp"] == pytest.approx(ISSUE_DP, rel=1e-12)


TINY_OR_LARGE = st.one_of(st.just(0.0), st.just(1e-20), st.floats(min_value=1e-30, max_value=1e-15), st.just(1.0))


@PROPERTY
@given(st.integers(min_value=1, max_value=5).flatmap(lambda n: arrays(np.float64, (n, n), elements=TINY_OR_LARGE)))
def test_one_vs_rest_counts_are_sums_of_cells(matrix: np.ndarray) -> None:
    """Each count is the correctly rounded sum of its cells (math.fsum), tiny masses included;
    never a difference of totals that a tiny mass disappears in."""
    _, fp, fn, tn = (numbers(count) for count in quantities(matrix).one_vs_rest)
    counts = {"fp": fp, "fn": fn, "tn": tn}
    n = len(matrix)
    for i in range(n):
        others = [k for k in range(n) if k != i]
        expected = {
            "fp": math.fsum(matrix[i, k] for k in others),
            "fn": math.fsum(matrix[k, i] for k in others),
            "tn": math.fsum(matrix[a, b] for a in others for b in others),
        }
        for name, value in expected.items():
            assert counts[name][i] == value, (name, i)  # the exact sum, rounded once: fsum's


# --- discriminant power near zero ----------------------------------------------------------------


def test_dp_near_zero_is_correctly_rounded_and_its_mean_is_the_mean_of_equal_values() -> None:
    """[[2500, 2499], [2501, 2500]]: both classes have the odds ratio 2500² / (2499·2501) =
    1 + 1/6,249,999, whose DP the logarithm of a rounded ratio missed by 3·10⁶ ulps."""
    matrix = np.array([[2500, 2499], [2501, 2500]])
    exact = oracle.nearest_double(oracle.dp_of(*(Fraction(x) for x in (2500, 2499, 2501, 2500))))
    assert per_class("dp", matrix).tolist() == [exact, exact]
    assert metric("macro_dp", matrix) == exact
    assert metric("micro_dp", matrix) == 0.0  # the pooled counts are all 5,000


def test_dp_keeps_its_sign_at_a_trillion_items() -> None:
    """[[10¹² - 1, 10¹²], [10¹², 10¹² + 1]]: the odds ratio is 1 - 10⁻²⁴, DP about -5.5·10⁻²⁵
    (the logarithm of the rounded ratio 1.0 gave 0.0)."""
    big = 10**12
    matrix = np.array([[big - 1, big], [big, big + 1]])
    counts = (Fraction(big - 1), Fraction(big), Fraction(big), Fraction(big + 1))
    expected = oracle.nearest_double(oracle.dp_of(*counts))
    assert per_class("dp", matrix).tolist() == [expected, expected]
    assert expected == pytest.approx(-math.sqrt(3) / math.pi * 1e-24, rel=1e-9)
