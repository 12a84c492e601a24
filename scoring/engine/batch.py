"""Every metric of the registry over a stack of confusion matrices at once.

The bootstrap (:mod:`scoring.engine.bootstrap`) scores thousands of replicates of every team:
arrays of shape ``(..., n, n)``, rows predicted and columns gold as everywhere (contract). Each
function here is the float formula of its namesake in :mod:`scoring.engine.metrics`, applied to
every matrix of the stack, with the same zero-denominator rules: 0 where the papers define 0,
NaN where the scalar function returns ``None`` (undefined). The differential tests hold every
entry of :data:`BATCH_METRICS` and :data:`BATCH_CLASS_MEASURES` to the registry's scalar
``compute`` on random and degenerate matrices, and fail for a registered metric without one.

Speed: a :class:`Stack` holds the matrices class-major, shape ``(n, n, *stack)``, so that a sum
over classes adds a few long contiguous arrays instead of reducing many axes of length n, and
computes each shared quantity (bias, prevalence, one-vs-rest counts, per-class measures) once
for all the metrics that use it.

These are floats, not the canonical exact values of :mod:`scoring.engine.exact`: two different
matrices whose metric is the same fraction may differ by an ulp here. Identical matrices always
give identical values (the same operations on the same numbers), which is what the bootstrap's
ties rest on.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

from scoring.engine.metrics import DP_FACTOR


def _ratio_or_zero(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast_shapes(np.shape(numerator), np.shape(denominator)))
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _ratio_or_nan(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast_shapes(np.shape(numerator), np.shape(denominator)), np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _mcc_of_counts(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    numerator = tp * tn - fp * fn
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return np.clip(_ratio_or_nan(numerator, denominator), -1.0, 1.0)


def _bacc_of_counts(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    return (_ratio_or_nan(tp, tp + fn) + _ratio_or_nan(tn, tn + fp)) / 2.0


def _dp_of_counts(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    positive = (tp > 0) & (fp > 0) & (tn > 0) & (fn > 0)

    def log(x: np.ndarray) -> np.ndarray:
        return np.log(np.where(x > 0, x, 1.0))

    return np.where(positive, DP_FACTOR * (log(tp) - log(fp) + log(tn) - log(fn)), np.nan)


class Stack:
    """A stack of confusion matrices, class-major: ``cells[i, j]`` is the array of cell (i, j)
    of every matrix. Quantities are computed on first use and shared by every metric."""

    def __init__(self, matrices: np.ndarray) -> None:
        matrices = np.asarray(matrices, dtype=np.float64)
        self.n = matrices.shape[-1]
        self.shape = matrices.shape[:-2]
        self.cells = np.ascontiguousarray(np.moveaxis(matrices, (-2, -1), (0, 1)))

    def _flat(self) -> np.ndarray:
        return self.cells.reshape(self.n * self.n, -1)

    def _masked_sums(self, masks: np.ndarray) -> np.ndarray:
        """For each mask over the cells (k × n × n of 0/1), the sum of the cells it selects: a
        sum of cells, so 0 exactly when every selected cell is 0."""
        return (masks.reshape(len(masks), -1) @ self._flat()).reshape(len(masks), *self.shape)

    @cached_property
    def bias(self) -> np.ndarray:
        """Row sums, (n, *stack)."""
        return self.cells.sum(axis=1)

    @cached_property
    def prevalence(self) -> np.ndarray:
        """Column sums, (n, *stack)."""
        return self.cells.sum(axis=0)

    @cached_property
    def correct(self) -> np.ndarray:
        return self.cells[np.arange(self.n), np.arange(self.n)]

    @cached_property
    def total(self) -> np.ndarray:
        return self.bias.sum(axis=0)

    @cached_property
    def trace(self) -> np.ndarray:
        return self.correct.sum(axis=0)

    @cached_property
    def one_vs_rest(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """TP, FP, FN, TN per class, each a sum of cells (never a difference of totals), as
        :class:`scoring.engine.metrics.OneVsRest`."""
        eye = np.eye(self.n)
        off = 1.0 - eye
        rows = eye[:, :, None] * off[:, None, :]  # row i without its diagonal cell
        columns = eye[:, None, :] * off[:, :, None]  # column i without its diagonal cell
        outside = off[:, :, None] * off[:, None, :]  # neither row i nor column i
        fp, fn, tn = (self._masked_sums(masks) for masks in (rows, columns, outside))
        return self.correct, fp, fn, tn

    @cached_property
    def class_precision(self) -> np.ndarray:
        return _ratio_or_zero(self.correct, self.bias)

    @cached_property
    def class_recall(self) -> np.ndarray:
        return _ratio_or_zero(self.correct, self.prevalence)

    @cached_property
    def class_f1(self) -> np.ndarray:
        return _ratio_or_zero(2.0 * self.correct, self.bias + self.prevalence)

    @cached_property
    def class_mcc(self) -> np.ndarray:
        return _mcc_of_counts(*self.one_vs_rest)

    @cached_property
    def class_bacc(self) -> np.ndarray:
        return _bacc_of_counts(*self.one_vs_rest)

    @cached_property
    def class_dp(self) -> np.ndarray:
        return _dp_of_counts(*self.one_vs_rest)

    @cached_property
    def pooled(self) -> tuple[np.ndarray, ...]:
        """Class-averaged TP, FP, FN, TN (uniform weights), for the micro averages."""
        return tuple(count.mean(axis=0) for count in self.one_vs_rest)

    @cached_property
    def prevalence_weights(self) -> np.ndarray:
        """prevalence(i) / N, uniform for an empty matrix."""
        return np.where(self.total > 0, _ratio_or_zero(self.prevalence, self.total), 1.0 / self.n)

    @cached_property
    def uniform_weights(self) -> np.ndarray:
        return np.full((self.n, *self.shape), 1.0 / self.n)


def accuracy(s: Stack) -> np.ndarray:
    return np.where(s.total > 0, np.minimum(_ratio_or_nan(s.trace, s.total), 1.0), np.nan)  # as metrics.accuracy


def macro_precision(s: Stack) -> np.ndarray:
    return s.class_precision.mean(axis=0)


def macro_recall(s: Stack) -> np.ndarray:
    return s.class_recall.mean(axis=0)


def macro_f1(s: Stack) -> np.ndarray:
    return s.class_f1.mean(axis=0)


def macro_f1_of_averages(s: Stack) -> np.ndarray:
    p, r = macro_precision(s), macro_recall(s)
    return _ratio_or_zero(2.0 * p * r, p + r)


def macro_f1_gap(s: Stack) -> np.ndarray:
    return np.maximum(macro_f1_of_averages(s) - macro_f1(s), 0.0)


def gmean_recall(s: Stack) -> np.ndarray:
    recalls = s.class_recall
    any_zero = np.any(recalls == 0, axis=0)
    return np.where(any_zero, 0.0, np.exp(np.log(np.where(recalls > 0, recalls, 1.0)).mean(axis=0)))


def hmean_recall(s: Stack) -> np.ndarray:
    recalls = s.class_recall
    any_zero = np.any(recalls == 0, axis=0)
    with np.errstate(over="ignore"):  # as the scalar: 1/R overflows only where HmacR -> 0
        inverse_sum = (1.0 / np.where(recalls > 0, recalls, 1.0)).sum(axis=0)
    return np.where(any_zero, 0.0, s.n / inverse_sum)


def _cross_sum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """sum over i != j of x_i y_j, a sum of products (exactly 0 only when it should be)."""
    return sum(x[i] * y[j] for i in range(len(x)) for j in range(len(y)) if i != j)


def _chance_corrected(s: Stack, denominator: np.ndarray) -> np.ndarray:
    pb = (s.prevalence * s.bias).sum(axis=0)
    defined = (s.total > 0) & (denominator > 0)
    value = _ratio_or_nan(s.trace * s.total - pb, np.where(defined, denominator, 0.0))
    return np.clip(value, -1.0, 1.0)


def kappa(s: Stack) -> np.ndarray:
    return _chance_corrected(s, _cross_sum(s.prevalence, s.bias))


def mcc(s: Stack) -> np.ndarray:
    p, b = s.prevalence, s.bias
    return _chance_corrected(s, np.sqrt(_cross_sum(p, p)) * np.sqrt(_cross_sum(b, b)))


def _macro_weighted(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum_i omega_i v_i, NaN if a class with a positive weight is undefined, kept between the
    extreme values of the classes that count (as :func:`scoring.engine.metrics.macro_weighted`)."""
    weights = weights / weights.sum(axis=0)
    used = weights > 0
    undefined = np.any(used & np.isnan(values), axis=0)
    safe = np.where(used, np.nan_to_num(values), 0.0)
    total = (weights * safe).sum(axis=0)
    low = np.where(used, safe, np.inf).min(axis=0)
    high = np.where(used, safe, -np.inf).max(axis=0)
    return np.where(undefined, np.nan, np.minimum(np.maximum(total, low), high))


StackMetric = Callable[[Stack], np.ndarray]


def _macro_of(measure: str) -> StackMetric:
    def compute(s: Stack) -> np.ndarray:
        return _macro_weighted(getattr(s, measure), s.uniform_weights)

    return compute


def _weighted_of(measure: str) -> StackMetric:
    def compute(s: Stack) -> np.ndarray:
        return _macro_weighted(getattr(s, measure), s.prevalence_weights)

    return compute


def _micro_of(of_counts: Callable[..., np.ndarray]) -> StackMetric:
    """The one-vs-rest formula on the class-averaged TP, FP, FN, TN (paper 004, Table 2)."""

    def compute(s: Stack) -> np.ndarray:
        return of_counts(*s.pooled)

    return compute


BATCH_METRICS: dict[str, StackMetric] = {
    "accuracy": accuracy,
    "macro_precision": macro_precision,
    "macro_recall": macro_recall,
    "macro_f1": macro_f1,
    "macro_f1_of_averages": macro_f1_of_averages,
    "macro_f1_gap": macro_f1_gap,
    "gmean_recall": gmean_recall,
    "hmean_recall": hmean_recall,
    "kappa": kappa,
    "mcc": mcc,
    "weighted_precision": _weighted_of("class_precision"),
    "weighted_recall": _weighted_of("class_recall"),
    "weighted_f1": _weighted_of("class_f1"),
    "macro_mcc": _macro_of("class_mcc"),
    "macro_bacc": _macro_of("class_bacc"),
    "macro_dp": _macro_of("class_dp"),
    "micro_mcc": _micro_of(_mcc_of_counts),
    "micro_bacc": _micro_of(_bacc_of_counts),
    "micro_dp": _micro_of(_dp_of_counts),
}
"""Registry key → function of a :class:`Stack` giving one value per matrix, NaN where undefined."""

BATCH_CLASS_MEASURES: dict[str, str] = {
    "precision": "class_precision",
    "recall": "class_recall",
    "f1": "class_f1",
    "mcc": "class_mcc",
    "bacc": "class_bacc",
    "dp": "class_dp",
}
"""Per-class measure key → the :class:`Stack` attribute holding it, shape (n, *stack)."""


def metric_values(key: str, matrices: np.ndarray | Stack) -> np.ndarray:
    """The registry metric ``key`` of every matrix of ``matrices`` (..., n, n): shape (...)."""
    stack = matrices if isinstance(matrices, Stack) else Stack(matrices)
    return BATCH_METRICS[key](stack)


def class_measure_values(key: str, matrices: np.ndarray | Stack) -> np.ndarray:
    """The per-class measure ``key`` of every matrix: shape (n, ...), class first."""
    stack = matrices if isinstance(matrices, Stack) else Stack(matrices)
    return getattr(stack, BATCH_CLASS_MEASURES[key])


def calibrate(matrices: np.ndarray) -> np.ndarray:
    """Prevalence calibration of every matrix (..., n, n) (paper 000, Eq. 6): gold column ``j``
    scaled by ``1 / (n prevalence(j))``; all NaN for a matrix with a class without gold mass,
    for which the calibration (and every calibrated metric) is undefined."""
    gold = matrices.sum(axis=-2)
    n = matrices.shape[-1]
    defined = np.all(gold > 0, axis=-1)
    scales = _ratio_or_nan(np.full(gold.shape, 1.0 / n), np.where(defined[..., None], gold, 0.0))
    return matrices * scales[..., None, :]
