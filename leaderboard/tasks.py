"""Scoring a stored submission: the task the queue runs, and how it is enqueued.

With the immediate backend (the embedded default) :func:`score_submission` runs inside the
upload request once the submission's transaction has committed; with RQ it runs on any worker.
It is idempotent and safe under duplicate jobs: the row is locked to claim it and again to
write the scores, and a submission already scored against the current gold version is left
alone. When the gold file is replaced while a submission is being scored, the stale result is
dropped and the submission is queued again for the new gold. The Submission row, not the queue,
says whether work is left.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone
from django_tasks import task

from leaderboard.models import Phase, Submission
from leaderboard.services.notifications import submission_finished_notify
from scoring.engine.io import InputFileError
from scoring.engine.scorer import ScoredFile, score_files_with_items
from scoring.engine.split import part_matrices
from scoring.engine.suite import Report, score_matrix

logger = logging.getLogger(__name__)

GOLD_NO_LONGER_MATCHES = (
    "The organisers replaced the gold file (version {version}) and it no longer matches this file: {problem}. "
    "Your file was valid when you uploaded it; this failure counts against no limit."
)


def score_stored_submission(*, submission_id: int) -> str:
    """Score one submission against its phase's current gold file; returns what happened, for
    the task result and the logs."""
    with transaction.atomic():
        submission = Submission.objects.select_for_update().select_related("phase").filter(pk=submission_id).first()
        if submission is None:
            return "gone"
        if submission.is_scored_against(submission.phase.gold_version):
            return "already scored"
        if submission.status != Submission.Status.SCORED:
            # A re-score against a new gold file keeps the old scores on the board until the
            # new ones are written; a first scoring says it is under way.
            submission.status = Submission.Status.SCORING
            submission.save(update_fields=["status"])
        phase = Phase.objects.select_related("gold_file", "task").get(pk=submission.phase_id)
        gold_version, split = phase.gold_version, (phase.private_percent, phase.split_seed)
        gold, labels = bytes(phase.gold_file.content), list(phase.task.labels)
        predictions, name = bytes(submission.file.content), submission.file.name

    try:
        scored = score_files_with_items(gold, predictions, labels=labels, gold_name="gold file", predictions_name=name)
        failure = ""
    except InputFileError as error:
        # Validated at upload against the gold file of the time: the organiser's new gold file
        # no longer matches it, which is no fault of the team's.
        scored, failure = None, GOLD_NO_LONGER_MATCHES.format(version=gold_version, problem=error)

    with transaction.atomic():
        submission = Submission.objects.select_for_update().get(pk=submission_id)
        current_version = Phase.objects.values_list("gold_version", flat=True).get(pk=submission.phase_id)
        if current_version != gold_version:
            submission.status = Submission.Status.QUEUED
            submission.save(update_fields=["status"])
            transaction.on_commit(lambda: enqueue_scoring(submission_id))
            return "gold changed; queued again"
        if submission.is_scored_against(gold_version):
            return "already scored"
        if scored is not None:
            # The items are aligned to the gold file of ``gold_version``, as the scores are.
            submission.apply(scored.report, items=scored.items, parts=part_reports(scored, *split))
        else:
            submission.clear_scores()
        submission.status = Submission.Status.FAILED if failure else Submission.Status.SCORED
        submission.failure = failure
        submission.scored_at = timezone.now()
        submission.scored_gold_version = gold_version
        submission.score_count += 1
        submission.save()
        # The team's notes are written with the outcome; their e-mails go once it commits.
        submission_finished_notify(submission=submission)
    logger.debug("submission %s %s", submission_id, submission.status)
    return submission.status


def part_reports(scored: ScoredFile, percent: int, seed: int) -> dict[str, Report] | None:
    """With a split test set (``percent`` of the items private), each part scored on its own."""
    if not percent:
        return None
    labels = scored.report.labels
    matrices = part_matrices(scored.gold_codes, scored.items, len(labels), percent=percent, seed=seed)
    return {part: score_matrix(matrix, labels=labels) for part, matrix in matrices.items()}


@task()
def score_submission(submission_id: int) -> str:
    """Score submission ``submission_id`` against its phase's current gold file."""
    return score_stored_submission(submission_id=submission_id)


def enqueue_scoring(submission_id: int) -> None:
    """Hand a submission to the tasks backend. Call it from ``transaction.on_commit``.

    If the queue cannot be reached the submission stays queued in the database, where the
    ``rescore_pending`` command finds it; the upload itself is not lost.
    """
    try:
        score_submission.enqueue(submission_id)
    except Exception:  # the queue is an optimisation: the row is the source of truth
        logger.exception("could not enqueue submission %s; it stays queued", submission_id)


def enqueue_on_commit(submission_ids: list[int]) -> None:
    """Enqueue each submission once the current transaction commits."""
    for pk in submission_ids:
        transaction.on_commit(lambda pk=pk: enqueue_scoring(pk))
