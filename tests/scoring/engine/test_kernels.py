"""The compiled loops of :mod:`scoring.engine.kernels` give the numpy routes' numbers, bit for
bit (NaN for NaN).

* The pair arithmetic of :mod:`scoring.engine.twofold`: every part of a pair (``hi``, ``lo``),
  its error bound, the open signs of a divisor and the undecided roundings, on random pairs and
  on the doubles where IEEE arithmetic has its edges (zeros of both signs, subnormals, powers
  of two and their neighbours, the largest double, infinities, NaN), with scalar operands and
  broadcast ones.
* :class:`scoring.engine.rank_order.Ties` of rows of values: many ties, both zeros, both
  orientations, one team, all tied.
* The order statistics of the bootstrap's intervals
  (:func:`scoring.engine.replicate_passes.order_statistics`): ties at them, both zeros, NaN,
  the edges, rows in order and in reverse, a few or many values of each end.

The values the bootstrap computes through either route are checked against the exact route
in ``test_canonical.py`` (both routes) and ``test_bootstrap.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from scoring.engine import compiled, kernels, twofold
from scoring.engine.rank_order import Ties
from scoring.engine.replicate_passes import order_statistics
from scoring.engine.twofold import Approx

EDGES = np.array(
    [
        0.0,
        -0.0,
        5e-324,
        -5e-324,
        2.0**-1022,
        2.0**-1022 - 2.0**-1074,
        1.0,
        -1.0,
        np.nextafter(1.0, 0.0),
        np.nextafter(1.0, 2.0),
        2.0**52,
        3.0,
        1.7976931348623157e308,
        -1.7976931348623157e308,
        np.inf,
        -np.inf,
        np.nan,
    ]
)


def pairs(seed: int, size: int) -> Approx:
    """Normalised pairs (``lo`` within half an ulp of ``hi``), with error bounds, edges among them."""
    rng = np.random.default_rng(seed)
    hi = rng.standard_normal(size) * 10.0 ** rng.integers(-30, 30, size)
    hi[: len(EDGES) * 3] = np.tile(EDGES, 3)
    hi = hi[rng.permutation(size)]
    with np.errstate(invalid="ignore", over="ignore"):
        lo = np.where(np.isfinite(hi), rng.uniform(-0.5, 0.5, size) * np.spacing(np.abs(hi)), 0.0)
        lo[rng.random(size) < 0.2] = 0.0
        sum_ = hi + lo
        lo = lo - (sum_ - hi)
        hi = sum_
    err = np.abs(hi) * 2.0**-90 * rng.random(size)
    err[rng.random(size) < 0.3] = 0.0
    return Approx(hi, lo, np.where(np.isfinite(err), err, 0.0))


def parts(x: Approx) -> list[np.ndarray]:
    return [np.broadcast_to(part, x.shape) for part in (x.hi, x.lo, x.err)]


def assert_same_bits(compiled: list, arrays: list) -> None:
    assert len(compiled) == len(arrays)
    for found, expected in zip(compiled, arrays, strict=True):
        found, expected = np.asarray(found), np.asarray(expected)
        assert found.shape == expected.shape
        if found.dtype == np.bool_:
            assert np.array_equal(found, expected)
        else:  # a NaN's sign and payload mean nothing: NaN in the same places, every other bit the same
            assert np.array_equal(np.isnan(found), np.isnan(expected))
            numbers = ~np.isnan(expected)
            assert np.array_equal(found[numbers].view(np.int64), expected[numbers].view(np.int64))


def both_routes(monkeypatch: pytest.MonkeyPatch, compute) -> tuple[list, list]:
    """``compute()`` through the compiled loops (every array large enough), then through arrays."""
    monkeypatch.setattr(compiled, "_loaded", False)  # restored after the test, loaded or not
    compiled.load()
    monkeypatch.setattr(twofold, "KERNEL_SIZE", 1)
    through_loops = compute()
    monkeypatch.setattr(compiled, "_loaded", False)
    return through_loops, compute()


def flat(x: Approx) -> list:
    unsure = [] if x.unsure is None else [np.broadcast_to(x.unsure, x.shape)]
    return [*parts(x), *unsure]


OPERATIONS = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
}


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("shape", ["pairs", "singles", "scalar", "broadcast"])
def test_each_operation_gives_the_same_bits_through_either_route(monkeypatch, operation: str, shape: str) -> None:
    a, b = pairs(1, 4000), pairs(2, 4000)
    if shape == "singles":  # doubles with bounds, no low part: the divisor's own branch
        a, b = Approx(a.hi, 0.0, a.err), Approx(b.hi, 0.0, b.err)
    elif shape == "scalar":
        b = Approx(3.0, 1e-16, 1e-40)
    elif shape == "broadcast":
        a = Approx(a.hi.reshape(40, 100), a.lo.reshape(40, 100), a.err.reshape(40, 100))
        b = Approx(b.hi[:100].reshape(1, 100), b.lo[:100].reshape(1, 100), 0.0)

    def compute():
        with np.errstate(all="ignore"):
            return flat(OPERATIONS[operation](a, b))

    assert_same_bits(*both_routes(monkeypatch, compute))


def test_exact_integers_keep_their_bounds_through_either_route(monkeypatch) -> None:
    """Sums and products of counts: exact pairs with no error bound on both routes."""
    rng = np.random.default_rng(3)
    a = Approx.integers(rng.integers(0, 2**40, 5000).astype(np.float64))
    b = Approx.integers(rng.integers(0, 2**40, 5000).astype(np.float64))

    def compute():
        product = a * b
        total = product + a * a
        assert product.integer_bound is not None and total.integer_bound is not None
        return [*flat(product), *flat(total), *flat(total / (b + 1))]

    assert_same_bits(*both_routes(monkeypatch, compute))


def test_rounding_decisions_are_the_same_through_either_route(monkeypatch) -> None:
    """The nearest doubles and the undecided ones, the gaps to each neighbour taken from the
    bits on one route and from ``nextafter`` on the other: on random pairs, and on powers of two
    (whose gap towards 0 is half the other), their neighbours and the edges above, each with a
    low part on, inside and outside half of either gap."""
    x = pairs(4, 6000)
    powers = np.ldexp(1.0, np.arange(-1074, 1024, 7))
    centres = np.concatenate([powers, np.nextafter(powers, 0.0), np.nextafter(powers, np.inf), EDGES])
    centres = np.concatenate([centres, -centres])
    with np.errstate(invalid="ignore", over="ignore"):
        gaps = np.abs(np.nextafter(centres, np.inf) - centres)
        fractions = np.array([0.5, 0.25, 0.125, 0.75, -0.5, -0.25, -0.125, -0.75, 0.0])
        lows = np.where(np.isfinite(gaps), gaps, 0.0)[:, np.newaxis] * fractions
    hi = np.concatenate([x.hi, np.repeat(centres, len(fractions))])
    lo = np.concatenate([x.lo, lows.reshape(-1)])
    err = np.concatenate([x.err, np.zeros(lows.size)])
    x = Approx(hi, lo, err)

    def compute():
        with np.errstate(all="ignore"):
            return list(x.rounded())

    compiled, arrays = both_routes(monkeypatch, compute)
    assert_same_bits(compiled, arrays)
    assert arrays[1].any() and not arrays[1].all(), "the sample has decided and undecided values"


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("teams", [1, 2, 7, 300])
def test_ties_are_the_same_through_either_route(monkeypatch, sign: float, teams: int) -> None:
    rng = np.random.default_rng(teams)
    values = np.round(rng.standard_normal((5, 4, teams)), 1)  # few distinct values: many ties
    values[:, 1] = 0.5  # every team tied
    values[:, 2, ::2] = -0.0  # both zeros are one value
    values[:, 2, 1::2] = np.where(rng.random((5, teams // 2)) < 0.5, 0.0, 1.0)
    values[:, 3] = rng.permutation(teams) / teams  # no tie
    signs = np.array([sign, -sign, sign, sign])

    def compute():
        found = Ties.of_columns(values, signs)
        return [found.better, found.tied, found.defined]

    through_loops, arrays = both_routes(monkeypatch, compute)
    for found, expected in zip(through_loops, arrays, strict=True):
        assert found.dtype == expected.dtype and np.array_equal(found, expected)
    better, tied = arrays[0], arrays[1]
    assert (tied[:, 1] == teams).all() and (better[:, 1] == 0).all()
    assert (tied[:, 3] == 1).all() and sorted(better[0, 3]) == list(range(teams))


@pytest.mark.parametrize(
    "bounds",
    [(25, 976), (1, 1000), (1, 1), (1000, 1000), (32, 969), (10, 950), (500, 501)],  # the last: numpy's sort
)
def test_order_statistics_are_the_same_through_either_route(monkeypatch, bounds: tuple[int, int]) -> None:
    rng = np.random.default_rng(bounds[0])
    rows = rng.standard_normal((60, 1000))
    rows[:10] = np.round(rows[:10], 1)  # few distinct values: ties at the order statistics
    rows[10:20] = 0.0
    rows[10:20, ::3] = -0.0
    rows[20:25, rng.integers(0, 1000, 5)] = np.nan  # sorted last
    rows[25:30] = rng.choice(EDGES, (5, 1000))  # infinities, subnormals and NaN among them
    rows[30:35] = np.sort(rows[30:35], axis=-1)
    rows[35:40] = np.sort(rows[35:40], axis=-1)[:, ::-1]
    samples = rows.reshape(3, 20, 1000)
    through_loops, arrays = both_routes(monkeypatch, lambda: [order_statistics(samples, bounds)])
    assert through_loops[0].shape == (3, 20, 2)
    assert np.array_equal(through_loops[0], arrays[0], equal_nan=True)
    ordered = np.sort(rows, axis=-1)
    low, high = bounds
    assert np.array_equal(arrays[0].reshape(60, 2), ordered[:, [low - 1, high - 1]], equal_nan=True)


def test_a_column_equal_to_an_earlier_one_takes_its_ties_without_a_sort(monkeypatch) -> None:
    rng = np.random.default_rng(9)
    first = np.round(rng.standard_normal((6, 50)), 1)
    nan = first.copy()
    nan[2, 7] = np.nan
    zeros = first.copy()
    zeros[zeros == 0] = -0.0  # the same values to a comparison: the same ties
    late = first.copy()
    late[5, 3] += 1.0  # the same first row, not the same column
    values = np.stack([first, first, first, nan, zeros, late, first], axis=1)
    signs = np.array([1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0])
    sorted_rows = []
    sort = Ties.of.__func__
    monkeypatch.setattr(Ties, "of", classmethod(lambda cls, v, s: sorted_rows.append(len(v)) or sort(cls, v, s)))
    found = Ties.of_columns(values, signs)
    assert len(sorted_rows) == 4  # first, its opposite, the one with a NaN, the late difference
    for column, sign in enumerate(signs):
        expected = sort(Ties, values[:, column], sign)
        assert np.array_equal(found.better[:, column], expected.better)
        assert np.array_equal(found.tied[:, column], expected.tied)
        assert np.array_equal(found.defined[:, column], expected.defined)


def test_every_step_of_the_loops_is_written_in_their_own_file_and_stays_python_there(monkeypatch) -> None:
    """numba's cache of a compiled loop is stamped with the loop's own file alone: a step it
    calls from another file of ours could change and leave the cached loops computing the old
    way, where the numpy route computes the new. And the numpy route's steps stay Python
    functions once the loops are loaded (else numba would compile each for arrays)."""
    monkeypatch.setattr(compiled, "_loaded", False)
    compiled.load()
    steps = ("two_sum", "fast_two_sum", "two_prod", "sum_of_pairs", "product_of_pairs", "quotient_of_pairs")
    assert not [step for step in steps if hasattr(getattr(kernels, step), "py_func")]
    assert hasattr(compiled.loops().two_prod, "py_func")
    tree = ast.parse(Path(kernels.__file__).read_text())
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert [name for name in imported if name.startswith("scoring")] == []
    assert twofold.two_sum is kernels.two_sum
