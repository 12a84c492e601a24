"""Primary and contrastive runs (SemEval's practice): in a phase that takes contrastive runs a
team marks one primary run, which counts, and up to N contrastive ones, listed under it on the
board, in the exports and the LaTeX table, and never ranked; marks are frozen at the close."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors
from leaderboard.errors import problem_codes
from leaderboard.models import Phase, Submission
from leaderboard.pages.results import export
from leaderboard.selectors.boards import board_data, leaderboard
from leaderboard.services.submissions import submission_choose, submission_mark
from leaderboard.services.tasks import phase_update
from leaderboard.services.teams import team_create
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db

WORST = b"id,label\n1,b\n2,c\n3,a\n4,b\n5,c\n6,a\n7,b\n8,b\n"


@pytest.fixture
def runs(make_task, make_user, submit):
    """A phase taking two contrastive runs; Alpha uploads a primary run and two contrastive ones,
    Beta one unmarked run."""
    task = make_task(counting=Phase.Counting.CHOSEN, contrastive_runs=2)
    alice, bob = make_user("alice"), make_user("bob")
    team_create(task=task, user=alice, name="Alpha")
    team_create(task=task, user=bob, name="Beta")
    marked = {
        "primary": submit(task, alice, MOSTLY_A, mark="primary"),
        "contrastive-1": submit(task, alice, PERFECT, mark="contrastive-1"),
        "contrastive-2": submit(task, alice, WORST, mark="contrastive-2"),
    }
    submit(task, bob, MOSTLY_A)
    return task, alice, marked


@pytest.mark.both_kinds
def test_the_primary_run_counts_and_the_contrastive_ones_are_listed_unranked(runs):
    task, _, marked = runs
    board = leaderboard(phase=task.current_phase())
    alpha = next(entry for entry in board.scored if entry.name == "Alpha")
    assert alpha.submission_id == marked["primary"].pk  # not the perfect contrastive run 1
    assert [entry.ranks["accuracy"] for entry in board.scored] == [1, 1]  # Alpha ties Beta: MOSTLY_A both
    assert [(run.name, run.contrastive) for run in board.contrastive] == [("Alpha", 1), ("Alpha", 2)]
    assert board.contrastive[0].values["accuracy"] == 1.0 and board.contrastive[0].ranks == {}


@pytest.mark.both_kinds
def test_exports_list_each_team_s_contrastive_runs_under_it_or_leave_them_out(runs):
    task, _, marked = runs
    phase = task.current_phase()
    rows = list(csv.DictReader(io.StringIO(export(phase=phase, kind="csv").decode())))
    kinds = [(row["team"], row["kind"], row["accuracy rank"]) for row in rows]
    alpha = kinds.index(("Alpha", "team", "1"))
    assert kinds[alpha + 1 : alpha + 3] == [("Alpha", "contrastive", ""), ("Alpha", "contrastive", "")]
    assert rows[alpha + 1]["submission"] == str(marked["contrastive-1"].pk)
    without = list(csv.DictReader(io.StringIO(export(phase=phase, kind="csv", contrastive=False).decode())))
    assert [row["kind"] for row in without].count("contrastive") == 0
    data = json.loads(export(phase=phase, kind="json"))
    assert [row["status"] for row in data["rows"] if row["kind"] == "contrastive"] == [
        "contrastive run 1, not ranked",
        "contrastive run 2, not ranked",
    ]
    latex = export(phase=phase, kind="tex").decode()
    contrastive_line = next(line for line in latex.splitlines() if line.startswith("Alpha (contrastive 1)"))
    assert "100.0" in contrastive_line and r"\textbf" not in contrastive_line  # perfect, yet never bold
    assert b"contrastive" not in export(phase=phase, kind="tex", contrastive=False)


def test_marks_move_between_a_team_s_runs_one_primary_one_per_contrastive_number(runs):
    task, alice, marked = runs
    submission_mark(submission=marked["contrastive-2"], user=alice, mark="contrastive-1")
    states = {key: Submission.objects.get(pk=s.pk).run_mark for key, s in marked.items()}
    assert states == {"primary": "primary", "contrastive-1": "unmarked", "contrastive-2": "contrastive-1"}
    submission_mark(submission=marked["contrastive-1"], user=alice, mark="primary")
    states = {key: Submission.objects.get(pk=s.pk).run_mark for key, s in marked.items()}
    assert states == {"primary": "unmarked", "contrastive-1": "primary", "contrastive-2": "contrastive-1"}
    alpha = next(e for e in leaderboard(phase=task.current_phase()).scored if e.name == "Alpha")
    assert alpha.values["accuracy"] == 1.0 and alpha.submission_id == marked["contrastive-1"].pk
    submission_choose(submission=marked["contrastive-2"], user=alice)  # choosing makes it primary
    assert Submission.objects.get(pk=marked["contrastive-2"].pk).run_mark == "primary"


@pytest.mark.parametrize(("mark", "problem"), [("contrastive-3", errors.BAD_RUN_MARK), ("best", errors.BAD_RUN_MARK)])
def test_a_mark_the_phase_does_not_have_is_refused(runs, mark, problem):
    _, alice, marked = runs
    with pytest.raises(ValidationError) as refused:
        submission_mark(submission=marked["primary"], user=alice, mark=mark)
    assert problem_codes(refused.value) == {problem.code}
    assert Submission.objects.get(pk=marked["primary"].pk).run_mark == "primary"


@pytest.mark.both_kinds
def test_marks_are_frozen_at_the_close_and_only_members_mark(runs, make_user):
    task, alice, marked = runs
    with pytest.raises(Exception) as stranger:
        submission_mark(submission=marked["primary"], user=make_user("mallory"), mark="unmarked")
    assert "member" in str(stranger.value)
    phase = task.current_phase()
    Phase.objects.filter(pk=phase.pk).update(closes_at=timezone.now() - dt.timedelta(minutes=1))
    marked["primary"].refresh_from_db()
    with pytest.raises(ValidationError) as closed:
        submission_mark(submission=marked["primary"], user=alice, mark="contrastive-1")
    assert problem_codes(closed.value) == {errors.PHASE_CLOSED.code}


def test_a_phase_with_contrastive_runs_counts_the_chosen_run(task):
    phase = task.current_phase()
    with pytest.raises(ValidationError) as refused:
        phase_update(phase=phase, settings={"contrastive_runs": 2})  # counting stays "latest"
    assert problem_codes(refused.value) == {errors.CONTRASTIVE_NEEDS_CHOSEN.code}


def test_fewer_contrastive_runs_unmark_the_runs_beyond_them(runs):
    task, _, marked = runs
    phase_update(phase=task.current_phase(), settings={"contrastive_runs": 1})
    assert Submission.objects.get(pk=marked["contrastive-2"].pk).run_mark == "unmarked"
    data = board_data(task.current_phase())
    assert data.contrastive_marks.tolist() == [1]


def test_an_upload_marked_in_a_phase_without_contrastive_runs_is_refused_and_not_stored(task, make_user, submit):
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    with pytest.raises(ValidationError) as refused:
        submit(task, alice, PERFECT, mark="contrastive-1")
    assert problem_codes(refused.value) == {errors.NO_CONTRASTIVE_RUNS.code}
    assert not Submission.objects.exists()


@pytest.mark.both_kinds
def test_the_board_page_lists_the_runs_under_their_team_and_a_switch_hides_them(runs, client):
    task, _, _ = runs
    url = reverse("leaderboard:leaderboard", args=[task.slug])
    page = client.get(url).content.decode()
    assert page.count('class="contrastive-row"') == 2 and "contrastive run 2, not ranked" in page
    assert page.count('class="tag tag-contrastive"') == 2  # not taken for a baseline
    assert page.count('class="tag tag-baseline" title="baseline, not ranked"') == task.current_phase().baselines.count()
    alpha_row = page.index('<th scope="row" class="col-team">Alpha')
    assert alpha_row < page.index("contrastive run 1, not ranked") < page.index("contrastive run 2, not ranked")
    hidden = client.get(url, {"contrastive": "0"}).content.decode()
    assert 'class="contrastive-row"' not in hidden and "show them" in hidden
    assert "leaderboard.csv?contrastive=0" in hidden


@pytest.mark.both_kinds
def test_the_api_board_keeps_each_team_s_runs_on_its_page(runs, client):
    task, _, _ = runs
    rows = client.get(f"/api/tasks/{task.slug}/leaderboard", {"per_page": 1, "sort": "accuracy"}).json()["rows"]
    kinds = [(row["name"], row["kind"]) for row in rows if row["kind"] != "baseline"]
    assert kinds == [
        ("Alpha", "team"),
        ("Alpha", "contrastive"),
        ("Alpha", "contrastive"),
        ("Majority vote of the teams", "majority_vote"),  # the teams together, after every page's teams
        ("Oracle (any team right)", "oracle"),
    ]


@pytest.mark.both_kinds
def test_a_member_marks_a_run_from_its_page(runs, client):
    task, alice, marked = runs
    client.force_login(alice)
    page = client.get(marked["contrastive-2"].get_absolute_url()).content.decode()
    assert 'name="mark"' in page and "Contrastive run 2 of its team" in page
    url = reverse("leaderboard:submission_mark", args=[task.slug, marked["contrastive-2"].pk])
    client.post(url, {"mark": "primary"})
    assert Submission.objects.get(pk=marked["contrastive-2"].pk).run_mark == "primary"
    assert Submission.objects.get(pk=marked["primary"].pk).run_mark == "unmarked"
