"""Every number printed in the papers that define the suite is reproduced (papers/README.md).

What this proves: the engine reproduces paper 002's Tables 1-4 (to the digits printed) and the
reference implementation's outputs of Appendix D to every printed digit; the AF/FA values of
the three examples in paper 003; paper 000's prevalence-scaling example (Tables 2-4), the MCC
values of Tables 6-7, Eq. 14-16 and the calibrated kappa of Section 4; and the formulas of
paper 004 in the forms printed there. Table 8 of paper 000 is tested elsewhere.
"""

from __future__ import annotations

import math
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

import numpy as np
import pytest
from hypothesis import given

from scoring.engine import metrics as m
from scoring.engine import registry
from scoring.engine.calibration import calibrate, scale_prevalence
from scoring.engine.suite import weighted_averages
from tests.scoring.strategies import PROPERTY, matrices
from tests.scoring.values import formula_value, metric, per_class


def as_printed(value: float, printed: str, *, rounding: str = ROUND_HALF_UP) -> str:
    """``value`` with as many decimals as ``printed`` has, rounded as the paper did."""
    return str(Decimal(value).quantize(Decimal(printed), rounding=rounding))


# --- paper 002, Opitz & Burst, Macro F1 and Macro F1 -----------------------------------------
# Columns "F1 of averages" (the paper's blackboard F1) and "averaged F1" (calligraphic F1).

PAPER_002_TABLES = {
    "Table 1": ([[5, 10], [5, 10]], "0.5", "0.49"),
    "Table 2": ([[1, 1], [9, 19]], "0.55", "0.48"),
    "Table 3": ([[100, 10000], [0, 100]], "0.505", "0.0196"),
    "Table 4": ([[100, 5000], [5000, 100]], "0.0196", "0.0196"),
}
TRUNCATED = {("Table 2", "0.55")}
"""Printed values that are cut off, not rounded: Table 2's F1 of averages is 0.5553, printed
0.55, while the same table's averaged F1, 0.4792, is rounded to 0.48."""


@pytest.mark.parametrize(
    ("table", "matrix", "f1_of_averages", "averaged_f1"), [(k, *v) for k, v in PAPER_002_TABLES.items()]
)
def test_paper_002_tables(table: str, matrix: list, f1_of_averages: str, averaged_f1: str) -> None:
    matrix = np.array(matrix)
    pairs = ((metric("macro_f1_of_averages", matrix), f1_of_averages), (metric("macro_f1", matrix), averaged_f1))
    for value, printed in pairs:
        rounding = ROUND_DOWN if (table, printed) in TRUNCATED else ROUND_HALF_UP
        assert as_printed(value, printed, rounding=rounding) == printed


def test_paper_002_table_2_truncates_rather_than_rounds() -> None:
    """Documents the exception above: rounded, Table 2's F1 of averages would read 0.56."""
    assert as_printed(metric("macro_f1_of_averages", np.array([[1, 1], [9, 19]])), "0.55") == "0.56"


def test_paper_002_bias_towards_b_flips_the_ranking() -> None:
    """Tables 1 and 2: the bias towards class b improves F1 of averages, impairs averaged F1."""
    table_1, table_2 = np.array([[5, 10], [5, 10]]), np.array([[1, 1], [9, 19]])
    assert metric("macro_f1_of_averages", table_2) > metric("macro_f1_of_averages", table_1)
    assert metric("macro_f1", table_2) < metric("macro_f1", table_1)


def test_paper_002_table_3_has_the_same_f1_for_both_classes() -> None:
    for value in per_class("f1", np.array([[100, 10000], [0, 100]])):
        assert as_printed(value, "0.0196") == "0.0196"


APPENDIX_D = {
    # matrix: (macroF1 benevolent, macroF1 non-benevolent, delta, delta calculated), as printed
    "unbalanced errors": (
        [[100, 10000], [0, 100]],
        ("0.504950495049505", "1.96078431372549e-2", "0.48534265191225007", "0.48534265191225007"),
    ),
    "balanced errors": (
        [[100, 5000], [5000, 100]],
        ("1.96078431372549e-2", "1.96078431372549e-2", "0.0", "0.0"),
    ),
}


@pytest.mark.parametrize(("matrix", "printed"), APPENDIX_D.values(), ids=APPENDIX_D)
def test_paper_002_appendix_d_to_every_printed_digit(matrix: list, printed: tuple[str, ...]) -> None:
    """Haskell's ``show`` and Python's ``repr`` both print the shortest decimal that reads back
    as the same double, so equal decimals mean the very same float, to the last bit."""
    matrix = np.array(matrix)
    ours = (metric("macro_f1_of_averages", matrix), metric("macro_f1", matrix), metric("macro_f1_gap", matrix))
    ours += (formula_value(m.macro_f1_gap_closed_form, matrix),)
    for value, text in zip(ours, printed, strict=True):
        assert Decimal(repr(value)) == Decimal(text)


# --- paper 003, the blog post on the two macro F1s ----------------------------------------------

PAPER_003_TABLES = {
    "Table 1": ([[100, 10000], [0, 100]], "0.02", "0.5"),
    "Table 2": ([[3500, 2500, 1500], [5000, 5000, 5000], [1500, 2500, 3500]], "0.4", "0.41"),
    "Table 3": ([[2000, 1000, 0], [8000, 8000, 8000], [0, 1000, 2000]], "0.36", "0.47"),
}


@pytest.mark.parametrize(("matrix", "af", "fa"), PAPER_003_TABLES.values(), ids=PAPER_003_TABLES)
def test_paper_003_tables(matrix: list, af: str, fa: str) -> None:
    """AF = arithmetic mean of F1s (averaged F1), FA = F1 of the averages."""
    matrix = np.array(matrix)
    assert as_printed(metric("macro_f1", matrix), af) == af
    assert as_printed(metric("macro_f1_of_averages", matrix), fa) == fa


def test_paper_003_balanced_data_and_a_bias_towards_b_flip_the_ranking() -> None:
    table_2 = np.array(PAPER_003_TABLES["Table 2"][0])
    table_3 = np.array(PAPER_003_TABLES["Table 3"][0])
    assert len(set(table_2.sum(axis=0))) == len(set(table_3.sum(axis=0))) == 1  # balanced gold
    assert metric("macro_f1", table_3) < metric("macro_f1", table_2)
    assert metric("macro_f1_of_averages", table_3) > metric("macro_f1_of_averages", table_2)


# --- paper 000, Opitz, From Bias and Prevalence to Macro F1, Kappa, and MCC ----------------------

TABLE_2 = np.array([[15, 5], [10, 10]])


def test_paper_000_tables_2_to_4_prevalence_scaling() -> None:
    scaled = scale_prevalence(TABLE_2, np.array([1.0, 2.0]))
    np.testing.assert_array_equal(scaled, [[15, 10], [10, 20]])  # Table 4
    assert TABLE_2.sum(axis=0)[1] == 15 and scaled.sum(axis=0)[1] == 30  # captions
    # Appendix C.4: macP = 5/8 before, 19/30 after: macro precision is not prevalence invariant.
    assert metric("macro_precision", TABLE_2) == pytest.approx(5 / 8, rel=1e-15)
    assert metric("macro_precision", scaled) == pytest.approx(19 / 30, rel=1e-15)
    # Appendix B.4: macro recall is.
    assert metric("macro_recall", scaled) == pytest.approx(metric("macro_recall", TABLE_2), rel=1e-15)


def test_paper_000_tables_6_and_7_mcc() -> None:
    table_6 = np.array([[10, 43, 0], [1, 1, 0], [0, 0, 1]])
    table_7 = np.array([[10, 43, 0], [1, 1, 0], [0, 10, 1]])
    assert metric("mcc", table_6) == 0.0  # exactly: c s = p.b = 672 in counts
    assert as_printed(metric("mcc", table_7), "0.07") == "0.07"
    assert metric("mcc", table_7) > metric("mcc", table_6)  # more errors, higher MCC: no monotonicity (F.1)


PAPER_000_MATRICES = [TABLE_2, np.array([[10, 43, 0], [1, 1, 0], [0, 10, 1]]), np.array([[1, 1], [9, 19]])]


@pytest.mark.parametrize("matrix", PAPER_000_MATRICES)
def test_paper_000_eq_14_to_16_calibrated_accuracy_is_macro_recall(matrix: np.ndarray) -> None:
    assert metric("accuracy", calibrate(matrix)) == pytest.approx(metric("macro_recall", matrix), rel=1e-12)


@pytest.mark.parametrize("matrix", PAPER_000_MATRICES)
def test_paper_000_calibrated_kappa(matrix: np.ndarray) -> None:
    """Section 4: KAPPA(m lambda) = (c - 1/n) / (1 - 1/n) with c the calibrated accuracy."""
    n, c = len(matrix), float(np.trace(calibrate(matrix)))
    assert metric("kappa", calibrate(matrix)) == pytest.approx((c - 1 / n) / (1 - 1 / n), rel=1e-12)
    assert c == pytest.approx(metric("macro_recall", matrix), rel=1e-12)


@PROPERTY
@given(matrices(min_n=2))
def test_paper_000_kappa_and_mcc_share_their_sign_and_kappa_is_smaller(matrix: np.ndarray) -> None:
    """Section 4 says MCC >= KAPPA. Both have the numerator c s - p.b and kappa's denominator
    s^2 - p.b is at least MCC's, so |kappa| <= |MCC| with the same sign: MCC >= kappa holds
    for positive values, and the order reverses for negative ones."""
    kappa, mcc = metric("kappa", matrix), metric("mcc", matrix)
    if kappa is None or mcc is None:
        return
    assert abs(kappa) <= abs(mcc) + 1e-12
    assert kappa * mcc >= 0 or max(abs(kappa), abs(mcc)) < 1e-12


# --- paper 004, per-class measures and their weighted averages ----------------------------------

M = np.array([[5, 1, 0], [2, 6, 1], [3, 3, 9]])
TP, FP, FN, TN = (np.array(x, dtype=float) for x in ([5, 6, 9], [1, 3, 6], [5, 4, 1], [19, 17, 14]))


def test_paper_004_dp_note_form() -> None:
    """The note under Table 1: DP = sqrt(3)/pi (ln X + ln Y), X = sens/(1 - sens), Y = spec/(1 - spec)."""
    sensitivity, specificity = TP / (TP + FN), TN / (TN + FP)
    x, y = sensitivity / (1 - sensitivity), specificity / (1 - specificity)
    np.testing.assert_allclose(per_class("dp", M), math.sqrt(3) / math.pi * (np.log(x) + np.log(y)), rtol=1e-12)


def test_paper_004_table_2_micro_weighted_averages() -> None:
    weights = np.array([0.5, 0.3, 0.2])
    tp, fp, fn, tn = (float(weights @ x) for x in (TP, FP, FN, TN))
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    expected = {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall),
        "bacc": (tp / (tp + fn) + tn / (tn + fp)) / 2,
        "dp": math.sqrt(3) / math.pi * math.log(tp / fp * tn / fn),
        "mcc": (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)),
    }
    averages = weighted_averages(M, weights.tolist())
    for measure, value in expected.items():
        assert averages["micro"][measure] == pytest.approx(value, rel=1e-12), measure


def test_paper_004_table_3_macro_weighted_averages() -> None:
    weights = np.array([0.5, 0.3, 0.2])
    averages = weighted_averages(M, weights.tolist())
    for measure in registry.CLASS_MEASURES:
        expected = float(np.sum(weights * np.array(measure(M))))
        assert averages["macro"][measure.key] == pytest.approx(expected, rel=1e-12), measure.key
