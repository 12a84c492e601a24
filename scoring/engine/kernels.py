"""The engine's compiled loops (numba), for large arrays: each does in one loop what a numpy
route does in one pass over memory and one array per step, with the same IEEE operations in
the same order, so the same numbers, bit for bit. No fused multiply-add is contracted: numba
leaves the arithmetic as written unless asked for fast math. Every loop releases the
interpreter lock, so the bootstrap's threads run them side by side.

Written here as plain Python over scalars and arrays; :func:`scoring.engine.compiled.load`
compiles a copy of every function of this module (numba's ``njit``; the copies call one
another) in a process that has a large computation ahead, and only then are the loops called.
Each is compiled on first use and cached beside this file (or in numba's cache directory where
that is not writable); the module's own functions stay Python.

* The error-free transformations of doubles that the pair arithmetic is built on (Dekker,
  Knuth): a sum or a product of two doubles as the rounded result and its exact error. Written
  once, on doubles or numpy arrays alike: :mod:`scoring.engine.twofold` applies them to its
  arrays, the loops call their compiled copies on one value after another, so both routes
  take the same IEEE steps. They are in this file, as is every step a loop takes, because
  numba's cache of a loop is stamped with its own file alone: a step changed in another file
  would leave the cached loops computing the old way.
* The pair operations of :mod:`scoring.engine.twofold` (sums, products, quotients with their
  error bounds), on those transformations: their steps written once too, on doubles or arrays
  (:func:`sum_of_pairs`, :func:`product_of_pairs`, :func:`quotient_of_pairs`), and their
  loops (:func:`add_or_multiply`, :func:`divide`); the rounding decisions
  (:func:`rounded`). Each operand of a loop is a flat array of its values, or of one value for
  a scalar (read at index 0 by every step: ``step`` 0).
* :func:`ties`: :class:`scoring.engine.rank_order.Ties` of rows of values, given their order.
* :func:`order_statistics`: the two order statistics of an interval, of rows of replicates
  (:func:`scoring.engine.replicate_passes.order_statistics`).
"""

from __future__ import annotations

import numpy as np

REL = 2.0**-96
"""Bound of each pair operation's own rounding error, relative to its result
(:mod:`scoring.engine.twofold`)."""
_SPLIT = 134217729.0  # 2^27 + 1: Dekker's splitter of a double into two 26-bit halves


def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fast_two_sum(a, b):
    """For |a| >= |b| (or a = 0)."""
    s = a + b
    return s, b - (s - a)


def two_prod(a, b):
    """Each factor split into two 26-bit halves (Dekker's), in place: no call, so that the
    compiled loops compile this one function."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _step(x):
    return 1 if x.size > 1 else 0


def products(n, a, b):
    """``two_prod`` of each pair of values: the products as exact pairs."""
    sa, sb = _step(a), _step(b)
    hi, lo = np.empty(n), np.empty(n)
    for i in range(n):
        hi[i], lo[i] = two_prod(a[i * sa], b[i * sb])
    return hi, lo


def sum_of_pairs(xh, xl, xe, yh, yl, ye):
    """``Approx.__add__``'s steps: the sum of two pairs and its error bound."""
    s, e = two_sum(xh, yh)
    t, f = two_sum(xl, yl)
    e = e + t
    s, e = fast_two_sum(s, e)
    e = e + f
    hi, lo = fast_two_sum(s, e)
    return hi, lo, xe + ye + REL * abs(hi)


def product_of_pairs(xh, xl, xe, yh, yl, ye):
    """``Approx.__mul__``'s steps: the product of two pairs and its error bound."""
    p, e = two_prod(xh, yh)
    e = e + (xh * yl + xl * yh)
    hi, lo = fast_two_sum(p, e)
    x_abs, y_abs = abs(xh) + abs(xl), abs(yh) + abs(yl)
    return hi, lo, x_abs * ye + y_abs * xe + xe * ye + REL * abs(hi)


def quotient_of_pairs(xh, xl, xe, yh, yl, ye, y_single):
    """``Approx.__truediv__``'s steps: the quotient of two pairs (``y_single``: the divisor is
    one double), its error bound, and the least the divisor's magnitude can be (its sign is
    open where that is not above 0)."""
    th = xh / yh
    ph, pl = two_prod(th, yh)
    if not y_single:
        pl = pl + th * yl
        ph, pl = fast_two_sum(ph, pl)
    dh = xh - ph
    d = dh + (xl - pl)
    tl = d / yh
    hi, lo = fast_two_sum(th, tl)
    y_abs = abs(yh) - abs(yl) - ye
    return hi, lo, (xe + abs(hi) * ye) / y_abs + REL * abs(hi), y_abs


def add_or_multiply(n, ahi, alo, aerr, bhi, blo, berr, multiply):
    """:func:`sum_of_pairs` of each pair of values, or with ``multiply`` :func:`product_of_pairs`."""
    s1, s2, s3, s4, s5, s6 = _step(ahi), _step(alo), _step(aerr), _step(bhi), _step(blo), _step(berr)
    hi, lo, err = np.empty(n), np.empty(n), np.empty(n)
    for i in range(n):
        x, y = (ahi[i * s1], alo[i * s2], aerr[i * s3]), (bhi[i * s4], blo[i * s5], berr[i * s6])
        hi[i], lo[i], err[i] = product_of_pairs(*x, *y) if multiply else sum_of_pairs(*x, *y)
    return hi, lo, err


def divide(n, ahi, alo, aerr, bhi, blo, berr, b_single):
    """:func:`quotient_of_pairs` of each pair of values, and where the divisor's bound leaves
    its sign open (not above 0, for a divisor that is a number)."""
    s1, s2, s3, s4, s5, s6 = _step(ahi), _step(alo), _step(aerr), _step(bhi), _step(blo), _step(berr)
    hi, lo, err = np.empty(n), np.empty(n), np.empty(n)
    open_sign = np.empty(n, dtype=np.bool_)
    for i in range(n):
        x, yh = (ahi[i * s1], alo[i * s2], aerr[i * s3]), bhi[i * s4]
        hi[i], lo[i], err[i], y_abs = quotient_of_pairs(*x, yh, blo[i * s5], berr[i * s6], b_single)
        open_sign[i] = not (y_abs > 0) and not np.isnan(yh)
    return hi, lo, err, open_sign


def rounded(n, ahi, alo, aerr):
    """``Approx.rounded``: the nearest doubles (NaN where undefined) and where the bound leaves
    the rounding open. The gaps to the neighbouring doubles (``nextafter``'s) come from the
    bits: ``g = 2^(exponent - 52)`` away from 0, half that towards 0 from a power of two."""
    s1, s2, s3 = _step(ahi), _step(alo), _step(aerr)
    values, lows = np.empty(n), np.empty(n)
    gap_bits = np.empty(n, dtype=np.int64)
    halved = np.empty(n, dtype=np.bool_)
    bits = values.view(np.int64)
    for i in range(n):
        values[i], lows[i] = fast_two_sum(ahi[i * s1], alo[i * s2])
        exponent = (bits[i] >> 52) & 0x7FF
        gap_bits[i] = (exponent - 52) << 52 if exponent > 52 else np.int64(1) << max(exponent - 1, 0)
        halved[i] = exponent > 1 and (bits[i] & 0xFFFFFFFFFFFFF) == 0
    gaps = gap_bits.view(np.float64)
    undecided = np.empty(n, dtype=np.bool_)
    for i in range(n):
        h, low, e = values[i], lows[i], aerr[i * s3]
        if not np.isfinite(h):  # nextafter's gaps of an infinity: a NaN on one side
            undecided[i] = not np.isnan(h)
            values[i] = h if undecided[i] else np.nan
            continue
        away = gaps[i]
        toward = away / 2 if halved[i] else away
        up, down = (away, toward) if h >= 0 else (toward, away)  # at 0 both gaps are 2^-1074
        undecided[i] = not ((low + e < up / 2) and (low - e > -down / 2))
    return values, undecided


def ties(values, order, higher_is_better, better, tied):
    """``Ties.of`` of rows of values (rows, teams; no NaN) from each row's ascending order
    (``np.argsort``): into ``better`` how many teams of its row are strictly better than each
    team, into ``tied`` how many have its very value, itself included."""
    rows, teams = values.shape
    for r in range(rows):
        start = 0
        for end in range(1, teams + 1):
            if end < teams and values[r, order[r, end]] == values[r, order[r, start]]:
                continue
            ahead = teams - end if higher_is_better else start  # the group order[start:end] has one value
            for place in range(start, end):
                better[r, order[r, place]] = ahead
                tied[r, order[r, place]] = end - start
            start = end


def order_statistics(rows, low, high, found):
    """The ``low``-th and ``high``-th smallest (1-based) of each row of ``rows`` (rows, n) into
    ``found`` (rows, 2), as the row's sort gives them (NaN last), for few values of the ends
    (:data:`scoring.engine.replicate_passes.FEW_ENDS`). The row is read once, keeping its
    ``low`` smallest and ``n - high + 1`` largest values in order; a row with a NaN is sorted
    whole."""
    count, n = rows.shape
    few_low, few_high = low, n - high + 1
    smallest, largest = np.empty(few_low, rows.dtype), np.empty(few_high, rows.dtype)
    for r in range(count):
        row, whole = rows[r], False
        for i in range(n):
            x = row[i]
            if x != x:  # NaN
                whole = True
                break
            if i < few_low or x < smallest[few_low - 1]:  # into the smallest, ascending
                j = min(i, few_low - 1)
                while j > 0 and smallest[j - 1] > x:
                    smallest[j] = smallest[j - 1]
                    j -= 1
                smallest[j] = x
            if i < few_high or x > largest[few_high - 1]:  # into the largest, descending
                j = min(i, few_high - 1)
                while j > 0 and largest[j - 1] < x:
                    largest[j] = largest[j - 1]
                    j -= 1
                largest[j] = x
        if whole:
            ordered = np.sort(row)
            found[r, 0], found[r, 1] = ordered[low - 1], ordered[high - 1]
        else:
            found[r, 0], found[r, 1] = smallest[few_low - 1], largest[few_high - 1]
