"""A task divided into subtasks (SemEval-2017 Task 4 and its subtasks): one registration, one
terms text, one set of organisers, teams and announcements; each subtask its own labels, metric,
phases and boards. A task without subtasks is its own single subtask, as before."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from leaderboard import errors
from leaderboard.errors import problem_codes
from leaderboard.models import (
    Announcement,
    Membership,
    OrganiserAction,
    Participant,
    Task,
    Team,
    TermsAcceptance,
)
from leaderboard.pages.results import board_data_of
from leaderboard.selectors.boards import leaderboard
from leaderboard.selectors.participation import participation_problem, team_of
from leaderboard.services import organisers as organiser_service
from leaderboard.services.registrations import announcement_post, registration_request
from leaderboard.services.tasks import phase_create, task_create, task_with_subtasks_create
from leaderboard.services.teams import team_create, team_join, team_update
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db

TWO_WAY_GOLD = b"id,label\n1,neg\n2,pos\n3,pos\n4,neg\n"
TWO_WAY_RUN = b"id,label\n1,neg\n2,pos\n3,neg\n4,neg\n"


@pytest.fixture
def family(organiser):
    """A task with terms, divided into subtask A (three classes) and B (two)."""
    now = timezone.now()
    root = task_with_subtasks_create(
        organiser=organiser, slug="t4", title="Task 4", description="", terms="Use the data for research only."
    )
    dates = {"opens_at": now - dt.timedelta(days=1), "closes_at": now + dt.timedelta(days=1)}
    a = task_create(
        organiser=organiser,
        parent=root,
        slug="t4a",
        title="Subtask A",
        description="",
        labels=["a", "b", "c"],
        gold_name="gold.csv",
        gold_content=GOLD,
        primary_metric="macro_recall",
        **dates,
    )
    b = task_create(
        organiser=organiser,
        parent=root,
        slug="t4b",
        title="Subtask B",
        description="",
        labels=["neg", "pos"],
        gold_name="gold.csv",
        gold_content=TWO_WAY_GOLD,
        primary_metric="accuracy",
        **dates,
    )
    return root, a, b


def test_a_newcomer_registers_once_forms_one_team_and_uploads_to_both(family, make_user, submit):
    root, a, b = family
    alice = make_user("alice")
    assert problem_codes(participation_problem(task=b, user=alice)) == {errors.NOT_REGISTERED.code}  # the parent's
    registration_request(task=a, user=alice, accept_terms=True)  # on a subtask's page: the parent's
    assert participation_problem(task=b, user=alice) is None
    team = team_create(task=b, user=alice, name="Alpha")
    assert team.task == root and team_of(task=a, user=alice) == team_of(task=b, user=alice) == team
    first, second = submit(a, alice, PERFECT), submit(b, alice, TWO_WAY_RUN)
    assert (first.task, second.task) == (a, b)
    assert [entry.name for entry in leaderboard(phase=a.current_phase()).scored] == ["Alpha"]
    (entry,) = leaderboard(phase=b.current_phase()).scored
    assert (entry.name, entry.values["accuracy"]) == ("Alpha", 0.75)
    with pytest.raises(ValidationError) as second_team:
        team_create(task=a, user=alice, name="Beta")
    assert problem_codes(second_team.value) == {errors.ALREADY_IN_TEAM.code}
    bob = make_user("bob")
    registration_request(task=root, user=bob, accept_terms=True)
    assert team_join(task=b, user=bob, invite_code=team.invite_code) == team


def test_a_team_renamed_is_renamed_on_every_subtask_s_board(family, make_user, submit):
    root, a, b = family
    alice = make_user("alice")
    registration_request(task=root, user=alice, accept_terms=True)
    team = team_create(task=root, user=alice, name="Alpha")
    submit(a, alice, PERFECT)
    submit(b, alice, TWO_WAY_RUN)
    before = [board_data_of(subtask.current_phase()).names for subtask in (a, b)]
    team_update(team=team, user=alice, changes={"name": "Omega"})
    for subtask in (a, b):
        subtask.refresh_from_db()
    after = [board_data_of(subtask.current_phase()).names for subtask in (a, b)]  # not a stale cached board
    assert before == [("Alpha",), ("Alpha",)] and after == [("Omega",), ("Omega",)]


def test_a_team_removed_leaves_every_subtask_s_board(family, make_user, submit, organiser):
    root, a, b = family
    alice = make_user("alice")
    registration_request(task=root, user=alice, accept_terms=True)
    team = team_create(task=root, user=alice, name="Alpha")
    submit(a, alice, PERFECT)
    submit(b, alice, TWO_WAY_RUN)
    organiser_service.team_remove(team=team, user=organiser, reason="plagiarism")
    assert not leaderboard(phase=a.current_phase()).entries and not leaderboard(phase=b.current_phase()).entries


def test_the_parent_s_organisers_and_announcements_are_the_subtasks(family, make_user, organiser):
    root, a, b = family
    assert a.is_organiser(organiser) and not a.organisers.exists()
    stranger = make_user("mallory")
    assert not b.is_organiser(stranger)
    announcement = announcement_post(task=b, author=organiser, title="Deadline", body="Friday.", email=False)
    assert announcement.task == root


def test_a_subtask_has_no_subtask_and_a_divided_task_no_phase(family, organiser, task):
    root, a, _ = family
    now = timezone.now()
    arguments = {
        "organiser": organiser,
        "title": "X",
        "description": "",
        "labels": ["a", "b", "c"],
        "gold_name": "gold.csv",
        "gold_content": GOLD,
        "primary_metric": "accuracy",
        "opens_at": now,
        "closes_at": now + dt.timedelta(days=1),
    }
    for parent, problem in ((a, errors.SUBTASK_OF_SUBTASK), (task, errors.HAS_PHASES)):
        with pytest.raises(ValidationError) as refused:
            task_create(slug=f"under-{parent.slug}", parent=parent, **arguments)
        assert problem_codes(refused.value) == {problem.code}
    with pytest.raises(ValidationError) as refused:
        phase_create(
            task=root,
            name="Extra",
            slug="extra",
            gold_name="gold.csv",
            gold_content=GOLD,
            opens_at=now,
            closes_at=now + dt.timedelta(days=1),
        )
    assert problem_codes(refused.value) == {errors.HAS_SUBTASKS.code}
    assert not Task.objects.filter(slug__startswith="under-").exists() and not root.phases.exists()


def test_a_task_without_subtasks_is_its_own_single_subtask(task, make_user, submit):
    alice = make_user("alice")
    team = team_create(task=task, user=alice, name="Alpha")
    assert task.root == task and not task.is_subtask and not task.is_divided and team.task == task
    submit(task, alice, MOSTLY_A)
    assert [entry.name for entry in leaderboard(phase=task.current_phase()).scored] == ["Alpha"]


def test_no_task_has_a_relation_to_its_community_s_rows():
    """``task.teams`` and its kind would read a subtask's own, empty, community: they do not exist."""
    for name in ("teams", "participants", "terms_acceptances", "announcements", "organiser_actions", "membership_set"):
        assert not hasattr(Task, name), name
    community_fields = [
        field
        for model in (Team, Membership, Participant, TermsAcceptance, Announcement, OrganiserAction)
        for field in model._meta.get_fields()
        if field.name == "task"
    ]
    assert len(community_fields) == 6
    assert {field.remote_field.related_name for field in community_fields} == {"+"}


def test_a_subtask_and_its_parent_reach_one_community(family, make_user, submit, organiser, client):
    root, a, b = family
    alice, bob = make_user("alice"), make_user("bob")
    for person, subtask, name in ((alice, a, "Alpha"), (bob, b, "Beta")):
        registration_request(task=subtask, user=person, accept_terms=True)
        team_create(task=subtask, user=person, name=name)
    run = submit(a, alice, PERFECT)
    submit(b, bob, TWO_WAY_RUN)
    announcement_post(task=a, author=organiser, title="Deadline", body="Friday.", email=False)
    organiser_service.submission_disqualify(submission=run, user=organiser, reason="a copy")
    organiser_service.team_remove(team=team_of(task=b, user=bob), user=organiser, reason="plagiarism")

    assert a.community == b.community == root.community and a.community.task == root
    for name in ("teams", "memberships", "participants", "terms_acceptances", "announcements", "organiser_actions"):
        rows = list(getattr(root.community, name))
        assert rows and list(getattr(a.community, name)) == list(getattr(b.community, name)) == rows, name
    assert list(a.community.organisers.all()) == [organiser] and a.community.terms == root.terms
    # Each subtask's board tells of the removal of a team of the community, and of its own runs only.
    board_a = client.get(f"/tasks/{a.slug}/leaderboard/").content.decode()
    board_b = client.get(f"/tasks/{b.slug}/leaderboard/").content.decode()
    assert "team <strong>Beta</strong> removed" in board_a and "team <strong>Beta</strong> removed" in board_b
    assert f"submission #{run.pk} of <strong>Alpha</strong> disqualified" in board_a
    assert "disqualified" not in board_b


def test_the_organisers_pages_of_a_divided_task_hold_every_subtask_s_runs(family, make_user, submit, organiser, client):
    """The parent's page, its "every submission" page (filtered by a subtask's phase, and its
    decisions) and its archive reach the runs of every subtask, each named after its subtask."""
    root, a, b = family
    alice = make_user("alice")
    registration_request(task=root, user=alice, accept_terms=True)
    team_create(task=root, user=alice, name="Alpha")
    run_a, run_b = submit(a, alice, PERFECT), submit(b, alice, TWO_WAY_RUN)
    client.force_login(organiser)
    page = client.get(f"/tasks/{root.slug}/").content.decode()
    assert f"#{run_a.pk}</a>" in page and f"#{run_b.pk}</a>" in page and "Primary score" in page
    every = client.get(f"/tasks/{root.slug}/submissions/").content.decode()
    assert "2 submissions" in every and "Subtask A · Evaluation" in every and "Subtask B · Evaluation" in every
    only_b = client.get(f"/tasks/{root.slug}/submissions/?phase={b.slug}/evaluation").content.decode()
    assert f"#{run_b.pk}</a>" in only_b and f"#{run_a.pk}</a>" not in only_b
    decided = client.post(f"/tasks/{root.slug}/submissions/", {"submission": run_b.pk, "reason": "a copy"})
    assert decided.status_code == 302
    run_b.refresh_from_db()
    assert run_b.disqualified_reason == "a copy"
    archive = client.get(f"/tasks/{root.slug}/archive/").content.decode()
    for subtask in (a, b):
        for path in (
            f"/tasks/{subtask.slug}/phases/evaluation/runs/",
            f"/tasks/{subtask.slug}/phases/evaluation/runs.zip",
        ):
            assert f'href="{path}"' in archive and client.get(path).status_code == 200


def test_a_divided_task_asked_for_a_phase_names_its_subtasks_phases(family, organiser, client):
    """Its phases are its subtasks': the API's runs, the command line and its pages say where they are."""
    root, a, b = family
    client.force_login(organiser)
    answer = client.get(f"/api/tasks/{root.slug}/submissions.zip").json()
    assert answer["code"] == "NO_SUCH_PHASE"
    assert answer["message"] == errors.PHASES_OF_SUBTASKS.format(known=f"{a.slug}: evaluation; {b.slug}: evaluation")
    page = client.get(f"/tasks/{root.slug}/leaderboard/")
    assert page.status_code == 404 and f"{a.slug}: evaluation" in page.content.decode()
    nowhere = client.get("/no/such/page/")
    assert nowhere.status_code == 404 and "Nothing is at <code>/no/such/page/</code>" in nowhere.content.decode()
