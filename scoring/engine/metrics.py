"""Every metric's formula, written once, over a stack of confusion matrices.

Orientation (contract): ``m[i, j]`` is the mass of items **predicted** ``i`` whose **gold**
label is ``j``; rows are predictions (bias), columns are gold (prevalence). Matrices may hold
counts, calibrated masses or soft (probability) masses: every formula here is homogeneous of
degree zero, so the total mass never matters.

A formula is a function of :class:`Quantities`, the sums of cells that several metrics share,
computed once per stack of matrices (class axis first, then any stack axes: one matrix, or
thousands of bootstrap replicates), as scikit-learn's ``_classification.py`` serves every
average from one path over per-class counts. The arithmetic is given with the quantities
(``q.xp``): exact numbers (:mod:`scoring.engine.exact`), from which every stored value is
rounded once, or pairs of doubles with error bounds (:mod:`scoring.engine.twofold`), from
which bootstrap replicates are rounded, with an exact evaluation wherever a rounding is not
decided (:mod:`scoring.engine.canonical`). So each value is the double nearest to the exact
value of the formula, whatever the route, and values that are equal are the same double.

Undefined values (a ratio with a zero denominator that the papers do not define, a logarithm of
zero) are undefined in the arithmetic (``None`` once rounded). Per-class precision, recall and
F1 are 0 on a zero denominator, as papers 000 and 002 define them. Counts are sums of cells,
never differences of totals, so that a count of 0 is exactly 0 in any arithmetic.

Ordinal tasks (labels that form a scale, in the task's label order) also have the errors of
SemEval-2017 Task 4, subtask C (:func:`macro_mae`, :func:`mae`): class ``i`` sits at position
``i``, so a prediction ``i`` of an item of gold class ``j`` is ``|i - j|`` steps off.

Sources: paper 000 (Opitz, *From Bias and Prevalence to Macro F1, Kappa, and MCC*), paper 002
(Opitz & Burst, *Macro F1 and Macro F1*), paper 004 (per-class measures and their micro- and
macro-weighted averages); Rosenthal, Farra & Nakov, *SemEval-2017 Task 4: Sentiment Analysis in
Twitter* (cited by paper 000 as [11]), for the ordinal errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache, cached_property

import numpy as np

Value = float | None
"""A metric value: a finite float, or ``None`` where the metric is undefined."""


def defined(value: float) -> Value:
    """Return ``value`` as a float, or ``None`` if it is NaN or infinite."""
    value = float(value)
    return value if math.isfinite(value) else None


def as_matrix(m: np.ndarray) -> np.ndarray:
    """Validate a square, non-negative, finite confusion matrix and return it as float64."""
    m = np.asarray(m, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise ValueError(f"a confusion matrix must be square and non-empty, got shape {m.shape}")
    return _counts(m)


def _counts(cells: np.ndarray) -> np.ndarray:
    """``cells`` (of one confusion matrix or a stack of them), refused unless finite and non-negative."""
    if not np.all(np.isfinite(cells)) or np.any(cells < 0):
        raise ValueError("a confusion matrix must hold finite, non-negative values")
    return cells


def as_matrices(matrices: Sequence[np.ndarray], n: int) -> np.ndarray:
    """Validate a stack of ``n`` × ``n`` confusion matrices as :func:`as_matrix` validates one,
    all at once, and return them as one float64 array (matrices × n × n)."""
    if not matrices:
        return np.zeros((0, n, n))
    stack = np.asarray(matrices, dtype=np.float64)
    if stack.ndim != 3 or stack.shape[1:] != (n, n):
        raise ValueError(f"{n} labels for matrices of shape {stack.shape[1:]}")
    return _counts(stack)


def plain_values(values: np.ndarray) -> list[Value]:
    """The doubles of a 1-D array as Python floats, ``None`` where NaN (undefined)."""
    return [None if value != value else value for value in values.tolist()]


def _cell_sums(cells, rows: np.ndarray, columns: np.ndarray):
    """For each class i, the sum of the cells (rows[i, k], columns[i, k]) over k: a sum of cells,
    so exactly 0 when, and only when, each of them is."""
    if rows.shape[1] == 0:
        return cells[np.arange(len(rows)), np.arange(len(rows))] * 0
    return cells[rows, columns].sum(axis=1)


def ordinal_distances(n: int) -> np.ndarray:
    """|i - j| for every cell (i, j): how many steps of an ordinal scale separate the prediction
    i from the gold label j, the classes at positions 0, 1, ..., n - 1 in label order."""
    positions = np.arange(n)
    return np.abs(positions[:, np.newaxis] - positions[np.newaxis, :])


class Quantities:
    """The sums of cells of a stack of confusion matrices: ``cells[i, j, ...]`` is cell (i, j)
    of every matrix, in the arithmetic ``xp``. Each quantity is computed on first use and shared
    by every formula that needs it."""

    def __init__(self, cells, xp) -> None:
        self.cells = cells
        self.xp = xp
        self.n = cells.shape[0]
        self._values: dict[Callable, object] = {}

    def of(self, formula: Callable[[Quantities], object]):
        """``formula(self)``, computed once: a per-class measure serves every average of it."""
        if formula not in self._values:
            self._values[formula] = formula(self)
        return self._values[formula]

    @cached_property
    def bias(self):
        """bias(i) = sum_x m[i, x]: how often class i is predicted (row sums)."""
        return self.cells.sum(axis=1)

    @cached_property
    def prevalence(self):
        """prevalence(i) = sum_x m[x, i]: how often class i is the gold label (column sums)."""
        return self.cells.sum(axis=0)

    @cached_property
    def correct(self):
        """correct(i) = m[i, i]."""
        return self.cells[np.arange(self.n), np.arange(self.n)]

    @cached_property
    def total(self):
        return self.bias.sum(axis=0)

    @cached_property
    def trace(self):
        return self.correct.sum(axis=0)

    @cached_property
    def one_vs_rest(self):
        """(TP, FP, FN, TN) per class (paper 004): FP_i the rest of row i, FN_i the rest of
        column i, TN_i every cell outside row i and column i."""
        n = self.n
        others = np.array([[j for j in range(n) if j != i] for i in range(n)], dtype=np.intp).reshape(n, n - 1)
        own = np.repeat(np.arange(n), n - 1).reshape(n, n - 1)
        outside_rows = np.repeat(others, n - 1, axis=1)
        outside_columns = np.tile(others, (1, n - 1))
        fp = _cell_sums(self.cells, own, others)
        fn = _cell_sums(self.cells, others, own)
        tn = _cell_sums(self.cells, outside_rows, outside_columns)
        return self.correct, fp, fn, tn

    @cached_property
    def pooled(self):
        """TP, FP, FN, TN summed over classes: the micro average's counts with uniform weights
        (the weights 1/n cancel in every ratio)."""
        return tuple(count.sum(axis=0) for count in self.one_vs_rest)

    def cross_sum(self, x, y):
        """sum over i != j of x_i y_j: (sum x)(sum y) - x.y as a sum of products, exactly 0
        when the two put all their mass on one and the same class."""
        pairs = np.array([(i, j) for i in range(self.n) for j in range(self.n) if i != j], dtype=np.intp)
        if len(pairs) == 0:
            return self.total * 0
        return (x[pairs[:, 0]] * y[pairs[:, 1]]).sum(axis=0)

    @cached_property
    def absolute_error(self):
        """err(j) = sum_i |i - j| m[i, j]: the summed distance, on the scale of the label order,
        between the predictions and the gold label of the items of gold class j (ordinal tasks).
        For probability rows, each item adds sum_i p_i |i - j|: its expected absolute error."""
        stack_axes = (1,) * (len(self.cells.shape) - 2)
        distances = self.xp.integers(ordinal_distances(self.n).reshape(self.n, self.n, *stack_axes))
        return (self.cells * distances).sum(axis=0)

    @cached_property
    def chance_agreement(self):
        """p.b = sum_i prevalence(i) bias(i), the unnormalised agreement expected by chance."""
        return (self.prevalence * self.bias).sum(axis=0)


# --- per-class measures (paper 000, Eq. 1-2; paper 004, Table 1) -----------------------------


def precision_of_counts(xp, tp, fp, fn, tn):
    """P = TP / (TP + FP), 0 if TP + FP = 0 (paper 000, Eq. 1: correct(i) / bias(i))."""
    return xp.ratio_or_zero(tp, tp + fp)


def recall_of_counts(xp, tp, fp, fn, tn):
    """R = TP / (TP + FN), 0 if TP + FN = 0 (paper 000, Eq. 2: correct(i) / prevalence(i))."""
    return xp.ratio_or_zero(tp, tp + fn)


def f1_of_counts(xp, tp, fp, fn, tn):
    """F1 = 2 P R / (P + R) = 2 TP / (2 TP + FP + FN), 0 if P + R = 0 (paper 002, Eq. 1; paper
    000, Eq. 19: 2 correct(i) / (bias(i) + prevalence(i)))."""
    return xp.ratio_or_zero(2 * tp, 2 * tp + fp + fn)


def mcc_of_counts(xp, tp, fp, fn, tn):
    """(TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) (paper 004, Table 1). In [-1, 1];
    undefined when a margin is 0."""
    return xp.ratio_or_undefined(tp * tn - fp * fn, xp.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))


def bacc_of_counts(xp, tp, fp, fn, tn):
    """(TP/(TP+FN) + TN/(TN+FP)) / 2 (paper 004, Table 1). In [0, 1]; undefined when the class
    has no gold item or every item is of the class."""
    return (xp.ratio_or_undefined(tp, tp + fn) + xp.ratio_or_undefined(tn, tn + fp)) / 2


def dp_of_counts(xp, tp, fp, fn, tn):
    """DP = sqrt(3)/pi ln(TP/FP · TN/FN) (paper 004, Table 1; natural logarithm). Unbounded;
    undefined when any of the four is 0. PyCM's log10-based values are ours divided by ln 10."""
    return xp.dp_of_ratio(tp * tn, fp * fn)


OfCounts = Callable[..., object]


@cache
def per_class(of_counts: OfCounts) -> Callable[[Quantities], object]:
    """The one-vs-rest formula ``of_counts`` for every class at once (class axis first)."""

    def measure(q: Quantities):
        return of_counts(q.xp, *q.one_vs_rest)

    measure.__name__ = measure.__qualname__ = of_counts.__name__.replace("_of_counts", "")
    measure.__doc__ = f"{of_counts.__doc__.splitlines()[0]} Of each class against the rest."
    return measure


class_precision = per_class(precision_of_counts)
class_recall = per_class(recall_of_counts)
class_f1 = per_class(f1_of_counts)
class_mcc = per_class(mcc_of_counts)
class_bacc = per_class(bacc_of_counts)
class_dp = per_class(dp_of_counts)


# --- overall metrics (paper 000, Section 4) --------------------------------------------------


def mean(values, n: int):
    """The arithmetic mean over the class axis; undefined if any value is."""
    return values.sum(axis=0) / n


def accuracy(q: Quantities):
    """Accuracy = sum_i correct(i) / sum_ij m[i, j] (paper 000, Eq. 7): micro P, R and F1 too.
    In [0, 1]; undefined for an empty matrix."""
    return q.xp.ratio_or_undefined(q.trace, q.total)


def macro_precision(q: Quantities):
    """macP = (1/n) sum_i P_i (paper 000, Eq. 17). In [0, 1]."""
    return mean(q.of(class_precision), q.n)


def macro_recall(q: Quantities):
    """macR = (1/n) sum_i R_i (paper 000, Eq. 8). In [0, 1]; prevalence invariant."""
    return mean(q.of(class_recall), q.n)


def macro_f1(q: Quantities):
    """Averaged F1: the mean of per-class F1 (paper 002, Eq. 2; paper 000, Eq. 18). In [0, 1];
    never above :func:`macro_f1_of_averages`."""
    return mean(q.of(class_f1), q.n)


def macro_f1_of_averages(q: Quantities):
    """F1 of averages: 2 macP macR / (macP + macR), 0 if both are 0 (paper 002, Eq. 3; paper 000,
    Eq. 20, the "name twin" macF1'). In [0, 1]."""
    precision, recall = q.of(macro_precision), q.of(macro_recall)
    return q.xp.ratio_or_zero(2 * precision * recall, precision + recall)


def macro_f1_gap(q: Quantities):
    """Delta = F1 of averages - averaged F1 (paper 002, Theorem): in [0, 0.5] for even n and
    [0, 0.5 - 1/(2n^2)] for odd n; 0 iff P_x R_y = P_y R_x for all classes x, y (Lemma)."""
    return q.of(macro_f1_of_averages) - q.of(macro_f1)


def macro_f1_gap_closed_form(q: Quantities):
    """Delta by the closed form of the Lemma (paper 002, Eq. 4):

    Delta = 1 / (n sum_x (P_x + R_x)) sum_{x,y} (P_x R_y - P_y R_x)^2 / ((P_x+R_x)(P_y+R_y)),

    the sums over classes with P + R != 0; 0 for a hollow matrix (no correct item), where both
    macro F1s are 0. The same number as :func:`macro_f1_gap`, by another route."""
    xp, n = q.xp, q.n
    p, r = q.of(class_precision), q.of(class_recall)
    s = p + r
    x, y = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    cross = p[x] * r[y] - p[y] * r[x]
    terms = xp.ratio_or_zero(cross * cross, s[x] * s[y]).sum(axis=0)
    return xp.ratio_or_zero(terms, n * s.sum(axis=0))


def gmean_recall(q: Quantities):
    """GmacR = (R_1 ... R_n)^(1/n), the geometric mean of class recalls (paper 000, Eq. 25).
    In [0, 1]; 0 as soon as one class has recall 0."""
    return q.xp.root(q.of(class_recall).prod(axis=0), q.n)


def hmean_recall(q: Quantities):
    """HmacR = n / sum_i (1/R_i) = n / sum_i prevalence(i)/correct(i), the harmonic mean of class
    recalls (paper 000, Eq. 4 with p = -1). In [0, 1]; 0 (its limit) as soon as one class has
    recall 0."""
    xp = q.xp
    inverse_sum = xp.ratio_or_zero(q.prevalence, q.correct).sum(axis=0)
    return xp.zero_where(xp.any_zero(q.correct), xp.ratio_or_zero(q.n, inverse_sum))


def kappa(q: Quantities):
    """Cohen's kappa = (c s - p.b) / (s^2 - p.b) (paper 000, Eq. 24 and 38; s the total mass, c
    the trace). In [-1, 1]; undefined when s^2 = p.b (every item gold and predicted as one
    class, or no item at all)."""
    return q.xp.ratio_or_undefined(q.trace * q.total - q.chance_agreement, q.cross_sum(q.prevalence, q.bias))


def mcc(q: Quantities):
    """Multi-class MCC (Gorodkin) = (c s - p.b) / sqrt((s^2 - p.p)(s^2 - b.b)) (paper 000, Eq. 23
    and 40). In [-1, 1]; undefined when only one class is predicted or only one is gold."""
    xp = q.xp
    p, b = q.prevalence, q.bias
    return xp.ratio_or_undefined(q.trace * q.total - q.chance_agreement, xp.sqrt(q.cross_sum(p, p) * q.cross_sum(b, b)))


# --- the weighted averages of paper 004 ------------------------------------------------------


def macro_weighted(xp, values, weights: Sequence[Fraction]):
    """sum_i omega_i M_i / sum_i omega_i over the classes with a positive weight (paper 004,
    Table 3); undefined if one of them is. ``weights``: exact non-negative numbers, one a class."""
    used = [i for i, weight in enumerate(weights) if weight > 0]
    total = xp.constant(sum(weights[i] for i in used))
    return sum(values[i] * xp.constant(weights[i]) for i in used) / total


def micro_weighted(q: Quantities, of_counts: OfCounts, weights: Sequence[Fraction]):
    """The one-vs-rest formula ``of_counts`` applied to sum_i omega_i TP_i, sum_i omega_i FP_i,
    ... (paper 004, Table 2)."""
    xp = q.xp
    pooled = [sum(count[i] * xp.constant(w) for i, w in enumerate(weights) if w) for count in q.one_vs_rest]
    return of_counts(xp, *pooled)


def macro_of(of_counts: OfCounts) -> Callable[[Quantities], object]:
    """The mean of a per-class measure over the classes (uniform weights, "macro"; paper 004,
    Table 3)."""

    def formula(q: Quantities):
        return mean(q.of(per_class(of_counts)), q.n)

    formula.__doc__ = f"(1/n) sum_i of the per-class {per_class(of_counts).__name__}."
    return formula


def macro_dp(q: Quantities):
    """(1/n) sum_i DP_i (paper 004, Tables 1 and 3) as one logarithm: (√3/π)/n · ln(prod_i TP_i
    TN_i / prod_i FP_i FN_i), the same real number (the logarithms of positive ratios sum to the
    logarithm of their product), undefined where any class's DP is (a count of 0)."""
    tp, fp, fn, tn = q.one_vs_rest
    return q.xp.dp_of_ratio((tp * tn).prod(axis=0), (fp * fn).prod(axis=0)) / q.n


def weighted_of(of_counts: OfCounts) -> Callable[[Quantities], object]:
    """sum_i (prevalence(i)/N) M_i: scikit-learn's ``average="weighted"``; 0 for an empty
    matrix, where every per-class value is 0."""

    def formula(q: Quantities):
        return q.xp.ratio_or_zero((q.prevalence * q.of(per_class(of_counts))).sum(axis=0), q.total)

    formula.__doc__ = f"Prevalence-weighted mean of the per-class {per_class(of_counts).__name__}."
    return formula


def micro_of(of_counts: OfCounts) -> Callable[[Quantities], object]:
    """The one-vs-rest formula on the counts summed over classes (paper 004, Table 2)."""

    def formula(q: Quantities):
        return of_counts(q.xp, *q.pooled)

    formula.__doc__ = f"{of_counts.__name__} of the pooled one-vs-rest counts."
    return formula


# --- the errors of ordinal tasks (SemEval-2017 Task 4, subtask C) -------------------------------


def class_mae(q: Quantities):
    """MAE_j = err(j) / prevalence(j): the mean absolute error of the items of gold class j,
    0 for a class without gold items (which :func:`macro_mae` leaves out)."""
    return q.xp.ratio_or_zero(q.absolute_error, q.prevalence)


def macro_mae(q: Quantities):
    """MAE^M = (1/|C|) sum_{j in C} (1/|Te_j|) sum_{x in Te_j} |h(x) - y(x)|, the mean over the
    gold classes C that have items of each class's mean absolute error (Rosenthal, Farra &
    Nakov 2017, subtask C; positions 0, 1, ... in label order). In [0, n - 1], lower is better;
    undefined without items. A mean of per-class means, so scaling a gold column changes
    nothing (prevalence invariant): its calibrated value is its raw value."""
    xp = q.xp
    classes_with_items = xp.zero_where(q.prevalence, xp.constant(1)).sum(axis=0)
    return xp.ratio_or_undefined(q.of(class_mae).sum(axis=0), classes_with_items)


def mae(q: Quantities):
    """MAE^mu = (1/|Te|) sum_{x in Te} |h(x) - y(x)| = sum_j err(j) / sum_ij m[i, j], the plain mean
    absolute error (Rosenthal, Farra & Nakov 2017, subtask C). In [0, n - 1], lower is better;
    undefined without items. After prevalence calibration every class has the same mass, so it
    becomes the class-balanced mean, :func:`macro_mae`."""
    return q.xp.ratio_or_undefined(q.absolute_error.sum(axis=0), q.total)
