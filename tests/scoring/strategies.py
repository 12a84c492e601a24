"""Hypothesis strategies and small matrix helpers shared by the scoring tests.

Every matrix follows the product's orientation: ``m[i, j]`` is the mass of items predicted
``i`` whose gold label is ``j`` (rows = predictions, columns = gold). The helpers here are
written from the papers' definitions and never call the engine, so a test that compares the
engine with them compares two independent computations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Settings of every property test: enough examples to find edge cases, no per-example deadline."""

MAX_N = 6
"""Largest number of classes drawn; the properties do not depend on size, the run time does."""

REL_TOL = 1e-9
ABS_TOL = 1e-12

_COUNTS = st.integers(min_value=0, max_value=40)
# Masses are 0 or at least 1e-3, so that products and sums of a matrix neither underflow nor
# lose a cell entirely next to a large one: properties are then exact up to rounding.
_MASSES = st.one_of(st.just(0.0), st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False))


def class_counts(*, min_n: int = 1, max_n: int = MAX_N) -> st.SearchStrategy[int]:
    return st.integers(min_value=min_n, max_value=max_n)


@st.composite
def count_matrices(draw: st.DrawFn, *, min_n: int = 1, max_n: int = MAX_N) -> np.ndarray:
    """Integer count matrices; hypothesis's array filling makes zero cells, rows and columns common."""
    n = draw(class_counts(min_n=min_n, max_n=max_n))
    return draw(arrays(np.int64, (n, n), elements=_COUNTS))


@st.composite
def float_matrices(draw: st.DrawFn, *, min_n: int = 1, max_n: int = MAX_N) -> np.ndarray:
    """Non-negative float matrices, as soft (probability) and calibrated matrices are."""
    n = draw(class_counts(min_n=min_n, max_n=max_n))
    return draw(arrays(np.float64, (n, n), elements=_MASSES))


@st.composite
def special_matrices(draw: st.DrawFn, *, min_n: int = 1, max_n: int = MAX_N) -> np.ndarray:
    """The corner cases: all right, all wrong, one predicted class, one gold class, all zero."""
    n = draw(class_counts(min_n=min_n, max_n=max_n))
    values = draw(arrays(np.int64, (n, n), elements=st.integers(min_value=1, max_value=40)))
    index = draw(st.integers(min_value=0, max_value=n - 1))
    only = np.zeros((n, n), dtype=bool)
    kind = draw(st.sampled_from(["diagonal", "hollow", "one row", "one column", "zero"]))
    if kind == "diagonal":
        only = np.eye(n, dtype=bool)
    elif kind == "hollow":
        only = ~np.eye(n, dtype=bool)
    elif kind == "one row":
        only[index, :] = True
    elif kind == "one column":
        only[:, index] = True
    return np.where(only, values, 0)


def matrices(*, min_n: int = 1, max_n: int = MAX_N) -> st.SearchStrategy[np.ndarray]:
    """Any non-negative square matrix the engine must accept."""
    return st.one_of(
        count_matrices(min_n=min_n, max_n=max_n),
        float_matrices(min_n=min_n, max_n=max_n),
        special_matrices(min_n=min_n, max_n=max_n),
    )


@st.composite
def supported_matrices(draw: st.DrawFn, *, min_n: int = 1, max_n: int = MAX_N, floats: bool = False) -> np.ndarray:
    """Matrices in which every class has gold mass (every column sum > 0), so calibration exists."""
    n = draw(class_counts(min_n=min_n, max_n=max_n))
    m = draw(arrays(np.float64 if floats else np.int64, (n, n), elements=_MASSES if floats else _COUNTS))
    rows = draw(arrays(np.int64, (n,), elements=st.integers(min_value=0, max_value=n - 1)))
    empty = m.sum(axis=0) == 0
    m[rows[empty], np.flatnonzero(empty)] = 1
    return m


def positive_scales(n: int) -> st.SearchStrategy[np.ndarray]:
    """Column scales lambda for prevalence scaling (paper 000, Eq. 5)."""
    return arrays(np.float64, (n,), elements=st.floats(min_value=1e-2, max_value=1e2))


def distributions(n: int, *, positive: bool = True) -> st.SearchStrategy[np.ndarray]:
    """Probability vectors of length n (all entries > 0 when ``positive``)."""
    weight = st.floats(min_value=1e-2, max_value=1.0)
    weights = arrays(np.float64, (n,), elements=weight if positive else st.one_of(st.just(0.0), weight))
    return weights.filter(lambda w: w.sum() > 0).map(lambda w: w / w.sum())


def scale_columns(m: np.ndarray, scales: Sequence[float]) -> np.ndarray:
    """m lambda with lambda = diag(scales), written out (paper 000, Eq. 5)."""
    return np.asarray(m, dtype=np.float64) * np.asarray(scales, dtype=np.float64)[np.newaxis, :]


def permute_classes(m: np.ndarray, order: Sequence[int]) -> np.ndarray:
    """The same matrix with its classes renamed: one permutation on rows and columns."""
    return np.asarray(m)[np.ix_(order, order)]


def matrix_from_pairs(predicted: Sequence[int], gold: Sequence[int], n: int) -> np.ndarray:
    """The count matrix of label pairs, counted one item at a time."""
    m = np.zeros((n, n), dtype=np.int64)
    for i, j in zip(predicted, gold, strict=True):
        m[i, j] += 1
    return m


def labels_from_matrix(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One (predicted, gold) code pair per item of an integer count matrix, in a shuffled order."""
    m = np.asarray(m, dtype=np.int64)
    predicted, gold = np.nonzero(m)
    counts = m[predicted, gold]
    pairs = np.stack([np.repeat(predicted, counts), np.repeat(gold, counts)])
    order = np.random.default_rng(len(pairs[0])).permutation(pairs.shape[1])
    return pairs[0][order], pairs[1][order]


def close(a: float | None, b: float | None, *, rel: float = REL_TOL, abs_tol: float = ABS_TOL) -> bool:
    """Both undefined, or both defined and equal up to rounding."""
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def fit(text: str, width: int) -> str:
    """``text`` cut or padded (with ``0``) to exactly ``width`` UTF-8 bytes, whole characters kept."""
    fitted = ""
    for character in text:
        if len((fitted + character).encode()) > width:
            break
        fitted += character
    return fitted + "0" * (width - len(fitted.encode()))
