"""Double-double arithmetic over arrays, each value with a bound on its error: the vectorised
arithmetic of :mod:`scoring.engine.metrics` for stacks of matrices (bootstrap replicates).

Why: a value the product shows must be the double nearest to its exact value (see
:mod:`scoring.engine.canonical`); a double computed in doubles can be a few ulps off, and a
double cannot tell on which side of a rounding boundary the exact value lies. Here each value
is a pair of doubles ``hi + lo`` (about 106 bits; the pair algorithms of Dekker, Knuth and of
Joldes, Muller and Popescu, "Tight and rigorous error bounds for basic building blocks of
double-word arithmetic", ACM TOMS 2017) together with ``err``, a bound on
``|exact - (hi + lo)|``. :meth:`Approx.rounded` then decides the correctly rounded double
wherever the interval ``hi + lo ± err`` lies within one double's rounding interval, and
reports the rest (an exact midpoint, or a value within 2^-90 of one) for exact evaluation.

Bounds: every operation adds ``REL · |result|`` to the propagated error of its operands (the
algorithms' own bounds are below 2^-101.5 relative; ``REL`` is 2^-96), and an operation
whose operands are exact integers small enough to stay exact adds nothing, so counts, sums
of counts and products of two counts carry no error at all and their zero tests are certain.
A zero test that the bound cannot settle (a denominator within its error of 0) marks the
value ``unsure``, which also sends it to exact evaluation. Undefined values are NaN.

Each operation is written here on numpy's arrays, one array per step. Once a process has loaded
the engine's compiled loops (:mod:`scoring.engine.compiled`), the same operations compiled into
one loop each (:mod:`scoring.engine.kernels`) serve its arrays of :data:`KERNEL_SIZE` values or
more, with the same doubles bit for bit.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

from scoring.engine import compiled
from scoring.engine.kernels import (  # Python's functions, applied to arrays
    REL,
    fast_two_sum,
    product_of_pairs,
    quotient_of_pairs,
    sum_of_pairs,
    two_prod,
    two_sum,
)

EXACT_SINGLE = 2.0**53
"""Integers below this are exact in one double."""
EXACT_PAIR = 2.0**104
"""Integers below this are exact as a pair (a double and an integer remainder below 2^52)."""
KERNEL_SIZE = 2**13
"""Once a process has loaded the compiled loops, operations on arrays of at least this many
values run in them: the same doubles, without a pass over memory and an array per step.
Smaller ones stay with numpy's arrays."""


def _large(*operands) -> bool:
    return compiled.loops() is not None and max(np.size(x) for x in operands) >= KERNEL_SIZE


def _compiled(name: str, *operands, flags: tuple[bool, ...] = ()) -> list[np.ndarray]:
    """The compiled loop ``name`` over ``operands`` broadcast to one shape: its outputs in that
    shape. A scalar goes in as one value that every step reads."""
    shapes = {x.shape for x in operands if isinstance(x, np.ndarray) and x.ndim}
    shape = shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(*(np.shape(x) for x in operands))
    flat = [_flat(x, shape) for x in operands]
    return [out.reshape(shape) for out in getattr(compiled.loops(), name)(math.prod(shape), *flat, *flags)]


def _flat(x, shape: tuple[int, ...]) -> np.ndarray:
    if not isinstance(x, np.ndarray) or x.ndim == 0:
        return np.full(1, x, dtype=np.float64)
    return np.ascontiguousarray(x if x.shape == shape else np.broadcast_to(x, shape), dtype=np.float64).reshape(-1)


def _pair_product(a, b):
    return _compiled("products", a, b) if _large(a, b) else two_prod(a, b)


def _is_exact(x: Approx) -> bool:
    return x.integer_bound is not None or (np.ndim(x.err) == 0 and x.err == 0.0)


def _or(a, b):
    if a is None:
        return b
    return a if b is None else a | b


class Approx:
    """Values ``hi + lo`` with ``|exact - (hi + lo)| <= err``, elementwise; NaN where undefined.

    ``lo`` and ``err`` may be the scalar 0.0 (a single double, an exact value).
    ``integer_bound``, when set, says that every value is an exact integer of at most that
    magnitude (so ``err`` is 0). ``unsure`` marks values whose computation met a zero test it
    could not settle.
    """

    __slots__ = ("err", "hi", "integer_bound", "lo", "unsure")
    __array_priority__ = 1000  # a numpy array on the left defers to these operators

    def __init__(self, hi, lo=0.0, err=0.0, *, integer_bound: float | None = None, unsure=None) -> None:
        self.hi = hi
        self.lo = lo
        self.err = err
        self.integer_bound = integer_bound
        self.unsure = unsure

    # --- construction --------------------------------------------------------------------

    @classmethod
    def of(cls, value: object) -> Approx:
        """A Python number, a float array (exact doubles), or an Approx as it is."""
        if isinstance(value, Approx):
            return value
        if isinstance(value, int):
            if abs(value) >= EXACT_SINGLE:
                high = float(value)
                return cls(high, float(value - int(high)), integer_bound=float(abs(value)))
            return cls(float(value), integer_bound=float(abs(value)))
        if isinstance(value, Fraction):
            if value.denominator == 1:
                return cls.of(value.numerator)
            high = float(value)
            rest = value - Fraction(high)
            low = float(rest)
            return cls(high, low, abs(float(rest - Fraction(low))) * 2.0 + 0.0)
        array = np.asarray(value, dtype=np.float64)
        return cls(array)

    @classmethod
    def integers(cls, values: np.ndarray) -> Approx:
        """Exact integers held as doubles (counts)."""
        values = np.asarray(values, dtype=np.float64)
        bound = float(np.abs(values).max()) if values.size else 0.0
        if bound >= EXACT_SINGLE:
            raise ValueError("integers of 2^53 or more are not exact as doubles")
        return cls(values, integer_bound=bound)

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self.hi)

    @property
    def is_single(self) -> bool:
        return isinstance(self.lo, float) and self.lo == 0.0

    def __getitem__(self, index) -> Approx:
        def part(x):
            return x if np.ndim(x) == 0 else x[index]

        return Approx(
            self.hi[index],
            part(self.lo),
            part(self.err),
            integer_bound=self.integer_bound,
            unsure=None if self.unsure is None else part(self.unsure),
        )

    # --- the four operations ---------------------------------------------------------------

    def __neg__(self) -> Approx:
        return Approx(-self.hi, -self.lo, self.err, integer_bound=self.integer_bound, unsure=self.unsure)

    def __add__(self, other: object) -> Approx:
        b = Approx.of(other)
        unsure = _or(self.unsure, b.unsure)
        bound = None
        if self.integer_bound is not None and b.integer_bound is not None:
            bound = self.integer_bound + b.integer_bound
            if bound < EXACT_SINGLE and self.is_single and b.is_single:
                return Approx(self.hi + b.hi, integer_bound=bound, unsure=unsure)
            if bound >= EXACT_PAIR:
                bound = None
        if self.is_single and b.is_single:  # the sum of two doubles is exact as a pair
            s, e = two_sum(self.hi, b.hi)
            return Approx(s, e, self.err + b.err, integer_bound=bound, unsure=unsure)
        operands = (self.hi, self.lo, self.err, b.hi, b.lo, b.err)
        if _large(self.hi, b.hi):
            hi, lo, err = _compiled("add_or_multiply", *operands, flags=(False,))
        else:
            hi, lo, err = sum_of_pairs(*operands)
        if bound is not None:
            return Approx(hi, lo, 0.0, integer_bound=bound, unsure=unsure)
        return Approx(hi, lo, err, unsure=unsure)

    __radd__ = __add__

    def __sub__(self, other: object) -> Approx:
        return self + (-Approx.of(other))

    def __rsub__(self, other: object) -> Approx:
        return Approx.of(other) + (-self)

    def __mul__(self, other: object) -> Approx:
        b = Approx.of(other)
        unsure = _or(self.unsure, b.unsure)
        bound = None
        if self.integer_bound is not None and b.integer_bound is not None:
            bound = self.integer_bound * b.integer_bound
            if bound < EXACT_SINGLE and self.is_single and b.is_single:
                return Approx(self.hi * b.hi, integer_bound=bound, unsure=unsure)
        if self.is_single and b.is_single:  # the product of two doubles is exact as a pair
            p, e = _pair_product(self.hi, b.hi)
            if _is_exact(self) and _is_exact(b):
                exact_bound = bound if bound is not None and bound < EXACT_PAIR else None
                return Approx(p, e, 0.0, integer_bound=exact_bound, unsure=unsure)
            err = np.abs(self.hi) * b.err + np.abs(b.hi) * self.err + self.err * b.err
            return Approx(p, e, err, unsure=unsure)
        operands = (self.hi, self.lo, self.err, b.hi, b.lo, b.err)
        if _large(self.hi, b.hi):
            return Approx(*_compiled("add_or_multiply", *operands, flags=(True,)), unsure=unsure)
        return Approx(*product_of_pairs(*operands), unsure=unsure)

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> Approx:
        b = Approx.of(other)
        unsure = _or(self.unsure, b.unsure)
        operands = (self.hi, self.lo, self.err, b.hi, b.lo, b.err)
        if _large(self.hi, b.hi):
            hi, lo, err, open_sign = _compiled("divide", *operands, flags=(b.is_single,))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                hi, lo, err, b_abs = quotient_of_pairs(*operands, b.is_single)
                open_sign = ~(b_abs > 0) & ~np.isnan(b.hi)
        if not _is_exact(b):
            unsure = _or(unsure, np.broadcast_to(open_sign, np.shape(hi)))
        return Approx(hi, lo, err, unsure=unsure)

    def __rtruediv__(self, other: object) -> Approx:
        return Approx.of(other) / self

    # --- functions ------------------------------------------------------------------------

    def sqrt(self) -> Approx:
        """The square root, for values >= 0 (SQRTDWtoDW)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.sqrt(self.hi)
            p, e = two_prod(s, s)
            r = ((self.hi - p) - e + self.lo) / (2.0 * s)
            r = np.where(s > 0, r, 0.0)
            hi, lo = fast_two_sum(s, r)
            low = np.maximum(self.hi - np.abs(self.lo) - self.err, 0.0)
            # |sqrt(x) - sqrt(y)| <= |x - y| / (sqrt(x) + sqrt(y)), and <= sqrt(|x - y|)
            propagated = np.minimum(self.err / (np.sqrt(low) + s), np.sqrt(self.err))
            propagated = np.where(self.err == 0.0, 0.0, propagated)
        return Approx(hi, lo, propagated + REL * np.abs(hi), unsure=self.unsure)

    def root(self, n: int) -> Approx:
        """The n-th root of values >= 0: a double estimate, then one Newton step in pairs."""
        if n == 1:
            return self
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.power(self.hi, 1.0 / n)
            power = _power(Approx(y), n - 1)  # y^(n-1)
            residual = self - power * Approx(y)  # x - y^n
            step = residual.hi / (n * power.hi)
            step = np.where(y > 0, step, 0.0)
            hi, lo = fast_two_sum(y, step)
            low = np.maximum(self.hi - np.abs(self.lo) - self.err, 0.0)
            # |x^(1/n) - z^(1/n)| <= |x - z|^(1/n), and <= |x - z| / (n z^((n-1)/n)) for z <= x
            propagated = np.minimum(self.err / (n * np.power(low, (n - 1) / n)), np.power(self.err, 1.0 / n))
            propagated = np.where(self.err == 0.0, 0.0, propagated)
        return Approx(hi, lo, propagated + REL * n * np.abs(hi), unsure=_or(self.unsure, residual.unsure))

    def sum(self, axis: int = 0) -> Approx:
        """The sum along ``axis`` (the class axis of per-class values)."""
        parts = [self._take(axis, index) for index in range(self.shape[axis])]
        while len(parts) > 1:
            parts = [a + b for a, b in zip(parts[::2], parts[1::2], strict=False)] + parts[len(parts) // 2 * 2 :]
        return parts[0]

    def prod(self, axis: int = 0) -> Approx:
        """The product along ``axis``."""
        result = self._take(axis, 0)
        for index in range(1, self.shape[axis]):
            result = result * self._take(axis, index)
        return result

    def _take(self, axis: int, index: int) -> Approx:
        return self[(slice(None),) * axis + (index,)]

    # --- decisions ------------------------------------------------------------------------

    def zero(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Where the value is exactly 0, and where that cannot be told (or ``None``)."""
        if self.integer_bound is not None or (np.ndim(self.err) == 0 and self.err == 0.0):
            return (self.hi == 0) & (self.lo == 0), self.unsure
        zero = (self.hi == 0) & (self.lo == 0) & (self.err == 0)
        known = zero | (np.abs(self.hi) - np.abs(self.lo) > self.err) | np.isnan(self.hi)
        return zero, _or(self.unsure, ~known)

    def rounded(self) -> tuple[np.ndarray, np.ndarray]:
        """The correctly rounded doubles (NaN where undefined) and where they could not be
        decided (exact evaluation needed)."""
        if _large(self.hi):
            values, undecided = _compiled("rounded", self.hi, self.lo, self.err)
        else:
            hi, lo = fast_two_sum(self.hi, self.lo)
            with np.errstate(invalid="ignore"):
                up = np.nextafter(hi, np.inf) - hi
                down = hi - np.nextafter(hi, -np.inf)
                decided = (lo + self.err < up / 2) & (lo - self.err > -down / 2)
            undefined = np.isnan(hi)
            values, undecided = np.where(undefined, np.nan, hi), ~decided & ~undefined
        if self.unsure is not None:
            undecided = undecided | self.unsure
        return values, undecided


def log_of_ratio(num: Approx, den: Approx) -> Approx:
    """ln(num / den) for values > 0: ln 2^k + ln c + 2 atanh(s), s = (y - c)/(y + c), with
    y = num / (den 2^k) in [1/√2, √2) and c the nearest point 1 + j/256 of a table whose
    logarithms are exact pairs, so that the series needs four terms. s is computed from num and
    den themselves, (num/2^k - c den) / (num/2^k + c den): near 1 every digit is kept."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        m, k = np.frexp(num.hi / den.hi)
        k = np.where(m < _INV_SQRT2, k - 1, k)
        k = np.where(np.isfinite(m), k, 0)
        scale = Approx(np.ldexp(1.0, -k))
        y = num * scale
        steps = np.rint((y.hi / den.hi - 1.0) * _TABLE_STEPS)
        steps = np.clip(np.where(np.isfinite(steps), steps, 0.0), _TABLE_FIRST, _TABLE_LAST)
        c = Approx(1.0 + steps / _TABLE_STEPS)  # exact: a multiple of 1/256 near 1
        index = (steps - _TABLE_FIRST).astype(np.intp)
        table_hi, table_lo = _log_table()
        scaled_den = den * c
        s = (y - scaled_den) / (y + scaled_den)
        s2 = s * s
        s3 = s * s2
        tail = s2.hi * (0.4 + s2.hi * (2.0 / 7.0 + s2.hi * (2.0 / 9.0 + s2.hi * (2.0 / 11.0))))
        series = 2 * s + s3 * Approx(_TWO_THIRDS_HI, _TWO_THIRDS_LO) + Approx(s3.hi * tail)
        total = Approx(k.astype(np.float64)) * Approx(_LN2_HI, _LN2_LO) + Approx(table_hi[index], table_lo[index])
        total = total + series
        magnitude = np.abs(k) * _LN2_HI + np.abs(table_hi[index]) + 2.0 * np.abs(s.hi)
        err = series.err + REL * 16.0 * magnitude
    return Approx(total.hi, total.lo, err, unsure=_or(total.unsure, ~np.isfinite(err) & np.isfinite(total.hi)))


def _select(mask: np.ndarray, a: Approx, b: Approx) -> Approx:
    """``a`` where ``mask``, else ``b``."""
    a, b = Approx.of(a), Approx.of(b)
    shape = np.broadcast_shapes(np.shape(mask), np.shape(a.hi), np.shape(b.hi))

    def pick(x, y):
        if np.ndim(x) == 0 and np.ndim(y) == 0 and x == y:
            return x
        return np.where(mask, x, y)

    unsure = None
    if a.unsure is not None or b.unsure is not None:
        unsure = np.where(
            mask,
            np.broadcast_to(a.unsure if a.unsure is not None else False, shape),
            np.broadcast_to(b.unsure if b.unsure is not None else False, shape),
        )
    bound = None if a.integer_bound is None or b.integer_bound is None else max(a.integer_bound, b.integer_bound)
    return Approx(np.where(mask, a.hi, b.hi), pick(a.lo, b.lo), pick(a.err, b.err), integer_bound=bound, unsure=unsure)


def _precise():
    """An mpmath context of its own at 200 bits: mpmath's global precision (``workprec``) is
    shared by every thread, and the bootstrap evaluates its blocks on several."""
    import mpmath

    context = mpmath.MPContext()
    context.prec = 200
    return context


@cache
def _dp_factor() -> Approx:
    """√3/π as a pair (its error below 2^-150)."""
    mp = _precise()
    value = mp.sqrt(3) / mp.pi
    hi = float(value)
    lo = float(value - mp.mpf(hi))
    return Approx(hi, lo, 2.0**-150)


class VectorArithmetic:
    """The arithmetic of :mod:`scoring.engine.metrics` on :class:`Approx` arrays."""

    name = "vector"

    @staticmethod
    def _ratio(num, den, when_zero: float) -> Approx:
        num, den = Approx.of(num), Approx.of(den)
        zero, unsure = den.zero()
        safe = _select(zero, Approx(1.0, integer_bound=1.0), den)
        quotient = num / safe
        result = _select(zero, Approx(when_zero), quotient)
        result.unsure = _or(result.unsure, unsure)
        return result

    def ratio_or_zero(self, num, den) -> Approx:
        return self._ratio(num, den, 0.0)

    def ratio_or_undefined(self, num, den) -> Approx:
        return self._ratio(num, den, np.nan)

    @staticmethod
    def sqrt(values: Approx) -> Approx:
        return values.sqrt()

    @staticmethod
    def root(values: Approx, n: int) -> Approx:
        return values.root(n)

    @staticmethod
    def dp_of_ratio(num: Approx, den: Approx) -> Approx:
        num_zero, num_unsure = num.zero()
        den_zero, den_unsure = den.zero()
        undefined = num_zero | den_zero
        one = Approx(1.0, integer_bound=1.0)
        value = log_of_ratio(_select(undefined, one, num), _select(undefined, one, den)) * _dp_factor()
        result = _select(undefined, Approx(np.nan), value)
        result.unsure = _or(result.unsure, _or(num_unsure, den_unsure))
        return result

    @staticmethod
    def zero_where(test: Approx, values: Approx) -> Approx:
        zero, unsure = Approx.of(test).zero()
        result = _select(zero, Approx(0.0, integer_bound=0.0), values)
        result.unsure = _or(result.unsure, unsure)
        return result

    @staticmethod
    def any_zero(values: Approx) -> Approx:
        zero, unsure = values.zero()
        any_zero = zero.any(axis=0)
        unsure = None if unsure is None else unsure.any(axis=0)
        return Approx(np.where(any_zero, 0.0, 1.0), integer_bound=1.0, unsure=unsure)

    @staticmethod
    def constant(value: object) -> Approx:
        return Approx.of(value)

    @staticmethod
    def integers(values: np.ndarray) -> Approx:
        """An array of integer constants, exact."""
        return Approx.integers(values)

    @staticmethod
    def rounded(values: Approx) -> tuple[np.ndarray, np.ndarray]:
        return values.rounded()


VECTOR = VectorArithmetic()


def _power(x: Approx, n: int) -> Approx:
    result = Approx(np.ones_like(x.hi))
    base = x
    while n:
        if n & 1:
            result = result * base
        n >>= 1
        if n:
            base = base * base
    return result


_INV_SQRT2 = 1 / math.sqrt(2)
_TABLE_STEPS = 256.0
"""The table's points are 1 + j/256 for the j that reach [1/√2, √2]: 1 itself among them, so
that ln 1 is exactly 0 and a value near 1 keeps every digit of its logarithm."""
_TABLE_FIRST = math.floor((_INV_SQRT2 - 1.0) * _TABLE_STEPS) - 1
_TABLE_LAST = math.ceil((math.sqrt(2) - 1.0) * _TABLE_STEPS) + 1
_LN2_HI = 0.6931471805599453
_LN2_LO = 2.3190468138462996e-17
_TWO_THIRDS_HI = 0.6666666666666666
_TWO_THIRDS_LO = 3.700743415417188e-17


@cache
def _log_table() -> tuple[np.ndarray, np.ndarray]:
    """ln c for the table's points c, each as an exact pair (hi, lo) of its value to 106 bits."""
    mp = _precise()
    points = 1.0 + np.arange(_TABLE_FIRST, _TABLE_LAST + 1) / _TABLE_STEPS
    hi = np.empty(len(points))
    lo = np.empty(len(points))
    for index, point in enumerate(points):
        value = mp.log(mp.mpf(float(point)))
        hi[index] = float(value)
        lo[index] = float(value - mp.mpf(hi[index]))
    return hi, lo
