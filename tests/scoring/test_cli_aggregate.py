"""The scorer's overall ranking: ``--aggregate mean_rank|borda [--metrics ...] [--bootstrap B]``.

What this proves: the board JSON gains ``aggregate`` = {method, columns, value, rank} with the
columns of ``--metrics`` (every raw ranking column, as ``ranks.raw`` lists them, when absent),
and its values are the mean of the JSON's own ranks, or the teams strictly beaten under each
column, summed, with their competition ranks (ties as ties, undefined teams ``null``); with
``--bootstrap``, ``aggregate_intervals`` per team; nothing else in the JSON changes; the text
board prints it as a row; the LaTeX table appends it as a column, bold the best by its
direction, and says over which columns; and it is refused where it does not apply.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from tests.scoring.test_cli_board import SMALL_TEAMS, board_json, demo, latex_rows, run_main, small  # noqa: F401

CHOSEN = "macro_recall,kappa_c,recall[b],mcc"


def test_mean_rank_is_the_mean_of_the_board_s_ranks(small, capsys):  # noqa: F811
    gold, predictions = small
    plain = board_json(capsys, gold, predictions)
    board = board_json(capsys, gold, predictions, "--aggregate", "mean_rank")
    overall = board.pop("aggregate")
    assert board == plain
    assert overall["method"] == "mean_rank"
    assert overall["columns"] == list(board["ranks"]["raw"])
    ranks = board["ranks"]["raw"]
    for team in SMALL_TEAMS:
        team_ranks = [ranks[column][team] for column in overall["columns"]]
        expected = None if None in team_ranks else float(Fraction(sum(team_ranks), len(team_ranks)))
        assert overall["value"][team] == expected
    # Discriminant power is undefined for every team here (each has an empty cell), so no team
    # has a mean rank over every column; over columns defined for all but always_a (no MCC):
    assert set(overall["value"].values()) == {None}
    board = board_json(capsys, gold, predictions, "--aggregate", "mean_rank", "--metrics", "accuracy,mcc,kappa_c")
    # wrong is last under accuracy and kappa_c (5) but fourth under MCC, always_a having none.
    assert board["aggregate"]["value"] == {"best": 1.0, "twin1": 2.0, "twin2": 2.0, "always_a": None, "wrong": 14 / 3}
    assert board["aggregate"]["rank"] == {"best": 1, "twin1": 2, "twin2": 2, "always_a": None, "wrong": 4}


def test_borda_over_chosen_columns(small, capsys):  # noqa: F811
    gold, predictions = small
    board = board_json(capsys, gold, predictions, "--aggregate", "borda", "--metrics", CHOSEN)
    overall = board["aggregate"]
    assert overall["columns"] == ["macro_recall", "kappa_c", "recall[b]", "mcc"]
    sections = {"kappa_c": ("calibrated", "kappa")}
    ranks = {
        column: board["ranks"][sections.get(column, ("raw", column))[0]][sections.get(column, ("raw", column))[1]]
        for column in overall["columns"]
    }
    for team in SMALL_TEAMS:
        if any(ranks[column][team] is None for column in ranks):
            assert overall["value"][team] is None
            continue
        points = sum(
            sum(1 for other in SMALL_TEAMS if ranks[c][other] is not None and ranks[c][other] > ranks[c][team])
            for c in ranks
        )
        assert overall["value"][team] == points
    assert overall["rank"]["best"] == 1


def test_the_bootstrap_adds_the_overall_intervals(demo, capsys):  # noqa: F811
    gold, predictions = demo
    board = board_json(capsys, gold, predictions, "--aggregate", "mean_rank", "--bootstrap", "40", "--seed", "3")
    intervals = board["aggregate_intervals"]
    assert set(intervals) == set(board["teams"])
    for team in board["teams"]:
        low, high = intervals[team]["value"]
        best, worst = intervals[team]["rank"]
        assert 1.0 <= low <= high and 1 <= best <= worst <= len(board["teams"])
        assert all(isinstance(bound, int) for bound in intervals[team]["rank"])


def test_the_text_board_prints_the_overall_ranking(small, capsys):  # noqa: F811
    gold, predictions = small
    status, out, _ = run_main(capsys, gold, *predictions, "--aggregate", "mean_rank", "--metrics", "accuracy,kappa")
    assert status == 0
    assert "Overall ranking: mean rank over 2 columns, lower is better, ties as ties" in out
    row = next(line for line in out.splitlines() if line.startswith("mean_rank"))
    assert row.split()[2:] == ["1.0000", "(1)", "2.0000", "(2)", "2.0000", "(2)", "4.0000", "(4)", "5.0000", "(5)"]


def test_latex_appends_the_overall_column(small, capsys):  # noqa: F811
    gold, predictions = small
    status, out, _ = run_main(
        capsys, gold, *predictions, "--format", "latex", "--metrics", "accuracy,kappa", "--aggregate", "mean_rank"
    )
    assert status == 0
    rows = latex_rows(out)
    assert rows["best"][-1] == "\\textbf{1.00}" and rows["wrong"][-1] == "5.00"
    assert "Teams ranked by 2 metrics and 1 overall ranking" in out
    assert "MR $= \\frac{1}{k}\\sum_{c} \\mathrm{rank}_c$ over the $k = 2$ columns Acc, \\ensuremath{\\kappa}" in out
    assert "(the lowest of MR: lower is better)" in out


def test_aggregate_is_refused_where_it_does_not_apply(small, capsys):  # noqa: F811
    gold, predictions = small
    status, out, err = run_main(capsys, gold, predictions[0], "--aggregate", "mean_rank")
    assert status == 2 and out == ""
    assert "--aggregate ranks the teams of a board" in err
    with pytest.raises(SystemExit):
        run_main(capsys, gold, *predictions, "--aggregate", "median")
    assert "invalid choice: 'median'" in capsys.readouterr().err
