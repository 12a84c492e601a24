"""Exact rationals as pairs of Python ints, and their correctly rounded floats.

The arithmetic under :mod:`scoring.engine.exact`. A ratio is ``(numerator, denominator)`` and
is never reduced: a ``Fraction`` reduces every result, and a gcd of the long integers of a
calibrated soft matrix costs milliseconds, while Python's int true division rounds correctly
whatever the representation. So every function here that returns a float returns a function of
the ratio's value alone: equal rationals give the very same double.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

Ratio = tuple[int, int]
"""An exact rational as (numerator, denominator), denominator > 0, not reduced."""

ZERO: Ratio = (0, 1)
LN2 = math.log(2.0)
ROOT_BITS = 55
"""Bits of the integer square root in :func:`sqrt_of_ratio`: above the 53 of a double, so that
a rounding boundary never falls inside the root's last unit."""


def to_float(value: Ratio | None) -> float | None:
    """The correctly rounded float of an exact ratio, or ``None``."""
    return None if value is None else value[0] / value[1]


def ratio_or_zero(numerator: int, denominator: int) -> Ratio:
    """numerator / denominator, 0 on a zero denominator (per-class P, R, F1)."""
    return (numerator, denominator) if denominator else ZERO


def ratio_sum(values: Sequence[Ratio]) -> Ratio:
    """The exact sum, added in a balanced tree so that the operands grow evenly."""
    terms = list(values) or [ZERO]
    while len(terms) > 1:
        pairs = [
            (a + c, b) if b == d else (a * d + c * b, b * d)
            for (a, b), (c, d) in zip(terms[::2], terms[1::2], strict=False)
        ]
        terms = pairs + terms[len(pairs) * 2 :]
    return terms[0]


def ratio_mean(values: Sequence[Ratio]) -> Ratio:
    numerator, denominator = ratio_sum(values)
    return numerator, denominator * len(values)


def harmonic_of_two(x: Ratio, y: Ratio) -> Ratio:
    """2xy / (x + y), 0 if x + y = 0 (x, y >= 0)."""
    (a, b), (c, d) = x, y
    total = a * d + c * b
    return (2 * a * c, total) if total else ZERO


def sqrt_of_ratio(numerator: int, denominator: int) -> float:
    """sqrt(numerator / denominator), correctly rounded, for ints numerator >= 0, denominator > 0.

    The root of numerator·4^k / denominator is taken in integers with at least 55 bits; an
    inexact root gets a final half unit (a sticky bit), so the one rounding of the int division
    is that of the true root.
    """
    if numerator == 0:
        return 0.0
    shift = max(0, 2 * ROOT_BITS + 1 - (numerator.bit_length() - denominator.bit_length()))
    shift += shift % 2
    scaled, remainder = divmod(numerator << shift, denominator)
    root = math.isqrt(scaled)
    inexact = remainder != 0 or root * root != scaled
    return (2 * root + inexact) / (1 << (shift // 2 + 1))


def signed_sqrt(numerator: int, denominator: int) -> float:
    """sign(numerator)·sqrt(numerator² / denominator): a correlation from its exact terms."""
    root = sqrt_of_ratio(numerator * numerator, denominator)
    return -root if numerator < 0 else root


def log_of_ratio(ratio: Ratio) -> float:
    """ln(numerator / denominator) of a positive exact ratio, a function of its value alone.

    Within the range of normal doubles it is the logarithm of the correctly rounded quotient
    (monotone, and accurate to an absolute 1e-16 even where the logarithm is near 0); beyond
    it, the logarithm of the correctly rounded mantissa in [1, 2] plus e·ln 2, with
    e = floor(log2(ratio)) settled in integers. Neither needs the fraction in lowest terms, so
    no gcd of long integers is taken.
    """
    numerator, denominator = ratio
    try:
        value = numerator / denominator
    except OverflowError:
        value = math.inf
    if sys.float_info.min <= value < math.inf:
        return math.log(value)
    exponent = numerator.bit_length() - denominator.bit_length()  # floor(log2) or one above
    if numerator << max(0, -exponent) < denominator << max(0, exponent):
        exponent -= 1
    mantissa = (numerator << max(0, -exponent)) / (denominator << max(0, exponent))
    return math.log(mantissa) + exponent * LN2


def tree_product(values: Sequence[int]) -> int:
    """The product of ints, multiplied in a balanced tree: long factors multiply far faster
    in pairs of equal length than one by one into a growing product."""
    terms = list(values) or [1]
    while len(terms) > 1:
        terms = [a * b for a, b in zip(terms[::2], terms[1::2], strict=False)] + terms[len(terms) // 2 * 2 :]
    return terms[0]


def ratio_product(values: Sequence[Ratio]) -> Ratio:
    """The exact product, numerators and denominators multiplied apart (not reduced)."""
    return tree_product([a for a, _ in values]), tree_product([b for _, b in values])
