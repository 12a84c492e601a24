"""The API's bootstrap intervals: the leaderboard's ``intervals`` object and the correlations'
``spearman_intervals``, under the boards' visibility."""

from __future__ import annotations

import pytest
from django.test import Client

from leaderboard import derived
from leaderboard.models import Phase, PhaseStability
from leaderboard.services.teams import team_create
from scoring.engine.columns import ranking_columns
from tests.conftest import MOSTLY_A, PERFECT


@pytest.fixture(autouse=True)
def bootstrap_settings(settings):
    settings.BOOTSTRAP_REPLICATES = 40
    settings.BOOTSTRAP_SEED = 3


@pytest.fixture
def board(make_task, make_user, submit):
    def make(**options):
        task = make_task(**options)
        members = {}
        for name, content in [("A", PERFECT), ("B", MOSTLY_A)]:
            members[name] = make_user(f"member-of-{name}")
            team_create(task=task, user=members[name], name=name)
            submit(task, members[name], content)
        return task, members

    return make


def get(client: Client, path: str):
    return client.get(f"/api{path}")


def test_leaderboard_intervals_in_the_cli_layout(board, client):
    task, _ = board()
    derived.compute("intervals", task.current_phase().pk)
    data = get(client, f"/tasks/{task.slug}/leaderboard").json()
    intervals = data["intervals"]
    assert intervals["status"] == "current"
    raw_ids = [column.id for column in ranking_columns(task.labels)]
    for section in ("raw", "calibrated"):
        assert list(intervals[section]) == raw_ids
        for column_id in raw_ids:
            assert set(intervals[section][column_id]) == {"A", "B"}
            for cell in intervals[section][column_id].values():
                assert set(cell) == {"score", "rank"}
                assert cell["score"] is None or len(cell["score"]) == 2
                assert cell["rank"] is None or all(isinstance(bound, int) for bound in cell["rank"])
    assert intervals["bootstrap"]["replicates"] == 40 and intervals["bootstrap"]["seed"] == 3
    assert "A" in intervals["tied_with_leader"]["raw"]["macro_f1"]
    assert intervals["skipped"] == {}


def test_leaderboard_says_recomputing_without_stale_values(board, client, make_user, submit, monkeypatch):
    task, _ = board()
    monkeypatch.setattr(derived, "hand_over", lambda kind, phase_id: None)  # a busy queue
    late = make_user("late")
    team_create(task=task, user=late, name="C")
    submit(task, late, MOSTLY_A)
    intervals = get(client, f"/tasks/{task.slug}/leaderboard").json()["intervals"]
    assert intervals == {"status": "recomputing"}


def test_leaderboard_says_unavailable_when_turned_off(board, client, settings):
    task, _ = board()
    settings.BOOTSTRAP_REPLICATES = 0
    assert get(client, f"/tasks/{task.slug}/leaderboard").json()["intervals"] == {"status": "unavailable"}


@pytest.mark.parametrize("column_set", ["paper", "all"])
def test_correlations_have_rho_intervals_in_the_layout_of_rho(board, client, column_set):
    task, _ = board()
    derived.compute("intervals", task.current_phase().pk)
    data = get(client, f"/tasks/{task.slug}/correlations?set={column_set}").json()
    assert data["intervals_status"] == "current"
    assert len(data["spearman_intervals"]) == len(data["rho"])
    for row, rho_row in zip(data["spearman_intervals"], data["rho"], strict=True):
        assert len(row) == len(rho_row)
        for cell in row:
            assert cell is None or (len(cell) == 2 and -1 <= cell[0] <= cell[1] <= 1)
    for index, row in enumerate(data["spearman_intervals"]):
        assert row[index] in (None, [1.0, 1.0])  # a ranking against itself


def test_correlations_before_the_intervals_exist(board, client):
    task, _ = board()
    PhaseStability.objects.all().delete()
    data = get(client, f"/tasks/{task.slug}/correlations").json()
    assert data["intervals_status"] == "recomputing"
    assert data["spearman_intervals"] is None


def test_hidden_board_gives_participants_no_intervals(board, organiser):
    task, members = board(visibility=Phase.Visibility.AFTER_CLOSE)
    derived.compute("intervals", task.current_phase().pk)
    participant = Client()
    participant.force_login(members["A"])
    for path in ("leaderboard", "correlations"):
        response = get(participant, f"/tasks/{task.slug}/{path}")
        assert response.status_code == 403
        assert "intervals" not in response.json()
    staff = Client()
    staff.force_login(organiser)
    assert get(staff, f"/tasks/{task.slug}/leaderboard").json()["intervals"]["status"] == "current"
