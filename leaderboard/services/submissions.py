"""Uploading a prediction file, within a phase's dates and limits, and choosing the one that
counts."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from leaderboard import errors
from leaderboard.derived import scores_changed
from leaderboard.models import (
    CONTRASTIVE_MARK,
    DESCRIPTION_MAX_LENGTH,
    PRIMARY,
    UNMARKED,
    Phase,
    StoredFile,
    Submission,
    Task,
    Team,
)
from leaderboard.permissions import is_member
from leaderboard.selectors.notifications import email_is_confirmed
from leaderboard.selectors.participation import participation_problem, quota, team_of
from leaderboard.services.scoring import enqueue_on_commit
from leaderboard.uploads import kept_gold, prediction_kind, safe_file_name

logger = logging.getLogger(__name__)

UPLOAD_TURNS = threading.BoundedSemaphore(settings.UPLOADS_AT_ONCE)
"""The turns of this web process's uploads where the database has no site-wide turns (SQLite:
the embedded set-up's one process); see :func:`upload_turn`."""
UPLOAD_TURN_LOCKS = 0x75706C64
"""The first key of the PostgreSQL advisory locks that are the site's upload turns (the second
is the turn's number)."""


@contextmanager
def upload_turn() -> Iterator[None]:
    """An upload's turn to be validated: at most ``settings.UPLOADS_AT_ONCE`` at once, the others
    waiting. Near a deadline dozens arrive together, and each is CPU work: validated
    side by side they would take every core from the readers of the results pages for as long as
    the rush lasts (benchmarks/README.md, the deadline rush).

    On PostgreSQL the turns are the site's, whichever web process an upload reached: each is an
    advisory lock, and an upload waits in the shortest queue, which PostgreSQL serves in the order
    of arrival; a process that dies lets go of its turn with its connection. Elsewhere they are
    the process's (:data:`UPLOAD_TURNS`)."""
    if connection.vendor != "postgresql":
        with UPLOAD_TURNS:
            yield
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT turn FROM generate_series(0, %s - 1) AS turns(turn) LEFT JOIN pg_locks ON"
            " locktype = 'advisory' AND classid = %s AND objid = turn AND objsubid = 2"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " GROUP BY turn ORDER BY count(pid), random() LIMIT 1",
            [settings.UPLOADS_AT_ONCE, UPLOAD_TURN_LOCKS],
        )
        turn = cursor.fetchone()[0]
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", [UPLOAD_TURN_LOCKS, turn])
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [UPLOAD_TURN_LOCKS, turn])
        except DatabaseError:  # the connection broke (a restart, an ended backend): its turn went with it
            logger.warning("upload turn %s not let go: its connection broke", turn, exc_info=True)


def uploading_phase(*, task: Task, now: dt.datetime) -> Phase:
    """The phase an upload at ``now`` goes to: the open one; else the refusal says when the
    next phase opens, or that the last one has closed."""
    phase = task.open_phase(now)
    if phase is not None:
        return phase
    phases = task.ordered_phases()
    upcoming = next((p for p in phases if now < p.opens_at), None)
    if upcoming is not None:
        raise errors.NOT_OPEN_YET.error(phase=upcoming.name, opens_at=upcoming.opens_at)
    last = phases[-1]
    raise errors.DEADLINE_PASSED.error(phase=last.name, closes_at=last.closes_at)


def check_window(*, phase: Phase, now: dt.datetime) -> None:
    if now < phase.opens_at:
        raise errors.NOT_OPEN_YET.error(phase=phase.name, opens_at=phase.opens_at)
    if now >= phase.closes_at:
        raise errors.DEADLINE_PASSED.error(phase=phase.name, closes_at=phase.closes_at)


def check_limits(*, phase: Phase, team: Team, now: dt.datetime) -> None:
    """Daily and total limits of the phase; bad files never reach here, so they count against
    nothing."""
    used = quota(phase=phase, team=team, now=now)
    if used.used_total >= used.total:
        raise errors.TOTAL_LIMIT.error(limit=used.total)
    if used.used_today >= used.per_day:
        raise errors.DAILY_LIMIT.error(limit=used.per_day, reset=used.resets_at)


def submission_create(
    *,
    task: Task,
    user,
    name: str,
    content: bytes,
    description: str = "",
    now: dt.datetime | None = None,
    phase: Phase | None = None,
    mark: str | None = None,
) -> Submission:
    """Validate and store an upload to ``phase`` (default: the phase open now), then queue it for
    scoring once the transaction commits.

    A phase that waits for its gold file takes none. The deadline is checked against the upload
    time: a file uploaded before it counts even if it is scored after it. The team row is locked
    while limits are checked, so two uploads racing for the last slot cannot both pass. With
    ``EMAIL_VERIFICATION = "mandatory"`` the uploader's e-mail address must be confirmed first.
    In a phase with contrastive runs the run may be marked at once (``mark``:
    :meth:`Phase.run_marks`). At most ``settings.UPLOADS_AT_ONCE`` files are validated at once
    (:func:`upload_turn`); the checks before it read a few rows, and the storing and the
    hand-over to the queue after it wait more than they compute, unless the upload is scored
    right here (the immediate backend), which is CPU work too: then the turn lasts until it is.
    """
    now = now or timezone.now()  # the upload's time, taken before it waits for its turn
    if phase is None:
        phase = uploading_phase(task=task, now=now)
    check_window(phase=phase, now=now)
    if phase.waits_for_gold:
        raise errors.WAITS_FOR_GOLD.error(phase=phase.name)
    if settings.EMAIL_VERIFICATION == "mandatory" and not email_is_confirmed(user=user):
        raise (errors.EMAIL_NOT_VERIFIED.error(email=user.email) if user.email else errors.EMAIL_MISSING.error())
    problem = participation_problem(task=task, user=user)
    if problem is not None:
        raise problem
    team = team_of(task=task, user=user)
    if team is None:
        raise errors.NO_TEAM.error()
    name = safe_file_name(name)
    with ExitStack() as turn:
        turn.enter_context(upload_turn())
        # the gold file too is read in the turn: a process's first upload parses it (a gold file
        # too large to be kept, every upload), and side by side the parses would take the memory
        kind = prediction_kind(gold=kept_gold(phase), name=name, content=content)
        if settings.TASKS_BACKEND != "immediate":  # stored and handed to the queue: waits, computes little
            turn.close()
        with transaction.atomic():
            Team.objects.select_for_update().get(pk=team.pk)
            check_limits(phase=phase, team=team, now=now)
            stored = StoredFile.of(name=name, content=content)
            stored.save()
            submission = Submission.objects.create(
                phase=phase,
                team=team,
                submitted_by=user,
                file=stored,
                kind=kind,
                description=description[:DESCRIPTION_MAX_LENGTH],
                created_at=now,
            )
            if mark:
                if not phase.contrastive_runs:
                    raise errors.NO_CONTRASTIVE_RUNS.error("mark", phase=phase.name)
                _mark(submission, phase, mark)
        enqueue_on_commit([submission.pk])  # at once, or when an outer transaction commits
    submission.refresh_from_db()  # its status once queued (or, scored at once, scored)
    submission.phase = phase  # with its task, as read: not read again
    return submission


@transaction.atomic
def submission_choose(*, submission: Submission, user) -> None:
    """Let a team pick the submission that counts in its phase (phases whose counting policy is
    'chosen'), until the phase closes: the final ranking cannot be reordered afterwards."""
    if not is_member(user, submission):
        raise PermissionDenied(errors.NOT_A_MEMBER)
    phase = submission.phase
    if phase.is_closed():
        raise errors.PHASE_CLOSED.error(phase=phase.name, closes_at=phase.closes_at)
    if submission.status != Submission.Status.SCORED:
        raise errors.NOT_SCORED.error()
    Team.objects.select_for_update().get(pk=submission.team_id)
    _mark(submission, phase, PRIMARY)
    if phase.counting == Phase.Counting.CHOSEN:
        scores_changed(phase=phase)


def _mark(submission: Submission, phase: Phase, mark: str) -> None:
    """Give ``submission`` the mark (checked against :meth:`Phase.run_marks`, or primary for a phase
    without contrastive runs), taking it from the team's run that had it (one primary, one
    contrastive run k)."""
    if phase.contrastive_runs and mark not in dict(phase.run_marks()):
        raise errors.BAD_RUN_MARK.error("mark", runs=phase.contrastive_runs, phase=phase.name, mark=mark)
    runs = Submission.objects.filter(team=submission.team_id, phase=phase).exclude(pk=submission.pk)
    if mark == PRIMARY:
        runs.filter(chosen=True).update(chosen=False)
        chosen, contrastive = True, None
    elif mark == UNMARKED:
        chosen, contrastive = False, None
    else:
        contrastive = int(mark.removeprefix(CONTRASTIVE_MARK))
        runs.filter(contrastive=contrastive).update(contrastive=None)
        chosen = False
    Submission.objects.filter(pk=submission.pk).update(chosen=chosen, contrastive=contrastive)
    submission.chosen, submission.contrastive = chosen, contrastive


@transaction.atomic
def submission_mark(*, submission: Submission, user, mark: str) -> None:
    """Mark one of the team's runs in a phase that takes contrastive runs (SemEval's practice):
    its primary run, the one that counts, or contrastive run k, listed under the team on the
    board and never ranked; or neither. Until the phase closes, as the chosen submission; a run
    that failed cannot be marked."""
    if not is_member(user, submission):
        raise PermissionDenied(errors.NOT_A_MEMBER)
    phase = submission.phase
    if phase.is_closed():
        raise errors.PHASE_CLOSED.error(phase=phase.name, closes_at=phase.closes_at)
    if not phase.contrastive_runs:
        raise errors.NO_CONTRASTIVE_RUNS.error("mark", phase=phase.name)
    if submission.status == Submission.Status.FAILED:
        raise errors.RUN_FAILED.error("mark", id=submission.pk)
    Team.objects.select_for_update().get(pk=submission.team_id)
    _mark(submission, phase, mark)
    scores_changed(phase=phase)


@transaction.atomic
def submission_note(*, submission: Submission, user, note: str) -> None:
    """A member's note on one of the team's submissions (what the run was), at any time."""
    if not is_member(user, submission):
        raise PermissionDenied(errors.NOT_A_MEMBER)
    Submission.objects.filter(pk=submission.pk).update(description=note.strip()[:DESCRIPTION_MAX_LENGTH])
