"""The API's board and what-if a page of teams at a time: the pages together hold every team
once, in the order of the page, and each page carries only its teams."""

from __future__ import annotations

import pytest

from leaderboard.pages import shifts as shifts_page
from leaderboard.selectors.boards import leaderboard
from scoring.engine.whatif import parse_target
from tests.leaderboard.support import teams_upload

pytestmark = pytest.mark.django_db

PREDICTIONS = {  # the toy gold (tests/conftest.py) is a b c a b c a a
    "Perfect": "a b c a b c a a",
    "Majority": "a b a a a a a a",
    "Balanced": "b b c c b c b c",
    "Wrong way": "b c a b c a b b",
    "Half": "a b c a a a a a",
}


@pytest.fixture
def board_task(make_task, make_user, submit):
    task = make_task()
    teams_upload(task, PREDICTIONS, make_user=make_user, submit=submit)
    return task


def test_the_board_s_pages_hold_every_team_once_in_board_order(client, board_task):
    order = [entry.name for entry in leaderboard(phase=board_task.current_phase()).scored]
    seen = []
    for page in (1, 2, 3):
        body = client.get("/api/tasks/toy/leaderboard", {"per_page": 2, "page": page}).json()
        assert (body["page"], body["pages"], body["teams"]) == (page, 3, len(PREDICTIONS))
        rows = [row["name"] for row in body["rows"] if row["kind"] == "team"]
        seen += rows
        assert set(body["intervals"].get("raw", {}).get("accuracy", {})) <= set(rows)
    assert seen == order
    past_the_end = client.get("/api/tasks/toy/leaderboard", {"per_page": 2, "page": 9}).json()
    assert past_the_end["page"] == 3
    everything = client.get("/api/tasks/toy/leaderboard", {"per_page": 0}).json()
    assert [row["name"] for row in everything["rows"] if row["kind"] == "team"] == order


def test_the_what_if_s_pages_follow_the_primary_metric_at_the_target(client, board_task):
    phase = board_task.current_phase()
    target = parse_target("0.8,0.1,0.1", labels=board_task.labels, gold_counts=shifts_page.gold_counts(phase))
    board = shifts_page.what_if_board(phase=phase, target=target)
    primary = next(column for column in board.columns() if column.id == board_task.primary_metric)
    whole = client.get("/api/tasks/toy/what-if", {"prevalence": "0.8,0.1,0.1", "per_page": 0}).json()
    assert whole["teams"] == len(PREDICTIONS) and whole["pages"] == 1
    ranks = {team: cells[primary.id]["rank"] for team, cells in _by_team(whole["columns"]).items()}
    order = sorted(PREDICTIONS, key=lambda team: (ranks[team] is None, ranks[team] or 0, team.lower()))
    seen = []
    for page in (1, 2, 3):
        body = client.get("/api/tasks/toy/what-if", {"prevalence": "0.8,0.1,0.1", "per_page": 2, "page": page}).json()
        assert (body["page"], body["pages"], body["teams"]) == (page, 3, len(PREDICTIONS))
        teams = list(body["per_class"])
        seen += teams
        for column, cells in body["columns"].items():
            assert list(cells) == teams
            assert cells == {team: whole["columns"][column][team] for team in teams}
            assert body["moved"][column] == [move for move in whole["moved"][column] if move["team"] in teams]
    assert [ranks[team] for team in seen] == [ranks[team] for team in order]
    assert sorted(seen) == sorted(PREDICTIONS)
    assert whole["columns"][primary.id] == {
        team: {"value": value, "rank": board.ranks(primary)[team], "rank_today": board.ranks_today(primary)[team]}
        for team, value in zip(board.teams, board.values(primary), strict=True)
    }


def _by_team(columns: dict) -> dict:
    teams = next(iter(columns.values()))
    return {team: {column: cells[team] for column, cells in columns.items()} for team in teams}
