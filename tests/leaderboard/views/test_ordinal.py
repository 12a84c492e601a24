"""A task whose labels form an ordered scale (SemEval-2017 Task 4C): the board also ranks the
mean absolute errors, lowest first, under the same rules as every column; rank correlations
compare who is better; a task that is not ordinal cannot rank by an error on a scale."""

from __future__ import annotations

from fractions import Fraction

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from leaderboard import errors
from leaderboard.errors import problem_codes
from leaderboard.selectors.boards import column_by_id, leaderboard, rank_correlations
from tests.leaderboard.support import teams_upload

pytestmark = pytest.mark.django_db

# The toy gold (tests/conftest.py) is a b c a b c a a, read as the scale a < b < c.
PREDICTIONS = {
    "Exact": "a b c a b c a a",  # no error
    "Near": "b b c a b b a a",  # two errors of one step
    "Far": "c b a a b c a c",  # three errors of two steps
}


@pytest.fixture
def scale(make_task, make_user, submit):
    task = make_task(ordinal=True, primary_metric="macro_mae")
    teams_upload(task, PREDICTIONS, make_user=make_user, submit=submit)
    return task


def test_the_board_ranks_the_errors_lowest_first(scale, client):
    board = leaderboard(phase=scale.current_phase(), sort="macro_mae")
    values = {entry.name: entry.values for entry in board.scored}
    # MAE^mu: the mean distance; MAE^M: the mean over the gold classes of each class's mean.
    assert values["Near"]["mae"] == float(Fraction(2, 8))
    assert values["Near"]["macro_mae"] == float((Fraction(1, 4) + Fraction(0) + Fraction(1, 2)) / 3)
    assert values["Far"]["mae"] == float(Fraction(6, 8))
    assert [entry.name for entry in board.scored] == ["Exact", "Near", "Far"]
    assert [entry.ranks["macro_mae"] for entry in board.scored] == [1, 2, 3]
    page = client.get(reverse("leaderboard:leaderboard", args=[scale.slug]), {"sort": "macro_mae"})
    html = page.content.decode()
    assert html.index(">Exact<") < html.index(">Near<") < html.index(">Far<")
    assert 'aria-sort="ascending"' in html


def test_an_errors_metric_page_shows_its_formula(scale, client):
    page = client.get(reverse("leaderboard:metric_detail", args=[scale.slug, "macro_mae"]))
    assert page.status_code == 200
    assert '<annotation encoding="application/x-tex">\\frac{1}{|C|}' in page.content.decode()


def test_an_error_and_a_score_that_agree_correlate_positively(scale):
    correlations = rank_correlations(phase=scale.current_phase(), column_ids=["macro_mae", "accuracy"])
    assert correlations.matrix["macro_mae"]["accuracy"].rho == 1.0


def test_a_task_that_is_not_ordinal_has_no_errors_and_cannot_rank_by_one(make_task, task):
    assert column_by_id(task, "macro_mae") is None
    with pytest.raises(ValidationError) as refused:
        make_task("other", primary_metric="macro_mae")
    assert problem_codes(refused.value) == {errors.PRIMARY_NEEDS_ORDINAL.code}
