"""Correctly rounded roots of exact rationals (rational.py).

What this proves: the square root behind every MCC and the n-th root behind every geometric
mean of recalls are correctly rounded (checked in exact arithmetic against the midpoints to the
neighbouring doubles), exact on perfect powers, for ratios far beyond the range of doubles, and
the integer n-th root is the floor of the true root.
"""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import rational
from tests.scoring.strategies import PROPERTY


def assert_correctly_rounded_root(value: float, numerator: int, denominator: int, n: int) -> None:
    """``value`` is the double nearest to (numerator/denominator)^(1/n): the true root lies
    between the midpoints to its two neighbours (compared in exact n-th powers)."""
    target = Fraction(numerator, denominator)
    below, above = Fraction(math.nextafter(value, 0.0)), Fraction(math.nextafter(value, math.inf))
    low, high = (below + Fraction(value)) / 2, (Fraction(value) + above) / 2
    assert low**n <= target <= high**n


@PROPERTY
@given(st.integers(min_value=0, max_value=10**40), st.integers(min_value=1, max_value=10**40), st.integers(1, 7))
def test_roots_of_ratios_are_correctly_rounded(numerator: int, denominator: int, n: int) -> None:
    assert_correctly_rounded_root(rational.root_of_ratio(numerator, denominator, n), numerator, denominator, n)


def test_roots_are_exact_on_perfect_powers_and_right_far_beyond_doubles() -> None:
    assert rational.sqrt_of_ratio(9, 4) == 1.5
    assert rational.root_of_ratio(27, 8, 3) == 1.5
    assert rational.root_of_ratio(1, 1, 5) == 1.0
    assert rational.root_of_ratio(0, 5, 3) == 0.0
    for numerator, denominator, n in ((1, 10**300, 2), (10**700, 3, 3), (2, 1, 2), (10**40 + 1, 10**40, 4)):
        value = rational.root_of_ratio(numerator, denominator, n)
        assert_correctly_rounded_root(value, numerator, denominator, n)


@PROPERTY
@given(st.integers(min_value=0, max_value=10**60), st.integers(1, 9))
def test_the_integer_root_is_the_floor_of_the_root(value: int, n: int) -> None:
    root = rational.integer_root(value, n)
    assert root**n <= value < (root + 1) ** n
