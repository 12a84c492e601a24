"""Services: every function that writes. Keyword-only, one transaction each.

Errors a person can fix come out as :class:`django.core.exceptions.ValidationError` whose
message is one of the named constants below (tests compare against them), formatted with the
specifics (the deadline, the limit, the line of the file).
"""

from __future__ import annotations

import datetime as dt
from pathlib import PurePath

import numpy as np
from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from leaderboard.models import Baseline, Membership, StoredFile, Submission, Task, Team
from scoring.engine.io import InputFileError, LabelFile, read_labels, read_predictions
from scoring.engine.suite import score_matrix
from scoring.storage import enqueue_scoring, report_fields

NOT_OPEN_YET = "The task opens for submissions on {opens_at:%Y-%m-%d %H:%M} UTC."
DEADLINE_PASSED = "The deadline passed on {closes_at:%Y-%m-%d %H:%M} UTC; submissions are closed."
DAILY_LIMIT = "Your team has used its {limit} submissions for today (UTC); the next day starts at {reset:%H:%M} UTC."
TOTAL_LIMIT = "Your team has used all {limit} submissions allowed for this task."
NOT_A_MEMBER = "You are not a member of this team."
NO_TEAM = "Join or create a team for this task before you submit."
ALREADY_IN_TEAM = "You are already in the team {team!r} for this task; a person belongs to one team per task."
TEAM_NAME_TAKEN = "A team called {name!r} already exists in this task."
BAD_INVITE = "No team of this task has that invite code."
FILE_TOO_LARGE = "The file is {size:,} bytes; the limit is {limit:,} bytes."
GOLD_LABEL_UNUSED = "The label {label!r} never occurs in the gold file; every class needs gold items."
TOO_FEW_LABELS = "A task needs at least two labels."
DUPLICATE_LABEL = "The label {label!r} is listed twice."
BAD_DATES = "The task must close after it opens."
NOT_SCORED = "Only a scored submission can be chosen."


def _file_error(error: InputFileError) -> ValidationError:
    return ValidationError(str(error), code=error.template)


def safe_file_name(name: str) -> str:
    """A display name for an uploaded file: its base name only, without path tricks.

    Unprintable characters (NUL, bidi overrides) go first, so that none can hide a separator
    or leave ``..`` behind; a name that is only a directory reference becomes "upload".
    """
    printable = "".join(ch for ch in name if ch.isprintable())
    base = PurePath(printable.replace("\\", "/")).name.strip()
    return base[:200] if base not in {"", ".", ".."} else "upload"


def check_size(content: bytes) -> None:
    if len(content) > settings.MAX_UPLOAD_BYTES:
        raise ValidationError(
            FILE_TOO_LARGE.format(size=len(content), limit=settings.MAX_UPLOAD_BYTES), code="FILE_TOO_LARGE"
        )


def validate_labels(labels: list[str]) -> list[str]:
    labels = [label.strip() for label in labels if label.strip()]
    if len(labels) < 2:
        raise ValidationError(TOO_FEW_LABELS, code="TOO_FEW_LABELS")
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise ValidationError(DUPLICATE_LABEL.format(label=label), code="DUPLICATE_LABEL")
        seen.add(label)
    return labels


def parse_gold(*, content: bytes, labels: list[str], name: str = "gold file") -> LabelFile:
    """Validate a gold file as strictly as predictions, and require every label to occur."""
    check_size(content)
    try:
        gold = read_labels(content, labels=labels, name=name, max_rows=settings.MAX_FILE_ROWS)
    except InputFileError as error:
        raise _file_error(error) from None
    counts = np.bincount(gold.codes, minlength=len(labels))
    for label, count in zip(labels, counts, strict=True):
        if count == 0:
            raise ValidationError(GOLD_LABEL_UNUSED.format(label=label), code="GOLD_LABEL_UNUSED")
    return gold


# --- baselines --------------------------------------------------------------------------------


def baseline_matrices(gold_counts: np.ndarray) -> dict[str, np.ndarray]:
    """Confusion matrices of the reference classifiers, from the gold class counts alone."""
    n = len(gold_counts)
    majority = np.zeros((n, n))
    majority[int(np.argmax(gold_counts))] = gold_counts
    shares = gold_counts / gold_counts.sum()
    return {
        Baseline.Kind.MAJORITY: majority,
        Baseline.Kind.UNIFORM: np.tile(gold_counts / n, (n, 1)),
        Baseline.Kind.PREVALENCE: np.outer(shares, gold_counts),
    }


def baseline_names(gold: LabelFile, counts: np.ndarray) -> dict[str, str]:
    return {
        Baseline.Kind.MAJORITY: f"Majority class (always {gold.labels[int(np.argmax(counts))]!r})",
        Baseline.Kind.UNIFORM: "Uniform random labels",
        Baseline.Kind.PREVALENCE: "Random labels with the gold prevalence",
    }


def baselines_refresh(*, task: Task, gold: LabelFile) -> None:
    """(Re)compute the task's baseline rows from its gold file."""
    counts = np.bincount(gold.codes, minlength=len(gold.labels)).astype(np.float64)
    names = baseline_names(gold, counts)
    for kind, matrix in baseline_matrices(counts).items():
        report = score_matrix(matrix, labels=gold.labels, n_items=len(gold.ids))
        Baseline.objects.update_or_create(task=task, kind=kind, defaults={"name": names[kind], **report_fields(report)})


# --- tasks -------------------------------------------------------------------------------------


def _store_gold(*, labels: list[str], name: str, content: bytes) -> tuple[LabelFile, StoredFile]:
    """Validate a gold file and store its bytes; nothing is stored if it is refused."""
    gold = parse_gold(content=content, labels=labels)
    gold_file = StoredFile.of(name=safe_file_name(name), content=content)
    gold_file.save()
    return gold, gold_file


def _enqueue_on_commit(ids: list[int]) -> None:
    for pk in ids:
        transaction.on_commit(lambda pk=pk: enqueue_scoring(pk))


@transaction.atomic
def task_create(
    *,
    organiser,
    slug: str,
    title: str,
    description: str,
    labels: list[str],
    gold_name: str,
    gold_content: bytes,
    primary_metric: str,
    opens_at: dt.datetime,
    closes_at: dt.datetime,
    max_per_day: int = 5,
    max_total: int = 100,
    counting: str = Task.Counting.LATEST,
    visibility: str = Task.Visibility.PUBLIC,
) -> Task:
    labels = validate_labels(labels)
    if closes_at <= opens_at:
        raise ValidationError(BAD_DATES, code="BAD_DATES")
    gold, gold_file = _store_gold(labels=labels, name=gold_name, content=gold_content)
    task = Task.objects.create(
        slug=slug,
        title=title,
        description=description,
        labels=labels,
        gold_file=gold_file,
        primary_metric=primary_metric,
        opens_at=opens_at,
        closes_at=closes_at,
        max_per_day=max_per_day,
        max_total=max_total,
        counting=counting,
        visibility=visibility,
    )
    task.organisers.add(organiser)
    baselines_refresh(task=task, gold=gold)
    return task


@transaction.atomic
def gold_replace(*, task: Task, gold_name: str, gold_content: bytes) -> int:
    """Replace the gold file and queue every submission for re-scoring; returns how many.

    Old scores stay visible until the new ones are written; nothing is deleted.
    """
    gold, gold_file = _store_gold(labels=list(task.labels), name=gold_name, content=gold_content)
    Task.objects.filter(pk=task.pk).update(gold_file=gold_file, gold_version=F("gold_version") + 1)
    task.refresh_from_db()
    baselines_refresh(task=task, gold=gold)
    ids = list(task.submissions.values_list("pk", flat=True))
    task.submissions.exclude(status=Submission.Status.SCORING).update(status=Submission.Status.QUEUED)
    _enqueue_on_commit(ids)
    return len(ids)


@transaction.atomic
def task_rescore(*, task: Task) -> int:
    """Queue every submission of the task for scoring again (idempotent per gold version, so
    this re-scores only what is not scored against the current gold); returns how many."""
    ids = list(task.submissions.exclude(status=Submission.Status.SCORING).values_list("pk", flat=True))
    _enqueue_on_commit(ids)
    return len(ids)


# --- teams -------------------------------------------------------------------------------------


def team_of(*, task: Task, user) -> Team | None:
    if not user.is_authenticated:
        return None
    return Team.objects.filter(task=task, membership__user=user).first()


@transaction.atomic
def team_create(*, task: Task, user, name: str) -> Team:
    name = " ".join(name.split())
    existing = team_of(task=task, user=user)
    if existing is not None:
        raise ValidationError(ALREADY_IN_TEAM.format(team=existing.name), code="ALREADY_IN_TEAM")
    if Team.objects.filter(task=task, name__iexact=name).exists():
        raise ValidationError(TEAM_NAME_TAKEN.format(name=name), code="TEAM_NAME_TAKEN")
    team = Team.objects.create(task=task, name=name)
    _join(team=team, user=user)
    return team


def _join(*, team: Team, user) -> None:
    try:
        with transaction.atomic():
            Membership.objects.create(user=user, team=team, task=team.task)
    except IntegrityError:
        existing = team_of(task=team.task, user=user)
        raise ValidationError(
            ALREADY_IN_TEAM.format(team=existing.name if existing else "?"), code="ALREADY_IN_TEAM"
        ) from None


@transaction.atomic
def team_join(*, task: Task, user, invite_code: str) -> Team:
    team = Team.objects.filter(task=task, invite_code=invite_code.strip()).first()
    if team is None:
        raise ValidationError(BAD_INVITE, code="BAD_INVITE")
    existing = team_of(task=task, user=user)
    if existing is not None:
        raise ValidationError(ALREADY_IN_TEAM.format(team=existing.name), code="ALREADY_IN_TEAM")
    _join(team=team, user=user)
    return team


# --- submissions -------------------------------------------------------------------------------


def day_start(moment: dt.datetime) -> dt.datetime:
    return moment.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def check_window(*, task: Task, now: dt.datetime) -> None:
    if now < task.opens_at:
        raise ValidationError(NOT_OPEN_YET.format(opens_at=task.opens_at), code="NOT_OPEN_YET")
    if now >= task.closes_at:
        raise ValidationError(DEADLINE_PASSED.format(closes_at=task.closes_at), code="DEADLINE_PASSED")


def check_limits(*, task: Task, team: Team, now: dt.datetime) -> None:
    """Daily and total limits; bad files never reach here, so they count against nothing."""
    used = Submission.objects.filter(team=team).counted_against_limits()
    if used.count() >= task.max_total:
        raise ValidationError(TOTAL_LIMIT.format(limit=task.max_total), code="TOTAL_LIMIT")
    today = day_start(now)
    if used.filter(created_at__gte=today).count() >= task.max_per_day:
        raise ValidationError(
            DAILY_LIMIT.format(limit=task.max_per_day, reset=today + dt.timedelta(days=1)), code="DAILY_LIMIT"
        )


def validate_predictions(*, task: Task, name: str, content: bytes) -> str:
    """Check an uploaded prediction file against the gold file; returns its kind."""
    check_size(content)
    gold = read_labels(bytes(task.gold_file.content), labels=list(task.labels), name="gold file")
    try:
        predictions = read_predictions(content, gold=gold, name=name, max_rows=settings.MAX_FILE_ROWS)
    except InputFileError as error:
        raise _file_error(error) from None
    return Submission.Kind.SOFT if predictions.is_soft else Submission.Kind.HARD


def submission_create(
    *, task: Task, user, name: str, content: bytes, description: str = "", now: dt.datetime | None = None
) -> Submission:
    """Validate and store an upload, then queue it for scoring once the transaction commits.

    The deadline is checked against the upload time: a file uploaded before it counts even if
    it is scored after it. The team row is locked while limits are checked, so two uploads
    racing for the last slot cannot both pass.
    """
    now = now or timezone.now()
    check_window(task=task, now=now)
    team = team_of(task=task, user=user)
    if team is None:
        raise ValidationError(NO_TEAM, code="NO_TEAM")
    name = safe_file_name(name)
    kind = validate_predictions(task=task, name=name, content=content)
    with transaction.atomic():
        Team.objects.select_for_update().get(pk=team.pk)
        check_limits(task=task, team=team, now=now)
        stored = StoredFile.of(name=name, content=content)
        stored.save()
        submission = Submission.objects.create(
            task=task,
            team=team,
            submitted_by=user,
            file=stored,
            kind=kind,
            description=description[:200],
            created_at=now,
        )
        transaction.on_commit(lambda: enqueue_scoring(submission.pk))
    submission.refresh_from_db()
    return submission


@transaction.atomic
def submission_choose(*, submission: Submission, user) -> None:
    """Let a team pick the submission that counts (tasks whose counting policy is 'chosen')."""
    if not Membership.objects.filter(team=submission.team, user=user).exists():
        raise PermissionDenied(NOT_A_MEMBER)
    if submission.status != Submission.Status.SCORED:
        raise ValidationError(NOT_SCORED, code="NOT_SCORED")
    Team.objects.filter(pk=submission.team_id).update(chosen_submission=submission)
