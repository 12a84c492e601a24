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

pytestmark = [pytest.mark.django_db, pytest.mark.both_kinds]


def url(name: str, task: Task, *args: object) -> str:
    return reverse(f"leaderboard:{name}", args=[task.slug, *args])


def post(client, address: str, data: dict | None = None) -> tuple[str, list[str]]:
    """Post a form as a browser does: where it leads, and the messages shown there."""
    response = client.post(address, data or {}, follow=True)
    [(landing, _)] = response.redirect_chain
    return landing, [str(message) for message in response.context["messages"]]


def pages(task: Task) -> list[Task]:
    """The tasks whose pages show a team's tools: the task's own, and its parent's (that of the
    community) for a subtask."""
    return list(dict.fromkeys([task, task.community.task]))


@pytest.fixture
def alpha(make_task, make_user):
    task = make_task(max_per_day=3, max_total=5)
    alice, bob = make_user("alice"), make_user("bob")
    team = team_create(task=task, user=alice, name="Alpha")
    team_join(task=task, user=bob, invite_code=team.invite_code)
    return task, team, alice, bob


def test_the_team_page_shows_members_invite_code_and_the_system(client, alpha, submit):
    task, team, alice, _ = alpha
    run = submit(task, alice, PERFECT)
    client.force_login(alice)
    for page in pages(task):
        assert url("team_detail", page) in client.get(page.get_absolute_url()).content.decode()  # "Team page"
    response = client.post(
        url("team_detail", task.community.task),
        {"name": "Alpha Prime", "system_name": "BERT-ish", "system_description": "fine-tuned", "paper_url": ""},
    )
    assert response.status_code == 302
    team.refresh_from_db()
    assert (team.name, team.system_name, team.system_description) == ("Alpha Prime", "BERT-ish", "fine-tuned")
    for page in pages(task):
        shown = client.get(url("team_detail", page)).content.decode()
        assert "<h1>Alpha Prime</h1>" in shown and "alice, bob" in shown and team.invite_code in shown
        assert "BERT-ish" in shown and run.get_absolute_url() in shown  # the run, under the subtask's phase


def test_renaming_to_a_taken_name_is_a_form_error(client, alpha, make_user):
    task, _, alice, _ = alpha
    team_create(task=task, user=make_user("carol"), name="Beta")
    client.force_login(alice)
    response = client.post(url("team_detail", task), {"name": "BETA"})
    assert response.status_code == 200
    assert response.context["form"].errors["name"] == [errors.TEAM_NAME_TAKEN.format(name="BETA")]


def test_a_new_invite_code_replaces_the_old_one(client, alpha, make_user):
    task, team, alice, _ = alpha
    old = team.invite_code
    holder = task.community.task
    client.force_login(alice)
    assert url("team_invite_regenerate", holder) in client.get(url("team_detail", holder)).content.decode()
    landing, shown = post(client, url("team_invite_regenerate", holder))
    team.refresh_from_db()
    new = team.invite_code
    assert new != old and landing == url("team_detail", holder)
    assert shown == [f"The new invite code is {new}; the old one no longer works."]
    for page in pages(task):
        client.force_login(make_user(f"dan-{page.slug}"))
        assert post(client, url("team_join", page), {"invite_code": old}) == (
            page.get_absolute_url(),
            [errors.BAD_INVITE],
        )
    client.force_login(make_user("erin"))
    assert post(client, url("team_join", task), {"invite_code": new})[1] == ["You joined the team “Alpha”."]
    assert list(team.members.order_by("username").values_list("username", flat=True)) == ["alice", "bob", "erin"]


def test_only_members_change_the_team(alpha, make_user):
    _, team, _, _ = alpha
    with pytest.raises(PermissionDenied):
        team_update(team=team, user=make_user("mallory"), changes={"name": "Owned"})
    with pytest.raises(PermissionDenied):
        team_invite_regenerate(team=team, user=make_user("mallet"))


def test_leaving_keeps_a_member_while_the_team_has_submissions(client, alpha, submit):
    task, team, alice, bob = alpha
    submit(task, alice, PERFECT)
    holder = task.community.task
    client.force_login(bob)
    assert url("team_leave", task) in client.get(url("team_detail", task)).content.decode()
    assert post(client, url("team_leave", task)) == (task.get_absolute_url(), ["You left the team “Alpha”."])
    assert list(team.members.all()) == [alice]
    client.force_login(alice)
    assert post(client, url("team_leave", holder)) == (url("team_detail", holder), [errors.LAST_MEMBER])
    assert list(team.members.all()) == [alice]


def test_an_empty_team_goes_when_its_last_member_leaves(client, make_task, make_user):
    task = make_task()
    alice = make_user("alice")
    team = team_create(task=task, user=alice, name="Solo")
    client.force_login(alice)
    holder = task.community.task
    assert post(client, url("team_leave", holder)) == (holder.get_absolute_url(), ["You left the team “Solo”."])
    assert not Team.objects.filter(pk=team.pk).exists()
    assert "Create a team" in client.get(task.get_absolute_url()).content.decode()


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
