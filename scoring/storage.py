"""Scoring a stored submission and storing its scores atomically with the status change.

Idempotent and safe under duplicate jobs: the row is locked to claim it and again to write the
scores, and a submission already scored against the current gold version is left alone. When
the gold file is replaced while a submission is being scored, the stale result is dropped and
the submission is queued again for the new gold.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from scoring.engine.io import InputFileError
from scoring.engine.scorer import score_files
from scoring.engine.suite import Report

logger = logging.getLogger(__name__)


def report_fields(report: Report) -> dict:
    """The model fields of :class:`leaderboard.models.Scored` for a report."""
    data = report.as_json()
    return {
        "confusion_matrix": data["confusion_matrix"],
        "metrics": report.metrics,
        "calibrated": report.calibrated,
        "per_class": report.per_class,
        "calibrated_per_class": report.calibrated_per_class,
    }


def score_submission_now(*, submission_id: int) -> str:
    """Score one submission; returns what happened, for the task result and the logs."""
    from leaderboard.models import Submission, Task

    with transaction.atomic():
        submission = Submission.objects.select_for_update().select_related("task").filter(pk=submission_id).first()
        if submission is None:
            return "gone"
        if (
            submission.status == Submission.Status.SCORED
            and submission.scored_gold_version == submission.task.gold_version
        ):
            return "already scored"
        submission.status = Submission.Status.SCORING
        submission.save(update_fields=["status"])
        task = Task.objects.select_related("gold_file").get(pk=submission.task_id)
        gold_version = task.gold_version
        gold, labels = bytes(task.gold_file.content), list(task.labels)
        predictions, name = bytes(submission.file.content), submission.file.name

    try:
        report = score_files(gold, predictions, labels=labels, gold_name="gold file", predictions_name=name)
        fields, failure = report_fields(report), ""
    except InputFileError as error:
        # Validated at upload, so this means the gold file changed under it.
        fields, failure = {}, str(error)

    with transaction.atomic():
        submission = Submission.objects.select_for_update().get(pk=submission_id)
        current_version = Task.objects.values_list("gold_version", flat=True).get(pk=submission.task_id)
        if current_version != gold_version:
            submission.status = Submission.Status.QUEUED
            submission.save(update_fields=["status"])
            transaction.on_commit(lambda: enqueue_scoring(submission_id))
            return "gold changed; queued again"
        if submission.status == Submission.Status.SCORED and submission.scored_gold_version == gold_version:
            return "already scored"
        for field, value in fields.items():
            setattr(submission, field, value)
        submission.status = Submission.Status.FAILED if failure else Submission.Status.SCORED
        submission.failure = failure
        submission.scored_at = timezone.now()
        submission.scored_gold_version = gold_version
        submission.score_count += 1
        submission.save()
    logger.debug("submission %s %s", submission_id, submission.status)
    return submission.status


def enqueue_scoring(submission_id: int) -> None:
    """Hand a submission to the tasks backend. Call it from ``transaction.on_commit``.

    If the queue cannot be reached the submission stays queued in the database, where the
    ``rescore_pending`` command finds it; the upload itself is not lost.
    """
    from scoring.tasks import score_submission

    try:
        score_submission.enqueue(submission_id)
    except Exception:  # the queue is an optimisation: the row is the source of truth
        logger.exception("could not enqueue submission %s; it stays queued", submission_id)
