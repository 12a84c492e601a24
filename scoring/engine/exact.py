"""Canonical metric values: exact rational arithmetic on the confusion matrix, rounded once.

Why: the float functions of :mod:`scoring.engine.metrics` round at every step, so two matrices
whose metric is the same fraction can come out one ulp apart (a macro recall of 1/5 from class
recalls that are permutations of each other reads 0.20000000000000004 for one team and
0.19999999999999998 for the other), and a ranking that compares floats splits the tie; kappa
and MCC also lose digits once products of counts pass 2^53 (about 10^8 items).

How: every float is an exact binary fraction, so :class:`ExactMatrix` reads each cell (a
count, a soft or a calibrated mass) exactly and scales the whole matrix to Python ints by the
common denominator. Every metric is homogeneous of degree zero, so the scaling never changes a
value. Prevalence calibration (paper 000, Eq. 6) is exact too: :meth:`ExactMatrix.calibrated`
multiplies gold column ``j`` by ``lcm(prevalences) / prevalence(j)``, an integer multiple of
``1 / (n prevalence(j))``; it is the equal-shares case of :meth:`ExactMatrix.scaled_to`, which
scales to any rational class distribution (Eq. 5) the same way. Then:

* a metric that is a rational function of the cells (accuracy, macro and weighted P/R/F1, the
  F1 of averages and the gap Δ, HmacR, kappa, macro and micro BACC, per-class P/R/F1/BACC) is
  the correctly rounded float of its exact fraction;
* an irrational metric is a fixed float function of one exact quantity, monotone in it: an MCC
  (multi-class, per class, micro) is the correctly rounded square root of num²/den with the sign
  of num; a DP is √3/π·ln of the exact odds ratio TP·TN / (FP·FN) (macro DP: of the exact
  product of the per-class ratios, divided by n), and GmacR is exp(ln(R_1···R_n)/n) of the
  exact product of the recalls, the logarithm being that of the correctly rounded ratio
  (:func:`log_of_ratio`, a function of the ratio's value, whatever its representation); macro
  MCC is the correctly rounded sum of the per-class MCCs (``math.fsum``, independent of the
  order of the classes) divided by n.

So values that are equal as exact fractions (or rest on equal exact quantities) are the very
same double, and the ranking module compares floats with no tolerance. Distinct values stay
distinct unless they differ by less than half an ulp.

Every function here has the name and the undefined cases (``None``) of its float counterpart in
:mod:`scoring.engine.metrics`, whose docstrings state the formulas; those float functions stay
as the vectorised form and as the differential oracle of the tests. A function accepts a numpy
matrix or an :class:`ExactMatrix`, which caches the quantities that several metrics share, so
the suite converts a matrix once. Per-class measures return one value per class.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from scoring.engine.metrics import DP_FACTOR, Value, as_matrix
from scoring.engine.rational import (
    Ratio,
    harmonic_of_two,
    log_of_ratio,
    ratio_mean,
    ratio_or_zero,
    ratio_product,
    ratio_sum,
    signed_sqrt,
    to_float,
)


def mcc_of_counts(tp: int, fp: int, fn: int, tn: int) -> Value:
    """Binary MCC of exact one-vs-rest counts; ``None`` when a margin is 0."""
    denominator = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return signed_sqrt(tp * tn - fp * fn, denominator) if denominator else None


def bacc_of_counts(tp: int, fp: int, fn: int, tn: int) -> Ratio | None:
    """(TP/(TP+FN) + TN/(TN+FP)) / 2; ``None`` when either ratio has a zero denominator."""
    if tp + fn == 0 or tn + fp == 0:
        return None
    return tp * (tn + fp) + tn * (tp + fn), 2 * (tp + fn) * (tn + fp)


def odds_ratio(tp: int, fp: int, fn: int, tn: int) -> Ratio | None:
    """TP·TN / (FP·FN), the argument of DP; ``None`` when a cell is 0."""
    return (tp * tn, fp * fn) if tp and fp and fn and tn else None


def dp_of_ratio(ratio: Ratio | None, n: int = 1) -> Value:
    """√3/π·ln(ratio)/n, natural logarithm; ``None`` for an undefined ratio."""
    return None if ratio is None else DP_FACTOR * log_of_ratio(ratio) / n


class ExactMatrix:
    """A confusion matrix in exact arithmetic: the masses are ``cells[i][j] / denominator``.

    Orientation as everywhere (contract): row ``i`` = predicted ``i``, column ``j`` = gold ``j``.
    """

    def __init__(self, cells: Sequence[Sequence[int]], denominator: int = 1) -> None:
        self.cells = [list(row) for row in cells]
        self.denominator = denominator
        self.n = len(self.cells)

    @classmethod
    def of(cls, matrix: np.ndarray | Sequence[Sequence[float]]) -> ExactMatrix:
        """Read a matrix exactly: integer arrays as they are (any size), float cells as the
        binary fractions they are, scaled by their common denominator (a power of two)."""
        array = np.asarray(matrix)
        floats = as_matrix(array)  # validates shape and values
        if np.issubdtype(array.dtype, np.integer):
            return cls(array.tolist())
        ratios = [[x.as_integer_ratio() for x in row] for row in floats.tolist()]
        denominator = max(d for row in ratios for _, d in row)  # powers of two: a multiple of all
        return cls([[n * (denominator // d) for n, d in row] for row in ratios], denominator)

    def scaled_to(self, weights: Sequence[int]) -> ExactMatrix | None:
        """Prevalence scaling to a target distribution (paper 000, Eq. 5) in exact arithmetic:
        class ``j`` gets the share ``weights[j] / sum(weights)`` (positive ints); ``None`` when a
        class has no gold item, which no scaling can give a share.

        Column ``j`` is multiplied by ``weights[j]·L / prevalence(j)`` with ``L`` the lcm of the
        prevalences, an integer multiple of lambda_jj = share(j) / prevalence(j); the masses
        ``cells / (L·sum(weights))`` are those of Eq. 5 exactly, column ``j`` summing to its share.
        """
        if not all(self.prevalence):
            return None
        common = math.lcm(*self.prevalence)
        factors = [w * (common // p) for w, p in zip(weights, self.prevalence, strict=True)]
        cells = [[x * f for x, f in zip(row, factors, strict=True)] for row in self.cells]
        return ExactMatrix(cells, sum(weights) * common)

    def calibrated(self) -> ExactMatrix | None:
        """Prevalence calibration (paper 000, Eq. 6) in exact arithmetic: scaling to equal shares,
        every class the mass 1/n; ``None`` when a class has no gold item."""
        return self.scaled_to([1] * self.n)

    def mass(self, value: int) -> int | float:
        """A sum of cells as a plain number: an int when integral, else its correctly rounded float."""
        whole, rest = divmod(value, self.denominator)
        return whole if rest == 0 else value / self.denominator

    # --- basic quantities (paper 000, Section 2) ---------------------------------------------

    @cached_property
    def bias(self) -> tuple[int, ...]:
        return tuple(sum(row) for row in self.cells)

    @cached_property
    def prevalence(self) -> tuple[int, ...]:
        return tuple(sum(column) for column in zip(*self.cells, strict=True))

    @cached_property
    def correct(self) -> tuple[int, ...]:
        return tuple(self.cells[i][i] for i in range(self.n))

    @cached_property
    def total(self) -> int:
        return sum(self.bias)

    @cached_property
    def trace(self) -> int:
        return sum(self.correct)

    @cached_property
    def one_vs_rest(self) -> tuple[tuple[int, int, int, int], ...]:
        """(TP, FP, FN, TN) per class (paper 004); exact ints, so differences of sums are
        the sums of cells themselves."""
        s = self.total
        return tuple(
            (c, b - c, p - c, s - b - p + c) for c, b, p in zip(self.correct, self.bias, self.prevalence, strict=True)
        )

    @cached_property
    def pooled(self) -> tuple[int, int, int, int]:
        """Sums of TP, FP, FN, TN over classes: the micro average's counts with uniform weights
        (the weights 1/n cancel in every ratio)."""
        tp, fp, fn, tn = (sum(column) for column in zip(*self.one_vs_rest, strict=True))
        return tp, fp, fn, tn

    # --- exact per-class values, shared by several metrics -----------------------------------

    @cached_property
    def precisions(self) -> tuple[Ratio, ...]:
        return tuple(ratio_or_zero(c, b) for c, b in zip(self.correct, self.bias, strict=True))

    @cached_property
    def recalls(self) -> tuple[Ratio, ...]:
        return tuple(ratio_or_zero(c, p) for c, p in zip(self.correct, self.prevalence, strict=True))

    @cached_property
    def f1s(self) -> tuple[Ratio, ...]:
        return tuple(
            ratio_or_zero(2 * c, b + p) for c, b, p in zip(self.correct, self.bias, self.prevalence, strict=True)
        )

    @cached_property
    def mean_precision(self) -> Ratio:
        return ratio_mean(self.precisions)

    @cached_property
    def mean_recall(self) -> Ratio:
        return ratio_mean(self.recalls)

    @cached_property
    def mean_f1(self) -> Ratio:
        return ratio_mean(self.f1s)

    @cached_property
    def f1_of_averages(self) -> Ratio:
        return harmonic_of_two(self.mean_precision, self.mean_recall)

    @cached_property
    def mccs(self) -> tuple[Value, ...]:
        return tuple(mcc_of_counts(*counts) for counts in self.one_vs_rest)

    @cached_property
    def baccs(self) -> tuple[Ratio | None, ...]:
        return tuple(bacc_of_counts(*counts) for counts in self.one_vs_rest)

    @cached_property
    def odds_ratios(self) -> tuple[Ratio | None, ...]:
        return tuple(odds_ratio(*counts) for counts in self.one_vs_rest)


MatrixLike = np.ndarray | ExactMatrix


def exact_matrix(matrix: MatrixLike) -> ExactMatrix:
    """``matrix`` itself if already exact, else :meth:`ExactMatrix.of` it."""
    return matrix if isinstance(matrix, ExactMatrix) else ExactMatrix.of(matrix)


# --- per-class measures (paper 000, Eq. 1-2; paper 004, Table 1) -----------------------------


def class_precision(matrix: MatrixLike) -> tuple[Value, ...]:
    return tuple(to_float(x) for x in exact_matrix(matrix).precisions)


def class_recall(matrix: MatrixLike) -> tuple[Value, ...]:
    return tuple(to_float(x) for x in exact_matrix(matrix).recalls)


def class_f1(matrix: MatrixLike) -> tuple[Value, ...]:
    return tuple(to_float(x) for x in exact_matrix(matrix).f1s)


def class_mcc(matrix: MatrixLike) -> tuple[Value, ...]:
    return exact_matrix(matrix).mccs


def class_bacc(matrix: MatrixLike) -> tuple[Value, ...]:
    return tuple(to_float(x) for x in exact_matrix(matrix).baccs)


def class_dp(matrix: MatrixLike) -> tuple[Value, ...]:
    return tuple(dp_of_ratio(x) for x in exact_matrix(matrix).odds_ratios)


# --- overall metrics (paper 000, Section 4) --------------------------------------------------


def accuracy(matrix: MatrixLike) -> Value:
    q = exact_matrix(matrix)
    return q.trace / q.total if q.total else None


def macro_precision(matrix: MatrixLike) -> Value:
    return to_float(exact_matrix(matrix).mean_precision)


def macro_recall(matrix: MatrixLike) -> Value:
    return to_float(exact_matrix(matrix).mean_recall)


def macro_f1(matrix: MatrixLike) -> Value:
    return to_float(exact_matrix(matrix).mean_f1)


def macro_f1_of_averages(matrix: MatrixLike) -> Value:
    return to_float(exact_matrix(matrix).f1_of_averages)


def macro_f1_gap(matrix: MatrixLike) -> Value:
    """Δ exactly: never negative (paper 002, Theorem), so no clamp is needed."""
    q = exact_matrix(matrix)
    (a, b), (c, d) = q.f1_of_averages, q.mean_f1
    return (a * d - c * b) / (b * d)


def gmean_recall(matrix: MatrixLike) -> Value:
    """exp(ln(R_1 ··· R_n) / n) of the exact product; 0 if some recall is 0."""
    q = exact_matrix(matrix)
    if not all(q.correct):  # R_i = 0 iff correct(i) = 0
        return 0.0
    # The product is at most 1: the clamp only keeps a rounding of the logarithms inside [0, 1].
    return min(math.exp(log_of_ratio(ratio_product(q.recalls)) / q.n), 1.0)


def hmean_recall(matrix: MatrixLike) -> Value:
    """n / sum_i (1/R_i) = n / sum_i prevalence(i)/correct(i); 0 if some recall is 0."""
    q = exact_matrix(matrix)
    if not all(q.correct):
        return 0.0
    numerator, denominator = ratio_sum([(p, c) for c, p in zip(q.correct, q.prevalence, strict=True)])
    return q.n * denominator / numerator


def chance_terms(q: ExactMatrix) -> tuple[int, int, int, int, int]:
    """(s, c, p.b, b.b, p.p) in exact ints (paper 000, Eq. 22, 38 and 40)."""
    p, b = q.prevalence, q.bias
    return (
        q.total,
        q.trace,
        sum(x * y for x, y in zip(p, b, strict=True)),
        sum(x * x for x in b),
        sum(x * x for x in p),
    )


def kappa(matrix: MatrixLike) -> Value:
    s, c, pb, _, _ = chance_terms(exact_matrix(matrix))
    denominator = s * s - pb  # = sum over i != j of p_i b_j >= 0
    if s == 0 or denominator == 0:
        return None
    numerator = min(max(c * s - pb, -denominator), denominator)  # kappa in [-1, 1], as the float one
    return numerator / denominator


def mcc(matrix: MatrixLike) -> Value:
    s, c, pb, bb, pp = chance_terms(exact_matrix(matrix))
    denominator = (s * s - pp) * (s * s - bb)
    if s == 0 or denominator == 0:
        return None
    return signed_sqrt(c * s - pb, denominator)


# --- the weighted averages of paper 004 ------------------------------------------------------


def prevalence_weighted(q: ExactMatrix, values: Sequence[Ratio]) -> Value:
    """sum_i (prevalence(i) / N)·M_i; uniform weights for an empty matrix (then every value is
    0), as :func:`scoring.engine.metrics.prevalence_weights` does."""
    if q.total == 0:
        return to_float(ratio_mean(values))
    numerator, denominator = ratio_sum([(p * a, b) for p, (a, b) in zip(q.prevalence, values, strict=True)])
    return numerator / (denominator * q.total)


def weighted_precision(matrix: MatrixLike) -> Value:
    q = exact_matrix(matrix)
    return prevalence_weighted(q, q.precisions)


def weighted_recall(matrix: MatrixLike) -> Value:
    """Exactly accuracy on a matrix with items: sum_i (prevalence(i)/N)·correct(i)/prevalence(i)
    = trace/N."""
    q = exact_matrix(matrix)
    return prevalence_weighted(q, q.recalls)


def weighted_f1(matrix: MatrixLike) -> Value:
    q = exact_matrix(matrix)
    return prevalence_weighted(q, q.f1s)


def macro_mcc(matrix: MatrixLike) -> Value:
    """fsum of the per-class MCCs over n, kept between their extremes as the float average is."""
    values = exact_matrix(matrix).mccs
    if None in values:
        return None
    return min(max(math.fsum(values) / len(values), min(values)), max(values))


def macro_bacc(matrix: MatrixLike) -> Value:
    values = exact_matrix(matrix).baccs
    return None if None in values else to_float(ratio_mean(values))


def macro_dp(matrix: MatrixLike) -> Value:
    """√3/π·ln(prod_i TP_i·TN_i / (FP_i·FN_i)) / n: the mean of the per-class DPs, taken from
    the exact product of their odds ratios."""
    q = exact_matrix(matrix)
    ratios = q.odds_ratios
    if None in ratios:
        return None
    return dp_of_ratio(ratio_product(ratios), q.n)


def micro_mcc(matrix: MatrixLike) -> Value:
    return mcc_of_counts(*exact_matrix(matrix).pooled)


def micro_bacc(matrix: MatrixLike) -> Value:
    return to_float(bacc_of_counts(*exact_matrix(matrix).pooled))


def micro_dp(matrix: MatrixLike) -> Value:
    return dp_of_ratio(odds_ratio(*exact_matrix(matrix).pooled))
