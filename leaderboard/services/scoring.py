"""Scoring a stored submission: the job the queue runs, how it is handed to the queue, and the
recovery sweep that finds the runs a fault left behind.

With the immediate backend (the embedded default) :func:`score_submission` runs inside the
upload request once the submission's transaction has committed; with RQ it runs on any worker.
The Submission row, not the queue, says whether work is left (DESIGN), and scoring is safe to
run twice:

- **claim**: the row is locked; a run already scored against the current gold file is left
  alone, and a run another job started scoring less than ``SCORING_STUCK_AFTER_S`` ago is left
  to that job. Otherwise the run is claimed: ``scoring_started_at`` is now.
- **score**, outside any transaction (seconds for the largest file).
- **write**: the row is locked again; if the gold file changed meanwhile the run is queued
  again for the new one; if another job wrote its scores first (this one was slow, or stopped
  and resumed), nothing is written. So a run is scored once per gold version, whatever the
  queue delivers twice.

**Recovery** (:func:`recover_runs`, run by every scoring worker every ``RECOVERY_EVERY_S``): a
run still queued whose job the queue does not hold (Redis restarted or was down at upload), a
run in scoring whose scoring started more than ``SCORING_STUCK_AFTER_S`` ago (a killed worker,
a dropped database connection), and a run scored against an older gold file whose job is lost
are handed to the queue again. No operator is needed; ``manage.py rescore_pending`` does the
same at once.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django_tasks import TaskResultStatus, task
from django_tasks.exceptions import TaskResultDoesNotExist

from leaderboard import derived
from leaderboard.models import Phase, Submission
from leaderboard.services.notifications import submission_finished_notify
from leaderboard.uploads import kept_gold
from scoring.engine.io import InputFileError
from scoring.engine.outputs import ScoredOutputs, score_output_files_with_items, score_outputs
from scoring.engine.scorer import ScoredFile, score_files_with_items
from scoring.engine.split import part_masks, part_matrices
from scoring.engine.suite import score_matrix

logger = logging.getLogger(__name__)

GOLD_NO_LONGER_MATCHES = (
    "The organisers replaced the gold file (version {version}) and it no longer matches this file: {problem}. "
    "Your file was valid when you uploaded it; this failure counts against no limit."
)


def stuck_after() -> dt.timedelta:
    return dt.timedelta(seconds=settings.SCORING_STUCK_AFTER_S)


def _claim(submission_id: int) -> tuple[Submission, Phase] | str:
    """Lock and claim the run (see the module); what happened instead, if it is not to be scored."""
    with transaction.atomic():
        # The run's row alone is locked (``of``): its phase, task and file come with it.
        locked = Submission.objects.select_for_update(of=("self",)).select_related("phase__task", "file")
        submission = locked.filter(pk=submission_id).first()
        if submission is None:
            return "gone"
        if submission.is_scored_against(submission.phase.gold_version):
            return "already scored"
        if submission.phase.waits_for_gold:  # left queued: giving the gold file queues it again
            return "waits for its phase's gold file"
        now = timezone.now()
        started = submission.scoring_started_at
        if submission.status == Submission.Status.SCORING and started and started > now - stuck_after():
            return "being scored by another job"
        # A re-score against a new gold file keeps the old scores on the board until the new
        # ones are written; a first scoring says it is under way.
        if submission.status != Submission.Status.SCORED:
            submission.status = Submission.Status.SCORING
        submission.scoring_started_at = now
        submission.save(update_fields=["status", "scoring_started_at"])
        submission.file.content = bytes(submission.file.content)
        return submission, submission.phase


def submission_score(*, submission_id: int) -> str:
    """Score one submission against its phase's current gold file; returns what happened, for
    the task result and the logs."""
    claimed = _claim(submission_id)
    if isinstance(claimed, str):
        return claimed
    submission, phase = claimed
    file_name = submission.file.name
    gold_version, split = phase.gold_version, (phase.private_percent, phase.split_seed_number)
    try:
        scored = scored_file(phase, submission)
        failure = ""
    except InputFileError as error:
        # Validated at upload against the gold file of the time: the organiser's new gold file
        # no longer matches it, which is no fault of the team's.
        scored, failure = None, GOLD_NO_LONGER_MATCHES.format(version=gold_version, problem=error)

    with transaction.atomic():
        locked = Submission.objects.select_for_update(of=("self",)).select_related("phase__task", "team")
        submission = locked.get(pk=submission_id)
        if submission.phase.gold_version != gold_version:
            submission.status = Submission.Status.QUEUED
            submission.save(update_fields=["status"])
            enqueue_on_commit([submission_id])
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
        submission_finished_notify(submission=submission, file_name=file_name)
        derived.scores_changed(phase=phase, new_score=True)
    logger.debug("submission %s %s", submission_id, submission.status)
    return submission.status


def scored_file(phase: Phase, submission: Submission) -> ScoredFile | ScoredOutputs:
    """The run scored against the phase's gold file, with the items it was scored from, as the
    task's kind reads it (one label column, or several outputs). The gold file is read once per
    process (:func:`~leaderboard.uploads.kept_gold`), not for every run: in a deadline rush,
    reading it again cost each run more than reading the run's own file."""
    scheme = phase.task.scheme
    names = {"gold_name": "gold file", "predictions_name": submission.file.name}
    gold = kept_gold(phase)
    if scheme.has_outputs:
        return score_output_files_with_items(gold, submission.file.content, outputs=scheme.outputs, **names)
    return score_files_with_items(gold, submission.file.content, labels=scheme.labels, ordinal=scheme.ordinal, **names)


def part_reports(scored: ScoredFile | ScoredOutputs, percent: int, seed: int) -> dict | None:
    """With a split test set (``percent`` of the items private), each part scored on its own."""
    if not percent:
        return None
    if isinstance(scored, ScoredOutputs):
        gold, outputs = scored.gold.codes, scored.gold.outputs
        masks = part_masks(len(gold), percent=percent, seed=seed)
        return {part: score_outputs(gold[mask], scored.items[mask], outputs=outputs) for part, mask in masks.items()}
    labels, ordinal = scored.report.labels, scored.report.ordinal
    matrices = part_matrices(scored.gold_codes, scored.items, len(labels), percent=percent, seed=seed)
    return {part: score_matrix(matrix, labels=labels, ordinal=ordinal) for part, matrix in matrices.items()}


@task()
def score_submission(submission_id: int) -> str:
    """Score submission ``submission_id`` against its phase's current gold file."""
    return submission_score(submission_id=submission_id)


def enqueue_scoring(submission_id: int) -> bool:
    """Hand a submission to the tasks backend and record the job on its row; whether the queue
    took it. Call it from ``transaction.on_commit``.

    If the queue cannot be reached the submission stays queued in the database, where the
    recovery sweep (:func:`recover_runs`) finds it once the queue is back: the upload is not lost.
    """
    Submission.objects.filter(pk=submission_id).update(enqueued_at=timezone.now(), job_id="")
    try:
        result = score_submission.enqueue(submission_id)
    except Exception:  # the queue is an optimisation: the row is the source of truth
        logger.exception("could not enqueue submission %s; it stays queued", submission_id)
        Submission.objects.filter(pk=submission_id).update(enqueued_at=None)
        return False
    # With the immediate backend the job has run already; with RQ it runs on a worker.
    Submission.objects.filter(pk=submission_id, job_id="").update(job_id=str(result.id)[:64])
    return True


def enqueue_on_commit(submission_ids: list[int]) -> None:
    """Enqueue the submissions once the current transaction commits. Where they are scored at
    once (the immediate backend), their phases' derived results are asked for once, after the
    last (:func:`leaderboard.derived.asked_once`)."""

    def enqueue() -> None:
        with derived.asked_once():
            for pk in submission_ids:
                enqueue_scoring(pk)

    if submission_ids:
        transaction.on_commit(enqueue)


def _job_alive(job_id: str, *, unclaimed: bool = False, now: dt.datetime | None = None) -> bool:
    """Whether the queue still holds the job, waiting or running (the immediate backend keeps
    no jobs: always ``False``). ``unclaimed``: the run is still queued, and a job claims its run
    as it starts, so a job running for longer than ``SCORING_STUCK_AFTER_S`` is dead: its worker
    was killed before the claim, and RQ calls the job running until its timeout, ten minutes."""
    if not job_id:
        return False
    try:
        result = score_submission.get_result(job_id)
    except (TaskResultDoesNotExist, NotImplementedError):
        return False
    if result.status == TaskResultStatus.RUNNING and unclaimed and result.started_at is not None:
        started = result.started_at
        started = started if timezone.is_aware(started) else timezone.make_aware(started, dt.UTC)
        return (now or timezone.now()) - started < stuck_after()
    return result.status in (TaskResultStatus.READY, TaskResultStatus.RUNNING)


def lost_runs(*, now: dt.datetime | None = None) -> list[int]:
    """The runs a fault left behind (see the module), oldest first."""
    now = now or timezone.now()
    waited = Q(enqueued_at__isnull=True) | Q(enqueued_at__lte=now - dt.timedelta(seconds=settings.REQUEUE_AFTER_S))
    queued = Q(status=Submission.Status.QUEUED) & waited
    rescoring = Q(status=Submission.Status.SCORED) & ~Q(scored_gold_version=F("phase__gold_version")) & waited
    stuck = Q(status=Submission.Status.SCORING) & (
        Q(scoring_started_at__isnull=True) | Q(scoring_started_at__lte=now - stuck_after())
    )
    waiting = Q(phase__gold_file__isnull=True)  # scored once the gold file is given, which queues them
    candidates = Submission.objects.filter(queued | rescoring | stuck).exclude(waiting).order_by("created_at")
    rows = candidates.values_list("pk", "status", "job_id", "enqueued_at", "scoring_started_at")
    found = []
    for pk, status, job_id, enqueued_at, started in rows:
        # In scoring too long: lost if the job that claimed it is the latest one handed over;
        # otherwise (and for the other runs) lost if the queue no longer holds the latest job.
        claimed_by_latest = status == Submission.Status.SCORING and (
            enqueued_at is None or started is None or enqueued_at <= started
        )
        if claimed_by_latest or not _job_alive(job_id, unclaimed=status == Submission.Status.QUEUED, now=now):
            found.append(pk)
    return found


def recover_runs() -> int:
    """Hand every lost run to the queue again (:func:`lost_runs`); how many."""
    lost = lost_runs()
    for pk in lost:
        enqueue_scoring(pk)
    if lost:
        logger.warning("recovery: %d run(s) handed to the queue again: %s", len(lost), lost[:20])
    return len(lost)
