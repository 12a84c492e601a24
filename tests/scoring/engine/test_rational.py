"""Exact rationals as int pairs (rational.py): every float they give depends on the value alone.

What this proves: the square root behind every MCC is correctly rounded (checked in exact
arithmetic against the midpoints to the neighbouring doubles), exact on squares and never -0.0;
the logarithm behind every DP and GmacR agrees with a 60-digit decimal logarithm in and far
beyond the range of doubles (ratios up to 10^±700) and is the same double for every
representation of the same ratio; sums, means, products and the harmonic mean of two ratios
equal the same computations in ``Fraction``, and their floats are the correctly rounded ones.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import rational
from tests.scoring.strategies import PROPERTY

# --- the correctly rounded square root -------------------------------------------------------


def assert_correctly_rounded_sqrt(value: float, numerator: int, denominator: int) -> None:
    """``value`` is the double nearest to sqrt(numerator/denominator): the true root lies
    between the midpoints to its two neighbours (compared in exact squares)."""
    target = Fraction(numerator, denominator)
    below, above = Fraction(math.nextafter(value, 0.0)), Fraction(math.nextafter(value, math.inf))
    low, high = (below + Fraction(value)) / 2, (Fraction(value) + above) / 2
    assert low * low <= target <= high * high


@PROPERTY
@given(st.integers(min_value=0, max_value=10**40), st.integers(min_value=1, max_value=10**40))
def test_sqrt_of_ratio_is_correctly_rounded(numerator: int, denominator: int) -> None:
    assert_correctly_rounded_sqrt(rational.sqrt_of_ratio(numerator, denominator), numerator, denominator)


def test_sqrt_of_ratio_is_exact_on_squares_and_tiny_and_huge_ratios() -> None:
    assert rational.sqrt_of_ratio(9, 4) == 1.5
    assert rational.sqrt_of_ratio(1, 1) == 1.0
    assert rational.sqrt_of_ratio(0, 5) == 0.0
    for numerator, denominator in ((1, 10**300), (10**300, 3), (2, 1), (10**40 + 1, 10**40)):
        assert_correctly_rounded_sqrt(rational.sqrt_of_ratio(numerator, denominator), numerator, denominator)
    assert rational.signed_sqrt(-3, 9) == -1.0
    assert math.copysign(1.0, rational.signed_sqrt(0, 9)) == 1.0  # never -0.0


# --- the logarithm of an exact ratio ------------------------------------------------------------


def decimal_ln(numerator: int, denominator: int) -> float:
    with localcontext() as context:
        context.prec = 60
        return float((Decimal(numerator) / Decimal(denominator)).ln())


RATIO_PARTS = st.integers(min_value=1, max_value=10**700)


@PROPERTY
@given(RATIO_PARTS, RATIO_PARTS, st.integers(min_value=1, max_value=10**30))
def test_log_of_ratio_depends_on_the_value_alone(numerator: int, denominator: int, factor: int) -> None:
    """Accurate to rounding in and far beyond the range of doubles (ratios up to 10^±700), and
    the same double for every representation of the same ratio."""
    value = rational.log_of_ratio((numerator, denominator))
    assert value == pytest.approx(decimal_ln(numerator, denominator), rel=1e-14, abs=1e-15)
    assert rational.log_of_ratio((numerator * factor, denominator * factor)) == value


RATIOS = st.lists(
    st.tuples(st.integers(min_value=0, max_value=10**30), st.integers(min_value=1, max_value=10**30)),
    min_size=1,
    max_size=25,
)


@PROPERTY
@given(RATIOS)
def test_sums_means_and_products_are_exact(values: list[tuple[int, int]]) -> None:
    fractions = [Fraction(a, b) for a, b in values]
    total = sum(fractions, Fraction(0))
    assert Fraction(*rational.ratio_sum(values)) == total
    assert rational.to_float(rational.ratio_mean(values)) == float(total / len(values))
    assert Fraction(*rational.ratio_product(values)) == math.prod(fractions)
    first, second = fractions[0], fractions[-1]
    harmonic = 2 * first * second / (first + second) if first + second else Fraction(0)
    assert rational.to_float(rational.harmonic_of_two(values[0], values[-1])) == float(harmonic)


def test_helpers_on_empty_and_zero_input() -> None:
    assert rational.ratio_sum([]) == rational.ZERO
    assert rational.tree_product([]) == 1
    assert rational.ratio_or_zero(3, 0) == rational.ZERO
    assert rational.to_float(None) is None
