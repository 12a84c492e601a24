"""Services: task creation and gold validation, teams, uploads, limits, dates, re-scoring."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone
from freezegun import freeze_time

from leaderboard import errors, uploads
from leaderboard.models import Baseline, Phase, StoredFile, Submission, Task
from leaderboard.selectors import participation
from leaderboard.services import submissions as submission_service
from leaderboard.services.scoring import submission_score
from leaderboard.services.submissions import submission_choose, submission_create
from leaderboard.services.tasks import gold_replace
from leaderboard.services.teams import team_create, team_join
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db


codes = errors.problem_codes


def test_task_create_stores_gold_and_baselines(task):
    assert task.labels == ["a", "b", "c"]
    [phase] = task.phases.all()
    assert bytes(phase.gold_file.content) == GOLD
    kinds = set(Baseline.objects.filter(phase=phase).values_list("kind", flat=True))
    assert kinds == {"majority", "uniform", "prevalence"}
    majority = Baseline.objects.get(phase=phase, kind="majority")
    assert majority.metrics["accuracy"] == pytest.approx(4 / 8)
    assert majority.metrics["macro_recall"] == pytest.approx(1 / 3)
    uniform = Baseline.objects.get(phase=phase, kind="uniform")
    assert uniform.metrics["macro_recall"] == pytest.approx(1 / 3)
    assert uniform.metrics["kappa"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    ("gold", "code"),
    [
        (b"id,label\n1,a\n1,b\n2,c\n", "the id '1' appears a second time (first on line 2)"),
        (b"id,label\n1,a\n2,b\n3,x\n", "unknown label 'x'; expected one of a, b, c"),
        (b"id,label\n1,a\n2,b\n", "never occurs"),
        (b"", "the file is empty"),
    ],
)
def test_bad_gold_is_refused_with_a_specific_message(make_task, gold, code):
    with pytest.raises(ValidationError) as caught:
        make_task(gold=gold)
    assert code in " ".join(caught.value.messages)
    assert not Task.objects.exists()
    assert not StoredFile.objects.exists()


def test_labels_must_be_two_and_distinct(make_task):
    with pytest.raises(ValidationError) as caught:
        make_task(labels=["a"])
    assert codes(caught.value) == {"TOO_FEW_LABELS"}
    with pytest.raises(ValidationError) as caught:
        make_task(labels=["a", "b", "a"])
    assert codes(caught.value) == {"DUPLICATE_LABEL"}


def test_one_team_per_person_per_task(task, make_user):
    alice = make_user("alice")
    team = team_create(task=task, user=alice, name="Alpha")
    with pytest.raises(ValidationError) as caught:
        team_create(task=task, user=alice, name="Beta")
    assert codes(caught.value) == {"ALREADY_IN_TEAM"}
    bob = make_user("bob")
    assert team_join(task=task, user=bob, invite_code=team.invite_code) == team
    with pytest.raises(ValidationError) as caught:
        team_join(task=task, user=bob, invite_code=team.invite_code)
    assert codes(caught.value) == {"ALREADY_IN_TEAM"}
    with pytest.raises(ValidationError) as caught:
        team_create(task=task, user=make_user("carol"), name="alpha")
    assert codes(caught.value) == {"TEAM_NAME_TAKEN"}
    with pytest.raises(ValidationError) as caught:
        team_join(task=task, user=make_user("dan"), invite_code="nope")
    assert codes(caught.value) == {"BAD_INVITE"}


def test_upload_is_scored_on_commit(task, make_user, submit):
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submission = submit(task, alice, PERFECT)
    assert submission.status == Submission.Status.SCORED
    assert submission.metrics["accuracy"] == 1.0
    assert submission.confusion_matrix == [[4, 0, 0], [0, 2, 0], [0, 0, 2]]
    assert submission.score_count == 1
    assert submission.phase == task.current_phase()
    assert submission.scored_gold_version == submission.phase.gold_version


def test_soft_upload_builds_a_soft_matrix(task, make_user, submit):
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    rows = ["id,a,b,c"] + [f"{i},0.5,0.25,0.25" for i in range(1, 9)]
    submission = submit(task, alice, ("\n".join(rows) + "\n").encode())
    assert submission.kind == Submission.Kind.SOFT
    assert submission.confusion_matrix[0] == [2.0, 1.0, 1.0]
    assert submission.confusion_matrix[1] == [1.0, 0.5, 0.5]


def test_bad_file_is_refused_and_counts_against_no_limit(make_task, make_user, submit):
    task = make_task(max_total=1)
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    with pytest.raises(ValidationError) as caught:
        submission_create(task=task, user=alice, name="x.csv", content=b"id,label\n1,a\n1,a\n")
    assert "line 3" in caught.value.messages[0]
    assert not Submission.objects.exists()
    assert submit(task, alice, PERFECT).status == Submission.Status.SCORED
    with pytest.raises(ValidationError) as caught:
        submission_create(task=task, user=alice, name="x.csv", content=PERFECT)
    assert codes(caught.value) == {"TOTAL_LIMIT"}


def test_daily_limit_resets_the_next_utc_day(make_task, make_user, submit):
    task = make_task(max_per_day=1, closes_at=timezone.now() + dt.timedelta(days=5))
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submit(task, alice, PERFECT)
    with pytest.raises(ValidationError) as caught:
        submission_create(task=task, user=alice, name="x.csv", content=PERFECT)
    assert codes(caught.value) == {"DAILY_LIMIT"}
    tomorrow = participation.day_start(timezone.now()) + dt.timedelta(days=1, hours=1)
    assert submit(task, alice, PERFECT, now=tomorrow).status == Submission.Status.SCORED


def test_deadline_and_opening_are_enforced_with_the_date(make_task, make_user):
    now = timezone.now()
    closed = make_task("closed", opens_at=now - dt.timedelta(days=2))
    alice = make_user("alice")
    team_create(task=closed, user=alice, name="Alpha")
    Phase.objects.filter(task=closed).update(closes_at=now - dt.timedelta(days=1))
    with pytest.raises(ValidationError) as caught:
        submission_create(task=closed, user=alice, name="x.csv", content=PERFECT)
    assert codes(caught.value) == {"DEADLINE_PASSED"}
    assert closed.current_phase().closes_at.strftime("%Y-%m-%d %H:%M") in caught.value.messages[0]
    future = make_task("future", opens_at=now + dt.timedelta(days=1), closes_at=now + dt.timedelta(days=2))
    team_create(task=future, user=alice, name="Alpha")
    with pytest.raises(ValidationError) as caught:
        submission_create(task=future, user=alice, name="x.csv", content=PERFECT)
    assert codes(caught.value) == {"NOT_OPEN_YET"}


def test_upload_before_deadline_counts_even_if_scored_after(make_task, make_user, django_capture_on_commit_callbacks):
    now = timezone.now()
    task = make_task(closes_at=now + dt.timedelta(seconds=5))
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submission = submission_create(task=task, user=alice, name="x.csv", content=PERFECT)
    Phase.objects.filter(task=task).update(closes_at=now - dt.timedelta(seconds=1))
    for callback in callbacks:
        callback()
    submission.refresh_from_db()
    assert submission.status == Submission.Status.SCORED


def test_an_upload_that_waits_for_its_turn_past_the_deadline_counts(
    make_task, make_user, monkeypatch, django_capture_on_commit_callbacks
):
    """Uploads are validated a few at a time (``upload_turn``): one that arrived before the
    deadline and got its turn after it counts, with the time it arrived."""
    now = timezone.now().replace(microsecond=0)
    task = make_task(closes_at=now + dt.timedelta(seconds=5))
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    with freeze_time(now) as clock:

        class SlowTurn:  # the uploads before it take ten seconds
            def __enter__(self) -> None:
                clock.tick(dt.timedelta(seconds=10))

            def __exit__(self, *exception: object) -> None:
                return None

        monkeypatch.setattr(submission_service, "upload_turn", SlowTurn)
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            submission = submission_create(task=task, user=alice, name="x.csv", content=PERFECT)
        assert timezone.now() > task.current_phase().closes_at  # its turn came after the deadline
    for callback in callbacks:  # scored (outside the frozen clock)
        callback()
    submission.refresh_from_db()
    assert submission.created_at == now and submission.status == Submission.Status.SCORED


def test_no_team_no_upload(task, make_user):
    with pytest.raises(ValidationError) as caught:
        submission_create(task=task, user=make_user("loner"), name="x.csv", content=PERFECT)
    assert codes(caught.value) == {"NO_TEAM"}


def test_path_tricks_in_file_names_are_reduced_to_a_base_name():
    assert uploads.safe_file_name("../../etc/passwd") == "passwd"
    assert uploads.safe_file_name("C:\\Users\\x\\run.csv") == "run.csv"
    assert uploads.safe_file_name("") == "upload"
    assert uploads.safe_file_name("a\x00b.csv") == "ab.csv"


def test_gold_replacement_rescores_everything(task, make_user, submit, django_capture_on_commit_callbacks):
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    first = submit(task, alice, PERFECT)
    second = submit(task, alice, MOSTLY_A)
    assert first.metrics["accuracy"] == 1.0
    new_gold = GOLD.replace(b"2,b", b"2,a").replace(b"5,b\n", b"5,b\n")
    with django_capture_on_commit_callbacks(execute=True):
        count = gold_replace(phase=task.current_phase(), gold_name="gold2.csv", gold_content=new_gold)
    assert count == 2
    assert task.current_phase().gold_version == 2
    for submission in (first, second):
        submission.refresh_from_db()
        assert submission.status == Submission.Status.SCORED
        assert submission.scored_gold_version == 2
        assert submission.score_count == 2
    assert first.metrics["accuracy"] == pytest.approx(7 / 8)
    assert second.metrics["accuracy"] == pytest.approx(7 / 8)


def test_bad_gold_replacement_keeps_everything(task, make_user, submit):
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submission = submit(task, alice, PERFECT)
    with pytest.raises(ValidationError):
        gold_replace(phase=task.current_phase(), gold_name="bad.csv", gold_content=b"id,label\n1,a\n")
    phase = task.current_phase()
    submission.refresh_from_db()
    assert phase.gold_version == 1
    assert bytes(phase.gold_file.content) == GOLD
    assert submission.status == Submission.Status.SCORED and submission.score_count == 1


def test_scoring_is_idempotent(task, make_user, submit):

    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submission = submit(task, alice, PERFECT)
    assert submission_score(submission_id=submission.pk) == "already scored"
    submission.refresh_from_db()
    assert submission.score_count == 1
    assert submission_score(submission_id=10_000) == "gone"


def test_choose_needs_membership_and_a_scored_submission(make_task, make_user, submit):
    from django.core.exceptions import PermissionDenied

    task = make_task(counting=Phase.Counting.CHOSEN)
    alice, eve = make_user("alice"), make_user("eve")
    team_create(task=task, user=alice, name="Alpha")
    team_create(task=task, user=eve, name="Eve")
    submission = submit(task, alice, PERFECT)
    with pytest.raises(PermissionDenied):
        submission_choose(submission=submission, user=eve)
    submission_choose(submission=submission, user=alice)
    assert list(Submission.objects.filter(team=submission.team, chosen=True)) == [submission]
