"""The error-free transformations of doubles that the pair arithmetic is built on (Dekker,
Knuth): a sum or a product of two doubles as the rounded result and its exact error. Written
once, on doubles or numpy arrays alike: :mod:`scoring.engine.twofold` applies them to arrays,
and the compiled loops of :mod:`scoring.engine.kernels` to one value after another, so both
routes take the same IEEE steps."""

from __future__ import annotations

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
