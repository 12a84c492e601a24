"""The board's value cells, formatted directly for speed, read as every other page formats a
value (:func:`leaderboard.formatting.value_html`)."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from leaderboard.formatting import NO_RANK_BADGE, UNDEFINED_HTML, value_html
from leaderboard.pages.board_rows import NOT_RANKED, _Badges, _Format, _values

FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


@given(st.lists(FLOATS, min_size=1, max_size=30), st.sampled_from([0, 2, 4]))
def test_a_value_cell_reads_as_value_html_shows_the_value(values, digits):
    formats = [_Format(digits=digits)] * len(values)
    expected = [value_html(v if math.isfinite(v) else None, digits) for v in values]
    assert _values(np.array(values, dtype=np.float64), formats) == expected


def test_the_edge_values_a_board_holds():
    cells = _values(np.array([-0.0, -1e-9, 0.68124, np.nan, np.inf, 1.0]), [_Format()] * 6)
    assert cells == ["0.0000", "0.0000", "0.6812", UNDEFINED_HTML, UNDEFINED_HTML, "1.0000"]


def test_an_overall_column_of_a_row_ranked_with_nobody_has_no_value():
    formats = [_Format(), _Format(digits=0, overall=True)]
    assert _values(np.array([0.5, 3.0]), formats, ranked=False) == ["0.5000", NOT_RANKED]
    assert _values(np.array([0.5, 3.0]), formats) == ["0.5000", "3"]


def test_rank_badges_from_the_ranks_array_are_numbered_badges():
    badges = _Badges()
    ranks = np.array([1, 0, 12], dtype=np.int32).tolist()
    shown = [badges[rank or None] for rank in ranks]
    assert shown[1] == NO_RANK_BADGE
    assert 'title="rank 1"' in shown[0] and ">12<" in shown[2] and "12.0" not in shown[2]
