"""A sealed evaluation: nothing changes after the close, the gold cannot be read through
feedback, and replacing the gold file is previewed, confirmed and loses no score.

Each test is an attack or an auditor's check that the product failed before these defences.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors, selectors, services
from leaderboard.models import Phase, Submission, Task, Team
from leaderboard.services.scoring import GOLD_NO_LONGER_MATCHES
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db


def close(task: Task) -> None:
    """Close the task's only phase a second ago."""
    Phase.objects.filter(task=task).update(closes_at=timezone.now() - dt.timedelta(seconds=1))


# --- nothing changes after the close --------------------------------------------------------------


def test_choosing_after_the_close_is_refused_and_the_final_board_stays(client, make_task, make_user, submit):
    task = make_task(counting=Phase.Counting.CHOSEN)
    alice = make_user("alice")
    services.team_create(task=task, user=alice, name="Alpha")
    good = submit(task, alice, PERFECT)
    worse = submit(task, alice, MOSTLY_A)  # the latest counts while nothing is chosen
    close(task)
    phase = task.current_phase()
    before = selectors.leaderboard(phase=phase).entries[0].submission.pk
    assert before == worse.pk

    client.force_login(alice)
    response = client.post(reverse("leaderboard:submission_choose", args=[task.slug, good.pk]), follow=True)
    shown = [str(message) for message in response.context["messages"]]
    assert shown == [errors.PHASE_CLOSED.format(phase=phase.name, closes_at=phase.closes_at)]
    assert not Submission.objects.filter(team__name="Alpha", chosen=True).exists()
    assert selectors.leaderboard(phase=phase).entries[0].submission.pk == before
    good.refresh_from_db()
    with pytest.raises(ValidationError) as caught:
        services.submission_choose(submission=good, user=alice)
    assert errors.problem_codes(caught.value) == {errors.PHASE_CLOSED.code}


def test_teams_cannot_be_formed_or_joined_after_the_close(make_task, make_user):
    task = make_task()
    team = services.team_create(task=task, user=make_user("alice"), name="Alpha")
    close(task)
    with pytest.raises(ValidationError) as created:
        services.team_create(task=task, user=make_user("bob"), name="Beta")
    with pytest.raises(ValidationError) as joined:
        services.team_join(task=task, user=make_user("carol"), invite_code=team.invite_code)
    assert errors.problem_codes(created.value) == errors.problem_codes(joined.value) == {errors.TASK_CLOSED.code}
    assert Team.objects.filter(task=task).count() == 1 and team.members.count() == 1


# --- the gold cannot be read through feedback ------------------------------------------------------

PROBE_ITEMS = 50
"""Item k gets probability 2^-(k+1) for class a: the sum over gold-a items, the cell (a, a) of
the soft confusion matrix, holds one bit per item, exactly (50 < 53 bits of a double)."""


def probe_task(make_task, **options) -> tuple[Task, np.ndarray]:
    rng = np.random.default_rng(7)
    gold = rng.integers(0, 2, size=PROBE_ITEMS)
    gold[:2] = [0, 1]  # both classes occur
    lines = ["id,label", *(f"{k},{'ab'[code]}" for k, code in enumerate(gold))]
    task = make_task("probed", gold=("\n".join(lines) + "\n").encode(), labels=("a", "b"), **options)
    return task, gold


def probe_file() -> bytes:
    rows = ["id,a,b"]
    for k in range(PROBE_ITEMS):
        q = 2.0 ** -(k + 1)
        rows.append(f"{k},{q!r},{1.0 - q!r}")
    return ("\n".join(rows) + "\n").encode()


def decode(page: str) -> np.ndarray | None:
    """The attacker's reading: the raw confusion matrix embedded in the page, if any, gives
    each item's gold label bit by bit; ``None`` when the page shows no matrix."""
    match = re.search(r'<script id="confusion-raw-data" type="application/json">(.*?)</script>', page, re.S)
    if not match or json.loads(match.group(1)) is None:
        return None
    figure = json.loads(json.loads(match.group(1)))
    mass_aa = figure["data"][0]["z"][0][0]
    return np.array([int(mass_aa * 2 ** (k + 1)) % 2 == 1 for k in range(PROBE_ITEMS)], dtype=int)


def every_number(text: str) -> list[str]:
    return re.findall(r"\d+\.\d+", text)


FORMAT_SECTION = re.compile(r'<section aria-labelledby="format-heading">.*?</section>', re.S)


def format_section(page: str) -> str:
    """The task page's file-format section: sample lines (with their uniform probabilities) and
    the rules, the same for everyone."""
    match = FORMAT_SECTION.search(page)
    return match.group(0) if match else ""


def probe(client, task: Task, user, submit) -> tuple[str, str, str]:
    services.team_create(task=task, user=user, name="Probers")
    submission = submit(task, user, probe_file())
    assert submission.status == Submission.Status.SCORED
    client.force_login(user)
    page = client.get(submission.get_absolute_url()).content.decode()
    task_page = client.get(task.get_absolute_url()).content.decode()
    status = client.get(reverse("leaderboard:submission_status", args=[task.slug, submission.pk])).content.decode()
    return page, task_page, status


def test_the_probe_reads_every_label_where_matrices_are_shown(client, make_task, make_user, submit):
    """The control: on a public board the page shows the exact matrix, and the decoder works."""
    task, gold = probe_task(make_task)
    page, _, _ = probe(client, task, make_user("prober"), submit)
    recovered = decode(page)
    assert recovered is not None and ((1 - recovered) == gold).all()  # bit set = gold a = code 0


@pytest.mark.parametrize("feedback", [None, Phase.Feedback.PRIMARY, Phase.Feedback.FULL])
def test_probing_a_hidden_board_recovers_nothing(client, make_task, make_user, submit, feedback):
    """Hidden results: by default a team learns only that its file was scored; with the primary
    score only, one number rounded to two decimals; even with full feedback no matrix or
    per-class table. None of it holds the labels."""
    options = {"visibility": Phase.Visibility.AFTER_CLOSE}
    if feedback:
        options["feedback"] = feedback
    task, _ = probe_task(make_task, **options)
    phase = task.current_phase()
    assert phase.feedback == (feedback or Phase.Feedback.VALIDATED)
    page, task_page, status = probe(client, task, make_user("prober"), submit)
    assert decode(page) is None
    assert "Per class" not in page and "Support" not in page
    assert json.loads(status).keys() == {"id", "status", "failure"}
    # the format section's numbers are the sample file's, the same as a visitor's: nothing of a score
    assert format_section(task_page) == format_section(Client().get(task.get_absolute_url()).content.decode())
    task_page = FORMAT_SECTION.sub("", task_page)
    if phase.feedback == Phase.Feedback.VALIDATED:
        assert every_number(page) == [] and every_number(task_page) == []
        assert "has been scored" in page
    elif phase.feedback == Phase.Feedback.PRIMARY:
        assert all(len(number.split(".")[1]) <= 2 for number in every_number(page + task_page))


def test_organisers_see_everything_of_a_hidden_board(client, make_task, make_user, organiser, submit):
    task, gold = probe_task(make_task, visibility=Phase.Visibility.AFTER_CLOSE)
    services.team_create(task=task, user=make_user("prober"), name="Probers")
    submission = submit(task, task.teams.get().members.get(), probe_file())
    client.force_login(organiser)
    recovered = decode(client.get(submission.get_absolute_url()).content.decode())
    assert recovered is not None and ((1 - recovered) == gold).all()


# --- replacing the gold is safe ---------------------------------------------------------------------


def test_a_gold_file_with_ids_missing_is_previewed_and_fails_submissions_as_the_organisers_change(
    make_task, make_user, submit, django_capture_on_commit_callbacks
):
    task = make_task(max_total=2)
    alice = make_user("alice")
    services.team_create(task=task, user=alice, name="Alpha")
    submission = submit(task, alice, PERFECT)
    fewer = b"\n".join(GOLD.splitlines()[:-2]) + b"\n"  # ids 7 and 8 gone

    phase = task.current_phase()
    change = services.gold_preview(phase=phase, gold_name="fewer.csv", gold_content=fewer)
    assert (change.removed, change.added, change.examples_removed) == (2, 0, ("7", "8"))
    phase.refresh_from_db()
    assert phase.gold_version == 1 and phase.pending_gold_file is not None  # nothing applied yet

    with django_capture_on_commit_callbacks(execute=False) as pending:
        services.gold_confirm(phase=phase)
    # Until the new scores land, the old ones stay on the board, marked as being re-scored.
    [entry] = selectors.leaderboard(phase=phase).scored
    assert entry.submission.pk == submission.pk and entry.being_rescored
    for callback in pending:
        callback()
    submission.refresh_from_db()
    assert submission.status == Submission.Status.FAILED
    assert submission.failure.startswith(GOLD_NO_LONGER_MATCHES.split("{")[0])
    assert "counts against no limit" in submission.failure
    # the failure counts against no limit: two more uploads fit in a total of 2
    replacement = b"\n".join(PERFECT.splitlines()[:-2]) + b"\n"
    for _ in range(2):
        assert submit(task, alice, replacement).status == Submission.Status.SCORED


def test_confirming_without_a_preview_is_refused(make_task):
    task = make_task()
    with pytest.raises(ValidationError) as caught:
        services.gold_confirm(phase=task.current_phase())
    assert errors.problem_codes(caught.value) == {errors.GOLD_NOT_PENDING.code}


def test_a_submission_stuck_in_scoring_is_recovered_by_the_organisers_rescore(
    make_task, make_user, submit, django_capture_on_commit_callbacks
):
    task = make_task()
    alice = make_user("alice")
    services.team_create(task=task, user=alice, name="Alpha")
    submission = submit(task, alice, PERFECT)
    long_ago = timezone.now() - dt.timedelta(hours=1)
    # Uploaded long ago, but its scoring started a moment ago: another job has it.
    Submission.objects.filter(pk=submission.pk).update(
        status=Submission.Status.SCORING, created_at=long_ago, scoring_started_at=timezone.now(), score_count=0
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert services.task_rescore(task=task) == 0
    # Its scoring started long ago: the job is lost.
    Submission.objects.filter(pk=submission.pk).update(scoring_started_at=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.task_rescore(task=task) == 1
    submission.refresh_from_db()
    assert submission.status == Submission.Status.SCORED


# --- names cannot impersonate -------------------------------------------------------------------------


def test_team_names_are_canonical_and_unique_whatever_their_case_or_width(make_task, make_user):
    task = make_task()
    team = services.team_create(task=task, user=make_user("a1"), name="  Ｔｅａｍ   Ｏｎｅ ")
    assert team.name == "Team One"
    for index, lookalike in enumerate(("team one", "TEAM ONE", "Team\u3000One", "𝐓eam One")):
        with pytest.raises(ValidationError) as caught:
            services.team_create(task=task, user=make_user(f"other{index}"), name=lookalike)
        assert errors.problem_codes(caught.value) == {errors.TEAM_NAME_TAKEN.code}, lookalike


@pytest.mark.parametrize("name", ["Team\u202eenO", "Te\u200bam", "\u2066Team\u2069", "Team\u00ad"])
def test_invisible_and_bidirectional_characters_are_refused_in_team_names(make_task, make_user, name):
    with pytest.raises(ValidationError) as caught:
        services.team_create(task=make_task(), user=make_user("alice"), name=name)
    assert errors.problem_codes(caught.value) == {errors.HIDDEN_CHARACTERS.code}
    assert "U+" in caught.value.messages[0]


def test_sign_up_refuses_lookalike_and_hidden_user_names(client, make_user):
    make_user("victim")
    for name, fragment in [("ｖictim", "already exists"), ("Victim", "already exists"), ("vic\u200btim", "U+200B")]:
        response = client.post(
            reverse("signup"), {"username": name, "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"}
        )
        assert response.status_code == 200, name
        assert fragment in " ".join(response.context["form"].errors["username"]), name
