"""Phases: a task runs in phases that follow one another, each with its own gold file, dates,
limits, counting rule, visibility and feedback, board and exports, data and sample files;
teams belong to the task and persist across its phases.

The phased task here has a public development phase (gold ``a b c a b c a a`` on ids 1–8) and
an evaluation phase hidden until its close, on other ids (``e1``–``e6``), so that a file for one
phase is refused by the other.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from fractions import Fraction

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from leaderboard import errors, samples
from leaderboard.models import Baseline, Phase, PhaseFile, Submission, Task, Team
from leaderboard.selectors.boards import counting_submissions, leaderboard, rank_correlations
from leaderboard.selectors.feedback import Level, feedback_level
from leaderboard.selectors.participation import COUNTING_REASONS, NOT_CHOSEN_REASON, counting_reason, quota, team_of
from leaderboard.services.submissions import submission_choose, submission_create
from leaderboard.services.tasks import gold_replace, phase_create, phase_file_add, phase_update
from leaderboard.services.teams import team_create, team_join
from scoring.engine import io as io_rules
from scoring.engine.io import PROBABILITY_TOLERANCE
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db

EVAL_GOLD = b"id,label\ne1,b\ne2,a\ne3,c\ne4,b\ne5,a\ne6,c\n"
EVAL_RUN = b"id,label\ne1,b\ne2,a\ne3,c\ne4,a\ne5,a\ne6,a\n"  # 4 of 6 right
FORM_TIME = "%Y-%m-%dT%H:%M"
codes = errors.problem_codes


def at(moment: dt.datetime) -> str:
    return moment.strftime(FORM_TIME)


@pytest.fixture
def make_phased(make_task):
    """A task whose development phase is open now (``stage="development"``), or closed with the
    evaluation phase open (``"evaluation"``), or both closed (``"over"``), or the development
    phase closed and the evaluation phase still to come (``"between"``)."""

    def make(stage: str = "evaluation", *, slug: str = "phased", dev_options=None, **eval_options) -> Task:
        now = timezone.now()
        day, hour = dt.timedelta(days=1), dt.timedelta(hours=1)
        windows = {
            "development": (now - day, now + day, now + 2 * day, now + 5 * day),
            "evaluation": (now - 5 * day, now - day, now - hour, now + 5 * day),
            "between": (now - 5 * day, now - day, now + day, now + 5 * day),
            "over": (now - 9 * day, now - 5 * day, now - 4 * day, now - day),
        }
        dev_opens, dev_closes, eval_opens, eval_closes = windows[stage]
        task = make_task(
            slug,
            opens_at=dev_opens,
            closes_at=dev_closes,
            phase_name="Development",
            phase_slug="development",
            **(dev_options or {}),
        )
        options = {"visibility": Phase.Visibility.AFTER_CLOSE, **eval_options}
        phase_create(
            task=task,
            name="Evaluation",
            slug="evaluation",
            gold_name="eval-gold.csv",
            gold_content=EVAL_GOLD,
            opens_at=eval_opens,
            closes_at=eval_closes,
            **options,
        )
        return Task.objects.get(pk=task.pk)

    return make


def phases_of(task: Task) -> tuple[Phase, Phase]:
    development, evaluation = task.ordered_phases()
    return development, evaluation


def earlier(phase: Phase) -> dt.datetime:
    """A moment inside ``phase``'s window (for uploads to a phase that has closed since)."""
    return phase.opens_at + dt.timedelta(hours=1)


@pytest.fixture
def member(make_user):
    return make_user("alice")


def url(name: str, task: Task, *args: object) -> str:
    return reverse(f"leaderboard:{name}", args=[task.slug, *args])


# --- creating phases ---------------------------------------------------------------------------


def test_a_task_gets_a_second_phase_with_its_own_gold_and_baselines(make_phased):
    task = make_phased()
    development, evaluation = phases_of(task)
    assert [(p.slug, p.name) for p in (development, evaluation)] == [
        ("development", "Development"),
        ("evaluation", "Evaluation"),
    ]
    assert bytes(development.gold_file.content) == GOLD and bytes(evaluation.gold_file.content) == EVAL_GOLD
    assert (development.labels, development.primary_metric) == (task.labels, task.primary_metric)
    assert evaluation.feedback == Phase.Feedback.VALIDATED  # the default of a hidden board
    majority = {p.slug: Baseline.objects.get(phase=p, kind="majority") for p in (development, evaluation)}
    assert majority["development"].metrics["accuracy"] == pytest.approx(4 / 8)
    assert majority["evaluation"].metrics["accuracy"] == pytest.approx(2 / 6)
    assert Baseline.objects.filter(phase__task=task).count() == 6
    assert task.current_phase() == evaluation and task.open_phase() == evaluation


def test_overlapping_phases_are_refused_with_a_message_naming_the_other(make_phased):
    task = make_phased()
    development, evaluation = phases_of(task)
    with pytest.raises(ValidationError) as caught:
        phase_create(
            task=task,
            name="Post-evaluation",
            slug="post",
            gold_name="g.csv",
            gold_content=GOLD,
            opens_at=evaluation.closes_at - dt.timedelta(hours=1),
            closes_at=evaluation.closes_at + dt.timedelta(days=3),
        )
    assert codes(caught.value) == {errors.PHASES_OVERLAP.code}
    expected = errors.PHASES_OVERLAP.format(
        other="Evaluation", opens_at=evaluation.opens_at, closes_at=evaluation.closes_at
    )
    assert caught.value.messages == [expected]
    with pytest.raises(ValidationError) as caught:
        phase_update(phase=development, settings={"closes_at": evaluation.opens_at + dt.timedelta(hours=1)})
    assert codes(caught.value) == {errors.PHASES_OVERLAP.code}
    with pytest.raises(ValidationError) as caught:
        phase_update(phase=development, settings={"closes_at": development.opens_at})
    assert codes(caught.value) == {errors.BAD_DATES.code}
    assert task.phases.count() == 2
    development.refresh_from_db()
    assert development.closes_at < evaluation.opens_at


def test_a_phase_that_follows_the_last_is_accepted(make_phased):
    task = make_phased()
    _, evaluation = phases_of(task)
    post = phase_create(
        task=task,
        name="Post-evaluation",
        slug="post",
        gold_name="g.csv",
        gold_content=GOLD,
        opens_at=evaluation.closes_at,
        closes_at=evaluation.closes_at + dt.timedelta(days=3),
    )
    assert [p.slug for p in task.ordered_phases()] == ["development", "evaluation", "post"]
    assert post.feedback == Phase.Feedback.FULL


def test_a_phase_slug_is_unique_in_its_task_only(make_phased):
    task = make_phased()
    _, evaluation = phases_of(task)
    later = {"opens_at": evaluation.closes_at, "closes_at": evaluation.closes_at + dt.timedelta(days=1)}
    with pytest.raises(ValidationError) as caught:
        phase_create(task=task, name="Again", slug="evaluation", gold_name="g.csv", gold_content=GOLD, **later)
    assert codes(caught.value) == {errors.PHASE_SLUG_TAKEN.code}
    assert caught.value.messages == [errors.PHASE_SLUG_TAKEN.format(slug="evaluation")]
    other = make_phased(slug="other")
    assert other.phases.filter(slug="evaluation").exists()


# --- uploads, limits, teams --------------------------------------------------------------------


def test_an_upload_goes_to_the_open_phase_and_is_scored_against_its_gold(make_phased, member, submit):
    task = make_phased()
    development, evaluation = phases_of(task)
    team_create(task=task, user=member, name="Alpha")
    submission = submit(task, member, EVAL_RUN)
    assert submission.phase == evaluation and submission.status == Submission.Status.SCORED
    assert submission.metrics["accuracy"] == pytest.approx(4 / 6)
    assert sum(map(sum, submission.confusion_matrix)) == 6
    with pytest.raises(ValidationError) as caught:  # a development file does not fit the evaluation gold
        submission_create(task=task, user=member, name="dev.csv", content=PERFECT)
    assert caught.value.messages == ["dev.csv, line 2: " + io_rules.UNKNOWN_ID.format(id="1")]
    earlier_run = submit(task, member, PERFECT, now=earlier(development))
    assert earlier_run.phase == development and earlier_run.metrics["accuracy"] == 1.0


def test_limits_and_quota_are_per_phase(make_phased, member, submit):
    task = make_phased(dev_options={"max_total": 1}, max_total=2)
    development, evaluation = phases_of(task)
    team_create(task=task, user=member, name="Alpha")
    submit(task, member, PERFECT, now=earlier(development))
    with pytest.raises(ValidationError) as caught:
        submission_create(
            task=task, user=member, name="x.csv", content=PERFECT, now=earlier(development) + dt.timedelta(hours=1)
        )
    assert codes(caught.value) == {errors.TOTAL_LIMIT.code}
    assert caught.value.messages == [errors.TOTAL_LIMIT.format(limit=1)]
    submit(task, member, EVAL_RUN)  # the development phase's limit is not the evaluation phase's
    submit(task, member, EVAL_RUN)
    with pytest.raises(ValidationError) as caught:
        submission_create(task=task, user=member, name="x.csv", content=EVAL_RUN)
    assert caught.value.messages == [errors.TOTAL_LIMIT.format(limit=2)]
    team = team_of(task=task, user=member)
    now = timezone.now()
    assert (
        quota(phase=development, team=team, now=now).used_total,
        quota(phase=development, team=team, now=now).total,
    ) == (1, 1)
    assert (
        quota(phase=evaluation, team=team, now=now).used_total,
        quota(phase=evaluation, team=team, now=now).left_total,
    ) == (2, 0)


@pytest.mark.both_kinds
def test_a_team_persists_across_phases(make_phased, member, make_user, submit, client):
    task = make_phased("development")
    team = team_create(task=task, user=member, name="Alpha")
    team_join(task=task, user=make_user("bob"), invite_code=team.invite_code)
    submit(task, member, PERFECT)
    advance(task)
    submit(task, member, EVAL_RUN)
    assert task.community.teams.count() == 1
    assert team_of(task=task, user=member) == team
    assert sorted(team.submissions.values_list("phase__slug", flat=True)) == ["development", "evaluation"]
    client.force_login(member)
    response = client.get(url("team_detail", task))
    assert [section.phase.slug for section in response.context["sections"]] == ["evaluation", "development"]
    assert [len(section.rows) for section in response.context["sections"]] == [1, 1]


def advance(task: Task) -> None:
    """Close the development phase now and open the evaluation phase."""
    development, evaluation = phases_of(task)
    now = timezone.now()
    phase_update(phase=development, settings={"closes_at": now - dt.timedelta(minutes=2)})
    phase_update(phase=evaluation, settings={"opens_at": now - dt.timedelta(minutes=1)})


# --- boards, exports, analyses -----------------------------------------------------------------


@pytest.fixture
def played(make_phased, member, make_user, submit):
    """Both phases public (the evaluation phase's board too), Alpha and Beta scored in each:
    Alpha perfect in development, Beta perfect in evaluation."""
    task = make_phased(visibility=Phase.Visibility.PUBLIC)
    development, _ = phases_of(task)
    bob = make_user("bob")
    team_create(task=task, user=member, name="Alpha")
    team_create(task=task, user=bob, name="Beta")
    submit(task, member, PERFECT, now=earlier(development))
    submit(task, bob, MOSTLY_A, now=earlier(development))
    submit(task, member, EVAL_RUN)
    submit(task, bob, EVAL_GOLD)
    return task


def test_boards_are_per_phase(played):
    development, evaluation = phases_of(played)
    boards = {p.slug: leaderboard(phase=p) for p in (development, evaluation)}
    values = {slug: {e.name: e.values["accuracy"] for e in board.scored} for slug, board in boards.items()}
    assert values["development"] == {"Alpha": 1.0, "Beta": pytest.approx(6 / 8)}
    assert values["evaluation"] == {"Alpha": pytest.approx(4 / 6), "Beta": 1.0}
    assert [e.name for e in boards["development"].scored] == ["Alpha", "Beta"]
    assert [e.name for e in boards["evaluation"].scored] == ["Beta", "Alpha"]
    assert set(
        Submission.objects.filter(pk__in=[e.submission_id for e in boards["evaluation"].scored]).values_list(
            "phase_id", flat=True
        )
    ) == {evaluation.pk}


def test_board_pages_by_phase_address_and_the_current_phase(client, played):
    development, evaluation = phases_of(played)
    current = client.get(url("leaderboard", played))
    by_phase = {p.slug: client.get(url("leaderboard", played, p.slug)) for p in (development, evaluation)}
    assert current.context["phase"] == evaluation
    assert by_phase["development"].context["phase"] == development
    assert reverse("leaderboard:leaderboard", args=[played.slug, "evaluation"]) == (
        f"/tasks/{played.slug}/phases/evaluation/leaderboard/"
    )
    assert development.get_absolute_url() == f"/tasks/{played.slug}/phases/development/leaderboard/"
    dev_page, eval_page = by_phase["development"].content.decode(), current.content.decode()
    assert dev_page.index(">Alpha<") < dev_page.index(">Beta<")  # Alpha perfect in development
    assert eval_page.index(">Beta<") < eval_page.index(">Alpha<")  # Beta perfect in evaluation
    assert by_phase["evaluation"].content == current.content  # the same page, shared by its two addresses
    assert client.get(url("leaderboard", played, "no-such-phase")).status_code == 404
    for name in ("metric_detail", "disagreements"):
        args = ("accuracy",) if name == "metric_detail" else ()
        dev_page = client.get(url(name, played, "development", *args))
        eval_page = client.get(url(name, played, "evaluation", *args))
        assert dev_page.status_code == eval_page.status_code == 200
        assert (dev_page.context["phase"], eval_page.context["phase"]) == (development, evaluation)
        current = client.get(url(name, played, *args))
        if name == "disagreements":  # shared by anonymous readers: the evaluation phase's page itself
            assert current.content == eval_page.content
        else:
            assert current.context["phase"] == evaluation
    metric = {
        phase: client.get(url("metric_detail", played, phase, "accuracy")).context["rows"]
        for phase in ("development", "evaluation")
    }
    assert metric["development"][0].name == "Alpha" and metric["evaluation"][0].name == "Beta"


def test_exports_are_per_phase_and_named_after_it(client, played):
    for slug, first in (("development", "Alpha"), ("evaluation", "Beta")):
        response = client.get(url("leaderboard_csv", played, slug))
        assert response["Content-Disposition"] == f'attachment; filename="phased-{slug}-leaderboard.csv"'
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert rows[0]["team"] == first
        response = client.get(url("leaderboard_json", played, slug))
        assert response["Content-Disposition"] == f'attachment; filename="phased-{slug}-leaderboard.json"'
        data = json.loads(response.content)
        assert data["phase"]["slug"] == slug and data["rows"][0]["name"] == first
    current = client.get(url("leaderboard_csv", played))
    assert current["Content-Disposition"] == 'attachment; filename="phased-evaluation-leaderboard.csv"'
    figure = client.get(url("disagreement_heatmap", played, "development"))
    assert figure["Content-Disposition"] == 'attachment; filename="phased-development-heatmap-paper.html"'


def test_correlations_are_per_phase(played):
    development, evaluation = phases_of(played)
    rho = {p.slug: rank_correlations(phase=p, column_ids=["accuracy", "mcc"]) for p in (development, evaluation)}
    assert rho["development"].teams == rho["evaluation"].teams == ["Alpha", "Beta"]
    assert rho["development"].values["accuracy"] != rho["evaluation"].values["accuracy"]


# --- visibility, feedback, choice, counting ----------------------------------------------------


def test_visibility_and_feedback_are_per_phase(client, make_phased, member, submit):
    task = make_phased(feedback=Phase.Feedback.PRIMARY)
    development, evaluation = phases_of(task)
    team_create(task=task, user=member, name="Alpha")
    dev_run = submit(task, member, PERFECT, now=earlier(development))
    eval_run = submit(task, member, EVAL_RUN)
    assert client.get(url("leaderboard", task, "development")).status_code == 200
    for address in (url("leaderboard", task, "evaluation"), url("leaderboard", task)):
        response = client.get(address)
        assert response.status_code == 403
        assert f"{evaluation.closes_at:%Y-%m-%d %H:%M} UTC" in response.content.decode()
    assert feedback_level(phase=development, user=member) is Level.ALL
    assert feedback_level(phase=evaluation, user=member) is Level.PRIMARY
    client.force_login(member)
    assert client.get(dev_run.get_absolute_url()).context["feedback"] is Level.ALL
    eval_page = client.get(eval_run.get_absolute_url())
    assert eval_page.context["feedback"] is Level.PRIMARY
    assert eval_page.context["primary_text"] == f"{eval_run.metrics['macro_f1']:.2f}"
    assert "rows" not in eval_page.context  # no metrics table while the phase's results are hidden


def test_choosing_is_per_phase_and_ends_with_the_phase(make_phased, member, submit):
    task = make_phased("development", dev_options={"counting": Phase.Counting.CHOSEN}, counting=Phase.Counting.CHOSEN)
    development, evaluation = phases_of(task)
    team = team_create(task=task, user=member, name="Alpha")
    dev_first = submit(task, member, PERFECT)
    submit(task, member, MOSTLY_A)
    assert counting_reason(development, team) == NOT_CHOSEN_REASON
    submission_choose(submission=dev_first, user=member)
    assert counting_reason(development, team) == COUNTING_REASONS[Phase.Counting.CHOSEN]
    advance(task)
    eval_first = submit(task, member, EVAL_GOLD)
    submit(task, member, EVAL_RUN)
    assert counting_reason(evaluation, team) == NOT_CHOSEN_REASON
    submission_choose(submission=eval_first, user=member)
    assert set(Submission.objects.filter(team=team, chosen=True)) == {dev_first, eval_first}
    assert counting_submissions(development)[team.pk] == dev_first
    assert counting_submissions(evaluation)[team.pk] == eval_first
    dev_first.refresh_from_db()
    with pytest.raises(ValidationError) as caught:
        submission_choose(submission=dev_first, user=member)
    development.refresh_from_db()
    assert caught.value.messages == [errors.PHASE_CLOSED.format(phase="Development", closes_at=development.closes_at)]


def test_counting_reasons_follow_each_phases_rule(make_phased, member, submit, client):
    task = make_phased(visibility=Phase.Visibility.PUBLIC, counting=Phase.Counting.BEST)
    development, evaluation = phases_of(task)
    team = team_create(task=task, user=member, name="Alpha")
    submit(task, member, PERFECT, now=earlier(development))
    submit(task, member, EVAL_RUN)
    assert counting_reason(development, team) == COUNTING_REASONS[Phase.Counting.LATEST]
    assert counting_reason(evaluation, team) == COUNTING_REASONS[Phase.Counting.BEST]
    client.force_login(member)
    sections = client.get(task.get_absolute_url()).context["sections"]
    assert [(s.phase.slug, s.counting_reason) for s in sections] == [
        ("evaluation", COUNTING_REASONS[Phase.Counting.BEST]),
        ("development", COUNTING_REASONS[Phase.Counting.LATEST]),
    ]


def test_replacing_one_phases_gold_rescores_only_its_submissions(
    make_phased, member, submit, django_capture_on_commit_callbacks
):
    task = make_phased()
    development, evaluation = phases_of(task)
    team_create(task=task, user=member, name="Alpha")
    dev_run = submit(task, member, PERFECT, now=earlier(development))
    eval_run = submit(task, member, EVAL_RUN)
    with django_capture_on_commit_callbacks(execute=True):
        count = gold_replace(phase=development, gold_name="g2.csv", gold_content=GOLD.replace(b"2,b", b"2,a"))
    assert count == 1
    dev_run.refresh_from_db()
    eval_run.refresh_from_db()
    assert (dev_run.scored_gold_version, dev_run.score_count) == (2, 2)
    assert (eval_run.scored_gold_version, eval_run.score_count) == (1, 1)
    evaluation.refresh_from_db()
    assert evaluation.gold_version == 1


# --- the task page and the dates ---------------------------------------------------------------


def test_the_task_page_shows_the_timeline_and_the_upload_names_the_open_phase(client, make_phased, member):
    task = make_phased("development")
    team_create(task=task, user=member, name="Alpha")
    client.force_login(member)
    response = client.get(task.get_absolute_url())
    assert [(step.phase.name, step.state) for step in response.context["timeline"]] == [
        ("Development", "open"),
        ("Evaluation", "upcoming"),
    ]
    page = response.content.decode()
    assert "Development" in page and "Evaluation" in page
    assert "open now" in page and "to come" in page
    assert "Upload to the Development phase and score" in page
    advance(task)
    response = client.get(task.get_absolute_url())
    assert [step.state for step in response.context["timeline"]] == ["closed", "open"]
    page = response.content.decode()
    assert ">closed</span>" in page and "Upload to the Evaluation phase and score" in page
    assert response.context["open_phase"].slug == "evaluation" and not response.context["task_over"]


def test_between_phases_an_upload_is_refused_naming_the_next_phase(client, make_phased, member):
    task = make_phased("between")
    _, evaluation = phases_of(task)
    team_create(task=task, user=member, name="Alpha")  # teams may form between phases
    with pytest.raises(ValidationError) as caught:
        submission_create(task=task, user=member, name="run.csv", content=EVAL_RUN)
    assert codes(caught.value) == {errors.NOT_OPEN_YET.code}
    assert caught.value.messages == [errors.NOT_OPEN_YET.format(phase="Evaluation", opens_at=evaluation.opens_at)]
    client.force_login(member)
    response = client.post(url("submission_create", task), {"file": SimpleUploadedFile("run.csv", EVAL_RUN)})
    assert response["Location"] == task.get_absolute_url()
    assert "No phase takes uploads now" in client.get(task.get_absolute_url()).content.decode()
    assert not Submission.objects.exists()


def test_after_the_last_phase_teams_can_no_longer_be_formed(make_phased, member, make_user):
    task = make_phased("over")
    _, evaluation = phases_of(task)
    assert task.is_over()
    with pytest.raises(ValidationError) as caught:
        team_create(task=task, user=member, name="Late")
    assert caught.value.messages == [errors.TASK_CLOSED.format(closes_at=evaluation.closes_at)]
    assert not Team.objects.exists()
    with pytest.raises(ValidationError) as caught:
        submission_create(task=task, user=make_user("bob"), name="run.csv", content=EVAL_RUN)
    assert codes(caught.value) == {errors.DEADLINE_PASSED.code}


# --- organiser pages: phases and data files ----------------------------------------------------


@pytest.mark.parametrize("name", ["phase_create", "phase_edit", "phase_files"])
def test_phase_pages_are_for_organisers_only(client, make_phased, organiser, member, name):
    task = make_phased()
    address = url(name, task) if name == "phase_create" else url(name, task, "evaluation")
    assert client.get(address)["Location"].startswith(reverse("login"))
    client.force_login(member)
    assert client.get(address).status_code == 403
    assert client.post(address, {"name": "Taken", "title": "x"}).status_code == 403
    client.force_login(organiser)
    assert client.get(address).status_code == 200


@pytest.mark.both_kinds
def test_an_organiser_adds_and_edits_a_phase_through_the_pages(client, make_phased, organiser):
    task = make_phased()
    _, evaluation = phases_of(task)
    client.force_login(organiser)
    form = {
        "name": "Post-evaluation",
        "slug": "post",
        "description": "Late runs, for the record.",
        "gold": SimpleUploadedFile("post-gold.csv", GOLD),
        "opens_at": at(evaluation.closes_at + dt.timedelta(hours=1)),
        "closes_at": at(evaluation.closes_at + dt.timedelta(days=10)),
        "max_per_day": 4,
        "max_total": 40,
        "counting": Phase.Counting.BEST,
        "visibility": Phase.Visibility.PUBLIC,
        "feedback": "",
    }
    response = client.post(url("phase_create", task), form)
    assert response.status_code == 302 and response["Location"] == task.get_absolute_url()
    post = task.phases.get(slug="post")
    assert (post.name, post.max_per_day, post.counting, post.feedback) == ("Post-evaluation", 4, "best", "full")
    assert bytes(post.gold_file.content) == GOLD

    overlapping = {
        **form,
        "slug": "overlap",
        "gold": SimpleUploadedFile("g.csv", GOLD),
        "opens_at": at(evaluation.opens_at),
    }
    response = client.post(url("phase_create", task), overlapping)
    assert response.status_code == 200
    assert (
        errors.PHASES_OVERLAP.format(other="Evaluation", opens_at=evaluation.opens_at, closes_at=evaluation.closes_at)
        in response.context["form"].errors["opens_at"]
    )
    assert not task.phases.filter(slug="overlap").exists()

    edit = {
        "name": "Evaluation (final)",
        "description": "",
        "opens_at": at(evaluation.opens_at),
        "closes_at": at(evaluation.closes_at),
        "max_per_day": 1,
        "max_total": 3,
        "counting": Phase.Counting.CHOSEN,
        "visibility": Phase.Visibility.AFTER_CLOSE,
        "feedback": Phase.Feedback.FULL,
    }
    response = client.post(url("phase_edit", task, "evaluation"), edit)
    assert response.status_code == 302
    evaluation.refresh_from_db()
    assert (evaluation.name, evaluation.max_per_day, evaluation.counting, evaluation.feedback) == (
        "Evaluation (final)",
        1,
        "chosen",
        "full",
    )


@pytest.mark.both_kinds
def test_data_files_are_attached_by_organisers_and_downloaded_by_anyone(client, make_phased, organiser, member):
    task = make_phased()
    development, _ = phases_of(task)
    client.force_login(organiser)
    inputs = b"id\n1\n2\n3\n"
    response = client.post(
        url("phase_files", task, "development"),
        {"title": "Inputs (no labels)", "file": SimpleUploadedFile("dev-inputs.csv", inputs)},
    )
    assert response.status_code == 302
    [data_file] = PhaseFile.objects.filter(phase=development)
    assert (data_file.title, data_file.file.name) == ("Inputs (no labels)", "dev-inputs.csv")
    listed = client.get(url("phase_files", task, "development")).context["files"]
    assert [f.pk for f in listed] == [data_file.pk]

    client.logout()
    address = url("phase_file_download", task, "development", data_file.pk)
    response = client.get(address)
    assert response.status_code == 200 and response.content == inputs
    assert 'filename="dev-inputs.csv"' in response["Content-Disposition"]
    assert client.get(url("phase_file_download", task, "evaluation", data_file.pk)).status_code == 404
    client.force_login(member)
    page = client.get(task.get_absolute_url())
    steps = {step.phase.slug: step for step in page.context["timeline"]}
    assert [f.pk for f in steps["development"].data_files] == [data_file.pk] and steps["evaluation"].data_files == []
    content = page.content.decode()
    assert address in content
    assert "gold.csv" not in content and "eval-gold.csv" not in content
    assert url("gold_download", task, "development") not in content
    assert client.get(url("gold_download", task, "development")).status_code == 404

    client.force_login(organiser)
    client.post(url("phase_files", task, "development"), {"remove": data_file.pk})
    assert not PhaseFile.objects.exists()
    assert client.get(address).status_code == 404


# --- sample files and the format section ---------------------------------------------------------

ODD_LABELS = ['neg, "sarcastic"', "ñeutral ☺", "pos"]


def odd_gold() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "label"])
    writer.writerows([f"t{i}", ODD_LABELS[(i // 2) % 3]] for i in range(12))
    return out.getvalue().encode()


@pytest.mark.parametrize("labels", ["plain", "odd"])
@pytest.mark.parametrize("kind", samples.SAMPLE_KINDS)
def test_both_sample_files_of_a_phase_are_accepted_and_scored(
    client, make_task, make_phased, member, submit, labels, kind
):
    if labels == "odd":
        task = make_task("odd", gold=odd_gold(), labels=ODD_LABELS)
        phase = task.current_phase()
    else:
        task = make_phased()
        phase = task.phases.get(slug="evaluation")
    response = client.get(url("sample_download", task, phase.slug, kind))
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{task.slug}-{phase.slug}-sample-{kind}.csv"'
    assert response.content == samples.sample_file(phase=phase, kind=kind)
    team_create(task=task, user=member, name="Samplers")
    submission = submit(task, member, response.content)
    assert submission.status == Submission.Status.SCORED and submission.phase == phase
    assert submission.kind == (Submission.Kind.HARD if kind == "labels" else Submission.Kind.SOFT)
    n_items = len(samples.sample_file(phase=phase, kind=kind).splitlines()) - 1
    assert sum(map(sum, submission.confusion_matrix)) == pytest.approx(n_items)  # every item weighs one


def test_a_sample_in_gold_order_would_give_a_gold_sorted_by_label_away(client, make_task):
    """The attack: the organisers' gold file lists the a's, then the b's, then the c's; the sample
    lists every id. In the gold's order, its id order alone would give each label away."""
    sorted_gold = "id,label\n" + "".join(f"doc{i:03d},{'abc'[i // 40]}\n" for i in range(120))
    task = make_task("sorted", gold=sorted_gold.encode())
    gold_order = [line.split(",")[0] for line in sorted_gold.splitlines()[1:]]
    for kind in samples.SAMPLE_KINDS:
        content = client.get(url("sample_download", task, task.current_phase().slug, kind)).content.decode()
        ids = [line.split(",")[0] for line in content.splitlines()[1:]]
        assert sorted(ids) == sorted(gold_order)
        # The attacker's best reading: the first third a, the next b, the last c.
        guessed = {item: "abc"[min(2, 3 * n // len(ids))] for n, item in enumerate(ids)}
        right = sum(guessed[item] == "abc"[i // 40] for i, item in enumerate(gold_order))
        assert right < 60  # a third right is chance; the gold order would have given 120
        assert client.get(url("sample_download", task, task.current_phase().slug, kind)).content.decode() == content


def test_a_phase_that_has_not_opened_keeps_its_files_for_the_organisers(client, make_phased, member, organiser):
    task = make_phased()
    upcoming = task.phases.get(slug="evaluation")
    Phase.objects.filter(pk=upcoming.pk).update(
        opens_at=timezone.now() + dt.timedelta(days=5), closes_at=timezone.now() + dt.timedelta(days=9)
    )
    phase_file_add(phase=upcoming, title="test inputs", name="test.csv", content=b"id\n1\n")
    data_file = upcoming.data_files.get()
    urls = [
        url("sample_download", task, "evaluation", "labels"),
        url("sample_download", task, "evaluation", "probabilities"),
        reverse("leaderboard:phase_file_download", args=[task.slug, "evaluation", data_file.pk]),
    ]
    team_create(task=task, user=member, name="Early birds")
    client.force_login(member)
    for address in urls:
        response = client.get(address)
        assert response.status_code == 404, address
    page = client.get(task.get_absolute_url()).content.decode()
    assert "test.csv" not in page and "sample-labels.csv" not in page.split("Evaluation", 1)[-1][:2000]
    client.force_login(organiser)
    assert all(client.get(address).status_code == 200 for address in urls)


def test_an_unknown_sample_kind_is_404(client, make_phased):
    assert client.get(url("sample_download", make_phased(), "evaluation", "gold")).status_code == 404


@pytest.mark.parametrize("n_labels", [2, 3, 6, 7, 9])
def test_the_probability_sample_rows_sum_to_exactly_one_as_written(make_task, n_labels):
    labels = [f"l{i}" for i in range(n_labels)]
    gold = ("id,label\n" + "".join(f"{i},{labels[i % n_labels]}\n" for i in range(2 * n_labels))).encode()
    task = make_task(f"sum-{n_labels}", gold=gold, labels=labels)
    rows = list(csv.reader(io.StringIO(samples.sample_file(phase=task.current_phase(), kind="probabilities").decode())))
    assert rows[0] == ["id", *labels] and len(rows) == 1 + 2 * n_labels
    for row in rows[1:]:
        assert sum(Fraction(cell) for cell in row[1:]) == 1, row


def test_the_format_rules_come_from_the_settings(make_phased, settings):
    settings.MAX_FILE_ROWS = 12_345
    settings.MAX_UPLOAD_BYTES = 3 * 2**20
    phase = make_phased().current_phase()
    rules = samples.format_rules(phase)
    text = " ".join(rules.rules)
    assert f"within {PROBABILITY_TOLERANCE:g}" in text
    assert "12,345 data lines" in text and "3 MiB" in text
    assert "'a', 'b', 'c'" in text
    assert rules.labels_preview.splitlines()[0] == "id,label"
    assert rules.probabilities_preview.splitlines()[0] == "id,a,b,c"
    assert len(rules.labels_preview.splitlines()) == samples.PREVIEW_LINES


# --- the organisers' submissions, the API ----------------------------------------------------------


@pytest.mark.both_kinds
def test_the_organisers_submissions_page_filters_by_phase(client, played, organiser):
    client.force_login(organiser)
    for slug in ("development", "evaluation"):
        listed = client.get(url("organiser_submissions", played), {"phase": slug}).context["page"].object_list
        assert len(listed) == 2 and {s.phase.slug for s in listed} == {slug}
    assert client.get(url("organiser_submissions", played)).context["page"].paginator.count == 4


def test_the_api_lists_the_phases_and_serves_each_board(client, played):
    task = client.get(f"/api/tasks/{played.slug}").json()
    assert task["phase"] == "evaluation" and task["is_open"]
    assert [(p["slug"], p["name"], p["is_open"]) for p in task["phases"]] == [
        ("development", "Development", False),
        ("evaluation", "Evaluation", True),
    ]
    development = client.get(f"/api/tasks/{played.slug}/leaderboard", {"phase": "development"}).json()
    current = client.get(f"/api/tasks/{played.slug}/leaderboard").json()
    assert development["phase"]["slug"] == "development" and current["phase"]["slug"] == "evaluation"
    assert development["rows"][0]["name"] == "Alpha" and current["rows"][0]["name"] == "Beta"
    correlations = client.get(f"/api/tasks/{played.slug}/correlations", {"phase": "development"}).json()
    assert correlations["phase"] == "development"
    missing = client.get(f"/api/tasks/{played.slug}/leaderboard", {"phase": "nope"})
    assert missing.status_code == 404
    assert missing.json()["message"] == errors.NO_SUCH_PHASE.format(slug="nope", known="development, evaluation")


def test_the_api_hides_a_hidden_phase_and_names_it(client, make_phased):
    task = make_phased()
    response = client.get(f"/api/tasks/{task.slug}/leaderboard", {"phase": "evaluation"})
    assert response.status_code == 403 and "Evaluation" in response.json()["message"]
    assert client.get(f"/api/tasks/{task.slug}/leaderboard", {"phase": "development"}).status_code == 200
