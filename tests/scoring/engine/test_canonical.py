"""The two routes of :mod:`scoring.engine.canonical` give the same doubles.

What this proves: for every registered metric (the ordinal errors too) and per-class measure,
raw, calibrated and scaled to other targets, the vectorised route over a stack of matrices
(pairs of doubles with error bounds, the bootstrap's, on numpy's arrays and in compiled loops)
gives the very double that the exact route gives for each matrix alone (what a report
stores), with NaN exactly where the exact value is undefined, on random counts (many zeros),
counts just below 2^26 (whose products no longer fit one double), random soft masses, the
degenerate matrices (all zero, diagonal, one predicted class, hollow, one gold class, one
cell) and 2-class matrices whose odds ratios are within 1e-8 of 1; and a leading axis of the
stack is kept. Matrices follow the product's orientation, rows predicted and columns gold.
"""

from __future__ import annotations

import numpy as np
import pytest

from scoring.engine import compiled, twofold
from scoring.engine.canonical import ExactMatrix, StackValues, exact_values
from scoring.engine.columns import ranking_columns
from scoring.engine.registry import CLASS_MEASURES, METRICS, suite_metrics
from scoring.engine.replicates import column_values


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
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 6, size=(80, n, n)) * (rng.random((80, n, n)) < 0.7)
    large = rng.integers(2**24, 2**26, size=(20, n, n)) * (rng.random((20, n, n)) < 0.8)
    soft = rng.random((30, n, n)) * (rng.random((30, n, n)) < 0.8)
    near_one = [np.array([[2500, 2499], [2501, 2500]]), np.array([[10**6, 10**6 - 1], [10**6 + 1, 10**6]])]
    extra = near_one if n == 2 else []
    return np.array([*counts, *large, *soft, *degenerate_matrices(n), *extra], dtype=np.float64)


def exact_of(matrix: np.ndarray, formula, *, weights: list[int] | None) -> list | float | None:
    """The exact route: raw when ``weights`` is None, else scaled to them (Eq. 5)."""
    exact = ExactMatrix.of(matrix)
    if weights is not None:
        exact = exact.scaled_to(weights)
        if exact is None:
            return None
    return exact_values(formula, exact.quantities)


def assert_same(stack_values: np.ndarray, exact: list, what: str) -> None:
    expected = np.array([np.nan if v is None else v for v in exact], dtype=np.float64)
    mismatched = np.flatnonzero(~((stack_values == expected) | (np.isnan(stack_values) & np.isnan(expected))))
    assert mismatched.size == 0, f"{what}: {stack_values[mismatched[:3]]} != {expected[mismatched[:3]]}"


TARGETS = {
    "raw": None,
    "calibrated": [1, 1, 1, 1, 1],
    "small weights": [2, 3, 5, 7, 11],
    "weights past 2^53": [10**20 + 1, 3, 10**17, 7, 1],
}


def use_route(monkeypatch: pytest.MonkeyPatch, route: str) -> None:
    """The stack's pair arithmetic on numpy's arrays, or in compiled loops (what it uses for
    large stacks, :data:`scoring.engine.twofold.KERNEL_SIZE`), here for every array."""
    monkeypatch.setattr(compiled, "_loaded", False)  # restored after the test, loaded or not
    if route == "compiled":
        compiled.load()
        monkeypatch.setattr(twofold, "KERNEL_SIZE", 1)


@pytest.mark.parametrize(  # the compiled loops on the two ends of the targets (their bits: test_kernels.py)
    ("route", "target"),
    [*(("arrays", target) for target in TARGETS), ("compiled", "raw"), ("compiled", "weights past 2^53")],
)
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_the_stack_route_gives_the_exact_route_s_doubles(monkeypatch, n: int, target: str, route: str) -> None:
    use_route(monkeypatch, route)
    weights = None if TARGETS[target] is None else TARGETS[target][:n]
    matrices = matrix_stack(n, seed=n)
    stack = StackValues(matrices, weights=weights if target != "calibrated" else None)
    scaled = weights is not None
    for metric in suite_metrics(ordinal=True):
        values = stack.values(metric.formula, scaled=scaled)
        assert_same(values, [exact_of(m, metric.formula, weights=weights) for m in matrices], metric.key)
    for measure in CLASS_MEASURES:
        exact = [exact_of(m, measure.formula, weights=weights) for m in matrices]
        for label in range(n):
            values = stack.values(measure.formula, scaled=scaled, label=label)
            assert_same(values, [None if e is None else e[label] for e in exact], f"{measure.key}[{label}]")


def test_the_stack_keeps_its_leading_axes() -> None:
    matrices = matrix_stack(3, seed=7)[:24].reshape(4, 6, 3, 3)
    stack = StackValues(matrices)
    kappa = next(metric for metric in METRICS if metric.key == "kappa")
    assert stack.values(kappa.formula, scaled=False).shape == (4, 6)
    assert stack.values(kappa.formula, scaled=True).shape == (4, 6)


def test_a_prevalence_invariant_metric_s_calibrated_values_are_its_raw_ones() -> None:
    """The bootstrap copies them (:func:`scoring.engine.replicates.column_values`), NaN where a
    class has no gold item: the same doubles as the calibrated formula's."""
    labels = ["a", "b", "c"]
    columns = ranking_columns(labels, calibrated=None)
    copied = [column for column in columns if column.calibrated and column.prevalence_invariant]
    assert {column.key for column in copied} == {"macro_recall", "gmean_recall", "hmean_recall", "recall"}
    matrices = matrix_stack(3, seed=11)
    found = column_values(matrices, columns, labels)
    stack = StackValues(matrices)
    for column in copied:
        label = None if column.label is None else labels.index(column.label)
        computed = stack.values(column.metric.formula, scaled=True, label=label)
        assert_same(found[columns.index(column)], [None if np.isnan(v) else v for v in computed], column.id)
    assert np.isnan(found[columns.index(copied[0])]).any()  # the matrices without some gold class
