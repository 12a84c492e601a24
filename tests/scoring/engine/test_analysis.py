"""The pieces of :mod:`scoring.engine.analysis` and what it reads runs with: arg-max labels, the
vote, kappa from integers, the exact clustering and its ties, many confusion matrices at once,
stored items read back through the header cache, and the rank a row would take. (The whole
analysis against an independent computation: ``tests/scoring/test_cli_analysis.py``.)"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from scoring.engine.analysis import analyse, average_linkage, hard_labels, hardest_items, kappa_parts, majority_vote
from scoring.engine.confusion import hard_confusion, hard_confusions
from scoring.engine.items import pack_items, unpack_items
from scoring.engine.ranking import LOWER, rank_among


def test_probability_rows_read_as_their_arg_max_with_ties_to_the_first_label():
    rows = np.array([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2], [0.1, 0.45, 0.45], [1 / 3, 1 / 3, 1 / 3]])
    assert hard_labels(rows).tolist() == [1, 0, 1, 0]
    codes = np.array([2, 0, 1], dtype=np.uint8)
    assert hard_labels(codes) is codes


def test_the_vote_counts_ties_and_gives_them_to_the_first_label():
    codes = np.array([[0, 1, 2, 2], [1, 1, 0, 2], [2, 0, 0, 1]])
    vote, ties = majority_vote(codes, 3)
    assert vote.tolist() == [0, 1, 0, 2] and ties == 1


def test_kappa_from_its_definition_in_integers():
    a, b = np.array([0, 0, 1, 2, 2, 1]), np.array([0, 1, 1, 2, 0, 1])
    numerators, denominators = kappa_parts(np.stack([a, b]), 3)
    n = len(a)
    observed = Fraction(int(np.sum(a == b)), n)
    chance = sum(Fraction(int(np.sum(a == k)) * int(np.sum(b == k)), n * n) for k in range(3))
    assert Fraction(numerators[0][1], denominators[0][1]) == (observed - chance) / (1 - chance)
    assert numerators[0][0] == denominators[0][0]  # 1 on the diagonal


def test_the_clustering_joins_the_highest_mean_first_and_breaks_ties_by_the_earliest_runs():
    kappa = [
        [1.0, 0.5, 0.5, 0.1],
        [0.5, 1.0, 0.5, 0.1],
        [0.5, 0.5, 1.0, 0.2],
        [0.1, 0.1, 0.2, 1.0],
    ]
    clustering = average_linkage(kappa)
    # Three pairs tie at 0.5: the earliest, (0, 1), joins first; then 2 joins them at 0.5.
    assert [(m.left, m.right, m.kappa) for m in clustering.merges] == [
        ((0,), (1,), 0.5),
        ((0, 1), (2,), 0.5),
        ((0, 1, 2), (3,), float((2 * Fraction(0.1) + Fraction(0.2)) / 3)),  # the doubles as they are
    ]
    assert clustering.order == (0, 1, 2, 3)
    undefined = average_linkage([[None, None, 0.0], [None, None, 0.0], [0.0, 0.0, 1.0]])
    assert undefined.merges[0].left == (0,) and undefined.merges[0].right == (1,) and undefined.merges[0].kappa == 1.0
    assert average_linkage([]).order == () and average_linkage([[1.0]]).order == (0,)


def test_the_hardest_are_every_unsolved_item_and_at_least_twenty():
    right = np.array([3] * 30 + [0] * 5 + [1] * 30)
    assert hardest_items(right).tolist() == [*range(30, 35), *range(35, 50)]
    assert hardest_items(np.array([0] * 25 + [2])).tolist() == list(range(25))
    assert hardest_items(np.array([2, 1])).tolist() == [1, 0]


def test_an_analysis_needs_a_row_per_run_of_the_gold_length():
    with pytest.raises(ValueError, match="one row of codes per run"):
        analyse(np.array([0, 1]), np.array([[0, 1, 1]]), labels=["a", "b"])


def test_many_confusion_matrices_at_once_equal_one_at_a_time():
    rng = np.random.default_rng(7)
    gold = rng.integers(0, 4, 1000)
    runs = rng.integers(0, 4, (9, 1000)).astype(np.uint8)
    found = hard_confusions(runs, gold, 4)
    assert [matrix.tolist() for matrix in found] == [hard_confusion(run, gold, 4).tolist() for run in runs]
    assert hard_confusions(np.zeros((0, 1000), dtype=np.uint8), gold, 4).shape == (0, 4, 4)
    with pytest.raises(ValueError, match="must lie in"):
        hard_confusions(np.full((2, 1000), 4), gold, 4)


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12284, dtype=np.int64) % 3,
        np.random.default_rng(1).random((50, 3)),
        np.arange(300) % 300,
        np.zeros(0, dtype=np.uint8),
    ],
)
def test_stored_items_read_back_the_same_every_time(array):
    packed = pack_items(array, 300 if array.ndim == 1 and array.size and array.max() > 2 else 3)
    first, again = unpack_items(packed), unpack_items(packed)  # the second through the header cache
    for found in (first, again):
        assert np.array_equal(found, array) and found.flags.writeable
        assert found.dtype == first.dtype and found.shape == array.shape


def test_the_rank_a_row_would_take_among_the_teams():
    values = [0.5, 0.7, None, 0.7, 0.2]
    assert rank_among(values, 0.8) == 1
    assert rank_among(values, 0.7) == 1  # ties with the leaders
    assert rank_among(values, 0.6) == 3
    assert rank_among(values, 0.1) == 5
    assert rank_among(values, None) is None
    assert rank_among([0.3, 0.1], 0.2, LOWER) == 2  # an error: lower is better
