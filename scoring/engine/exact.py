"""Exact real numbers for the metric formulas, and the double nearest to each.

The formulas of :mod:`scoring.engine.metrics` are written once, for an arithmetic given to
them; this module is the exact one (the other is :mod:`scoring.engine.twofold`). Its numbers:

* :class:`Q`, a rational as a pair of Python ints (never reduced: a gcd of the long integers of
  a calibrated soft matrix costs milliseconds, and Python's int division rounds correctly
  whatever the representation);
* :class:`Surds`, a rational plus a sum of rational multiples of square roots (MCC and its
  averages), kept in a canonical form: two roots whose ratio is rational are one term, so the
  terms left are linearly independent over the rationals and the value is 0, or rational,
  exactly when it looks so;
* :class:`Logs`, a rational multiple of √3/π times a sum of logarithms of rationals
  (discriminant power and its averages), the logarithms of one coefficient held as the
  logarithm of their product, so that ln a + ln b = ln ab exactly;
* :class:`Root`, the n-th root of a rational (the geometric mean of recalls), and
  :class:`Roots`, a rational plus a sum of rational multiples of such roots (a mean of geometric
  means, one an output of a task with several).

Rounding (:meth:`rounded`): a rational by one int division; one square root or one n-th root
by an integer root with a sticky bit (:mod:`scoring.engine.rational`); anything else by Ziv's
strategy: interval arithmetic (mpmath's ``iv``) at increasing precision until both ends of the
interval round to the same double. Irrational values are never midpoints of two doubles, so
this ends; it is bounded at :data:`MAX_PRECISION` bits (then the nearest double of the
interval's centre, a case no input of the product reaches).

Undefined values are :data:`UNDEFINED`, which absorbs every operation.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from scoring.engine.rational import integer_root, root_of_ratio, sqrt_of_ratio

START_PRECISION = 96
MAX_PRECISION = 8192


class _Undefined:
    """An undefined value (0/0 where the papers define nothing, the logarithm of 0)."""

    __slots__ = ()

    def _absorb(self, *_: object) -> _Undefined:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _absorb
    __neg__ = _absorb

    def __repr__(self) -> str:
        return "UNDEFINED"

    def rounded(self) -> None:
        return None


UNDEFINED = _Undefined()


class Q:
    """An exact rational ``num / den`` (``den > 0``), not reduced."""

    __slots__ = ("den", "num")

    def __init__(self, num: int, den: int = 1) -> None:
        self.num = num
        self.den = den

    @staticmethod
    def of(value: object) -> Q:
        if isinstance(value, Q):
            return value
        if isinstance(value, int):
            return Q(value)
        fraction = Fraction(value)
        return Q(fraction.numerator, fraction.denominator)

    def is_zero(self) -> bool:
        return self.num == 0

    def __add__(self, other: object):
        if not isinstance(other, Q | int):
            return NotImplemented if not isinstance(other, _Undefined) else other
        b = Q.of(other)
        if self.den == b.den:
            return Q(self.num + b.num, self.den)
        return Q(self.num * b.den + b.num * self.den, self.den * b.den)

    __radd__ = __add__

    def __neg__(self) -> Q:
        return Q(-self.num, self.den)

    def __sub__(self, other: object):
        return self + (-other)

    def __rsub__(self, other: object):
        return (-self) + other

    def __mul__(self, other: object):
        if not isinstance(other, Q | int):
            return NotImplemented if not isinstance(other, _Undefined) else other
        b = Q.of(other)
        return Q(self.num * b.num, self.den * b.den)

    __rmul__ = __mul__

    def __truediv__(self, other: object):
        if not isinstance(other, Q | int):
            return NotImplemented if not isinstance(other, _Undefined) else other
        b = Q.of(other)
        if b.num == 0:
            raise ZeroDivisionError("an exact division by 0 (the formula should have tested it)")
        sign = -1 if b.num < 0 else 1
        return Q(sign * self.num * b.den, sign * b.num * self.den)

    def __rtruediv__(self, other: object):
        return Q.of(other) / self

    def __repr__(self) -> str:
        return f"Q({self.num}, {self.den})"

    def interval(self, iv):
        return iv.mpf(self.num) / iv.mpf(self.den)

    def rounded(self) -> float:
        return self.num / self.den


def _reduced(num: int, den: int) -> tuple[int, int]:
    divisor = math.gcd(num, den)
    return num // divisor, den // divisor


class Surds:
    """``rational + sum_r coefficient(r)·√r`` over positive non-square integers ``r`` whose
    pairwise products are not squares (a canonical form: see the module docstring)."""

    __slots__ = ("rational", "terms")

    def __init__(self, rational: Q, terms: dict[int, Q]) -> None:
        self.rational = rational
        self.terms = terms

    @staticmethod
    def sqrt(value: Q):
        """√value for a rational value >= 0: a rational when it is a square."""
        num, den = _reduced(value.num, value.den)
        radicand = num * den  # √(num/den) = √(num·den) / den
        root = math.isqrt(radicand)
        if root * root == radicand:
            return Q(root, den)
        return Surds(Q(0), {radicand: Q(1, den)})

    @staticmethod
    def of(value: object) -> Surds:
        return value if isinstance(value, Surds) else Surds(Q.of(value), {})

    def is_zero(self) -> bool:
        return False  # a rational when 0: see simplified

    def simplified(self):
        """A rational when no root term is left."""
        return self.rational if not self.terms else self

    def __add__(self, other: object):
        if isinstance(other, _Undefined):
            return other
        if not isinstance(other, Surds | Q | int):
            return NotImplemented
        b = Surds.of(other)
        terms = dict(self.terms)
        for radicand, coefficient in b.terms.items():
            _add_root(terms, radicand, coefficient)
        return Surds(self.rational + b.rational, {r: c for r, c in terms.items() if not c.is_zero()}).simplified()

    __radd__ = __add__

    def __neg__(self) -> Surds:
        return Surds(-self.rational, {r: -c for r, c in self.terms.items()})

    def __sub__(self, other: object):
        return self + (-other)

    def __rsub__(self, other: object):
        return (-self) + other

    def __mul__(self, other: object):
        if isinstance(other, _Undefined):
            return other
        if not isinstance(other, Q | int):
            return NotImplemented
        b = Q.of(other)
        return Surds(self.rational * b, {r: c * b for r, c in self.terms.items() if not b.is_zero()}).simplified()

    __rmul__ = __mul__

    def __truediv__(self, other: object):
        if isinstance(other, _Undefined):
            return other
        if not isinstance(other, Q | int):
            return NotImplemented
        return self * (Q(1) / Q.of(other))

    def __rtruediv__(self, other: object):
        """A rational over one root: q / (c√r) = q√r / (c r)."""
        if self.rational.num != 0 or len(self.terms) != 1:
            raise TypeError("only a single root can divide")
        ((radicand, coefficient),) = self.terms.items()
        return Surds(Q(0), {radicand: Q.of(other) / (coefficient * radicand)})

    def interval(self, iv):
        total = self.rational.interval(iv)
        for radicand, coefficient in self.terms.items():
            total = total + coefficient.interval(iv) * iv.sqrt(iv.mpf(radicand))
        return total

    def rounded(self) -> float:
        if not self.terms:
            return self.rational.rounded()
        if self.rational.num == 0 and len(self.terms) == 1:
            ((radicand, c),) = self.terms.items()
            root = sqrt_of_ratio(c.num * c.num * radicand, c.den * c.den)
            return -root if c.num < 0 else root
        return ziv(self)


def _add_root(terms: dict[int, Q], radicand: int, coefficient: Q) -> None:
    """Add coefficient·√radicand to ``terms``, into a term whose root has a rational ratio to
    it when there is one: √a = √(a b) / b · ... with √(a b) an integer when a b is a square."""
    for existing in terms:
        product = existing * radicand
        root = math.isqrt(product)
        if root * root == product:  # √radicand = (root / existing)·√existing
            terms[existing] = terms[existing] + coefficient * Q(root, existing)
            return
    terms[radicand] = coefficient


class Logs:
    """``rational + (√3/π)·sum_c c·ln(argument(c))``: a discriminant power or a mean of them.
    The logarithms of one coefficient are held as the logarithm of their product."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict[tuple[int, int], Q]) -> None:
        self.terms = terms
        """(reduced coefficient) → the argument, a positive rational."""

    @staticmethod
    def dp_of_ratio(value: Q):
        """(√3/π)·ln(value) for a rational value > 0; 0 when the value is 1."""
        if value.num == value.den:
            return Q(0)
        return Logs({(1, 1): value})

    def is_zero(self) -> bool:
        return False

    def _scaled(self, factor: Q) -> Logs:
        out: dict[tuple[int, int], Q] = {}
        for (num, den), argument in self.terms.items():
            out[_reduced(num * factor.num, den * factor.den)] = argument
        return Logs(out)

    def __add__(self, other: object):
        if isinstance(other, _Undefined):
            return other
        if isinstance(other, Q | int) and Q.of(other).is_zero():
            return self
        if not isinstance(other, Logs):
            return NotImplemented
        terms = dict(self.terms)
        for coefficient, argument in other.terms.items():
            terms[coefficient] = terms[coefficient] * argument if coefficient in terms else argument
        terms = {c: a for c, a in terms.items() if a.num != a.den}
        return Logs(terms) if terms else Q(0)

    __radd__ = __add__

    def __neg__(self) -> Logs:
        return self._scaled(Q(-1))

    def __mul__(self, other: object):
        if isinstance(other, _Undefined):
            return other
        if not isinstance(other, Q | int):
            return NotImplemented
        factor = Q.of(other)
        return Q(0) if factor.is_zero() else self._scaled(factor)

    __rmul__ = __mul__

    def __truediv__(self, other: object):
        if isinstance(other, _Undefined):
            return other
        return self * (Q(1) / Q.of(other))

    def interval(self, iv):
        total = iv.mpf(0)
        for (num, den), argument in self.terms.items():
            total = total + iv.mpf(num) / iv.mpf(den) * iv.log(argument.interval(iv))
        return total * iv.sqrt(iv.mpf(3)) / iv.pi

    def closeness_bits(self) -> int:
        """How many leading bits of an argument are those of 1 (its logarithm is that small)."""
        bits = 0
        for argument in self.terms.values():
            difference = abs(argument.num - argument.den)
            bits = max(bits, argument.den.bit_length() - difference.bit_length())
        return bits

    def rounded(self) -> float:
        return ziv(self, start=START_PRECISION + self.closeness_bits())


class Root:
    """The n-th root of a rational >= 0."""

    __slots__ = ("n", "value")

    def __init__(self, value: Q, n: int) -> None:
        self.value = value
        self.n = n

    def interval(self, iv):
        return _root_interval(self.value, self.n, iv)

    def rounded(self) -> float:
        return root_of_ratio(self.value.num, self.value.den, self.n)

    def __add__(self, other: object):
        return Roots.of(self) + other

    __radd__ = __add__

    def __mul__(self, other: object):
        return Roots.of(self) * other

    __rmul__ = __mul__

    def __truediv__(self, other: object):
        return Roots.of(self) / other


def _root_interval(value: Q, n: int, iv):
    """An interval holding value^(1/n), 2^-p wide at the context's precision p (integer roots of
    the value scaled by 2^(n p), rounded down: the root lies between r and r + 1 over 2^p)."""
    bits = iv.prec + 2
    low = integer_root((value.num << (n * bits)) // value.den, n)
    return iv.mpf([low, low + 1]) / iv.mpf(2) ** bits


class Roots:
    """``rational + sum_t coefficient(t)·value(t)^(1/n(t))`` over irrational roots: a mean of
    geometric means of recalls (one an output of a task with several). A root whose value is a
    rational's n-th power is that rational; the terms left are irrational and their
    coefficients are positive in every sum the formulas make, so the value is irrational and
    Ziv's rounding ends."""

    __slots__ = ("rational", "terms")

    def __init__(self, rational: Q, terms: dict[tuple[int, int, int], Q]) -> None:
        self.rational = rational
        self.terms = terms

    @staticmethod
    def of(value: object) -> Roots:
        if isinstance(value, Roots):
            return value
        if isinstance(value, Root):
            num, den = _reduced(value.value.num, value.value.den)
            top, bottom = integer_root(num, value.n), integer_root(den, value.n)
            if top**value.n == num and bottom**value.n == den:
                return Roots(Q(top, bottom), {})
            return Roots(Q(0), {(num, den, value.n): Q(1)})
        return Roots(Q.of(value), {})

    def simplified(self):
        return self.rational if not self.terms else self

    def __add__(self, other: object):
        if isinstance(other, _Undefined):
            return other
        if not isinstance(other, Roots | Root | Q | int):
            return NotImplemented
        b = Roots.of(other)
        terms = dict(self.terms)
        for key, coefficient in b.terms.items():
            terms[key] = terms[key] + coefficient if key in terms else coefficient
        return Roots(self.rational + b.rational, terms).simplified()

    __radd__ = __add__

    def __mul__(self, other: object):
        if isinstance(other, _Undefined):
            return other
        if not isinstance(other, Q | int):
            return NotImplemented
        factor = Q.of(other)
        if factor.is_zero():
            return Q(0)
        return Roots(self.rational * factor, {key: c * factor for key, c in self.terms.items()}).simplified()

    __rmul__ = __mul__

    def __truediv__(self, other: object):
        if isinstance(other, _Undefined):
            return other
        return self * (Q(1) / Q.of(other))

    def interval(self, iv):
        total = self.rational.interval(iv)
        for (num, den, n), coefficient in self.terms.items():
            total = total + coefficient.interval(iv) * _root_interval(Q(num, den), n, iv)
        return total

    def rounded(self) -> float:
        if not self.terms:
            return self.rational.rounded()
        if self.rational.is_zero() and len(self.terms) == 1:
            (((num, den, n), coefficient),) = self.terms.items()
            if coefficient.num == coefficient.den:
                return root_of_ratio(num, den, n)
        return ziv(self)


Real = Q | Surds | Logs | Root | Roots | _Undefined


def ziv(value: Surds | Logs | Roots, *, start: int = START_PRECISION) -> float:
    """The double nearest to ``value``: intervals at increasing precision until both ends round
    to the same double (see the module docstring)."""
    from mpmath.libmp import to_rational

    iv = _interval_context()
    prec = start
    while True:
        iv.prec = prec
        low, high = value.interval(iv)._mpi_
        ends = [_nearest_double(to_rational(end)) for end in (low, high)]
        if ends[0] == ends[1] or prec >= MAX_PRECISION:
            return ends[0] if ends[0] == ends[1] else _nearest_double(_centre(low, high))
        prec *= 2


_THREAD = threading.local()


def _interval_context():
    """An interval context of this thread's own (its precision is its state)."""
    context = getattr(_THREAD, "context", None)
    if context is None:
        from mpmath.ctx_iv import MPIntervalContext

        context = _THREAD.context = MPIntervalContext()
    return context


def _nearest_double(ratio: tuple[int, int]) -> float:
    num, den = ratio
    return num / den


def _centre(low: tuple, high: tuple) -> tuple[int, int]:
    from mpmath.libmp import to_rational

    (a, b), (c, d) = to_rational(low), to_rational(high)
    return a * d + c * b, 2 * b * d


# --- the arithmetic the formulas call ---------------------------------------------------------


def _elementwise(function, *arrays):
    return np.frompyfunc(function, len(arrays), 1)(*arrays)


def _zero(value: object) -> bool:
    """Whether an exact value is 0: counts are plain ints, other values :class:`Q` and the rest."""
    return value == 0 if isinstance(value, int) else value.is_zero()


def _ratio_or(num, den, when_zero):
    return when_zero if _zero(den) else Q.of(num) / den


def _absorbs(*values: object) -> bool:
    return any(isinstance(value, _Undefined) for value in values)


class ExactArithmetic:
    """The exact arithmetic for :mod:`scoring.engine.metrics`: values are numpy object arrays,
    class first, of Python ints (counts and other sums of cells) and of the numbers above."""

    name = "exact"

    @staticmethod
    def ratio_or_zero(num, den):
        return _elementwise(lambda a, b: _ratio_or(a, b, Q(0)), num, den)

    @staticmethod
    def ratio_or_undefined(num, den):
        return _elementwise(lambda a, b: _ratio_or(a, b, UNDEFINED), num, den)

    @staticmethod
    def sqrt(values):
        return _elementwise(lambda v: v if _absorbs(v) else Surds.sqrt(Q.of(v)), values)

    @staticmethod
    def dp_of_ratio(num, den):
        """(√3/π)·ln(num/den); undefined where num or den is 0."""

        def one(a, b):
            if _absorbs(a, b) or _zero(a) or _zero(b):
                return UNDEFINED
            return Logs.dp_of_ratio(Q.of(a) / b)

        return _elementwise(one, num, den)

    @staticmethod
    def root(values, n: int):
        return _elementwise(lambda v: v if _absorbs(v) else Root(Q.of(v), n), values)

    @staticmethod
    def zero_where(test, values):
        """``values``, but 0 where ``test`` is 0 (``test`` broadcast against ``values``)."""
        return _elementwise(lambda t, v: Q(0) if _zero(t) else v, test, values)

    @staticmethod
    def any_zero(values):
        """Per matrix: whether any class's value (axis 0) is 0, as a value that is 0 there."""
        return _elementwise(lambda *vs: 0 if any(_zero(v) for v in vs) else 1, *values)

    @staticmethod
    def constant(value: object):
        return Q.of(value)

    @staticmethod
    def integers(values: np.ndarray) -> np.ndarray:
        """An array of integer constants, as Python ints."""
        return np.asarray(values).astype(object)

    @staticmethod
    def rounded(values) -> np.ndarray:
        """The doubles nearest to ``values``; NaN where undefined."""
        out = np.frompyfunc(lambda v: float(v) if isinstance(v, int) else v.rounded(), 1, 1)(values)
        return np.asarray(np.where(np.equal(out, None), np.nan, out), dtype=np.float64)


EXACT = ExactArithmetic()


def exact_cells(matrices: np.ndarray) -> tuple[np.ndarray, int]:
    """Cells (..., n, n) as Python ints over one common denominator: integer arrays as they
    are, float cells as the binary fractions they are (their denominators are powers of two, so
    the largest is a multiple of all)."""
    array = np.asarray(matrices)
    if np.issubdtype(array.dtype, np.integer) or array.dtype == object:
        return np.vectorize(int, otypes=[object])(array), 1
    ratios = [x.as_integer_ratio() for x in array.ravel().tolist()]
    denominator = max((d for _, d in ratios), default=1)
    cells = np.empty(len(ratios), dtype=object)
    cells[:] = [n * (denominator // d) for n, d in ratios]
    return cells.reshape(array.shape), denominator


def mass(value: int, denominator: int) -> int | float:
    """A sum of cells as a plain number: an int when integral, else its correctly rounded float."""
    whole, rest = divmod(value, denominator)
    return whole if rest == 0 else value / denominator


def scaled_cells(cells: Sequence[Sequence[int]], weights: Sequence[int]) -> tuple[list[list[int]], int] | None:
    """Prevalence scaling to the class shares ``weights / sum(weights)`` (paper 000, Eq. 5) in
    exact integers: column ``j`` times ``weights[j]·L / prevalence(j)``, ``L`` the lcm of the
    prevalences; the masses are the cells over ``L·sum(weights)``. ``None`` when a class has no
    gold item, which no scaling can give a share."""
    prevalence = [sum(column) for column in zip(*cells, strict=True)]
    if not all(prevalence):
        return None
    common = math.lcm(*prevalence)
    factors = [w * (common // p) for w, p in zip(weights, prevalence, strict=True)]
    return [[x * f for x, f in zip(row, factors, strict=True)] for row in cells], sum(weights) * common
