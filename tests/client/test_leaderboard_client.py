"""The command-line client (client/leaderboard_client.py) against a live test server: it is
loaded from its file, as a participant would run it, and its ``main`` called with argv."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest

from leaderboard.models import Submission
from leaderboard.services.teams import team_create
from leaderboard.services.tokens import token_create
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db(transaction=True)

CLIENT = Path(__file__).resolve().parents[2] / "client" / "leaderboard_client.py"


@pytest.fixture(scope="module")
def client_module():
    spec = importlib.util.spec_from_file_location("leaderboard_client", CLIENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(module, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return module.main(list(argv), out=out), out.getvalue()


@pytest.fixture
def participant(make_task, make_user, submit):
    """A public task with team A (the client's user) and team B, which has scored already."""
    task = make_task()
    user, rival = make_user("alice"), make_user("bob")
    team_create(task=task, user=user, name="A")
    team_create(task=task, user=rival, name="B")
    submit(task, rival, MOSTLY_A)
    return task, token_create(user=user, name="client")[1]


def test_submit_uploads_waits_and_prints_the_scores(client_module, live_server, participant, tmp_path):
    task, secret = participant
    path = tmp_path / "predictions.csv"
    path.write_bytes(PERFECT)
    status, out = run(
        client_module, "--url", live_server.url, "--token", secret, "submit", task.slug, str(path), "--poll", "0.1"
    )
    assert status == 0, out
    assert "Uploading [" in out and "Status: scored" in out
    assert "macro_f1" in out and "1.0000" in out and "rank" in out
    assert Submission.objects.get(team__name="A").status == Submission.Status.SCORED


def test_board_prints_the_leaderboard(client_module, live_server, participant, tmp_path):
    task, _ = participant
    status, out = run(client_module, "--url", live_server.url, "board", task.slug, "--columns", "accuracy,kappa")
    assert status == 0, out
    lines = out.splitlines()
    assert lines[1].split() == ["team", "kind", "accuracy", "kappa"]
    assert any(line.startswith("B ") and "(1)" in line for line in lines)
    assert any("baseline" in line for line in lines)


def test_board_pages_through_the_teams(client_module, live_server, participant):
    task, _ = participant  # B scored, A not yet: two teams on the board
    pages = [
        run(client_module, "--url", live_server.url, "board", task.slug, "--per-page", "1", "--page", str(page))[1]
        for page in (1, 2)
    ]
    assert [page.splitlines()[-1] for page in pages] == [
        "Page 1 of 2 (2 teams): --page N for another",
        "Page 2 of 2 (2 teams): --page N for another",
    ]
    firsts = [next(line.split()[0] for line in page.splitlines()[3:] if "team" in line.split()) for page in pages]
    assert sorted(firsts) == ["A", "B"]
    status, whole = run(client_module, "--url", live_server.url, "board", task.slug)
    assert status == 0 and "Page " not in whole


def test_refusals_are_printed_with_their_message(client_module, live_server, participant, tmp_path, capsys):
    task, secret = participant
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"id,label\n1,z\n")
    status, _ = run(client_module, "--url", live_server.url, "--token", secret, "submit", task.slug, str(bad))
    assert status == 1
    refused = capsys.readouterr().err
    assert "Refused: " in refused and refused.rstrip().endswith("(400 UNKNOWN_LABEL)")  # a code, not a wording
    status, _ = run(client_module, "--url", live_server.url, "submit", task.slug, str(bad))  # no token
    assert status == 1 and "TOKEN_REQUIRED" in capsys.readouterr().err
    status, _ = run(client_module, "--url", live_server.url, "board", "no-such-task")
    assert status == 1 and "UNKNOWN_TASK" in capsys.readouterr().err


def test_a_phase_that_waits_for_its_gold_file_is_said_so(
    client_module, live_server, make_task, make_user, tmp_path, capsys
):
    """No upload and no board until the organisers give the gold file: the client prints the
    site's reason for both."""
    task = make_task(gold_content=None)
    user = make_user("alice")
    team_create(task=task, user=user, name="A")
    path = tmp_path / "predictions.csv"
    path.write_bytes(PERFECT)
    secret = token_create(user=user, name="client")[1]
    status, _ = run(client_module, "--url", live_server.url, "--token", secret, "submit", task.slug, str(path))
    message = "The Evaluation phase waits for its gold file: it takes uploads, and shows its leaderboard, once its"
    assert status == 1 and f"Refused: {message}" in capsys.readouterr().err
    status, _ = run(client_module, "--url", live_server.url, "board", task.slug)
    assert status == 1 and "(409 WAITS_FOR_GOLD)" in capsys.readouterr().err
    assert not Submission.objects.exists()
