"""A team's own page and tools: members, invite code, system description, leaving, the
submission that counts and why, the quota before any refusal, the uploaded file and a note."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors
from leaderboard.models import Phase, Task, Team
from leaderboard.services.submissions import submission_note
from leaderboard.services.teams import team_create, team_invite_regenerate, team_join, team_leave, team_update
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db


def url(name: str, task: Task, *args: object) -> str:
    return reverse(f"leaderboard:{name}", args=[task.slug, *args])


@pytest.fixture
def alpha(make_task, make_user):
    task = make_task(max_per_day=3, max_total=5)
    alice, bob = make_user("alice"), make_user("bob")
    team = team_create(task=task, user=alice, name="Alpha")
    team_join(task=task, user=bob, invite_code=team.invite_code)
    return task, team, alice, bob


def test_the_team_page_shows_members_invite_code_and_the_system(client, alpha):
    task, team, alice, _ = alpha
    client.force_login(alice)
    response = client.post(
        url("team_detail", task),
        {"name": "Alpha Prime", "system_name": "BERT-ish", "system_description": "fine-tuned", "paper_url": ""},
    )
    assert response.status_code == 302
    team.refresh_from_db()
    assert (team.name, team.system_name, team.system_description) == ("Alpha Prime", "BERT-ish", "fine-tuned")
    page = client.get(url("team_detail", task)).content.decode()
    assert "alice, bob" in page and team.invite_code in page and "BERT-ish" in page


def test_renaming_to_a_taken_name_is_a_form_error(client, alpha, make_user):
    task, _, alice, _ = alpha
    team_create(task=task, user=make_user("carol"), name="Beta")
    client.force_login(alice)
    response = client.post(url("team_detail", task), {"name": "BETA"})
    assert response.status_code == 200
    assert response.context["form"].errors["name"] == [errors.TEAM_NAME_TAKEN.format(name="BETA")]


def test_a_new_invite_code_replaces_the_old_one(alpha, make_user):
    task, team, alice, _ = alpha
    old = team.invite_code
    new = team_invite_regenerate(team=team, user=alice)
    assert new != old
    with pytest.raises(ValidationError) as caught:
        team_join(task=task, user=make_user("dan"), invite_code=old)
    assert errors.problem_codes(caught.value) == {errors.BAD_INVITE.code}
    assert team_join(task=task, user=make_user("erin"), invite_code=new) == team


def test_only_members_change_the_team(alpha, make_user):
    _, team, _, _ = alpha
    with pytest.raises(PermissionDenied):
        team_update(team=team, user=make_user("mallory"), changes={"name": "Owned"})
    with pytest.raises(PermissionDenied):
        team_invite_regenerate(team=team, user=make_user("mallet"))


def test_leaving_keeps_a_member_while_the_team_has_submissions(alpha, submit):
    task, team, alice, bob = alpha
    submit(task, alice, PERFECT)
    team_leave(team=team, user=bob)
    assert list(team.members.all()) == [alice]
    with pytest.raises(ValidationError) as caught:
        team_leave(team=team, user=alice)
    assert errors.problem_codes(caught.value) == {errors.LAST_MEMBER.code}


def test_an_empty_team_goes_when_its_last_member_leaves(make_task, make_user):
    task = make_task()
    alice = make_user("alice")
    team = team_create(task=task, user=alice, name="Solo")
    team_leave(team=team, user=alice)
    assert not Team.objects.filter(pk=team.pk).exists()


def test_nothing_about_a_team_changes_after_the_close(alpha):
    task, team, alice, bob = alpha
    Phase.objects.filter(task=task).update(closes_at=timezone.now() - dt.timedelta(seconds=1))
    for action in (
        lambda: team_update(team=team, user=alice, changes={"name": "Late"}),
        lambda: team_leave(team=team, user=bob),
    ):
        with pytest.raises(ValidationError) as caught:
            action()
        assert errors.problem_codes(caught.value) == {errors.TASK_CLOSED.code}


def test_the_task_page_marks_the_counting_submission_and_says_the_quota(client, alpha, submit):
    task, _, alice, _ = alpha
    first = submit(task, alice, PERFECT)
    latest = submit(task, alice, MOSTLY_A)
    client.force_login(alice)
    page = client.get(task.get_absolute_url()).content.decode()
    marked = re.findall(r"#(\d+)</a> <span class=\"tag tag-primary\"[^>]*>counts</span>", page)
    assert marked == [str(latest.pk)] and str(first.pk) != marked[0]
    assert "the one on the leaderboard (counts: the latest scored submission)" in page
    assert re.search(r"<strong>1</strong> upload left today\s*\(2 of 3 used", page)
    assert "<strong>3</strong> of 5 left in all" in page


def test_under_best_counting_a_hidden_validated_board_does_not_say_which_upload_scored_best(
    client, make_task, make_user, submit
):
    task = make_task(counting=Phase.Counting.BEST, visibility=Phase.Visibility.AFTER_CLOSE)
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submit(task, alice, PERFECT)
    submit(task, alice, MOSTLY_A)
    client.force_login(alice)
    page = client.get(task.get_absolute_url()).content.decode()
    assert ">counts</span>" not in page


def test_members_download_their_file_and_note_it_others_cannot(client, alpha, submit, make_user, organiser):
    task, _, alice, bob = alpha
    submission = submit(task, alice, PERFECT)
    client.force_login(bob)
    response = client.get(url("submission_file", task, submission.pk))
    assert response.status_code == 200 and response.content == PERFECT
    assert 'filename="run.csv"' in response["Content-Disposition"]
    client.post(url("submission_note", task, submission.pk), {"note": "  baseline run  "})
    submission.refresh_from_db()
    assert submission.description == "baseline run"
    client.force_login(organiser)
    assert client.get(url("submission_file", task, submission.pk)).status_code == 200
    client.force_login(make_user("stranger"))
    assert client.get(url("submission_file", task, submission.pk)).status_code == 404
    with pytest.raises(PermissionDenied):
        submission_note(submission=submission, user=make_user("other"), note="mine now")


def test_an_organiser_is_not_offered_a_team_on_their_own_task(client, make_task, organiser):
    task = make_task()
    client.force_login(organiser)
    page = client.get(task.get_absolute_url()).content.decode()
    assert "Create a team" not in page and "do not take part" in page
