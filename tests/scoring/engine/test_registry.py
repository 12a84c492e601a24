"""Registry-driven properties: every registered metric, raw and calibrated, meets the same laws.

What this proves, for each metric of the registry (``registry.METRICS`` and the ordinal errors
``registry.ORDINAL_METRICS``, so a new metric is tested the day it is registered): it never
raises and never returns NaN/inf on any non-negative matrix, only ``None`` or a float inside
its ``value_range``; it is invariant under scaling the whole matrix, and (every metric of
``METRICS``, which read labels as names) under renaming classes; and the properties the
registry claims for it hold on random matrices: prevalence invariance (PIV), monotonicity (PI)
and the chance baseline (PV). Claims of "does not hold" are backed by a witness from the papers.
The registry's Table 5 entries are checked against paper 000, Table 5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import registry
from scoring.engine.calibration import calibrate
from scoring.engine.registry import METRICS, Metric
from tests.scoring.strategies import (
    PROPERTY,
    close,
    distributions,
    matrices,
    permute_classes,
    positive_scales,
    scale_columns,
    supported_matrices,
)

EVERY_METRIC = registry.suite_metrics(ordinal=True)
"""Every registered metric: the suite's and the ordinal errors."""

MONOTONICITY_TOL = 1e-12
BASELINE_TOL = 1e-12


def calibrated(metric: Metric, m: np.ndarray) -> float | None:
    """The calibrated variant: the metric of the prevalence-calibrated matrix, if it exists."""
    matrix = calibrate(m)
    return None if matrix is None else metric(matrix)


VARIANTS = {"raw": lambda metric, m: metric(m), "calibrated": calibrated}


def holds(metric: Metric, name: str, variant: str) -> bool | None:
    prop = metric.properties[name]
    return prop.holds if variant == "raw" else prop.calibrated


def metrics_with(name: str, value: bool | None, variant: str = "raw") -> list[Metric]:
    return [metric for metric in EVERY_METRIC if holds(metric, name, variant) is value]


def assert_in_range(metric: Metric, value: object, where: str) -> None:
    if value is None:
        return
    assert isinstance(value, float), f"{metric.key} ({where}) returned {type(value).__name__}"
    assert math.isfinite(value), f"{metric.key} ({where}) returned {value}"
    low, high = metric.value_range
    assert low is None or value >= low, f"{metric.key} ({where}) = {value} < {low}"
    assert high is None or value <= high, f"{metric.key} ({where}) = {value} > {high}"


@dataclass(frozen=True)
class OneClass:
    """One class's value of a per-class measure, as a metric: a board's per-class column."""

    measure: registry.ClassMeasure
    index: int

    @property
    def key(self) -> str:
        return f"{self.measure.key} of class {self.index}"

    @property
    def value_range(self) -> tuple[float | None, float | None]:
        return self.measure.value_range

    def __call__(self, m: np.ndarray) -> float | None:
        return self.measure(m)[self.index]


def class_metrics(n: int) -> tuple[OneClass, ...]:
    """Every per-class measure of an n-class task, one per class."""
    return tuple(OneClass(measure, index) for measure in registry.CLASS_MEASURES for index in range(n))


EDGE_MATRICES = {
    "1x1 zero": [[0]],
    "1x1 count": [[7]],
    "1x1 float": [[0.25]],
    "2x2 zero": [[0, 0], [0, 0]],
    "all right": np.diag([3, 1, 4]),
    "all wrong": [[0, 2, 1], [5, 0, 0], [1, 1, 0]],
    "empty row": [[3, 1, 0], [0, 0, 0], [2, 0, 4]],
    "empty column": [[3, 0, 1], [2, 0, 0], [1, 0, 4]],
    "one predicted class": [[3, 5, 2], [0, 0, 0], [0, 0, 0]],
    "one gold class": [[0, 4, 0], [0, 3, 0], [0, 2, 0]],
    "one cell": [[0, 0], [0, 9]],
    "floats": [[0.1, 0.7], [0.35, 1e-3]],
}


# --- range, never NaN, never raises --------------------------------------------------------


@pytest.mark.parametrize("matrix", EDGE_MATRICES.values(), ids=EDGE_MATRICES.keys())
def test_edge_matrices_give_none_or_a_value_in_range(matrix: list) -> None:
    m = np.asarray(matrix)
    for metric in (*EVERY_METRIC, *class_metrics(len(m))):
        for variant, value_of in VARIANTS.items():
            assert_in_range(metric, value_of(metric, m), f"{variant}, {matrix!r}")


@PROPERTY
@given(matrices())
def test_every_metric_is_none_or_a_finite_value_in_range(m: np.ndarray) -> None:
    for metric in (*EVERY_METRIC, *class_metrics(len(m))):
        for variant, value_of in VARIANTS.items():
            assert_in_range(metric, value_of(metric, m), variant)


def test_a_matrix_without_items_is_undefined_where_a_ratio_of_items_is_needed() -> None:
    zero = np.zeros((3, 3))
    for key in ("accuracy", "kappa", "mcc", "macro_mcc", "macro_bacc", "macro_dp"):
        assert registry.get(key)(zero) is None, key
    # Per-class P, R, F1 are 0 on a zero denominator (papers 000 and 002), so their means are too.
    for key in ("macro_precision", "macro_recall", "macro_f1", "macro_f1_of_averages", "macro_f1_gap"):
        assert registry.get(key)(zero) == 0.0, key


# --- invariances that every metric has -----------------------------------------------------


@PROPERTY
@given(data=st.data(), m=matrices(min_n=2))
def test_every_metric_is_invariant_under_renaming_the_classes(data: st.DataObject, m: np.ndarray) -> None:
    """Not the ordinal errors, which read the label order as a scale (tests/scoring/engine/test_ordinal.py)."""
    order = data.draw(st.permutations(range(len(m))))
    renamed = permute_classes(m, order)
    for metric in METRICS:
        for variant, value_of in VARIANTS.items():
            before, after = value_of(metric, m), value_of(metric, renamed)
            assert close(before, after), f"{metric.key} ({variant}): {before} != {after} after {order}"


@PROPERTY
@given(m=matrices(), factor=st.floats(min_value=1e-3, max_value=1e3))
def test_every_metric_is_invariant_under_scaling_the_whole_matrix(m: np.ndarray, factor: float) -> None:
    scaled = np.asarray(m, dtype=np.float64) * factor
    for metric in EVERY_METRIC:
        for variant, value_of in VARIANTS.items():
            before, after = value_of(metric, m), value_of(metric, scaled)
            assert close(before, after), f"{metric.key} ({variant}): {before} != {after} after x{factor}"


# --- PIV: prevalence invariance -------------------------------------------------------------


def test_some_metrics_claim_prevalence_invariance() -> None:
    assert {metric.key for metric in metrics_with("PIV", True)} >= {"macro_recall", "gmean_recall", "hmean_recall"}


@PROPERTY
@given(data=st.data(), m=matrices())
def test_metrics_claiming_prevalence_invariance_ignore_column_scaling(data: st.DataObject, m: np.ndarray) -> None:
    scaled = scale_columns(m, data.draw(positive_scales(len(m))))
    for metric in metrics_with("PIV", True):
        assert close(metric(m), metric(scaled)), metric.key


@PROPERTY
@given(data=st.data(), m=supported_matrices())
def test_calibrated_metrics_ignore_column_scaling_before_calibration(data: st.DataObject, m: np.ndarray) -> None:
    """calibrate(m lambda) = calibrate(m), so every calibrated metric is prevalence invariant,
    whether or not the registry records it (paper 000, Section 5: calibration "equips every
    metric with PIV"). The registry must never claim the opposite.
    """
    scaled = scale_columns(m, data.draw(positive_scales(len(m))))
    for metric in EVERY_METRIC:
        assert holds(metric, "PIV", "calibrated") is not False, metric.key
        assert close(calibrated(metric, m), calibrated(metric, scaled), rel=1e-8, abs_tol=1e-10), metric.key


def test_prevalence_invariance_denials_have_a_witness() -> None:
    """Paper 000, Tables 2-4 (lambda = (1, 2)) and a 3-class variant change every metric that
    the registry says is not prevalence invariant."""
    witnesses = [np.array([[15, 5], [10, 10]]), np.array([[5, 1, 2], [3, 6, 1], [0, 2, 7]])]
    for metric in metrics_with("PIV", False):
        changes = [not close(metric(m), metric(scale_columns(m, np.arange(1, len(m) + 1)))) for m in witnesses]
        assert any(changes), metric.key


# --- PI: monotonicity ----------------------------------------------------------------------


def with_extra_mass(m: np.ndarray, i: int, j: int, mass: float) -> np.ndarray:
    out = np.array(m, dtype=np.float64)
    out[i, j] += mass
    return out


def assert_monotone(metric: Metric, variant: str, m: np.ndarray, i: int, j: int, mass: float) -> None:
    value_of = VARIANTS[variant]
    before, after = value_of(metric, m), value_of(metric, with_extra_mass(m, i, j, mass))
    if before is None or after is None:
        return
    where = f"{metric.key} ({variant}) at ({i}, {j}) + {mass}: {before} -> {after}"
    if i == j:
        assert after >= before - MONOTONICITY_TOL, "a correct item lowered " + where
    else:
        assert after <= before + MONOTONICITY_TOL, "an error raised " + where


@pytest.mark.parametrize("variant", VARIANTS)
@PROPERTY
@given(data=st.data(), m=matrices())
def test_metrics_claiming_monotonicity_reward_correct_items_and_punish_errors(
    variant: str, data: st.DataObject, m: np.ndarray
) -> None:
    n = len(m)
    i, j = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 1))
    mass = data.draw(st.floats(min_value=1e-2, max_value=50.0))
    for metric in metrics_with("PI", True, variant):
        assert_monotone(metric, variant, m, i, j, mass)


MORE_ERRORS_SCORE_HIGHER = {
    # Paper 000, Tables 6 and 7: ten more errors in cell (c, b) lift MCC from 0.0 to 0.07.
    "paper 000, Tables 6-7": (np.array([[10, 43, 0], [1, 1, 0], [0, 0, 1]]), (2, 1), 10),
    # A classifier that always says c; one error in cell (a, b) halves the calibrated mass of
    # gold b in row c, so predictions of c look more precise after calibration.
    "always c": (np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1]]), (0, 1), 1),
    # Found by a random search: calibrated MCC, whose denominator still holds the bias b.b.
    "calibrated MCC": (np.array([[3, 0, 0, 0], [4, 1, 0, 2], [2, 0, 0, 0], [1, 1, 2, 0]]), (0, 3), 1),
}
"""Matrices where adding errors raises a score: witnesses for the registry's "no PI" claims."""


@pytest.mark.parametrize("variant", VARIANTS)
def test_monotonicity_denials_have_a_witness(variant: str) -> None:
    value_of = VARIANTS[variant]

    def raised(metric: Metric, m: np.ndarray, cell: tuple[int, int], mass: float) -> bool:
        before, after = value_of(metric, m), value_of(metric, with_extra_mass(m, *cell, mass))
        return before is not None and after is not None and after > before + 1e-9

    for metric in metrics_with("PI", False, variant):
        assert any(raised(metric, *witness) for witness in MORE_ERRORS_SCORE_HIGHER.values()), metric.key


# --- PV: chance baselines --------------------------------------------------------------------


def random_classifier(z: np.ndarray, p: np.ndarray, total: float = 1000.0) -> np.ndarray:
    """Expected matrix of a classifier that predicts class i with probability z_i regardless of
    the item, on data with gold distribution p: m_ij = N z_i p_j (paper 000, Appendix B.5)."""
    return total * np.outer(z, p)


BASELINE_METRICS = [metric for metric in METRICS if metric.baseline is not None]
NON_STRICT = [metric for metric in BASELINE_METRICS if not metric.baseline.strict]


def uniform(p: np.ndarray) -> np.ndarray:
    return np.full(len(p), 1.0 / len(p))


MAXIMISERS = {
    # Eq. 35: (1/n) sum 2 p_i z_i / (p_i + z_i) <= (1/n) sum (p_i + z_i) / 2 = 1/n, equality iff z = p.
    "macro_f1": lambda p: p,
    # Recall of class i is z_i; a geometric or harmonic mean of z is at most its mean 1/n,
    # with equality iff z is uniform.
    "gmean_recall": uniform,
    "hmean_recall": uniform,
}
"""The random classifier z that reaches c(n), for every metric whose baseline is an upper bound."""


def test_table_5_baselines() -> None:
    expected = {
        "macro_recall": ("1/n", True, False),
        "macro_precision": ("1/n", True, False),
        "macro_f1": ("1/n", False, False),
        "macro_f1_of_averages": ("1/n", True, False),
        "kappa": ("0", True, True),
        "mcc": ("0", True, True),
    }
    for key, (text, strict, complete) in expected.items():
        baseline = registry.get(key).baseline
        assert baseline is not None, key
        assert (baseline.strict, baseline.complete) == (strict, complete), key
        for n in (2, 3, 7):
            assert math.isclose(baseline.value(n), 1.0 / n if text == "1/n" else 0.0), key
    assert registry.get("accuracy").baseline is None


def test_every_upper_bound_baseline_names_its_maximiser() -> None:
    assert {metric.key for metric in NON_STRICT} == set(MAXIMISERS)


@PROPERTY
@given(data=st.data(), n=st.integers(min_value=2, max_value=8))
def test_random_classifiers_score_at_most_the_baseline_and_exactly_it_when_strict(data: st.DataObject, n: int) -> None:
    z, p = data.draw(distributions(n)), data.draw(distributions(n))
    m = random_classifier(z, p)
    for metric in BASELINE_METRICS:
        value, bound = metric(m), metric.baseline.value(n)
        assert value is not None, metric.key
        assert value <= bound + BASELINE_TOL, f"{metric.key}: {value} > c({n}) = {bound}"
        if metric.baseline.strict:
            assert math.isclose(value, bound, abs_tol=BASELINE_TOL), f"{metric.key}: {value} != c({n}) = {bound}"


@PROPERTY
@given(data=st.data(), n=st.integers(min_value=2, max_value=8))
def test_classifiers_that_never_predict_some_class_stay_below_the_baseline(data: st.DataObject, n: int) -> None:
    """With zeros in z the bound still holds; strictness needs every class to be predicted."""
    z, p = data.draw(distributions(n, positive=False)), data.draw(distributions(n))
    m = random_classifier(z, p)
    for metric in BASELINE_METRICS:
        value = metric(m)
        assert value is None or value <= metric.baseline.value(n) + BASELINE_TOL, metric.key


@PROPERTY
@given(data=st.data(), n=st.integers(min_value=2, max_value=8))
def test_upper_bound_baselines_are_reached_by_their_maximiser(data: st.DataObject, n: int) -> None:
    p = data.draw(distributions(n))
    for metric in NON_STRICT:
        value = metric(random_classifier(MAXIMISERS[metric.key](p), p))
        assert math.isclose(value, metric.baseline.value(n), abs_tol=BASELINE_TOL), metric.key


def test_non_strict_baselines_are_not_strict() -> None:
    """A skewed random classifier scores strictly below c(n) on every upper-bound metric."""
    p, z = np.array([0.7, 0.2, 0.1]), np.array([0.1, 0.3, 0.6])
    for metric in NON_STRICT:
        assert metric(random_classifier(z, p)) < metric.baseline.value(3) - 1e-3, metric.key


def test_complete_baselines_do_not_depend_on_n() -> None:
    for metric in BASELINE_METRICS:
        if metric.baseline.complete:
            assert {metric.baseline.value(n) for n in range(2, 10)} == {metric.baseline.value(2)}, metric.key


# --- the registry as a table --------------------------------------------------------------------


def test_table_5_properties() -> None:
    """Raw properties PI..PV of paper 000, Table 5, and its bracketed PIV after calibration."""
    table_5 = {
        "macro_recall": "yyyyy",
        "macro_precision": "yyyny",
        "macro_f1": "yyyny",
        "macro_f1_of_averages": "yynny",
        "kappa": "nynny",
        "mcc": "nynny",
        "accuracy": "ynnnn",
    }
    for key, marks in table_5.items():
        properties = registry.get(key).properties
        raw = "".join("y" if properties[name].holds else "n" for name in registry.PROPERTY_NAMES)
        assert raw == marks, key
        assert properties["PIV"].calibrated is True, key


def test_keys_are_unique_and_looked_up_by_get() -> None:
    keys = [metric.key for metric in EVERY_METRIC]
    assert len(keys) == len(set(keys))
    for metric in EVERY_METRIC:
        assert registry.get(metric.key) is metric
    with pytest.raises(KeyError, match="macro_f1"):
        registry.get("no_such_metric")


def test_diagnostics_do_not_rank() -> None:
    ranking = {metric.key for metric in registry.ranking_metrics()}
    assert "macro_f1_gap" not in ranking
    assert ranking == {metric.key for metric in METRICS if metric.kind == "ranking"}
    ordinal = {metric.key for metric in registry.ranking_metrics(ordinal=True)}
    assert ordinal == ranking | {"macro_mae", "mae"}


def test_the_ordinal_errors_are_lower_is_better_and_only_for_ordinal_tasks() -> None:
    for metric in EVERY_METRIC:
        assert metric.higher_is_better is (metric.scale == "nominal"), metric.key
    assert {metric.key for metric in registry.ORDINAL_METRICS} == {"macro_mae", "mae"}
    assert not {metric.key for metric in METRICS} & {metric.key for metric in registry.ORDINAL_METRICS}
    for measure in registry.CLASS_MEASURES:
        assert measure.higher_is_better, measure.key


def test_every_metric_documents_itself() -> None:
    for metric in EVERY_METRIC:
        assert metric.name and metric.symbol and metric.formula_text and metric.source, metric.key
        assert set(metric.properties) == set(registry.PROPERTY_NAMES), metric.key


def test_every_class_measure_documents_itself_and_is_looked_up_by_key() -> None:
    keys = [measure.key for measure in registry.CLASS_MEASURES]
    assert len(keys) == len(set(keys))
    for measure in registry.CLASS_MEASURES:
        assert registry.class_measure(measure.key) is measure
        assert measure.name and measure.symbol and measure.formula_text and measure.source, measure.key
        assert set(measure.properties) == set(registry.PROPERTY_NAMES), measure.key
    assert registry.class_measure("recall").properties["PIV"].holds is True
