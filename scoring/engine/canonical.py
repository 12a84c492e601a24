"""Every value the double nearest to its exact value: the formulas of
:mod:`scoring.engine.metrics` evaluated for one matrix or for a stack of them.

The rule (contract, "correctly rounded, so equal is equal"): a value the product stores, shows
or exports is the double nearest to the exact real value of its formula, rational or not (MCC
and its averages, the geometric mean of recalls, discriminant power, Spearman's rho). Two
values that are equal are therefore the same double and tie, whatever route led to them, and
a value never depends on the order of a file's lines.

Two routes, one formula:

* :func:`exact_values` evaluates a formula in exact arithmetic (:mod:`scoring.engine.exact`)
  and rounds once: what a report stores. The cells are read exactly (counts as ints, soft and
  calibrated masses as the binary fractions they are).
* :class:`StackValues` evaluates it over a stack of matrices (the bootstrap's replicates) in
  pairs of doubles with error bounds (:mod:`scoring.engine.twofold`), and evaluates exactly
  the few values whose rounding the bounds leave open. Both give the same doubles.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cached_property

import numpy as np

from scoring.engine.exact import EXACT, Q, exact_cells, mass, scaled_cells
from scoring.engine.metrics import Quantities, Value, as_matrix
from scoring.engine.twofold import VECTOR, Approx

Formula = Callable[[Quantities], object]


def exact_quantities(cells: np.ndarray) -> Quantities:
    """Quantities of exact cells: Python ints (..., n, n) over a common denominator, which no
    formula sees (they are homogeneous of degree zero)."""
    cells = np.asarray(cells, dtype=object)
    return Quantities(np.moveaxis(cells, (-2, -1), (0, 1)), EXACT)


def exact_values(formula: Formula, quantities: Quantities | None) -> list[Value] | Value:
    """``formula`` of exact quantities, each value rounded once: a float or ``None`` per matrix
    (a list per class for a per-class measure)."""
    if quantities is None:
        return None
    values = EXACT.rounded(formula(quantities))
    return _plain(values)


def rounded(value: object) -> Value:
    """One exact value (:mod:`scoring.engine.exact`) as its nearest double, ``None`` where
    undefined."""
    return _plain(EXACT.rounded(np.asarray(value, dtype=object)))


def rounded_of_integers(function: Callable[..., object], *arrays: np.ndarray) -> np.ndarray:
    """``function(xp, *values)`` of arrays of integers (exact as doubles), elementwise, each value
    correctly rounded: in pairs of doubles, and exactly where their rounding is not decided."""
    approx = function(VECTOR, *(Approx.integers(array) for array in arrays))
    values, undecided = approx.rounded()
    for index in zip(*np.nonzero(undecided), strict=True):
        value = rounded(function(EXACT, *(Q(int(array[index])) for array in arrays)))
        values[index] = np.nan if value is None else value
    return values


def nearest_sums(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The double nearest to the exact sum of ``parts`` (arrays of doubles), elementwise: in
    pairs of doubles, and in fractions where their rounding is not decided."""
    total = Approx(parts[0])
    for part in parts[1:]:
        total = total + Approx(part)
    values, undecided = total.rounded()
    for index in zip(*np.nonzero(undecided), strict=True):
        exact = sum((Fraction(float(part[index])) for part in parts), Fraction(0))
        values[index] = exact.numerator / exact.denominator
    return values


def _plain(values: np.ndarray) -> list | Value:
    if values.ndim == 0:
        return None if np.isnan(values) else float(values)
    return [_plain(value) for value in values]


def integer_weights(shares: Sequence[Fraction]) -> list[int]:
    """The smallest positive ints in the proportions of exact ``shares``: equal shares are all
    1, so a uniform target scales exactly as calibration does."""
    common = math.lcm(*(Fraction(share).denominator for share in shares))
    numerators = [Fraction(share).numerator * (common // Fraction(share).denominator) for share in shares]
    divisor = math.gcd(*numerators)
    return [numerator // divisor for numerator in numerators]


class ExactMatrix:
    """One confusion matrix in exact arithmetic: the masses are ``cells[i][j] / denominator``
    (rows predicted, columns gold, as everywhere)."""

    def __init__(self, cells: list[list[int]], denominator: int = 1) -> None:
        self.cells = [list(row) for row in cells]
        self.denominator = denominator
        self.n = len(self.cells)

    @classmethod
    def of(cls, matrix: np.ndarray | list) -> ExactMatrix:
        """A matrix read exactly: integer cells as they are (any size), float cells as the binary
        fractions they are."""
        if isinstance(matrix, ExactMatrix):
            return matrix
        array = np.asarray(matrix)
        as_matrix(array.astype(np.float64))  # validates shape and values
        cells, denominator = exact_cells(array)
        return cls(cells.tolist(), denominator)

    @cached_property
    def quantities(self) -> Quantities:
        return exact_quantities(np.array(self.cells, dtype=object))

    @cached_property
    def prevalence(self) -> tuple[int, ...]:
        return tuple(sum(column) for column in zip(*self.cells, strict=True))

    @cached_property
    def bias(self) -> tuple[int, ...]:
        return tuple(sum(row) for row in self.cells)

    def scaled_to(self, weights: list[int]) -> ExactMatrix | None:
        """Prevalence scaling to the shares ``weights / sum(weights)`` (paper 000, Eq. 5),
        exactly; ``None`` when a class has no gold item."""
        scaled = scaled_cells(self.cells, weights)
        return None if scaled is None else ExactMatrix(*scaled)

    def calibrated(self) -> ExactMatrix | None:
        """Prevalence calibration (paper 000, Eq. 6): scaling to equal shares."""
        return self.scaled_to([1] * self.n)

    def mass(self, value: int) -> int | float:
        """A sum of cells as a plain number: an int when integral, else its nearest double."""
        return mass(value, self.denominator)

    def floats(self) -> np.ndarray:
        """Each mass as its nearest double."""
        return np.array([[cell / self.denominator for cell in row] for row in self.cells], dtype=np.float64)


def matrix_value(formula: Formula, matrix: np.ndarray | ExactMatrix) -> list[Value] | Value:
    """``formula`` of one matrix, correctly rounded."""
    return exact_values(formula, ExactMatrix.of(matrix).quantities)


class StackValues:
    """Formulas over a stack of matrices (..., n, n) of doubles (counts, or soft masses that are
    exact doubles), raw or scaled to a target class distribution (paper 000, Eq. 5): the shares
    ``weights / sum(weights)``, equal shares (prevalence calibration, Eq. 6) unless given. Each
    value correctly rounded."""

    def __init__(self, matrices: np.ndarray, weights: Sequence[int] | None = None) -> None:
        self.matrices = np.asarray(matrices, dtype=np.float64)
        self.stack_shape = self.matrices.shape[:-2]
        self.n = self.matrices.shape[-1]
        self.weights = [1] * self.n if weights is None else [int(weight) for weight in weights]

    @cached_property
    def _cells(self) -> Approx:
        cells = np.moveaxis(self.matrices, (-2, -1), (0, 1))
        integral = bool(np.all(cells == np.rint(cells))) and (cells.size == 0 or cells.max() < 2.0**53)
        return Approx.integers(cells) if integral else Approx(cells)

    @cached_property
    def scaling_defined(self) -> np.ndarray:
        """Where every class has a gold item, without which no scaling gives it a share."""
        return np.all(self.matrices.sum(axis=-2) > 0, axis=-1)

    @cached_property
    def raw(self) -> Quantities:
        return Quantities(self._cells, VECTOR)

    @cached_property
    def scaled(self) -> Quantities:
        """The scaling up to a factor, which no formula sees: cells m[i, j]·w_j / prevalence(j),
        or, for counts whose products stay exact in doubles, the integers m[i, j]·w_j times the
        product of the other classes' prevalences. Where a class has no gold item the masses are
        garbage, and every value undefined."""
        cells = self._cells
        defined = self.scaling_defined
        prevalence = np.where(defined[..., np.newaxis], self.matrices.sum(axis=-2), 1.0)  # (..., n)
        weights = np.array(self.weights, dtype=np.float64)
        if cells.integer_bound is not None and max(self.weights) < 2**53:
            others = np.stack([np.prod(np.delete(prevalence, j, axis=-1), axis=-1) for j in range(self.n)], axis=-1)
            others = others * weights
            bound = float(others.max(initial=1.0)) * float(self.matrices.sum(axis=(-2, -1)).max(initial=1.0))
            if bound < 2.0**53:
                scaled = self.matrices * others[..., np.newaxis, :]
                return Quantities(Approx.integers(np.moveaxis(scaled, (-2, -1), (0, 1))), VECTOR)
        exact_prevalence = self.raw.prevalence  # sums of cells, exact as pairs
        safe = Approx(
            np.where(defined, exact_prevalence.hi, 1.0),
            np.where(defined, exact_prevalence.lo, 0.0) if np.ndim(exact_prevalence.lo) else 0.0,
            np.where(defined, exact_prevalence.err, 0.0) if np.ndim(exact_prevalence.err) else exact_prevalence.err,
            integer_bound=exact_prevalence.integer_bound,
        )
        shares = [Approx.of(Fraction(weight, max(self.weights))) for weight in self.weights]
        shape = (1, self.n) + (1,) * len(self.stack_shape)  # one share per gold column j
        share = Approx(*(np.reshape([getattr(s, part) for s in shares], shape) for part in ("hi", "lo", "err")))
        return Quantities(cells / safe[np.newaxis] * share, VECTOR)

    def values(self, formula: Formula, *, scaled: bool, label: int | None = None) -> np.ndarray:
        """``formula`` (a metric, or with ``label`` a per-class measure of that class) of every
        matrix, raw or scaled: shape of the stack, NaN where undefined."""
        quantities = self.scaled if scaled else self.raw
        result = quantities.of(formula)
        if label is not None:
            result = result[label]
        values, undecided = result.rounded()
        if scaled:
            values = np.where(self.scaling_defined, values, np.nan)
            undecided = undecided & self.scaling_defined
        for index in zip(*np.nonzero(undecided), strict=True):
            values[index] = self._exact(formula, index, scaled=scaled, label=label)
        return values

    def _exact(self, formula: Formula, index: tuple[int, ...], *, scaled: bool, label: int | None) -> float:
        matrix = ExactMatrix.of(self.matrices[index])
        if scaled:
            matrix = matrix.scaled_to(self.weights)
        value = exact_values(formula, matrix.quantities)
        if label is not None:
            value = value[label]
        return np.nan if value is None else value
