"""One pure function per metric, each a function of a confusion matrix.

Orientation (contract): ``m[i, j]`` is the mass of items **predicted** ``i`` whose **gold**
label is ``j``; rows are predictions (bias), columns are gold (prevalence). Matrices may hold
counts, calibrated masses or soft (probability) masses: every function here is homogeneous
of degree zero, so the total mass never matters.

Undefined values (a ratio with a zero denominator that the papers do not define, a logarithm
of zero) are returned as ``None``; :func:`defined` is the one place that decides it. Per-class
precision, recall and F1 are 0 on a zero denominator, as papers 000 and 002 define them.

These are float (numpy) functions: the vectorised form of each metric and the oracle of the
differential tests. The values a report stores and every ranking compares come from their exact
counterparts in :mod:`scoring.engine.exact` (same names, same undefined cases), so that values
equal as fractions are equal as floats.

Sources: paper 000 (Opitz, *From Bias and Prevalence to Macro F1, Kappa, and MCC*), paper 002
(Opitz & Burst, *Macro F1 and Macro F1*), paper 004 (per-class measures and their micro- and
macro-weighted averages).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Value = float | None
"""A metric value: a finite float, or ``None`` where the metric is undefined."""

DP_FACTOR = math.sqrt(3.0) / math.pi
"""Factor of discriminant power (paper 004), used with the natural logarithm."""


def defined(value: float) -> Value:
    """Return ``value`` as a float, or ``None`` if it is NaN or infinite."""
    value = float(value)
    return value if math.isfinite(value) else None


def divide_or_zero(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Element-wise ratio that is 0 where the denominator is 0 (papers 000 and 002, Eq. 1)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def divide_or_nan(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Element-wise ratio that is NaN (undefined) where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def as_matrix(m: np.ndarray) -> np.ndarray:
    """Validate a square, non-negative, finite confusion matrix and return it as float64."""
    m = np.asarray(m, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise ValueError(f"a confusion matrix must be square and non-empty, got shape {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m < 0):
        raise ValueError("a confusion matrix must hold finite, non-negative values")
    return m


# --- basic quantities (paper 000, Section 2) -------------------------------------------------


def bias(m: np.ndarray) -> np.ndarray:
    """bias(i) = sum_x m[i, x]: how often the classifier predicts class i (row sums)."""
    return np.asarray(m, dtype=np.float64).sum(axis=1)


def prevalence(m: np.ndarray) -> np.ndarray:
    """prevalence(i) = sum_x m[x, i]: how often class i is the gold label (column sums)."""
    return np.asarray(m, dtype=np.float64).sum(axis=0)


def correct(m: np.ndarray) -> np.ndarray:
    """correct(i) = m[i, i]."""
    return np.diagonal(np.asarray(m, dtype=np.float64)).copy()


@dataclass(frozen=True)
class OneVsRest:
    """Per-class counts of the one-vs-rest view of paper 004: TP, FP, FN, TN per class.

    Each count is a sum of cells, never a difference of totals, so a soft mass far below the
    rounding of a row or column total still counts (and a count that is 0 is exactly 0).
    """

    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    tn: np.ndarray

    @classmethod
    def of(cls, m: np.ndarray) -> OneVsRest:
        m = np.asarray(m, dtype=np.float64)
        tp = correct(m)
        # Counts are sums of cells, not differences of totals: a count that is 0 must come out
        # exactly 0 for float (soft, calibrated) masses too, or DP of a class with TN = 0 turns
        # from undefined into a large number depending on rounding.
        errors = m.copy()
        np.fill_diagonal(errors, 0.0)
        # outside[x, i] = sum of the cells of row x outside column i, a sum (a product with the
        # 0/1 matrix "not column i"), never bias(x) - m[x, i], which loses a mass below the
        # rounding of bias(x): TN_i is the sum of every cell outside row i and column i.
        outside = m @ (1.0 - np.eye(len(m)))
        np.fill_diagonal(outside, 0.0)
        return cls(tp=tp, fp=errors.sum(axis=1), fn=errors.sum(axis=0), tn=outside.sum(axis=0))


# --- per-class measures ----------------------------------------------------------------------


def class_precision(m: np.ndarray) -> np.ndarray:
    """P_i = correct(i) / bias(i), 0 if bias(i) = 0 (paper 000, Eq. 1)."""
    return divide_or_zero(correct(m), bias(m))


def class_recall(m: np.ndarray) -> np.ndarray:
    """R_i = correct(i) / prevalence(i), 0 if prevalence(i) = 0 (paper 000, Eq. 2)."""
    return divide_or_zero(correct(m), prevalence(m))


def class_f1(m: np.ndarray) -> np.ndarray:
    """F1_i = 2 P_i R_i / (P_i + R_i), 0 if P_i + R_i = 0 (paper 002, Eq. 1).

    Computed as 2 correct(i) / (bias(i) + prevalence(i)) (paper 000, Eq. 19), which is the
    same number with one rounding instead of four.
    """
    return divide_or_zero(2.0 * correct(m), bias(m) + prevalence(m))


def class_mcc(m: np.ndarray) -> np.ndarray:
    """MCC_i = (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) (paper 004, Table 1).

    In [-1, 1]; NaN (undefined) when any of the four margins is 0.
    """
    c = OneVsRest.of(m)
    numerator = c.tp * c.tn - c.fp * c.fn
    denominator = np.sqrt((c.tp + c.fp) * (c.tp + c.fn) * (c.tn + c.fp) * (c.tn + c.fn))
    return np.clip(divide_or_nan(numerator, denominator), -1.0, 1.0)


def class_bacc(m: np.ndarray) -> np.ndarray:
    """BACC_i = (TP/(TP+FN) + TN/(TN+FP)) / 2 (paper 004, Table 1).

    In [0, 1]; NaN (undefined) when class i has no gold items or every item is of class i,
    since sensitivity or specificity then has a zero denominator.
    """
    c = OneVsRest.of(m)
    return (divide_or_nan(c.tp, c.tp + c.fn) + divide_or_nan(c.tn, c.tn + c.fp)) / 2.0


def class_dp(m: np.ndarray) -> np.ndarray:
    """DP_i = sqrt(3)/pi * ln((TP/FP) * (TN/FN)) (paper 004, Table 1; natural logarithm).

    Unbounded; NaN (undefined) when any of TP, FP, TN, FN is 0. PyCM reports log10-based
    values: ours divided by ln 10.
    """
    c = OneVsRest.of(m)
    cells = np.stack([c.tp, c.fp, c.tn, c.fn])
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(cells)
        dp = DP_FACTOR * (logs[0] - logs[1] + logs[2] - logs[3])
    return np.where(np.all(cells > 0, axis=0), dp, np.nan)


# --- overall metrics (paper 000, Section 4) --------------------------------------------------


def accuracy(m: np.ndarray) -> Value:
    """Accuracy = sum_i correct(i) / sum_ij m[i, j] (paper 000, Eq. 7).

    Equal to micro precision, micro recall and micro F1 (Appendix A). In [0, 1]; undefined
    for an empty matrix.
    """
    total = float(np.sum(m))
    # The trace and the total are rounded apart: on float masses (a calibrated matrix) the ratio
    # can come out one ulp above 1 where every item is correct.
    return defined(min(np.trace(m) / total, 1.0)) if total > 0 else None


def macro_precision(m: np.ndarray) -> Value:
    """macP = (1/n) sum_i P_i (paper 000, Eq. 17). In [0, 1]."""
    return defined(np.mean(class_precision(m)))


def macro_recall(m: np.ndarray) -> Value:
    """macR = (1/n) sum_i R_i (paper 000, Eq. 8). In [0, 1]; prevalence invariant."""
    return defined(np.mean(class_recall(m)))


def macro_f1(m: np.ndarray) -> Value:
    """Averaged F1: the arithmetic mean of per-class F1 (paper 002, Eq. 2; paper 000, Eq. 18).

    In [0, 1]. Never above :func:`macro_f1_of_averages`.
    """
    return defined(np.mean(class_f1(m)))


def harmonic_mean_of_two(a: float, b: float) -> float:
    """H(a, b) = 2ab / (a + b), 0 if a + b = 0."""
    return 2.0 * a * b / (a + b) if a + b > 0 else 0.0


def macro_f1_of_averages(m: np.ndarray) -> Value:
    """F1 of averages: the harmonic mean of macro P and macro R (paper 002, Eq. 3; paper 000,
    Eq. 20, the "name twin" macF1'). In [0, 1]; never below the averaged F1 :func:`macro_f1`.
    """
    return defined(harmonic_mean_of_two(np.mean(class_precision(m)), np.mean(class_recall(m))))


def macro_f1_gap(m: np.ndarray) -> Value:
    """Delta = F1 of averages - averaged F1 (paper 002, Theorem). A diagnostic, not a ranking
    metric: in [0, 0.5] for even n and [0, 0.5 - 1/(2n^2)] for odd n. 0 iff P_x R_y = P_y R_x
    for all classes x, y (Lemma): iff P_i = R_i for all i when every class has a correct item,
    but e.g. [[1, 1], [0, 0]] has Delta = 0 with P = (1/2, 0), R = (1, 0).
    """
    f1_of_averages = macro_f1_of_averages(m)
    averaged_f1 = macro_f1(m)
    if f1_of_averages is None or averaged_f1 is None:
        return None
    # The Theorem makes Delta >= 0; the two roundings can leave -1e-17 where it is exactly 0.
    return max(f1_of_averages - averaged_f1, 0.0)


def macro_f1_gap_closed_form(m: np.ndarray) -> Value:
    """Delta through the closed form of the Lemma (paper 002, Eq. 4):

    Delta = 1 / (n sum_x (P_x + R_x)) * sum_{x,y} (P_x R_y - P_y R_x)^2 / ((P_x+R_x)(P_y+R_y)),

    the sums running over classes with P + R != 0. Agrees with :func:`macro_f1_gap` to
    rounding; 0 for a hollow matrix (no correct item), where the Lemma does not apply and both
    macro F1s are 0.
    """
    p = class_precision(m)
    r = class_recall(m)
    s = p + r
    keep = s != 0
    if not np.any(keep):
        return 0.0
    p, r, s = p[keep], r[keep], s[keep]
    cross = np.outer(p, r)
    numerators = (cross - cross.T) ** 2
    total = float(np.sum(numerators / np.outer(s, s)))
    return defined(total / (len(m) * float(np.sum(s))))


def gmean_recall(m: np.ndarray) -> Value:
    """GmacR = (R_1 ... R_n)^(1/n), the geometric mean of class recalls (paper 000, Eq. 25).

    In [0, 1]; 0 as soon as one class has recall 0.
    """
    recalls = class_recall(m)
    if np.any(recalls == 0):
        return 0.0
    return defined(np.exp(np.mean(np.log(recalls))))


def hmean_recall(m: np.ndarray) -> Value:
    """HmacR = n / sum_i (1 / R_i), the harmonic mean of class recalls (paper 000, Eq. 4
    with p = -1). In [0, 1]; 0 (its limit) as soon as one class has recall 0.
    """
    recalls = class_recall(m)
    if np.any(recalls == 0):
        return 0.0
    with np.errstate(over="ignore"):  # 1/R overflows only for R < 1e-308, where HmacR -> 0
        return defined(len(recalls) / np.sum(1.0 / recalls))


def chance_terms(m: np.ndarray) -> tuple[float, float, float, float, float]:
    """(s, c, p.b, b.b, p.p) of the unnormalised matrix (paper 000, Eq. 22, 38 and 40).

    Unnormalised, so that integer counts give exact numerators: c·s - p.b is exactly 0 for a
    count matrix whose agreement is exactly at chance (Table 6 of paper 000).
    """
    b = bias(m)
    p = prevalence(m)
    return float(np.sum(m)), float(np.trace(m)), float(p @ b), float(b @ b), float(p @ p)


def cross_sum(x: np.ndarray, y: np.ndarray) -> float:
    """sum over i != j of x_i y_j, which is (sum x)(sum y) - x.y without the cancellation.

    For non-negative vectors it is exactly 0 when, and only when, the two vectors put all their
    mass on one and the same class, however the masses round: so "undefined" never depends on
    rounding (s^2 - b.b computed by subtraction leaves 1e-13 for a one-class classifier).
    """
    products = np.outer(x, y)
    np.fill_diagonal(products, 0.0)
    return float(products.sum())


def kappa(m: np.ndarray) -> Value:
    """Cohen's kappa = (c s - p.b) / (s^2 - p.b) (paper 000, Eq. 24 and 38; s = total mass).

    In [-1, 1]; undefined when s^2 = p.b (every item gold and predicted as one class, or no
    item at all).
    """
    s, c, pb, _, _ = chance_terms(m)
    denominator = cross_sum(prevalence(m), bias(m))  # s^2 - p.b
    if s <= 0 or denominator <= 0:
        return None
    return defined(float(np.clip((c * s - pb) / denominator, -1.0, 1.0)))


def mcc(m: np.ndarray) -> Value:
    """Multi-class MCC (Gorodkin) = (c s - p.b) / sqrt((s^2 - p.p)(s^2 - b.b)) (paper 000,
    Eq. 23 and 40).

    In [-1, 1]; undefined when the classifier predicts one class only (b.b = s^2) or the gold
    labels hold one class only (p.p = s^2).
    """
    s, c, pb, _, _ = chance_terms(m)
    p, b = prevalence(m), bias(m)
    denominator = math.sqrt(cross_sum(p, p)) * math.sqrt(cross_sum(b, b))  # sqrt(s^2 - p.p) sqrt(s^2 - b.b)
    if s <= 0 or denominator <= 0:
        return None
    return defined(float(np.clip((c * s - pb) / denominator, -1.0, 1.0)))


# --- the weighted averages of paper 004 ------------------------------------------------------


def normalised_weights(weights: np.ndarray) -> np.ndarray:
    """Class weights omega scaled to sum to 1; all-zero weights are an error."""
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 1 or np.any(weights < 0) or not np.all(np.isfinite(weights)):
        raise ValueError("class weights must be a vector of finite, non-negative numbers")
    total = weights.sum()
    if total <= 0:
        raise ValueError("class weights must not all be zero")
    return weights / total


def uniform_weights(m: np.ndarray) -> np.ndarray:
    """omega_i = 1/n: every class counts the same ("macro")."""
    return np.full(len(m), 1.0 / len(m))


def prevalence_weights(m: np.ndarray) -> np.ndarray:
    """omega_i = prevalence(i) / N, what scikit-learn calls ``average="weighted"``.

    Uniform for an empty matrix, where every average is 0 or undefined anyway.
    """
    p = prevalence(m)
    return p / p.sum() if p.sum() > 0 else uniform_weights(m)


def macro_weighted(values: np.ndarray, weights: np.ndarray) -> Value:
    """Macro-weighted average sum_i omega_i M_i of per-class values (paper 004, Table 3).

    Undefined if a class with a positive weight has an undefined value.
    """
    weights = normalised_weights(weights)
    values = np.asarray(values, dtype=np.float64)
    used = weights > 0
    if np.any(np.isnan(values[used])):
        return None
    total = float(np.sum(weights[used] * values[used]))
    # A weighted mean lies between its extreme values; rounding must not push a mean of ones to
    # 1.0000000000000002, outside the measure's range.
    return defined(min(max(total, float(values[used].min())), float(values[used].max())))


def micro_weighted(m: np.ndarray, per_class: Callable[[np.ndarray], np.ndarray], weights: np.ndarray) -> Value:
    """Micro-weighted measure: the one-vs-rest formula ``per_class`` (one of the ``class_*``
    functions above) applied to the weighted sums sum_i omega_i TP_i, sum_i omega_i FP_i, ...
    (paper 004, Table 2). With uniform weights the micro precision, recall and F1 all equal
    accuracy.
    """
    weights = normalised_weights(weights)
    c = OneVsRest.of(m)
    tp, fp, fn, tn = (float(weights @ x) for x in (c.tp, c.fp, c.fn, c.tn))
    # A 2x2 matrix in the same orientation (rows predicted, columns gold) carries the pooled
    # counts, so the per-class functions above serve the micro average as well.
    pooled = np.array([[tp, fp], [fn, tn]])
    return defined(per_class(pooled)[0])
