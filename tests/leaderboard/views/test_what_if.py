"""The what-if page of a phase: every team re-scored at a target class distribution, beside
today's ranking (paper 000, Eq. 5 and 26-27)."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
from django.urls import reverse

from leaderboard.pages import shifts as shifts_page
from leaderboard.pages.results import board_data_of
from leaderboard.selectors.boards import leaderboard
from scoring.engine.ranking import HIGHER, LOWER, competition_ranks, sort_key
from scoring.engine.whatif import what_if
from tests.leaderboard.support import teams_upload

pytestmark = pytest.mark.django_db

PREDICTIONS = {  # the toy gold (tests/conftest.py) is a b c a b c a a
    "Perfect": "a b c a b c a a",
    "Majority": "a b a a a a a a",
    "Balanced": "b b c c b c b c",
    "Wrong way": "b c a b c a b b",
}


@pytest.fixture
def board_task(make_task, make_user, submit):
    task = make_task()
    teams_upload(task, PREDICTIONS, make_user=make_user, submit=submit)
    return task


def page(client, task, **query):
    return client.get(reverse("leaderboard:what_if", args=[task.slug]), query)


def test_equal_shares_give_the_calibrated_scores_and_ranks(client, board_task):
    response = page(client, board_task, target="uniform", metric="kappa")
    calibrated = leaderboard(phase=board_task.current_phase(), calibrated=True)
    by_team = {entry.name: entry for entry in calibrated.entries if entry.submission_id}
    rows = response.context["rows"]
    assert {row.team for row in rows} == set(by_team)
    for row in rows:
        assert row.value_after == by_team[row.team].values["kappa_c"]
        assert row.rank_after == by_team[row.team].ranks["kappa_c"]


def test_the_golds_own_shares_change_nothing(client, board_task):
    response = page(client, board_task, target="gold", metric="accuracy")
    assert all(row.value_after == row.value_before and not row.shift for row in response.context["rows"])
    assert response.context["movers"] == []


def test_today_is_the_boards_values_the_same_doubles_as_computed_from_the_matrices(board_task):
    """The page's what-if takes today's values from the board; computed from the teams'
    matrices alone they are the same doubles (undefined ones included) and give the same ranks."""
    phase, target = board_task.current_phase(), (Fraction(1, 5), Fraction(3, 10), Fraction(1, 2))
    served = shifts_page.what_if_board(phase=phase, target=target)
    data = board_data_of(phase)
    matrices = {data.names[row]: data.matrices[row] for row in np.flatnonzero(data.scored)}
    computed = what_if(matrices, labels=board_task.labels, target=target)
    assert served.teams == computed.teams and sorted(served.teams) == sorted(PREDICTIONS)
    assert np.isnan(served.today).any()  # the majority team's precision of classes it never predicts
    np.testing.assert_array_equal(served.today, computed.today)
    np.testing.assert_array_equal(served.rank_matrix_today, computed.rank_matrix_today)
    np.testing.assert_array_equal(served.rank_matrix, computed.rank_matrix)


def test_a_target_that_cannot_be_used_is_said_and_uniform_is_shown(client, board_task):
    response = page(client, board_task, target="0,1,1")
    assert "every class needs a share above 0" in response.context["problem"]
    assert response.context["is_uniform"]
    assert "Showing the uniform target instead" in response.content.decode()


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("1e-300000,0.5,0.5", "the share '1e-300000' of class 'a' is not a plain number"),
        ("1" * 5000 + ",1,1", "is not a plain number: write a decimal with at most 12 digits"),
        ("-0.1,0.5,0.6", "the share of class 'a' is -0.1: every class needs a share above 0"),
    ],
)
def test_a_share_no_person_writes_is_refused_before_any_arithmetic(client, board_task, target, said):
    response = page(client, board_task, target=target)
    assert response.status_code == 200
    assert said in response.context["problem"]
    assert response.context["is_uniform"]


def test_the_form_posts_one_share_per_class(client, board_task):
    response = client.get(reverse("leaderboard:what_if", args=[board_task.slug]), {"share": ["2", "3", "5"]})
    assert [share for _, share, _ in response.context["shares"]] == [0.2, 0.3, 0.5]


def test_the_table_of_every_metric_shows_each_rank_at_the_target_and_its_move(client, board_task):
    response = page(client, board_task, target="0.8,0.1,0.1", metric="accuracy")
    html = response.content.decode()
    table = html[html.index('class="table compact whatif-all"') :]
    what_if = shifts_page.what_if_board(
        phase=board_task.current_phase(), target=(Fraction(4, 5), Fraction(1, 10), Fraction(1, 10))
    )
    columns = what_if.columns()
    moves = 0
    for team in PREDICTIONS:
        row = table[table.index(f'<th scope="row">{team}</th>') :].split("</tr>", 1)[0]
        cells = re.findall(r'<td class="num( moved)?">([^<]*)', row)
        assert len(cells) == len(columns)
        today, at_target = what_if.ranks_today, what_if.ranks
        for column, (moved, text) in zip(columns, cells, strict=True):
            rank, before = at_target(column)[team], today(column)[team]
            assert text.strip() == (str(rank) if rank else "—")
            assert bool(moved) == (rank is not None and before is not None and rank != before)
            moves += bool(moved)
    assert moves  # at 80 % class a, some team moves under some metric


@pytest.mark.parametrize("direction", [HIGHER, LOWER])
def test_rank_moves_are_in_the_order_of_the_ranking_after_undefined_last_ties_by_name(direction):
    rng = np.random.default_rng(7)
    teams = [f"{'ab'[n % 2]}{'XYZxyz'[n % 6]}{n % 5}" for n in range(300)]  # names equal but for case, repeated
    before = [None if n % 11 == 0 else float(v) for n, v in enumerate(rng.integers(0, 9, len(teams)))]
    after = [None if n % 7 == 0 else float(v) for n, v in enumerate(rng.integers(0, 9, len(teams)))]
    moves = shifts_page.rank_moves(teams, before, after, direction)

    def key(row: int):
        return (*sort_key(after[row], direction), teams[row].lower(), row)

    ranks_before, ranks_after = competition_ranks(before, direction), competition_ranks(after, direction)
    assert [(m.team, m.value_before, m.value_after, m.rank_before, m.rank_after) for m in moves] == [
        (teams[row], before[row], after[row], ranks_before[row], ranks_after[row])
        for row in sorted(range(len(teams)), key=key)
    ]
