"""Organiser tools: every submission filtered and paginated (no silent cap), disqualifying a
submission or removing a team with a reason the board shows and a record of who and when, the
participants' export, and the banner on pages participants cannot see yet."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors
from leaderboard.models import OrganiserAction, Phase, Submission, Task
from leaderboard.selectors.boards import counting_submissions, leaderboard
from leaderboard.selectors.organisers import SUBMISSIONS_PER_PAGE
from leaderboard.services.organisers import submission_disqualify, team_remove
from leaderboard.services.teams import team_create
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = [pytest.mark.django_db, pytest.mark.both_kinds]


def url(name: str, task: Task, *args: object) -> str:
    return reverse(f"leaderboard:{name}", args=[task.slug, *args])


@pytest.fixture
def contest(make_task, make_user, submit):
    task = make_task(max_per_day=100)
    alice, bob = make_user("alice", email="alice@example.org"), make_user("bob")
    alpha = team_create(task=task, user=alice, name="Alpha")
    beta = team_create(task=task, user=bob, name="=Beta")
    honest = submit(task, alice, MOSTLY_A)
    cheat = submit(task, alice, PERFECT)  # the latest: it counts
    submit(task, bob, MOSTLY_A)
    return task, alpha, beta, honest, cheat


def test_a_disqualified_submission_leaves_the_board_and_the_board_says_why(client, contest, organiser):
    task, alpha, _, honest, cheat = contest
    client.force_login(organiser)
    assert client.get(url("leaderboard", task)).status_code == 200  # cached before the decision
    response = client.post(
        url("organiser_submissions", task), {"submission": cheat.pk, "reason": "used the test labels"}
    )
    assert response.status_code == 302
    counting = counting_submissions(task.current_phase())
    assert counting[alpha.pk].pk == honest.pk  # the team's next submission counts instead
    page = client.get(url("leaderboard", task)).content.decode()
    assert f"submission #{cheat.pk} of <strong>Alpha</strong> disqualified. Reason: used the test labels" in page
    [action] = OrganiserAction.objects.all()
    assert (action.actor, action.kind, action.submission_id) == (organiser, "disqualify", cheat.pk)
    cheat.refresh_from_db()
    assert cheat.disqualified_by == organiser and cheat.status == Submission.Status.SCORED  # nothing deleted


def test_a_removed_team_leaves_the_board_with_its_reason(client, contest, organiser):
    task, _, beta, _, _ = contest
    client.force_login(organiser)
    submissions = url("organiser_submissions", task)
    assert f'<option value="{beta.pk}">=Beta</option>' in client.get(submissions).content.decode()
    response = client.post(submissions, {"team": beta.pk, "reason": "two accounts of one person"})
    assert response.status_code == 302
    names = [entry.name for entry in leaderboard(phase=task.current_phase()).entries]
    assert names == ["Alpha"]
    page = client.get(url("leaderboard", task)).content.decode()
    assert "team <strong>=Beta</strong> removed from the board. Reason: two accounts of one person" in page
    [action] = OrganiserAction.objects.all()
    assert (action.actor, action.kind, action.team_id) == (organiser, "remove_team", beta.pk)


def test_the_organisers_reach_every_submission_from_the_task_pages(client, contest, organiser):
    """From the task's page (and its parent's, for a subtask) to the page of its every
    submission, which lists the three runs."""
    task, *_ = contest
    client.force_login(organiser)
    for page in dict.fromkeys([task, task.community.task]):
        content = client.get(page.get_absolute_url()).content.decode()
        [submissions] = set(re.findall(r'href="(/tasks/[^"/]+/submissions/)"', content))
        assert client.get(submissions).context["page"].paginator.count == 3
        [participants] = set(re.findall(r'href="(/tasks/[^"/]+/participants\.csv)"', content))
        assert "alice,alice@example.org" in client.get(participants).content.decode()


def test_decisions_need_a_reason_and_an_organiser(contest, organiser):
    _, alpha, _, _, cheat = contest
    with pytest.raises(ValidationError) as caught:
        submission_disqualify(submission=cheat, user=organiser, reason="   ")
    assert errors.problem_codes(caught.value) == {errors.REASON_REQUIRED.code}
    member = alpha.members.get()
    with pytest.raises(PermissionDenied):
        team_remove(team=alpha, user=member, reason="spite")
    submission_disqualify(submission=cheat, user=organiser, reason="once")
    with pytest.raises(ValidationError):
        submission_disqualify(submission=cheat, user=organiser, reason="twice")
    assert OrganiserAction.objects.count() == 1


def test_participants_cannot_open_the_organiser_pages(client, contest):
    task, alpha, _, _, cheat = contest
    client.force_login(alpha.members.get())
    assert client.get(url("organiser_submissions", task)).status_code == 403
    assert client.post(url("organiser_submissions", task), {"submission": cheat.pk, "reason": "x"}).status_code == 403
    assert client.get(url("participants_csv", task)).status_code == 403


def test_every_submission_is_listed_page_by_page_and_filtered(client, make_task, make_user, organiser, submit):
    task = make_task(max_per_day=200, max_total=200)
    user = make_user("busy")
    team = team_create(task=task, user=user, name="Busy")
    now = timezone.now()
    phase = task.current_phase()
    file = Submission.objects.create(phase=phase, team=team, file=phase.gold_file, kind="hard").file
    Submission.objects.bulk_create(
        Submission(phase=phase, team=team, file=file, kind="hard", created_at=now - dt.timedelta(seconds=n))
        for n in range(SUBMISSIONS_PER_PAGE + 10)
    )
    client.force_login(organiser)
    first = client.get(url("organiser_submissions", task))
    assert first.context["page"].paginator.count == SUBMISSIONS_PER_PAGE + 11
    assert len(first.context["page"].object_list) == SUBMISSIONS_PER_PAGE
    second = client.get(url("organiser_submissions", task), {"page": 2})
    assert len(second.context["page"].object_list) == 11
    scored = submit(task, user, PERFECT)
    only_scored = client.get(url("organiser_submissions", task), {"status": "scored", "team": team.pk})
    assert [s.pk for s in only_scored.context["page"].object_list] == [scored.pk]


def test_the_participants_export_lists_members_with_addresses_safely(client, contest, organiser):
    task, *_ = contest
    client.force_login(organiser)
    response = client.get(url("participants_csv", task))
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["team", "system", "removed", "user", "email"]
    assert ["Alpha", "", "", "alice", "alice@example.org"] in rows
    assert ["'=Beta", "", "", "bob", ""] in rows


def test_organisers_are_told_what_participants_cannot_see_yet(client, make_task, make_user, organiser):
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE)
    client.force_login(organiser)
    for name in ("task_detail", "leaderboard", "disagreements"):
        assert "Only organisers see this." in client.get(url(name, task)).content.decode(), name
    client.force_login(make_user("someone"))
    assert "Only organisers see this." not in client.get(url("task_detail", task)).content.decode()
    Phase.objects.filter(task=task).update(closes_at=timezone.now() - dt.timedelta(seconds=1))
    client.force_login(organiser)
    page = client.get(url("task_detail", task)).content.decode()
    assert "Only organisers see this." not in page and "hidden until" not in page
