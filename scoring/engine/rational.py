"""Correctly rounded roots of exact rationals, in integer arithmetic.

The exact arithmetic of :mod:`scoring.engine.exact` rounds a square root (an MCC) or an n-th
root (a geometric mean of recalls) of a rational ``numerator / denominator`` with these: the
root of the rational scaled by a power of two is taken in integers with at least 55 bits, and
an inexact root gets a final half unit (a sticky bit), so that the one rounding of the int
division is that of the true root. The result is a function of the ratio's value alone.
"""

from __future__ import annotations

import math

ROOT_BITS = 55
"""Bits of the integer root: above the 53 of a double, so that a rounding boundary never falls
inside the root's last unit."""


def integer_root(value: int, n: int) -> int:
    """floor(value^(1/n)) for an int value >= 0 (Newton's method from above)."""
    if n == 2:
        return math.isqrt(value)
    if value < 2:
        return value
    x = 1 << -(-value.bit_length() // n)
    while True:
        y = ((n - 1) * x + value // x ** (n - 1)) // n
        if y >= x:
            return x
        x = y


def root_of_ratio(numerator: int, denominator: int, n: int) -> float:
    """(numerator / denominator)^(1/n), correctly rounded, for ints numerator >= 0,
    denominator > 0 and n >= 1."""
    if numerator == 0:
        return 0.0
    shift = max(0, n * (ROOT_BITS + 1) - (numerator.bit_length() - denominator.bit_length()))
    shift += -shift % n
    scaled, remainder = divmod(numerator << shift, denominator)
    root = integer_root(scaled, n)
    inexact = remainder != 0 or root**n != scaled
    return (2 * root + inexact) / (1 << (shift // n + 1))


def sqrt_of_ratio(numerator: int, denominator: int) -> float:
    """sqrt(numerator / denominator), correctly rounded."""
    return root_of_ratio(numerator, denominator, 2)
