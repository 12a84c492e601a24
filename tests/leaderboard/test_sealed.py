"""A sealed evaluation: nothing changes after the close, the gold cannot be read through
feedback, and replacing the gold file is previewed, confirmed and loses no score.

Each test is an attack or an auditor's check that the product failed before these defences.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors
from leaderboard.models import Membership, Phase, Submission, Task
from leaderboard.selectors.boards import leaderboard
from leaderboard.services.scoring import GOLD_NO_LONGER_MATCHES
from leaderboard.services.submissions import submission_choose
from leaderboard.services.tasks import gold_confirm, gold_preview, task_rescore
from leaderboard.services.teams import team_create, team_join, team_update
from leaderboard.services.tokens import token_create
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db


def close(task: Task) -> None:
    """Close the task's only phase a second ago."""
    Phase.objects.filter(task=task).update(closes_at=timezone.now() - dt.timedelta(seconds=1))


# --- nothing changes after the close --------------------------------------------------------------


def test_choosing_after_the_close_is_refused_and_the_final_board_stays(client, make_task, make_user, submit):
    task = make_task(counting=Phase.Counting.CHOSEN)
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    good = submit(task, alice, PERFECT)
    worse = submit(task, alice, MOSTLY_A)  # the latest counts while nothing is chosen
    close(task)
    phase = task.current_phase()
    before = leaderboard(phase=phase).entries[0].submission_id
    assert before == worse.pk

    client.force_login(alice)
    response = client.post(reverse("leaderboard:submission_choose", args=[task.slug, good.pk]), follow=True)
    shown = [str(message) for message in response.context["messages"]]
    assert shown == [errors.PHASE_CLOSED.format(phase=phase.name, closes_at=phase.closes_at)]
    assert not Submission.objects.filter(team__name="Alpha", chosen=True).exists()
    assert leaderboard(phase=phase).entries[0].submission_id == before
    good.refresh_from_db()
    with pytest.raises(ValidationError) as caught:
        submission_choose(submission=good, user=alice)
    assert errors.problem_codes(caught.value) == {errors.PHASE_CLOSED.code}


@pytest.mark.both_kinds
def test_teams_cannot_be_formed_or_joined_after_the_close(make_task, make_user):
    task = make_task()
    team = team_create(task=task, user=make_user("alice"), name="Alpha")
    close(task)
    with pytest.raises(ValidationError) as created:
        team_create(task=task, user=make_user("bob"), name="Beta")
    with pytest.raises(ValidationError) as joined:
        team_join(task=task, user=make_user("carol"), invite_code=team.invite_code)
    assert errors.problem_codes(created.value) == errors.problem_codes(joined.value) == {errors.TASK_CLOSED.code}
    assert task.community.teams.count() == 1 and team.members.count() == 1


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
    team_create(task=task, user=user, name="Probers")
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
    team_create(task=task, user=make_user("prober"), name="Probers")
    submission = submit(task, task.community.teams.get().members.get(), probe_file())
    client.force_login(organiser)
    recovered = decode(client.get(submission.get_absolute_url()).content.decode())
    assert recovered is not None and ((1 - recovered) == gold).all()


# --- replacing the gold is safe ---------------------------------------------------------------------


def test_a_gold_file_with_ids_missing_is_previewed_and_fails_submissions_as_the_organisers_change(
    make_task, make_user, submit, django_capture_on_commit_callbacks
):
    task = make_task(max_total=2)
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submission = submit(task, alice, PERFECT)
    fewer = b"\n".join(GOLD.splitlines()[:-2]) + b"\n"  # ids 7 and 8 gone

    phase = task.current_phase()
    change = gold_preview(phase=phase, gold_name="fewer.csv", gold_content=fewer)
    assert (change.removed, change.added, change.examples_removed) == (2, 0, ("7", "8"))
    phase.refresh_from_db()
    assert phase.gold_version == 1 and phase.pending_gold_file is not None  # nothing applied yet

    with django_capture_on_commit_callbacks(execute=False) as pending:
        gold_confirm(phase=phase)
    # Until the new scores land, the old ones stay on the board, marked as being re-scored.
    [entry] = leaderboard(phase=phase).scored
    assert entry.submission_id == submission.pk and entry.being_rescored
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
        gold_confirm(phase=task.current_phase())
    assert errors.problem_codes(caught.value) == {errors.GOLD_NOT_PENDING.code}


def test_a_submission_stuck_in_scoring_is_recovered_by_the_organisers_rescore(
    make_task, make_user, submit, django_capture_on_commit_callbacks
):
    task = make_task()
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submission = submit(task, alice, PERFECT)
    long_ago = timezone.now() - dt.timedelta(hours=1)
    # Uploaded long ago, but its scoring started a moment ago: another job has it.
    Submission.objects.filter(pk=submission.pk).update(
        status=Submission.Status.SCORING, created_at=long_ago, scoring_started_at=timezone.now(), score_count=0
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert task_rescore(task=task) == 0
    # Its scoring started long ago: the job is lost.
    Submission.objects.filter(pk=submission.pk).update(scoring_started_at=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        assert task_rescore(task=task) == 1
    submission.refresh_from_db()
    assert submission.status == Submission.Status.SCORED


# --- names cannot impersonate -------------------------------------------------------------------------


def test_team_names_are_canonical_and_unique_whatever_their_case_or_width(make_task, make_user):
    task = make_task()
    team = team_create(task=task, user=make_user("a1"), name="  Ｔｅａｍ   Ｏｎｅ ")
    assert team.name == "Team One"
    for index, lookalike in enumerate(("team one", "TEAM ONE", "Team\u3000One", "𝐓eam One")):
        with pytest.raises(ValidationError) as caught:
            team_create(task=task, user=make_user(f"other{index}"), name=lookalike)
        assert errors.problem_codes(caught.value) == {errors.TEAM_NAME_TAKEN.code}, lookalike


@pytest.mark.parametrize(
    "lookalike",
    [
        "T\u0435am One",  # Cyrillic е
        "\u0422eam \u041ene",  # Cyrillic Т and О
        "\u03a4eam \u039fne",  # Greek Τ and Ο
        "Tea\u0578 One",  # the control: Armenian ո reads as n, "Tean One" is another name
    ],
)
@pytest.mark.both_kinds
def test_a_team_name_that_looks_like_another_is_refused_through_the_page(client, make_task, make_user, lookalike):
    task = make_task()
    team_create(task=task, user=make_user("a1"), name="Team One")
    mallory = make_user("mallory")
    client.force_login(mallory)
    response = client.post(reverse("leaderboard:team_create", args=[task.slug]), {"name": lookalike}, follow=True)
    shown = " ".join(str(message) for message in response.context["messages"])
    if lookalike == "Tea\u0578 One":
        assert task.community.teams.count() == 2  # a control: a different-looking name is a name
        return
    assert "looks like the name of the team 'Team One'" in shown
    assert task.community.teams.count() == 1


def test_renaming_a_team_to_look_like_another_is_refused(make_task, make_user):
    task = make_task()
    team_create(task=task, user=make_user("a1"), name="Iris")
    mallory = make_user("mallory")
    team = team_create(task=task, user=mallory, name="Mallory")
    for lookalike in ("lris", "1ris", "\u0406ris"):  # l, one, Cyrillic І
        with pytest.raises(ValidationError) as caught:
            team_update(team=team, user=mallory, changes={"name": lookalike})
        assert errors.problem_codes(caught.value) == {errors.TEAM_NAME_LOOKALIKE.code}, lookalike
    team.refresh_from_db()
    assert team.name == "Mallory"


@pytest.mark.parametrize("name", ["Team\u202eenO", "Te\u200bam", "\u2066Team\u2069", "Team\u00ad"])
def test_invisible_and_bidirectional_characters_are_refused_in_team_names(make_task, make_user, name):
    with pytest.raises(ValidationError) as caught:
        team_create(task=make_task(), user=make_user("alice"), name=name)
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


# --- a team learns no more from the API than from its page -----------------------------------------

LARGE_ITEMS = 12_284
"""The size of SemEval-2017 Task 4A's test set: about 4,000 items a class."""


@pytest.fixture
def large_hidden_task(make_task):
    """A hidden board over a gold file of 12,284 items in three classes (its labels known to the
    test only), and a factory of phases with each feedback policy."""
    rng = np.random.default_rng(11)
    gold = rng.integers(0, 3, size=LARGE_ITEMS)
    content = ("id,label\n" + "".join(f"{k},{'abc'[code]}\n" for k, code in enumerate(gold))).encode()

    def make(feedback: str | None, *, visibility=Phase.Visibility.AFTER_CLOSE) -> Task:
        options = {"visibility": visibility, **({"feedback": feedback} if feedback else {})}
        return make_task(f"large-{feedback}-{visibility}".replace("_", "-"), gold=content, **options)

    return make, gold


def api_recall(client: Client, submission: Submission, label: str) -> float | None:
    """What a team reads of its run's recall of ``label`` through ``GET /api/submissions/{id}``."""
    data = client.get(f"/api/submissions/{submission.pk}").json()
    rows = {row["column"]: row["raw"] for row in data.get("metrics") or []}
    return rows.get(f"recall[{label}]")


def powers_of_two_file(n_items: int) -> bytes:
    """Items 0..49 put probability 2^-(k+1) on class a and the rest on b; every other item puts
    nothing on a. The mass of a on gold-a items (recall of a times its count) holds one bit per
    probe item."""
    rows = ["id,a,b,c"]
    for k in range(n_items):
        q = 2.0 ** -(k + 1) if k < PROBE_ITEMS else 0.0
        rows.append(f"{k},{q!r},{1.0 - q!r},0")
    return ("\n".join(rows) + "\n").encode()


def labels_determined(recall: float | None, *, n_a: int) -> dict[int, bool]:
    """The attacker's decoding: the probe items whose label (a or not) the recall read fixes.
    The mass, in units of 2^-50, is an integer whose bit 49-k is item k's. A value with more than
    4 decimals is taken as exact; one with 4 only says the mass lies within half a unit of its
    last digit, so a bit is learnt only where every mass in that interval agrees on it (and on
    every bit above it)."""
    if recall is None:
        return {}
    scale = Fraction(2**PROBE_ITEMS) * n_a
    if round(recall, 4) != recall:
        low = high = round(Fraction(recall) * scale)
    else:
        half = Fraction(1, 2 * 10**4)
        low = max(0, math.ceil((Fraction(recall) - half) * scale))
        high = min(2**PROBE_ITEMS - 1, math.floor((Fraction(recall) + half) * scale))
    learnt = {}
    for k in range(PROBE_ITEMS):
        place = PROBE_ITEMS - 1 - k
        if low >> place == high >> place:
            learnt[k] = bool((low >> place) & 1)
    return learnt


@pytest.mark.parametrize("feedback", [Phase.Feedback.FULL, Phase.Feedback.PRIMARY, Phase.Feedback.VALIDATED])
def test_the_power_of_two_file_reads_no_label_through_the_api(large_hidden_task, make_user, submit, feedback):
    make, gold = large_hidden_task
    task = make(feedback)
    prober = make_user("prober")
    team_create(task=task, user=prober, name="Probers")
    submission = submit(task, prober, powers_of_two_file(LARGE_ITEMS))
    client = Client()
    client.force_login(prober)
    n_a = int((gold == 0).sum())
    learnt = labels_determined(api_recall(client, submission, "a"), n_a=n_a)
    # At most the top bit of a mass known to ±0.2: no better than guessing the most frequent class.
    assert len(learnt) <= 1
    page = client.get(submission.get_absolute_url()).content.decode()
    assert all(len(number.split(".")[1]) <= 4 for number in every_number(page))


def test_the_power_of_two_file_reads_every_label_at_full_precision(large_hidden_task, make_user, organiser, submit):
    """The control: read at full precision (by an organiser, who may), the same run gives all 50."""
    make, gold = large_hidden_task
    task = make(Phase.Feedback.FULL)
    prober = make_user("prober")
    team_create(task=task, user=prober, name="Probers")
    submission = submit(task, prober, powers_of_two_file(LARGE_ITEMS))
    client = Client()
    client.force_login(organiser)
    learnt = labels_determined(api_recall(client, submission, "a"), n_a=int((gold == 0).sum()))
    assert learnt == {k: bool(gold[k] == 0) for k in range(PROBE_ITEMS)}


def hard_file(labels: np.ndarray) -> bytes:
    return ("id,label\n" + "".join(f"{k},{'abc'[code]}\n" for k, code in enumerate(labels))).encode()


@pytest.mark.parametrize("feedback", [Phase.Feedback.FULL, Phase.Feedback.PRIMARY, Phase.Feedback.VALIDATED])
def test_hard_label_differencing_learns_at_most_one_label_per_upload(large_hidden_task, make_user, submit, feedback):
    """A base run (every item b), then runs that each move one item to a: comparing each answer
    with the base's, the attacker learns that item's label (where the scores show at all), and
    nothing about any other item."""
    make, gold = large_hidden_task
    task = make(feedback)
    Phase.objects.filter(task=task).update(max_per_day=50, max_total=50)
    prober = make_user("prober")
    team_create(task=task, user=prober, name="Probers")
    client = Client()
    client.force_login(prober)

    def read(labels: np.ndarray) -> dict:
        submission = submit(task, prober, hard_file(labels))
        data = client.get(f"/api/submissions/{submission.pk}").json()
        return {"primary": data["primary"], **{row["column"]: row["raw"] for row in data.get("metrics") or []}}

    base = np.ones(LARGE_ITEMS, dtype=int)
    before = read(base)
    learnt = {}
    for k in range(4):
        moved = base.copy()
        moved[k] = 0
        after = read(moved)
        if "recall[a]" in after:
            # recall of a rises iff k is an a; recall of b falls iff k is a b; else it is a c
            rose, fell = after["recall[a]"] > before["recall[a]"], after["recall[b]"] < before["recall[b]"]
            learnt[k] = 0 if rose else 1 if fell else 2
        else:
            assert after == before  # a rounded primary score, or nothing: no change shows
    assert len(learnt) <= 4  # one label per upload at most
    assert all(gold[k] == label for k, label in learnt.items())
    assert len(learnt) == (4 if feedback == Phase.Feedback.FULL else 0)


# --- a removed member ---------------------------------------------------------------------------------


@pytest.mark.both_kinds
def test_a_removed_member_can_no_longer_act_for_the_team_or_read_its_runs(make_task, make_user, submit, organiser):
    """Removed by the organisers in the admin (or gone by leaving): from the next request, the
    page, the API with the token made while a member, and every route of a team refuse."""
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE, feedback=Phase.Feedback.FULL)
    alice, mallory = make_user("alice"), make_user("mallory")
    team = team_create(task=task, user=alice, name="Alpha")
    team_join(task=task, user=mallory, invite_code=team.invite_code)
    run = submit(task, alice, PERFECT)
    Submission.objects.filter(pk=run.pk).update(description="our secret ensemble")
    secret = token_create(user=mallory, name="laptop")[1]
    staff = Client()
    staff.force_login(make_user("staff", is_staff=True, is_superuser=True))
    membership = Membership.objects.get(user=mallory)
    staff.post(reverse("admin:leaderboard_membership_delete", args=[membership.pk]), {"post": "yes"})
    assert not Membership.objects.filter(user=mallory).exists()

    page = Client()
    page.force_login(mallory)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    upload = {"file": SimpleUploadedFile("run.csv", PERFECT)}
    page.post(reverse("leaderboard:submission_create", args=[task.slug]), upload)
    assert (
        api.post(f"/api/tasks/{task.slug}/submissions", {"file": SimpleUploadedFile("run.csv", PERFECT)}).json()["code"]
        == errors.NO_TEAM.code
    )
    assert Submission.objects.filter(team=team).count() == 1
    page.post(reverse("leaderboard:team_detail", args=[task.slug]), {"name": "Hacked"})
    team.refresh_from_db()
    assert team.name == "Alpha"
    for address in (
        run.get_absolute_url(),
        reverse("leaderboard:submission_file", args=[task.slug, run.pk]),
        reverse("leaderboard:submission_status", args=[task.slug, run.pk]),
    ):
        assert page.get(address).status_code == 404, address
    assert api.get(f"/api/submissions/{run.pk}").status_code == 404
    assert api.get(f"/api/tasks/{task.slug}").json()["you"]["submissions"] == []
    assert page.post(reverse("leaderboard:submission_note", args=[task.slug, run.pk]), {"note": "x"}).status_code == 404
    run.refresh_from_db()
    assert run.description == "our secret ensemble"


@pytest.mark.parametrize("url", ["javascript:alert(1)", "ftp://example.org/paper.pdf", "data:text/html,hi"])
def test_a_paper_link_is_http_or_https_whatever_route_sets_it(client, make_task, make_user, url):
    task = make_task()
    alice = make_user("alice")
    team = team_create(task=task, user=alice, name="Alpha")
    with pytest.raises(ValidationError) as caught:
        team_update(team=team, user=alice, changes={"paper_url": url})
    assert "paper_url" in caught.value.message_dict
    client.force_login(alice)
    data = {"name": "Alpha", "system_name": "", "system_description": "", "paper_url": url}
    response = client.post(reverse("leaderboard:team_detail", args=[task.slug]), data)
    assert response.status_code == 200  # the form again, with the problem
    team.refresh_from_db()
    assert team.paper_url == ""
    assert team_update(team=team, user=alice, changes={"paper_url": "https://aclanthology.org/x"})
