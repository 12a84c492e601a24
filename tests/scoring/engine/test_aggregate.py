"""An overall ranking across metrics (:mod:`scoring.engine.aggregate`).

What this proves:

- the mean rank is the mean of the board's competition ranks over the chosen columns, and the
  Borda count the number of teams strictly beaten under each, summed: by hand, and on random
  boards (ties, undefined values, errors and scores mixed) against an independent computation
  from the values themselves (the ranks written from their definition, the mean in fractions
  rounded once: the same double; Borda by comparing every pair of teams);
- a team undefined under a chosen column gets no overall value and no overall rank, and the
  others keep the board's ranks under that column;
- ties are ties: equal rank sums are the same double and share the overall rank, which is the
  competition rank by the method's direction (rank 1 = lowest mean rank, or most points);
- with the bootstrap, the overall value and rank in every replicate are the method applied to
  that replicate's ranks (recomputed here from the replicate's values), and the intervals are
  the same order statistics of the same replicates as every other interval;
- the sets of the disagreement page, and the names of the errors.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import aggregate as ag
from scoring.engine.bootstrap import bootstrap, order_statistics
from scoring.engine.columns import Column, ranking_columns, table8_columns
from scoring.engine.ranking import HIGHER, LOWER, competition_ranks
from tests.scoring.strategies import PROPERTY

ACC, KAPPA, MAE = Column("accuracy"), Column("kappa"), Column("mae")


def by_definition(values: list[float | None], direction) -> list[int | None]:
    """Competition ranks written from their definition: 1 + the teams strictly better."""
    better = (lambda x, y: x > y) if direction is HIGHER else (lambda x, y: x < y)
    defined = [v for v in values if v is not None]
    return [None if v is None else 1 + sum(better(w, v) for w in defined) for v in values]


def test_mean_rank_and_borda_by_hand() -> None:
    """Ranks (1, 2, 2, 4) and (2, 1, 3, 4): mean ranks 3/2, 3/2, 5/2, 4; under the first
    column the team ranked 1 beats 3 teams, each team ranked 2 beats 1, the last none."""
    ranks = [[1, 2, 2, 4], [2, 1, 3, 4]]
    mean_rank = ag.Aggregate(ag.MEAN_RANK, (ACC, KAPPA))
    borda = ag.Aggregate(ag.BORDA, (ACC, KAPPA))
    assert mean_rank.values(ranks) == [1.5, 1.5, 2.5, 4.0]
    assert mean_rank.ranks(mean_rank.values(ranks)) == [1, 1, 3, 4]
    assert borda.values(ranks) == [3 + 2, 1 + 3, 1 + 1, 0]
    assert borda.ranks(borda.values(ranks)) == [1, 2, 3, 4]


def test_a_team_undefined_under_a_column_has_no_overall_value() -> None:
    ranks = [[1, None, 2, 3], [None, 1, 2, 2]]
    assert ag.Aggregate(ag.MEAN_RANK, (ACC, KAPPA)).values(ranks) == [None, None, 2.0, 2.5]
    # Under the first column the third team beats one defined team; the second has no rank.
    assert ag.Aggregate(ag.BORDA, (ACC, KAPPA)).values(ranks) == [None, None, 1, 0]


def test_equal_rank_sums_tie_exactly() -> None:
    """(1, 2, 3) and (2, 2, 2) sum to 6: both mean ranks are the double of 2; (1, 1, 2) and
    (1, 2, 1) are both 4/3, the same double, and tie for first."""
    columns = (ACC, KAPPA, Column("mcc"))
    mean_rank = ag.Aggregate(ag.MEAN_RANK, columns)
    values = mean_rank.values([[1, 1, 2, 3], [1, 2, 2, 2], [2, 1, 3, 2]])
    assert values == [4 / 3, 4 / 3, 7 / 3, 7 / 3]
    assert mean_rank.ranks(values) == [1, 1, 3, 3]


LEVELS = st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(-2, 2))


@PROPERTY
@given(data=st.data(), teams=st.integers(1, 9), k=st.integers(1, 5))
def test_an_overall_ranking_is_its_definition_on_any_board(data, teams: int, k: int) -> None:
    directions = [data.draw(st.sampled_from([HIGHER, LOWER])) for _ in range(k)]
    values = [data.draw(st.lists(LEVELS, min_size=teams, max_size=teams)) for _ in range(k)]
    board_ranks = [competition_ranks(v, d) for v, d in zip(values, directions, strict=True)]
    assert board_ranks == [by_definition(v, d) for v, d in zip(values, directions, strict=True)]
    complete = [all(v[t] is not None for v in values) for t in range(teams)]
    columns = tuple(Column("accuracy") for _ in range(k))

    expected_mean = [
        float(sum((Fraction(r[t]) for r in board_ranks), Fraction(0)) / k) if complete[t] else None
        for t in range(teams)
    ]
    mean_rank = ag.Aggregate(ag.MEAN_RANK, columns)
    found = mean_rank.values(board_ranks)
    assert found == expected_mean
    assert mean_rank.ranks(found) == by_definition(expected_mean, LOWER)

    def strictly_beats(c: int, t: int, u: int) -> bool:
        x, y = values[c][t], values[c][u]
        return x is not None and y is not None and (x > y if directions[c] is HIGHER else x < y)

    expected_borda = [
        sum(strictly_beats(c, t, u) for c in range(k) for u in range(teams)) if complete[t] else None
        for t in range(teams)
    ]
    borda = ag.Aggregate(ag.BORDA, columns)
    found = borda.values(board_ranks)
    assert found == expected_borda
    assert borda.ranks(found) == by_definition(expected_borda, HIGHER)


def test_the_overall_ranking_of_the_bootstrap_is_the_method_in_every_replicate() -> None:
    rng = np.random.default_rng(8)
    gold = rng.integers(0, 3, size=150)
    teams = [np.where(rng.random(150) < share, gold, rng.integers(0, 3, size=150)) for share in (0.7, 0.7, 0.5, 0.4)]
    teams[3][:] = 0  # one predicted class: MCC undefined in every replicate
    labels = ["a", "b", "c"]
    columns = [*ranking_columns(labels), Column("kappa", calibrated=True)]
    chosen = (Column("accuracy"), Column("kappa", calibrated=True), Column("recall", "b"))
    overall_rankings = [
        ag.Aggregate(method, columns_of)
        for method in ag.METHODS
        for columns_of in (chosen, (Column("accuracy"), Column("mcc")))
    ]
    stability = bootstrap(
        gold,
        teams,
        labels=labels,
        replicates=120,
        seed=2,
        columns=columns,
        heatmap=columns[:1],
        aggregates=overall_rankings,
        keep_replicates=True,
    )
    for method, direction in ((ag.MEAN_RANK, LOWER), (ag.BORDA, HIGHER)):
        overall = ag.Aggregate(method, chosen)
        values_interval, rank_interval = stability.aggregate_intervals(overall)
        per_replicate, ranks = [], []
        for replicate in range(120):
            replicate_ranks = [
                by_definition(
                    [None if np.isnan(v) else v for v in stability.replicate_values[replicate, columns.index(c)]],
                    c.direction,
                )
                for c in chosen
            ]
            values = overall.values(replicate_ranks)
            per_replicate.append(values)
            ranks.append(by_definition(values, direction))
        low, high = order_statistics(120, 0.95)
        for t in range(4):
            own = sorted(values[t] for values in per_replicate)
            own_ranks = sorted(rank[t] for rank in ranks)
            assert values_interval[t].tolist() == [own[low - 1], own[high - 1]]
            assert rank_interval[t].tolist() == [own_ranks[low - 1], own_ranks[high - 1]]
        with_mcc = ag.Aggregate(method, (Column("accuracy"), Column("mcc")))
        values_interval, rank_interval = stability.aggregate_intervals(with_mcc)
        assert np.isnan(values_interval[3]).all() and np.isnan(rank_interval[3]).all()
        assert not np.isnan(values_interval[:3]).any()


def test_the_disagreement_page_s_sets() -> None:
    labels = ["neg", "neu", "pos"]
    sets = ag.column_sets(labels, primary="macro_recall", ordinal=True)
    assert list(sets) == ["table8", "raw", "calibrated", "primary"]
    assert sets["table8"] == table8_columns(labels)
    assert sets["raw"] == ranking_columns(labels, calibrated=False, ordinal=True)
    assert sets["calibrated"] == ranking_columns(labels, calibrated=True, ordinal=True)
    assert sets["primary"] == [Column("macro_recall")]


def test_the_winner_of_each_set() -> None:
    """Team 0 wins under accuracy and kappa, team 1 under MAE (lowest) and calibrated kappa; the
    mean rank over all four ties them, Borda too."""
    ranks = {ACC: [1, 2, 3], KAPPA: [1, 3, 2], MAE: [2, 1, 3], Column("kappa", calibrated=True): [3, 1, 2]}
    sets = {"raw": [ACC, KAPPA], "errors": [MAE], "all": list(ranks)}
    assert ag.winners(ag.MEAN_RANK, sets, ranks.__getitem__) == {"raw": [0], "errors": [1], "all": [0, 1]}
    assert ag.winners(ag.BORDA, sets, ranks.__getitem__) == {"raw": [0], "errors": [1], "all": [0, 1]}


def test_a_team_undefined_under_a_column_of_a_set_does_not_win_it() -> None:
    """Team 2 is best under accuracy but has no value under kappa: it wins accuracy alone, and
    the set of both goes to the best of the teams defined under both; a set under which no team
    is defined has no winner. Ranks come as lists with ``None`` or as arrays with 0."""
    ranks = {ACC: [2, 3, 1], KAPPA: [1, 2, None], MAE: [None, None, None]}
    sets = {"accuracy": [ACC], "both": [ACC, KAPPA], "nobody": [MAE]}
    expected = {"accuracy": [2], "both": [0], "nobody": []}
    for method in (ag.MEAN_RANK, ag.BORDA):
        assert ag.winners(method, sets, ranks.__getitem__) == expected
        as_arrays = {column: np.array([rank or 0 for rank in found]) for column, found in ranks.items()}
        assert ag.winners(method, sets, as_arrays.__getitem__) == expected


def test_an_aggregate_is_a_column_of_the_board() -> None:
    overall = ag.Aggregate(ag.MEAN_RANK, (ACC, MAE))
    assert (overall.id, overall.symbol, overall.label, overall.calibrated) == ("mean_rank", "MR", None, False)
    assert overall.direction is LOWER and ag.Aggregate(ag.BORDA, (ACC,)).direction is HIGHER
    assert overall.name == "Mean rank over 2 columns"
    assert "accuracy, mae" in overall.formula_text


def test_errors_are_named() -> None:
    with pytest.raises(ag.AggregateError, match="unknown aggregation method 'median'; known: mean_rank, borda"):
        ag.Aggregate("median", (ACC,))
    with pytest.raises(ag.AggregateError) as error:
        ag.Aggregate(ag.BORDA, ())
    assert error.value.template == ag.NO_COLUMNS
