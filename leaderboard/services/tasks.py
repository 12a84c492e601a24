"""Creating a task, replacing its gold file, re-scoring, and its baseline rows."""

from __future__ import annotations

import datetime as dt

import numpy as np
from django.db import transaction
from django.db.models import F

from leaderboard import errors
from leaderboard import tasks as scoring_queue  # the module, not its names: it imports a service
from leaderboard.models import (
    DEFAULT_MAX_PER_DAY,
    DEFAULT_MAX_TOTAL,
    STUCK_AFTER,
    Baseline,
    StoredFile,
    Submission,
    Task,
)
from leaderboard.uploads import clean_labels, parse_gold, safe_file_name, stored_gold
from scoring.engine.baselines import baseline_matrices, baseline_names
from scoring.engine.gold import GoldChange, compare_gold
from scoring.engine.io import LabelFile
from scoring.engine.suite import score_matrix


def baselines_refresh(*, task: Task, gold: LabelFile) -> None:
    """(Re)compute the task's baseline rows from its gold file."""
    counts = np.bincount(gold.codes, minlength=len(gold.labels)).astype(np.float64)
    names = baseline_names(counts, gold.labels)
    for kind, matrix in baseline_matrices(counts).items():
        baseline = Baseline.objects.filter(task=task, kind=kind).first() or Baseline(task=task, kind=kind)
        baseline.name = names[kind]
        baseline.apply(score_matrix(matrix, labels=gold.labels, n_items=len(gold.ids)))
        baseline.save()


def _store_gold(*, labels: list[str], name: str, content: bytes) -> tuple[LabelFile, StoredFile]:
    """Validate a gold file and store its bytes; nothing is stored if it is refused."""
    gold = parse_gold(content=content, labels=labels)
    gold_file = StoredFile.of(name=safe_file_name(name), content=content)
    gold_file.save()
    return gold, gold_file


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
    max_per_day: int = DEFAULT_MAX_PER_DAY,
    max_total: int = DEFAULT_MAX_TOTAL,
    counting: str = Task.Counting.LATEST,
    visibility: str = Task.Visibility.PUBLIC,
    feedback: str | None = None,
) -> Task:
    """Create a task with its gold file and baselines; ``feedback`` defaults to what the
    visibility suggests (:meth:`Task.default_feedback`)."""
    labels = clean_labels(labels)
    if closes_at <= opens_at:
        raise errors.BAD_DATES.error("closes_at")
    if Task.objects.filter(slug=slug).exists():
        raise errors.SLUG_TAKEN.error("slug", slug=slug)
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
        feedback=feedback or Task.default_feedback(visibility),
    )
    task.organisers.add(organiser)
    baselines_refresh(task=task, gold=gold)
    return task


SETTINGS_FIELDS = (
    "title",
    "description",
    "primary_metric",
    "opens_at",
    "closes_at",
    "max_per_day",
    "max_total",
    "counting",
    "visibility",
    "feedback",
)
"""What an organiser may change at any time (the labels and the gold file have their own ways)."""


@transaction.atomic
def task_update(*, task: Task, settings: dict) -> Task:
    """Change a task's settings (any of :data:`SETTINGS_FIELDS`)."""
    unknown = set(settings) - set(SETTINGS_FIELDS)
    if unknown:
        raise ValueError(f"not a task setting: {', '.join(sorted(unknown))}")
    for name, value in settings.items():
        setattr(task, name, value)
    if task.closes_at <= task.opens_at:
        raise errors.BAD_DATES.error("closes_at")
    task.save(update_fields=list(settings))
    return task


def gold_preview(*, task: Task, gold_name: str, gold_content: bytes) -> GoldChange:
    """Validate a new gold file, keep it waiting for confirmation, and say what it would change.

    Nothing else changes until :func:`gold_confirm`: the current gold file and every score stay.
    """
    gold, gold_file = _store_gold(labels=list(task.labels), name=gold_name, content=gold_content)
    with transaction.atomic():
        Task.objects.filter(pk=task.pk).update(pending_gold_file=gold_file)
    task.pending_gold_file = gold_file
    return compare_gold(stored_gold(task), gold)


@transaction.atomic
def gold_confirm(*, task: Task) -> int:
    """Make the previewed gold file the task's, and re-score every submission; returns how many.

    Old scores stay on the board, marked as being re-scored, until the new ones are written; a
    submission that no longer matches the gold file fails with a message that says it is the
    organisers' change, and counts against no limit.
    """
    locked = Task.objects.select_for_update(of=("self",)).select_related("pending_gold_file").get(pk=task.pk)
    if locked.pending_gold_file is None:
        raise errors.GOLD_NOT_PENDING.error("gold")
    gold = parse_gold(content=bytes(locked.pending_gold_file.content), labels=list(locked.labels))
    Task.objects.filter(pk=task.pk).update(
        gold_file=locked.pending_gold_file, pending_gold_file=None, gold_version=F("gold_version") + 1
    )
    task.refresh_from_db()
    baselines_refresh(task=task, gold=gold)
    ids = list(task.submissions.values_list("pk", flat=True))
    task.submissions.filter(status=Submission.Status.FAILED).update(status=Submission.Status.QUEUED)
    scoring_queue.enqueue_on_commit(ids)
    return len(ids)


def gold_replace(*, task: Task, gold_name: str, gold_content: bytes) -> int:
    """Preview and confirm in one step (for scripts): see :func:`gold_confirm`."""
    gold_preview(task=task, gold_name=gold_name, gold_content=gold_content)
    return gold_confirm(task=task)


@transaction.atomic
def task_rescore(*, task: Task) -> int:
    """Queue for scoring what is queued, stuck in scoring (lost jobs) or scored against an older
    gold file; scoring is idempotent per gold version. Returns how many."""
    ids = list(task.submissions.needing_scoring(stuck_after=STUCK_AFTER).values_list("pk", flat=True))
    scoring_queue.enqueue_on_commit(ids)
    return len(ids)
