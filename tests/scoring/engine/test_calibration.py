"""Prevalence scaling and calibration (paper 000, Eq. 5-6) and what calibration does to metrics.

What this proves: scaling multiplies gold columns and nothing else; calibration gives every
class the mass 1/n while keeping each column's proportions, and is undefined (``None``) when a
class has no gold item; accuracy of the calibrated matrix is macro recall (Eq. 14-16); kappa
and MCC of the calibrated matrix have the closed forms of Section 4, so calibrated kappa ranks
classifiers exactly as macro recall does.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from scoring.engine.calibration import calibrate, scale_prevalence, scale_to_distribution
from tests.scoring.strategies import PROPERTY, distributions, positive_scales, supported_matrices
from tests.scoring.values import metric, per_class


@PROPERTY
@given(data=st.data(), matrix=supported_matrices())
def test_scaling_multiplies_each_gold_column(data: st.DataObject, matrix: np.ndarray) -> None:
    scales = data.draw(positive_scales(len(matrix)))
    scaled = scale_prevalence(matrix, scales)
    for j, factor in enumerate(scales):
        np.testing.assert_array_equal(scaled[:, j], matrix[:, j] * factor)


def test_scaling_paper_000_tables_2_to_4() -> None:
    scaled = scale_prevalence(np.array([[15, 5], [10, 10]]), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(scaled, [[15, 10], [10, 20]])


@pytest.mark.parametrize("scales", [[1.0], [1.0, 0.0], [1.0, -2.0], [1.0, np.inf], [1.0, np.nan], [[1.0, 1.0]]])
def test_scaling_needs_one_positive_finite_scale_per_class(scales: list) -> None:
    with pytest.raises(ValueError, match="positive"):
        scale_prevalence(np.ones((2, 2)), np.array(scales))


@PROPERTY
@given(data=st.data(), matrix=supported_matrices(floats=True))
def test_scaling_to_a_distribution_sets_the_gold_shares(data: st.DataObject, matrix: np.ndarray) -> None:
    target = data.draw(distributions(len(matrix)))
    scaled = scale_to_distribution(matrix, target * 7.0)  # any positive multiple of the shares
    np.testing.assert_allclose(scaled.sum(axis=0), target, rtol=1e-12)


def test_a_class_without_gold_items_cannot_be_scaled_or_calibrated() -> None:
    matrix = np.array([[2, 0], [1, 0]])
    assert scale_to_distribution(matrix, np.array([0.5, 0.5])) is None
    assert calibrate(matrix) is None


@pytest.mark.parametrize("target", [[1.0, 0.0], [1.0, -1.0], [1.0], [np.nan, 1.0]])
def test_target_distribution_must_be_positive(target: list) -> None:
    with pytest.raises(ValueError, match="positive"):
        scale_to_distribution(np.ones((2, 2)), np.array(target))


@PROPERTY
@given(supported_matrices(floats=True))
def test_calibration_gives_every_class_mass_one_over_n_and_keeps_column_proportions(matrix: np.ndarray) -> None:
    n = len(matrix)
    calibrated = calibrate(matrix)
    np.testing.assert_allclose(calibrated.sum(axis=0), np.full(n, 1.0 / n), rtol=1e-12)
    assert math.isclose(calibrated.sum(), 1.0, rel_tol=1e-12)
    np.testing.assert_allclose(calibrated * n, matrix / matrix.sum(axis=0), rtol=1e-12)


def test_calibration_by_hand() -> None:
    calibrated = calibrate(np.array([[15, 5], [10, 10]]))
    np.testing.assert_allclose(calibrated, [[15 / 50, 5 / 30], [10 / 50, 10 / 30]])


@PROPERTY
@given(supported_matrices(floats=True))
def test_calibration_does_not_change_class_recall(matrix: np.ndarray) -> None:
    """Paper 000, B.4: R_i is invariant under any prevalence scaling."""
    recalls = per_class("recall", matrix)
    np.testing.assert_allclose(per_class("recall", calibrate(matrix)), recalls, rtol=1e-12, atol=1e-15)


@PROPERTY
@given(data=st.data(), matrix=supported_matrices())
def test_macro_recall_ignores_prevalence_scaling(data: st.DataObject, matrix: np.ndarray) -> None:
    """Paper 000, B.4 and Table 5: macro recall is prevalence invariant (PIV)."""
    scaled = scale_prevalence(matrix, data.draw(positive_scales(len(matrix))))
    assert metric("macro_recall", scaled) == pytest.approx(metric("macro_recall", matrix), rel=1e-12, abs=1e-15)


@PROPERTY
@given(supported_matrices())
def test_accuracy_of_the_calibrated_matrix_is_macro_recall(matrix: np.ndarray) -> None:
    """Paper 000, Eq. 14-16."""
    assert metric("accuracy", calibrate(matrix)) == pytest.approx(metric("macro_recall", matrix), rel=1e-12, abs=1e-15)


@PROPERTY
@given(supported_matrices(min_n=2))
def test_calibrated_kappa_has_the_closed_form(matrix: np.ndarray) -> None:
    """Paper 000, Section 4: kappa(m lambda) = (c - 1/n) / (1 - 1/n), c = mass on the diagonal."""
    calibrated = calibrate(matrix)
    n, c = len(matrix), float(np.trace(calibrated))
    assert metric("kappa", calibrated) == pytest.approx((c - 1 / n) / (1 - 1 / n), rel=1e-9, abs=1e-12)


@PROPERTY
@given(supported_matrices(min_n=2))
def test_calibrated_mcc_has_the_closed_form(matrix: np.ndarray) -> None:
    """Paper 000, Section 4: MCC(m lambda) = (c - 1/n) / (sqrt(1 - b.b) sqrt(1 - 1/n))."""
    calibrated = calibrate(matrix)
    n, c = len(matrix), float(np.trace(calibrated))
    b = calibrated.sum(axis=1)
    value = metric("mcc", calibrated)
    if np.count_nonzero(b) == 1:  # the classifier predicts one class only: 1 - b.b = 0
        assert value is None
        return
    expected = (c - 1 / n) / (math.sqrt(1 - b @ b) * math.sqrt(1 - 1 / n))
    assert value == pytest.approx(expected, rel=1e-9, abs=1e-12)


@PROPERTY
@given(data=st.data(), n=st.integers(min_value=2, max_value=6))
def test_calibrated_kappa_orders_classifiers_as_macro_recall_does(data: st.DataObject, n: int) -> None:
    first = data.draw(supported_matrices(min_n=n, max_n=n))
    second = data.draw(supported_matrices(min_n=n, max_n=n))
    recall_difference = metric("macro_recall", first) - metric("macro_recall", second)
    assume(abs(recall_difference) > 1e-12)
    kappa_difference = metric("kappa", calibrate(first)) - metric("kappa", calibrate(second))
    assert np.sign(kappa_difference) == np.sign(recall_difference)
