"""An exact oracle of every registered metric, written from the papers with ``fractions`` and
400-bit ``mpmath``, independent of the engine: the test of "every value is the double nearest
to its exact value".

Rows are predictions, columns gold (m[i][j] = predicted i, gold j). Each function returns an
mpmath number at 400 bits (a Fraction where the value is rational), or ``None`` where the
papers leave the value undefined. :func:`nearest_double` rounds it once.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

mpmath.mp.prec = 400


def cells(matrix: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(x) for x in row] for row in np.asarray(matrix).tolist()]


def nearest_double(value: Fraction | mpmath.mpf | None) -> float | None:
    """The double nearest to ``value`` (Fraction's division rounds correctly)."""
    if value is None:
        return None
    if isinstance(value, Fraction):
        return value.numerator / value.denominator
    numerator, denominator = mpmath.mpf(value).as_integer_ratio()
    return numerator / denominator


def ratio(a: Fraction, b: Fraction, zero: object = Fraction(0)) -> object:
    return zero if b == 0 else a / b


def counts(m: list[list[Fraction]], i: int) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    n = len(m)
    tp = m[i][i]
    fp = sum((m[i][j] for j in range(n) if j != i), Fraction(0))
    fn = sum((m[j][i] for j in range(n) if j != i), Fraction(0))
    tn = sum((m[a][b] for a in range(n) for b in range(n) if a != i and b != i), Fraction(0))
    return tp, fp, fn, tn


def over_root(numerator: Fraction, radicand: Fraction):
    """numerator / sqrt(radicand): a Fraction where the root is rational (both terms of the
    radicand perfect squares), so that a sum of such terms that is exactly 0 stays 0 (a macro
    MCC of 1, -1/3, -1/3 and -1/3), else 400-bit; ``None`` for a radicand of 0."""
    if radicand == 0:
        return None
    radicand = Fraction(radicand)
    top, bottom = math.isqrt(radicand.numerator), math.isqrt(radicand.denominator)
    if top * top == radicand.numerator and bottom * bottom == radicand.denominator:
        return Fraction(numerator) / Fraction(top, bottom)
    return mpmath.mpf(numerator) / mpmath.sqrt(mpmath.mpf(radicand))


def mcc_of(tp, fp, fn, tn):
    return over_root(tp * tn - fp * fn, (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))


def bacc_of(tp, fp, fn, tn):
    if tp + fn == 0 or tn + fp == 0:
        return None
    return (tp / (tp + fn) + tn / (tn + fp)) / 2


def dp_of(tp, fp, fn, tn):
    if 0 in (tp, fp, fn, tn):
        return None
    return mpmath.sqrt(3) / mpmath.pi * mpmath.log(mpmath.mpf(tp * tn) / mpmath.mpf(fp * fn))


def per_class(m, key: str) -> list:
    n = len(m)
    bias = [sum(row, Fraction(0)) for row in m]
    prevalence = [sum((m[x][j] for x in range(n)), Fraction(0)) for j in range(n)]
    if key == "precision":
        return [ratio(m[i][i], bias[i]) for i in range(n)]
    if key == "recall":
        return [ratio(m[i][i], prevalence[i]) for i in range(n)]
    if key == "f1":
        return [ratio(2 * m[i][i], bias[i] + prevalence[i]) for i in range(n)]
    of_counts = {"mcc": mcc_of, "bacc": bacc_of, "dp": dp_of}[key]
    return [of_counts(*counts(m, i)) for i in range(n)]


def mean(values: list):
    return None if any(v is None for v in values) else sum(values) / len(values)


def metric(m, key: str):
    n = len(m)
    s = sum((sum(row, Fraction(0)) for row in m), Fraction(0))
    c = sum((m[i][i] for i in range(n)), Fraction(0))
    bias = [sum(row, Fraction(0)) for row in m]
    prevalence = [sum((m[x][j] for x in range(n)), Fraction(0)) for j in range(n)]
    pb = sum((p * b for p, b in zip(prevalence, bias, strict=True)), Fraction(0))
    pooled = [sum(column, Fraction(0)) for column in zip(*(counts(m, i) for i in range(n)), strict=True)]
    recalls = per_class(m, "recall")
    if key in ("macro_mae", "mae"):
        return ordinal_error(m, macro=key == "macro_mae")
    if key == "accuracy":
        return ratio(c, s, None)
    if key in ("macro_precision", "macro_recall", "macro_f1"):
        return mean(per_class(m, key.removeprefix("macro_")))
    if key == "macro_f1_of_averages":
        p, r = mean(per_class(m, "precision")), mean(recalls)
        return ratio(2 * p * r, p + r)
    if key == "macro_f1_gap":
        return metric(m, "macro_f1_of_averages") - metric(m, "macro_f1")
    if key == "gmean_recall":
        product = mpmath.mpf(1)
        for r in recalls:
            product *= mpmath.mpf(r)
        return mpmath.root(product, n) if product else Fraction(0)
    if key == "hmean_recall":
        return Fraction(0) if any(r == 0 for r in recalls) else n / sum(1 / r for r in recalls)
    if key == "kappa":
        return ratio(c * s - pb, s * s - pb, None)
    if key == "mcc":
        pp, bb = sum(p * p for p in prevalence), sum(b * b for b in bias)
        return over_root(c * s - pb, (s * s - pp) * (s * s - bb))
    if key.startswith("weighted_"):
        values = per_class(m, key.removeprefix("weighted_"))
        return Fraction(0) if s == 0 else sum(p * v for p, v in zip(prevalence, values, strict=True)) / s
    if key.startswith("macro_"):
        return mean(per_class(m, key.removeprefix("macro_")))
    if key.startswith("micro_"):
        return {"mcc": mcc_of, "bacc": bacc_of, "dp": dp_of}[key.removeprefix("micro_")](*pooled)
    raise KeyError(key)


def ordinal_error(m, *, macro: bool):
    """SemEval-2017 Task 4C: the items of gold class j predicted i are |i - j| steps off. MAE^M
    is the mean over the gold classes that have items of their mean error; MAE^mu the mean
    over all items. Undefined without items."""
    n = len(m)
    errors = [sum((abs(i - j) * m[i][j] for i in range(n)), Fraction(0)) for j in range(n)]
    sizes = [sum((m[i][j] for i in range(n)), Fraction(0)) for j in range(n)]
    if macro:
        means = [error / size for error, size in zip(errors, sizes, strict=True) if size]
        return sum(means) / len(means) if means else None
    return ratio(sum(errors), sum(sizes), None)


def calibrated(m) -> list[list[Fraction]] | None:
    """Paper 000, Eq. 6: column j divided by n prevalence(j)."""
    n = len(m)
    prevalence = [sum((m[x][j] for x in range(n)), Fraction(0)) for j in range(n)]
    if 0 in prevalence:
        return None
    return [[m[i][j] / (n * prevalence[j]) for j in range(n)] for i in range(n)]
