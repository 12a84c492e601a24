"""Ranks with ties, Spearman correlations and swapped pairs (ranking contract of DESIGN.md).

What this proves: display ranks are competition ranks (1, 2, 2, 4), rank 1 the best by the
metric's direction (the highest value, or the lowest of an error measure), values are compared
with no tolerance (ties come from the suite's canonical values) and an undefined value gets no
rank and sorts last; Spearman's rho equals scipy's on random data with and without ties, over
exactly the teams defined under both metrics (``n_teams``), and ranks by "better", so an error
and a score that agree on every team correlate at +1; rank changes and swapped pairs match
their definitions, checked by brute force, in either direction.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import rankdata, spearmanr

from scoring.engine import ranking
from scoring.engine.rank_order import RankOrder
from scoring.engine.ranking import HIGHER, LOWER
from tests.scoring.strategies import PROPERTY


def test_competition_ranks_share_the_better_rank() -> None:
    assert ranking.competition_ranks([0.9, 0.8, 0.8, 0.7]) == [1, 2, 2, 4]
    assert ranking.competition_ranks([0.7, 0.8, 0.9, 0.8]) == [4, 2, 1, 2]


def test_no_tolerance_values_one_ulp_apart_do_not_tie() -> None:
    """Ties come from canonical (exact) values, so ranking compares floats as they are."""
    above = math.nextafter(0.2, 1.0)
    assert ranking.competition_ranks([0.2, above, 0.2]) == [2, 1, 2]
    assert ranking.average_ranks([0.2, above, 0.2]).tolist() == [2.5, 1.0, 2.5]
    assert ranking.swapped_pairs(["A", "B"], [0.2, above], [above, 0.2]) == [("B", "A")]


def test_undefined_values_get_no_rank() -> None:
    assert ranking.competition_ranks([0.5, None, 0.7, 0.5]) == [2, None, 1, 2]
    assert ranking.competition_ranks([None, None]) == [None, None]
    assert ranking.competition_ranks([]) == []


def test_sort_key_puts_higher_values_first_and_undefined_last() -> None:
    assert sorted([0.2, None, 0.9, -0.5, None, 0.0], key=ranking.sort_key) == [0.9, 0.2, 0.0, -0.5, None, None]


@PROPERTY
@given(st.lists(st.one_of(st.none(), st.integers(-3, 3).map(float)), max_size=12))
def test_a_rank_is_one_plus_the_number_of_strictly_better_teams(values: list[float | None]) -> None:
    defined = [v for v in values if v is not None]
    expected = [None if v is None else 1 + sum(w > v for w in defined) for v in values]
    assert ranking.competition_ranks(values) == expected


def test_average_ranks_split_ties() -> None:
    assert ranking.average_ranks([3.0, 1.0, 3.0, 2.0]).tolist() == [1.5, 4.0, 1.5, 3.0]


@PROPERTY
@given(values=st.lists(st.integers(min_value=-4, max_value=4).map(lambda v: v / 2 or -0.0), min_size=1, max_size=40))
def test_ranks_are_scipy_s_rankdata_with_ties_on_the_lowest_or_the_mean_position(values: list[float]) -> None:
    """The engine ranks with numpy alone; scipy's rankdata is the peer it must equal (-0 and 0 tie)."""
    assert ranking.average_ranks(values).tolist() == rankdata([-v for v in values], method="average").tolist()
    assert ranking.competition_ranks(values) == rankdata([-v for v in values], method="min").tolist()


def scipy_rho(a: list[float], b: list[float]) -> float:
    return float(spearmanr(a, b).statistic)


def team_values(unique: bool) -> st.SearchStrategy[list[float]]:
    values = st.integers(min_value=-1000, max_value=1000) if unique else st.integers(min_value=0, max_value=3)
    return st.lists(values.map(float), min_size=2, max_size=15, unique=unique)


@pytest.mark.parametrize("unique", [True, False], ids=["without ties", "with ties"])
@PROPERTY
@given(data=st.data())
def test_spearman_agrees_with_scipy(unique: bool, data: st.DataObject) -> None:
    a = data.draw(team_values(unique))
    b = data.draw(st.permutations(a) if unique else st.lists(st.sampled_from(a), min_size=len(a), max_size=len(a)))
    correlation = ranking.spearman(a, b)
    assert correlation.n_teams == len(a)
    if len(set(a)) == 1 or len(set(b)) == 1:  # one ranking is all ties: scipy says NaN
        assert correlation.rho is None
    else:
        assert correlation.rho == pytest.approx(scipy_rho(a, b), abs=1e-12)


def test_spearman_leaves_out_teams_undefined_under_either_metric() -> None:
    a = [0.1, None, 0.3, 0.4, 0.2]
    b = [0.2, 0.5, None, 0.1, 0.3]
    correlation = ranking.spearman(a, b)
    assert correlation.n_teams == 3
    assert correlation.rho == pytest.approx(scipy_rho([0.1, 0.4, 0.2], [0.2, 0.1, 0.3]))


def test_spearman_needs_two_teams_and_some_spread() -> None:
    assert ranking.spearman([0.1, None], [None, 0.2]) == ranking.Correlation(rho=None, n_teams=0)
    assert ranking.spearman([0.1, 0.2], [0.3, None]) == ranking.Correlation(rho=None, n_teams=1)
    assert ranking.spearman([0.1, 0.1, 0.1], [0.1, 0.2, 0.3]).rho is None
    assert ranking.spearman([0.1, 0.2, 0.3], [0.3, 0.2, 0.1]).rho == pytest.approx(-1.0)


def test_spearman_matrix_is_symmetric_with_a_unit_diagonal() -> None:
    columns = {"x": [0.1, 0.5, 0.3, None], "y": [0.2, 0.1, 0.4, 0.3], "z": [0.9, 0.8, 0.7, 0.6]}
    matrix = ranking.spearman_matrix(columns)
    assert set(matrix) == set(columns)
    for first, second in itertools.product(columns, repeat=2):
        assert matrix[first][second] == matrix[second][first] == ranking.spearman(columns[first], columns[second])
    for key in columns:
        assert matrix[key][key].rho == pytest.approx(1.0)
    assert matrix["x"]["y"].n_teams == 3


@PROPERTY
@given(
    data=st.data(),
    teams=st.integers(min_value=0, max_value=40),
    n_columns=st.integers(min_value=1, max_value=7),
)
def test_the_matrix_of_many_columns_is_each_pair_s_spearman(data, teams, n_columns) -> None:
    """The matrix ranks columns defined for the same teams together (one product of their
    ranks); each of its rhos is the very double :func:`ranking.spearman` gives for the pair,
    whether the columns share their undefined teams or not, with ties or without."""
    levels = st.sampled_from([None, 0.25, 0.5, 0.75, 1 / 3])
    shared_gaps = data.draw(st.lists(st.booleans(), min_size=teams, max_size=teams))
    columns = {}
    for index in range(n_columns):
        values = data.draw(st.lists(st.one_of(levels, st.floats(0, 1)), min_size=teams, max_size=teams))
        if data.draw(st.booleans()):  # most columns of a board are undefined for the same teams
            values = [
                None if gap else (0.5 if value is None else value)
                for value, gap in zip(values, shared_gaps, strict=True)
            ]
        columns[f"m{index}"] = values
    matrix = ranking.spearman_matrix(columns)
    for first, second in itertools.product(columns, repeat=2):
        assert matrix[first][second] == ranking.spearman(columns[first], columns[second]), (first, second)


TEAMS = ["A", "B", "C", "D"]


def test_rank_changes_put_the_largest_moves_first() -> None:
    a = [0.9, 0.8, 0.7, 0.6]
    b = [0.6, 0.8, 0.9, None]
    changes = ranking.rank_changes(TEAMS, a, b)
    assert [(c.team, c.rank_a, c.rank_b, c.shift) for c in changes] == [
        ("A", 1, 3, -2),
        ("C", 3, 1, 2),
        ("B", 2, 2, 0),
        ("D", 4, None, None),
    ]


@PROPERTY
@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.integers(0, 4)), st.one_of(st.none(), st.integers(0, 4))),
        min_size=0,
        max_size=8,
    )
)
def test_swapped_pairs_are_exactly_the_strict_disagreements(values: list[tuple[int | None, int | None]]) -> None:
    teams = [f"t{i}" for i in range(len(values))]
    a = [x for x, _ in values]
    b = [y for _, y in values]
    expected = {
        (teams[i], teams[j])
        for i, j in itertools.permutations(range(len(values)), 2)
        if None not in (a[i], a[j], b[i], b[j]) and a[i] > a[j] and b[i] < b[j]
    }
    pairs = ranking.swapped_pairs(teams, a, b)
    assert len(pairs) == len(set(pairs))
    assert set(pairs) == expected


def test_swapped_pairs_by_hand() -> None:
    a = [0.9, 0.8, 0.8, None]
    b = [0.7, 0.8, 0.6, 0.9]
    # A beats B under a, B beats A under b; B and C tie under a: no swap; D is undefined under a.
    assert ranking.swapped_pairs(TEAMS, a, b) == [("A", "B")]


@PROPERTY
@given(st.lists(st.integers(min_value=-1000, max_value=1000), min_size=2, max_size=10, unique=True))
def test_spearman_sees_only_the_order(values: list[int]) -> None:
    assert ranking.spearman(values, [-v for v in values]).rho == pytest.approx(-1.0)
    assert ranking.spearman(values, [v**3 + 7 for v in values]).rho == pytest.approx(1.0)


def test_ranks_of_every_column_at_once_are_the_competition_ranks():
    rng = np.random.default_rng(3)
    values = rng.choice([0.1, 0.2, 0.2, 0.5, np.nan], size=(40, 6))
    ranks = ranking.competition_rank_matrix(values)
    for j in range(values.shape[1]):
        expected = ranking.competition_ranks([None if np.isnan(v) else v for v in values[:, j]])
        assert [int(r) or None for r in ranks[:, j]] == expected


# --- direction: rank 1 is the best, whichever way a metric is better ----------------------------

DIRECTIONS = st.sampled_from([HIGHER, LOWER])


def better(x: float, y: float, direction: ranking.Direction) -> bool:
    """Whether x is strictly better than y, written from the definition of each direction."""
    return x > y if direction is HIGHER else x < y


def test_an_error_ranks_its_lowest_value_first() -> None:
    assert ranking.competition_ranks([0.9, 0.8, 0.8, 0.7], LOWER) == [4, 2, 2, 1]
    assert ranking.competition_ranks([0.5, None, 0.0, 0.5], LOWER) == [2, None, 1, 2]
    assert ranking.average_ranks([3.0, 1.0, 3.0, 2.0], LOWER).tolist() == [3.5, 1.0, 3.5, 2.0]
    assert sorted([0.2, None, 0.9, -0.5, 0.0], key=lambda v: ranking.sort_key(v, LOWER)) == [-0.5, 0.0, 0.2, 0.9, None]


@PROPERTY
@given(values=st.lists(st.one_of(st.none(), st.integers(-3, 3).map(float)), max_size=12), direction=DIRECTIONS)
def test_a_rank_is_one_plus_the_number_of_strictly_better_teams_in_either_direction(
    values: list[float | None], direction: ranking.Direction
) -> None:
    defined = [v for v in values if v is not None]
    expected = [None if v is None else 1 + sum(better(w, v, direction) for w in defined) for v in values]
    assert ranking.competition_ranks(values, direction) == expected


@PROPERTY
@given(data=st.data(), n_teams=st.integers(1, 12), n_columns=st.integers(1, 5))
def test_every_way_of_ranking_a_stack_follows_each_column_s_direction(data, n_teams: int, n_columns: int) -> None:
    """The board's rank matrix and the bootstrap's sort rank each column as
    :func:`ranking.competition_ranks` ranks it with the column's direction."""
    directions = [data.draw(DIRECTIONS) for _ in range(n_columns)]
    levels = st.sampled_from([np.nan, -1.0, 0.0, 0.25, 0.25, 1.0])
    values = np.array(
        data.draw(
            st.lists(st.lists(levels, min_size=n_teams, max_size=n_teams), min_size=n_columns, max_size=n_columns)
        )
    )
    matrix = ranking.competition_rank_matrix(values.T, directions)
    sorted_ranks = RankOrder.of(values[np.newaxis], ranking.signs(directions)[:, np.newaxis]).competition()[0]
    for j, direction in enumerate(directions):
        expected = [
            r or 0 for r in ranking.competition_ranks([None if np.isnan(v) else v for v in values[j]], direction)
        ]
        assert matrix[:, j].tolist() == expected
        assert sorted_ranks[j].tolist() == expected


def test_spearman_ranks_by_better_so_an_error_and_a_score_that_agree_correlate_at_plus_one() -> None:
    """Convention (ranking's docstring): rho compares who is better under each metric. Here the
    error is 1 - the score, so both say the same thing about every team."""
    score = [0.9, 0.7, 0.8, 0.2]
    error = [1 - v for v in score]
    assert ranking.spearman(score, error, directions=(HIGHER, LOWER)).rho == 1.0
    assert ranking.spearman(error, score, directions=(LOWER, HIGHER)).rho == 1.0
    assert ranking.spearman(error, error, directions=(LOWER, LOWER)).rho == 1.0
    # Read as raw values (both higher-is-better), the same pair is perfectly reversed.
    assert ranking.spearman(score, error).rho == -1.0
    matrix = ranking.spearman_matrix({"score": score, "error": error}, directions={"error": LOWER})
    assert matrix["score"]["error"].rho == matrix["error"]["score"].rho == 1.0


@PROPERTY
@given(data=st.data(), teams=st.integers(min_value=0, max_value=20))
def test_rho_with_directions_is_scipy_s_rho_of_the_values_turned_to_higher_is_better(data, teams: int) -> None:
    levels = st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 2.0]), st.floats(-5, 5))
    columns = {key: data.draw(st.lists(levels, min_size=teams, max_size=teams)) for key in "xyz"}
    directions = {key: data.draw(DIRECTIONS) for key in columns}
    matrix = ranking.spearman_matrix(columns, directions=directions)
    for first, second in itertools.product(columns, repeat=2):
        pair = [
            (u * directions[first].value, v * directions[second].value)
            for u, v in zip(columns[first], columns[second], strict=True)
            if u is not None and v is not None
        ]
        found = ranking.spearman(columns[first], columns[second], directions=(directions[first], directions[second]))
        assert matrix[first][second] == found
        if len(pair) >= 2 and len({u for u, _ in pair}) > 1 and len({v for _, v in pair}) > 1:
            assert found.rho == pytest.approx(scipy_rho([u for u, _ in pair], [v for _, v in pair]), abs=1e-12)


@PROPERTY
@given(
    values=st.lists(
        st.tuples(st.one_of(st.none(), st.integers(0, 4)), st.one_of(st.none(), st.integers(0, 4))), max_size=8
    ),
    directions=st.tuples(DIRECTIONS, DIRECTIONS),
)
def test_swaps_and_moves_follow_each_metric_s_direction(values, directions) -> None:
    teams = [f"t{i}" for i in range(len(values))]
    a, b = [x for x, _ in values], [y for _, y in values]
    expected = {
        (teams[i], teams[j])
        for i, j in itertools.permutations(range(len(values)), 2)
        if None not in (a[i], a[j], b[i], b[j])
        and better(a[i], a[j], directions[0])
        and better(b[j], b[i], directions[1])
    }
    assert set(ranking.swapped_pairs(teams, a, b, directions=directions)) == expected
    assert ranking.swapped_pair_count(a, b, directions=directions) == len(expected)
    changes = {c.team: (c.rank_a, c.rank_b) for c in ranking.rank_changes(teams, a, b, directions=directions)}
    ranks_a, ranks_b = ranking.competition_ranks(a, directions[0]), ranking.competition_ranks(b, directions[1])
    assert changes == {team: (ra, rb) for team, ra, rb in zip(teams, ranks_a, ranks_b, strict=True)}
