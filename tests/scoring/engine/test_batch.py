"""The batch metrics of :mod:`scoring.engine.batch` against the registry's scalar functions.

What this proves: every registered metric and per-class measure has a batch version (a metric
added to the registry without one fails here), and on a stack of random and degenerate matrices
(counts with zero rows and columns, one-class classifiers, hollow and diagonal matrices, soft
masses, the all-zero matrix, and their calibrated forms) each batch value equals the scalar
``compute`` of the same matrix to rounding, with NaN exactly where the scalar says ``None``.
Matrices follow the product's orientation, rows predicted and columns gold.
"""

from __future__ import annotations

import numpy as np
import pytest

from scoring.engine import batch
from scoring.engine.calibration import calibrate
from scoring.engine.registry import CLASS_MEASURES, METRICS


def degenerate_matrices(n: int) -> list[np.ndarray]:
    eye = np.eye(n)
    one_class = np.zeros((n, n))
    one_class[0] = np.arange(1, n + 1)
    hollow = np.ones((n, n)) - eye
    one_gold = np.zeros((n, n))
    one_gold[:, 0] = np.arange(1, n + 1)
    single_cell = np.zeros((n, n))
    single_cell[0, 0] = 1.0
    return [np.zeros((n, n)), eye * 5, one_class, hollow, one_gold, single_cell]


def matrix_stack(n: int, seed: int) -> np.ndarray:
    """Random counts (many zeros), random soft masses, the degenerate cases, and the calibrated
    form of each one whose calibration is defined."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 6, size=(150, n, n)) * (rng.random((150, n, n)) < 0.7)
    soft = rng.random((50, n, n)) * (rng.random((50, n, n)) < 0.8)
    matrices = [*counts.astype(np.float64), *soft, *degenerate_matrices(n)]
    calibrated = [c for c in (calibrate(m) for m in matrices) if c is not None]
    return np.array(matrices + calibrated)


def assert_matches(batch_values: np.ndarray, scalar_values: list, what: str) -> None:
    scalar = np.array([np.nan if v is None else v for v in scalar_values], dtype=np.float64)
    undefined = np.isnan(scalar)
    mismatched = np.flatnonzero(np.isnan(batch_values) != undefined)
    assert mismatched.size == 0, f"{what}: undefined differs at matrices {mismatched[:5]}"
    np.testing.assert_allclose(batch_values[~undefined], scalar[~undefined], rtol=1e-9, atol=1e-12, err_msg=what)


def test_every_registered_metric_has_a_batch_version() -> None:
    assert {metric.key for metric in METRICS} <= set(batch.BATCH_METRICS)
    assert {measure.key for measure in CLASS_MEASURES} <= set(batch.BATCH_CLASS_MEASURES)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("metric", METRICS, ids=lambda metric: metric.key)
def test_batch_metric_equals_the_scalar_compute(metric, n) -> None:
    matrices = matrix_stack(n, seed=n)
    assert_matches(batch.metric_values(metric.key, matrices), [metric.compute(m) for m in matrices], metric.key)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("measure", CLASS_MEASURES, ids=lambda measure: measure.key)
def test_batch_class_measure_equals_the_scalar_compute(measure, n) -> None:
    matrices = matrix_stack(n, seed=10 + n)
    values = batch.class_measure_values(measure.key, matrices)
    for label in range(n):
        scalar = [measure.compute(m)[label] for m in matrices]
        assert_matches(values[label], [None if np.isnan(v) else v for v in scalar], f"{measure.key}[{label}]")


def test_batch_keeps_leading_axes_and_calibrates_like_the_scalar() -> None:
    matrices = matrix_stack(3, seed=7)[:24].reshape(4, 6, 3, 3)
    assert batch.metric_values("kappa", matrices).shape == (4, 6)
    assert batch.class_measure_values("recall", matrices).shape == (3, 4, 6)
    calibrated = batch.calibrate(matrices)
    for index in np.ndindex(4, 6):
        expected = calibrate(matrices[index])
        if expected is None:
            assert np.isnan(calibrated[index]).all()
        else:
            np.testing.assert_allclose(calibrated[index], expected, rtol=1e-12)
