"""The overall column of a board: mean rank or Borda over a set of columns, chosen by the
organisers on the task's settings page or by a visitor exploring (``?overall=&over=``).

Each overall value is recomputed here from the board's own ranks (the toy task of
``test_boards``: a perfect team, a tie, teams that swap between metrics, a team undefined
under MCC), independently of :mod:`scoring.engine.aggregate`.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from leaderboard.selectors.boards import leaderboard
from scoring.engine.aggregate import column_sets
from tests.leaderboard.views import test_boards
from tests.leaderboard.views.test_boards import team_rows, url

pytestmark = pytest.mark.django_db
board_task = test_boards.board_task


def board_ranks(task, column_ids):
    """Team name → its board ranks under each column (None where undefined)."""
    board = leaderboard(phase=task.current_phase(), calibrated=None)
    return {entry.name: [entry.ranks[c] for c in column_ids] for entry in board.scored}


def mean_ranks(ranks):
    return {name: sum(found) / len(found) for name, found in ranks.items() if None not in found}


def borda_points(ranks):
    teams = {name: found for name, found in ranks.items() if None not in found}
    return {
        name: sum(
            sum(1 for other in ranks.values() if other[c] is not None and found[c] < other[c])
            for c in range(len(found))
        )
        for name, found in teams.items()
    }


def competition(values, lower_is_better):
    ordered = sorted(values.values(), reverse=not lower_is_better)
    return {name: ordered.index(value) + 1 for name, value in values.items()}


def csv_rows(text):
    return {row["team"]: row for row in csv.DictReader(io.StringIO(text)) if row["kind"] == "team"}


@pytest.mark.both_kinds
def test_a_visitor_adds_a_mean_rank_column_over_table8_that_the_board_sorts_by(client, board_task):
    ids = [column.id for column in column_sets(board_task.labels, primary="macro_f1")["table8"]]
    expected = mean_ranks(board_ranks(board_task, ids))
    assert "Always A" not in expected  # undefined under MCC: no overall value
    response = client.get(
        url("leaderboard", board_task), {"overall": "mean_rank", "over": "table8", "sort": "mean_rank"}
    )
    content = response.content.decode()
    assert response.context["columns"][0].id == "mean_rank"
    assert "Overall" in content and "the metrics of Table 8" in content
    ranks = competition(expected, lower_is_better=True)
    shown = team_rows(content)
    assert [name for _, name in shown[: len(expected)]] == sorted(expected, key=lambda name: (ranks[name], name))
    assert {name: int(rank) for rank, name in shown if name in ranks} == ranks
    download = client.get(
        reverse("leaderboard:leaderboard_csv", args=[board_task.slug]), {"overall": "mean_rank", "over": "table8"}
    )
    rows = csv_rows(download.content.decode())
    for name, value in expected.items():
        assert float(rows[name]["mean_rank"]) == value
        assert int(rows[name]["mean_rank rank"]) == ranks[name]
    assert rows["Always A"]["mean_rank"] == "" and rows["Always A"]["mean_rank rank"] == ""


@pytest.mark.both_kinds
def test_borda_over_chosen_columns_counts_the_teams_strictly_behind(client, board_task):
    chosen = ["accuracy", "macro_recall_c", "kappa"]
    expected = borda_points(board_ranks(board_task, chosen))
    response = client.get(url("leaderboard", board_task), {"overall": "borda", "over": ", ".join(chosen)})
    assert [column.id for column in response.context["overall"].columns] == chosen
    content = response.content.decode()
    assert ">Acc, macR_c, κ</option>" in content  # a set of the visitor's is named by its columns' symbols
    data = json.loads(
        client.get(
            reverse("leaderboard:leaderboard_json", args=[board_task.slug]),
            {"overall": "borda", "over": ",".join(chosen)},
        ).content
    )
    assert data["columns"][0]["id"] == "borda" and data["columns"][0]["over"] == chosen
    teams = [row for row in data["rows"] if row["kind"] == "team" and row["submission"]]
    values = {row["name"]: row["values"]["borda"] for row in teams}
    assert values == expected  # integers, as the CLI gives them
    assert all(isinstance(value, int) for value in values.values())
    ranks = {row["name"]: row["ranks"]["borda"] for row in teams}
    assert ranks == competition(expected, lower_is_better=False)
    # a tie is a tie: the twins have the same predictions, the same points and the same rank
    assert values["Twin A"] == values["Twin B"] and ranks["Twin A"] == ranks["Twin B"]
    baselines = [row for row in data["rows"] if row["kind"] == "baseline"]
    assert baselines and all(row["values"]["borda"] is None and row["ranks"]["borda"] is None for row in baselines)


@pytest.mark.both_kinds
def test_the_organisers_choice_on_the_settings_page_is_every_visitor_s_board(client, organiser, board_task):
    organiser_client = client.__class__()
    organiser_client.force_login(organiser)
    edit = reverse("leaderboard:task_edit", args=[board_task.slug])
    data = {
        "title": board_task.title,
        "description": board_task.description,
        "primary_metric": board_task.primary_metric,
        "overall_method": "borda",
        "overall_columns": "macro_f1, no_such_column",
        "registration": board_task.registration,
        "terms": board_task.terms,
    }
    refused = organiser_client.post(edit, data)
    assert refused.status_code == 200
    assert "no_such_column" in refused.content.decode()  # which column, and the known ones
    board_task.refresh_from_db()
    assert board_task.overall_method == ""

    assert organiser_client.post(edit, {**data, "overall_columns": "raw"}).status_code == 302
    anonymous = client.get(url("leaderboard", board_task))
    overall = anonymous.context["overall"]
    assert overall.method == "borda" and overall.columns == tuple(
        column_sets(board_task.labels, primary="macro_f1")["raw"]
    )
    assert "The organisers' choice." in anonymous.content.decode()
    # a visitor may hide it or explore another, and is offered the way back
    hidden = client.get(url("leaderboard", board_task), {"overall": "off"})
    assert hidden.context["overall"] is None and "back to it" in hidden.content.decode()
    api = client.get(f"/api/tasks/{board_task.slug}/leaderboard").json()
    assert api["columns"][0]["id"] == "borda"
    assert client.get(f"/api/tasks/{board_task.slug}/leaderboard", {"overall": "off"}).json()["columns"][0]["id"] != (
        "borda"
    )


@pytest.mark.both_kinds
def test_the_api_refuses_an_overall_ranking_that_names_nothing(client, board_task):
    path = f"/api/tasks/{board_task.slug}/leaderboard"
    for query in ({"overall": "median"}, {"overall": "borda", "over": "macro_f1,nope"}):
        response = client.get(path, query)
        assert response.status_code == 400
        assert response.json()["code"] == "BAD_OVERALL"
    found = client.get(path, {"overall": "mean_rank", "over": "raw", "sort": "mean_rank", "per_page": 0}).json()
    expected = mean_ranks(
        board_ranks(board_task, [c.id for c in column_sets(board_task.labels, primary="macro_f1")["raw"]])
    )
    values = {row["name"]: row["values"]["mean_rank"] for row in found["rows"] if row["kind"] == "team"}
    assert {name: value for name, value in values.items() if value is not None} == expected
    assert found["sort"] == "mean_rank"


def test_the_latex_table_carries_the_overall_column_and_says_how_it_is_made(client, board_task):
    table = client.get(
        reverse("leaderboard:leaderboard_tex", args=[board_task.slug]), {"overall": "mean_rank", "over": "table8"}
    ).content.decode()
    assert "MR" in table and re.search(r"over the \$k = \d+\$ columns", table)


def test_links_of_the_board_keep_the_visitor_s_overall_choice(client, board_task):
    content = client.get(url("leaderboard", board_task), {"overall": "borda", "over": "calibrated"}).content.decode()
    sort_links = re.findall(r'class="sort-link" href="([^"]+)"', content)
    assert sort_links and all("overall=borda" in link and "over=calibrated" in link for link in sort_links)
    assert re.search(r'leaderboard\.csv\?[^"]*overall=borda', content)


def test_switching_the_method_over_the_same_columns_shows_the_other_values(client, board_task):
    """Mean rank and Borda over the same set, the board sorted by the primary metric both times:
    the rows are not the other method's (the cached rows are keyed by the method too)."""
    ids = [column.id for column in column_sets(board_task.labels, primary="macro_f1")["table8"]]
    ranks = board_ranks(board_task, ids)
    for method, expected in (("mean_rank", mean_ranks(ranks)), ("borda", borda_points(ranks))):
        content = client.get(url("leaderboard", board_task), {"overall": method, "over": "table8"}).content.decode()
        first_cells = dict(
            re.findall(
                r'class="col-team">([^<]*)(?:<span[^>]*>[^<]*</span>)*</th>.*?<span class="value">([^<]*)<', content
            )
        )
        digits = 4 if method == "mean_rank" else 0
        assert {name: first_cells[name] for name in expected} == {
            name: f"{value:.{digits}f}" for name, value in expected.items()
        }
