"""A phase's derived results (its bootstrap intervals, its analysis of what the teams got wrong
together, and any later one), computed by one mechanism (DESIGN.md, "Derived results").

A kind of derived result is one entry of :data:`KINDS`: the row that keeps it (a
:class:`~leaderboard.models.DerivedResult`, one per phase), the digest of what it is computed
from, the computation, the pause between two computations, and whether it is switched on. The
rest is here, the same for every kind:

- **Asked for when a write commits.** A write that changes a phase's counting scores calls
  :func:`scores_changed` inside its transaction: each kind's row is claimed (``requested_at``)
  unless a computation is under way (claimed less than :data:`~leaderboard.models.LOST_AFTER`
  ago) or the kind's pause since its last computation is not over, and the computation is
  handed over on commit. A bulk write (an import, the re-scoring of a phase) runs inside
  :func:`asked_once` and asks once, for every phase it touched, when it ends.
- **Off the request path, in every set-up** (``settings.DERIVED_RESULTS_IN``): ``worker``, the
  job :func:`compute_derived` on any RQ worker; ``thread``, the embedded set-up, the
  :class:`Runner` of the web process (a thread per kind, started with the process by
  :mod:`leaderboard.startup`); a process that serves no page (a management command) claims
  nothing there and leaves the work to the server's sweep. ``commit`` computes as the write
  commits, in its own thread: the tests' set-up, whose rows no other connection sees.
- **Paused**: a kind is computed at most once per its pause (from the end of the last
  computation); meanwhile pages show the previous result as stale, with when the next is due,
  and the sweep asks for it once the pause is over.
- **Failures**: a computation that fails (:class:`~leaderboard.models.ComputationFailed`, or
  any error) leaves the previous result in place, marked with the reason; the same inputs are
  not tried again, their next change asks again.
- **One recovery sweep** (:func:`sweep`): every phase open, or closed less than a day ago, whose
  result is not of its current inputs, that nothing computes, whose pause is over and that did
  not fail on these inputs, is asked for. Workers run it every ``RECOVERY_EVERY_S``; the runner
  when it starts and as often.

A computation reads the task's versions, then the digest of its inputs, computes, and stores
the result under that digest; if the versions moved meanwhile and the digest with them, it asks
again, so the last computation runs on the final inputs. A result is stored under the task's
row lock, taken first as every write that asks takes it, so no change is left without one.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone
from django_tasks import task

from leaderboard import analysis, stability
from leaderboard.models import ComputationFailed, DerivedResult, Phase, PhaseAnalysis, PhaseStability, Submission, Task
from leaderboard.results_cache import results_changed
from leaderboard.selectors.boards import BoardData, analysis_stamp, board_data

logger = logging.getLogger(__name__)

WORKER, THREAD, COMMIT = "worker", "thread", "commit"
"""Where derived results are computed (``settings.DERIVED_RESULTS_IN``): see the module."""
FAILED = "the computation failed"
"""The reason shown for an unforeseen error (its trace goes to the log)."""
SWEPT_DAYS = 1
"""Phases closed longer ago than this are left alone by the sweep: their scores no longer change."""
STARTS_AFTER_S = 0.25
"""On the embedded set-up a computation handed over starts this much later: the request that
asked is answered first, rather than sharing the interpreter's lock with a computation of
thousands of teams for its last milliseconds."""


@dataclass(frozen=True)
class Kind:
    """One kind of derived result: everything the mechanism needs to know of it."""

    name: str
    model: type[DerivedResult]
    stamp: Callable[[Phase, BoardData], str]
    """The digest of what the result is computed from, given the phase's board as it is now."""
    compute: Callable[[Phase, BoardData], tuple[dict[str, Any], str]]
    """The result's fields for the row, and a summary for the logs; may raise
    :class:`~leaderboard.models.ComputationFailed`."""
    pause_s: Callable[[], float]
    """At most one computation per this many seconds per phase."""
    enabled: Callable[[], bool] = lambda: True
    read_ahead: Callable[[Phase], None] = lambda phase: None
    """Once a new result is stored by a worker or on commit: read it as the pages read it, into
    the cache, so that its first reader does not wait for that. Not in a thread of the web
    process (the embedded set-up), whose requests would all wait for it (the interpreter's lock),
    readers or not: there its first reader reads it."""


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "intervals",
            PhaseStability,
            stamp=stability.inputs_digest,
            compute=stability.computed,
            pause_s=lambda: settings.BOOTSTRAP_EVERY_S,
            enabled=lambda: settings.BOOTSTRAP_REPLICATES > 0,
            read_ahead=stability.read_ahead,
        ),
        Kind(
            "analysis",
            PhaseAnalysis,
            stamp=lambda phase, data: analysis_stamp(data, phase),
            compute=analysis.computed,
            pause_s=lambda: settings.ANALYSIS_EVERY_S,
        ),
    )
}
"""Every kind of derived result, by name: a new kind is one more entry."""


# --- asking --------------------------------------------------------------------------------------

_COLLECTED: contextvars.ContextVar[set[int] | None] = contextvars.ContextVar("derived_collected", default=None)


def scores_changed(*, phase: Phase, new_score: bool = False) -> None:
    """The counting scores of ``phase`` changed (a score written, a run disqualified, the chosen
    one changed, its dates or gold file...): its results pages show something new and its
    derived results are asked for. Call it inside the writing transaction. ``new_score``: the
    scoring job's, which pages show within twice ``RESULTS_SCORES_FRESH_S``
    (:mod:`leaderboard.results_cache`); any other change at once."""
    results_changed(phase.task_id, scores_only=new_score)
    ask(phase=phase)


def ask(*, phase: Phase, kinds: list[Kind] | None = None) -> None:
    """Ask for the phase's derived results (``kinds``, default every one switched on) unless a
    computation is under way or pausing; inside :func:`asked_once`, once at its end. Call it
    inside the writing transaction: the computations are handed over on commit."""
    collected = _COLLECTED.get()
    if collected is not None:
        collected.add(phase.pk)
        return
    if phase.waits_for_gold or (settings.DERIVED_RESULTS_IN == THREAD and not RUNNER.serving):
        return  # nothing to compute yet; or the server's sweep finds the change
    now = timezone.now()
    for kind in [kind for kind in kinds or KINDS.values() if kind.enabled()]:
        row, _ = kind.model.objects.select_for_update().only(*DerivedResult.STATE).get_or_create(phase=phase)
        if row.under_way(now):
            continue
        due_at = row.due_at(kind.pause_s())
        if due_at is not None and due_at > now:
            if settings.DERIVED_RESULTS_IN == THREAD:
                transaction.on_commit(lambda due_at=due_at: RUNNER.sweep_at(due_at))
            continue  # the sweep asks once the pause is over
        kind.model.objects.filter(pk=row.pk).update(requested_at=now)
        transaction.on_commit(lambda kind=kind: hand_over(kind.name, phase.pk))


@contextlib.contextmanager
def asked_once() -> Iterator[None]:
    """Inside, asking for a phase's derived results only notes the phase; at the end each noted
    phase is asked for once (a bulk write: an import, the re-scoring of a phase). Nested, the
    outermost asks."""
    if _COLLECTED.get() is not None:
        yield
        return
    collected: set[int] = set()
    token = _COLLECTED.set(collected)
    try:
        yield
    finally:
        _COLLECTED.reset(token)
    if not collected:  # an upload handed to the queue: its scoring job asks
        return
    with transaction.atomic():
        for phase in Phase.objects.select_related("task").filter(pk__in=collected):
            ask(phase=phase)


def hand_over(kind_name: str, phase_id: int) -> None:
    """Hand a claimed computation to where it runs (see the module). Call it on commit."""
    if settings.DERIVED_RESULTS_IN == COMMIT:
        compute(kind_name, phase_id)
    elif settings.DERIVED_RESULTS_IN == THREAD:
        RUNNER.put(kind_name, phase_id)
    else:
        try:
            compute_derived.enqueue(kind_name, phase_id)
        except Exception:  # the queue is an optimisation: the sweep asks again
            logger.exception("could not enqueue the %s of phase %s", kind_name, phase_id)
            KINDS[kind_name].model.objects.filter(phase_id=phase_id).update(requested_at=None)


# --- computing -----------------------------------------------------------------------------------


def _versions(task_id: int, *, lock: bool = False) -> tuple[int, int]:
    tasks = Task.objects.select_for_update() if lock else Task.objects
    return tasks.values_list("scores_version", "results_version").get(pk=task_id)


def compute(kind_name: str, phase_id: int) -> str:
    """Compute and store the phase's result of that kind for its current inputs (nothing to do
    when the stored one is of them); what happened, for the logs. See the module."""
    kind = KINDS[kind_name]
    rows = kind.model.objects.filter(phase_id=phase_id)
    phase = Phase.objects.select_related("task").filter(pk=phase_id).first()
    if phase is None:
        return "gone"
    if phase.waits_for_gold or not kind.enabled():
        rows.update(requested_at=None)
        return "nothing to compute"
    # The versions first, the digest after, the inputs last: a result can only be newer than
    # its digest, and a change made meanwhile moves the versions.
    versions = _versions(phase.task_id)
    data = board_data(phase)
    stamp = kind.stamp(phase, data)
    if rows.filter(stamp=stamp).exists():
        rows.update(requested_at=None)
        return "current already"
    failed = {"failed_stamp": stamp, "failed_at": timezone.now()}
    try:
        fields, outcome = kind.compute(phase, data)
        changes = {**fields, "stamp": stamp, "computed_at": timezone.now(), "failure": "", "failed_stamp": ""}
        changes["failed_at"] = None
    except ComputationFailed as failure:
        changes, outcome = {**failed, "failure": failure.reason}, f"failed: {failure.reason}"
    except Exception:
        logger.exception("the %s of phase %s failed", kind.name, phase_id)
        changes, outcome = {**failed, "failure": FAILED}, f"failed: {FAILED}"
    del data
    with transaction.atomic():
        now = _versions(phase.task_id, lock=True)  # the task's row first, as a write that asks
        kind.model.objects.select_for_update().get_or_create(phase=phase)
        rows.update(requested_at=None, **changes)
        results_changed(phase.task_id, scores_only=True)
        if "stamp" in changes and now != versions and kind.stamp(phase, board_data(phase)) != stamp:
            ask(phase=phase, kinds=[kind])  # newer inputs: at once, or once the pause is over
    if "stamp" in changes and settings.DERIVED_RESULTS_IN != THREAD:  # off the web process only
        try:
            kind.read_ahead(phase)
        except Exception:  # its first reader reads it instead
            logger.exception("reading the new %s of phase %s ahead failed", kind.name, phase_id)
    return outcome


@task()
def compute_derived(kind_name: str, phase_id: int) -> str:
    """Compute a derived result of phase ``phase_id`` for its current inputs (on a worker)."""
    try:
        return compute(kind_name, phase_id)
    except Exception:
        # Let the next change (or the sweep) ask again at once.
        KINDS[kind_name].model.objects.filter(phase_id=phase_id).update(requested_at=None)
        raise


def bring_up_to_date(*, phase: Phase) -> None:
    """Compute every derived result of the phase now, in this process (a command that sets a task
    up, whose first visitor should find them)."""
    for kind in KINDS.values():
        compute(kind.name, phase.pk)


_SETTLED: dict[tuple[str, int], tuple] = {}
"""(kind, phase) → what the sweep found them settled at (current, or failed on their inputs): the
task's versions, the part shown, the row's stamps and times. A sweep that finds them unchanged
does not read the board again (every ``RECOVERY_EVERY_S``, in the web process on the embedded
set-up)."""


def sweep(*, now: dt.datetime | None = None) -> int:
    """Ask for every derived result that is due (see the module); how many were asked for."""
    now = now or timezone.now()
    phases = Phase.objects.select_related("task").filter(
        closes_at__gt=now - dt.timedelta(days=SWEPT_DAYS), submissions__status=Submission.Status.SCORED
    )
    asked = 0
    for phase in phases.distinct():
        kinds = [kind for kind in KINDS.values() if kind.enabled()]
        if phase.waits_for_gold or not kinds:
            continue
        rows = {kind.name: kind.model.objects.filter(phase=phase).only(*DerivedResult.STATE).first() for kind in kinds}
        inputs = (phase.task.scores_version, phase.task.results_version, phase.shown_part(), phase.gold_version)
        settled = {
            kind.name: (inputs, row.stamp, row.computed_at, row.failed_stamp, row.failed_at)
            if (row := rows[kind.name]) is not None
            else None
            for kind in kinds
        }
        waiting = [
            kind
            for kind in kinds
            if not _busy(rows[kind.name], kind, now)
            and (settled[kind.name] is None or _SETTLED.get((kind.name, phase.pk)) != settled[kind.name])
        ]
        data = board_data(phase) if waiting else None
        for kind in waiting:
            row = rows[kind.name]
            if row is not None and kind.stamp(phase, data) in (row.stamp, row.failed_stamp):
                _SETTLED[kind.name, phase.pk] = settled[kind.name]
                continue  # current, or failed on these very inputs (their next change asks again)
            with transaction.atomic():
                ask(phase=phase, kinds=[kind])
            asked += 1
    return asked


def _busy(row: DerivedResult | None, kind: Kind, now: dt.datetime) -> bool:
    """Under way, or pausing."""
    if row is None:
        return False
    due_at = row.due_at(kind.pause_s())
    return row.under_way(now) or (due_at is not None and due_at > now)


# --- the embedded set-up's runner ----------------------------------------------------------------


class Runner:
    """The derived results of a web process on the embedded set-up: a thread per kind computes
    what is handed to it, one after another, and a thread sweeps (:func:`sweep`) when the process
    starts, every ``RECOVERY_EVERY_S`` and when a pause ends. Its first sweep takes the claims
    older than the process for lost: they were a previous process's, which computes nothing now."""

    def __init__(self) -> None:
        self.serving = False
        self._queues: dict[str, queue.SimpleQueue] = {}
        self._wake = threading.Condition()
        self._asked_sweep: dt.datetime | None = None
        self._pending = 0
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start the threads (once per process)."""
        with self._wake:
            if self.serving:
                return
            self.serving = True
        for name in KINDS:
            self._queues[name] = queue.SimpleQueue()
            self._threads.append(threading.Thread(target=self._compute, args=(name,), name=f"derived-{name}"))
        self._threads.append(threading.Thread(target=self._sweep, args=(timezone.now(),), name="derived-sweep"))
        for thread in self._threads:
            thread.daemon = True
            thread.start()

    def put(self, kind_name: str, phase_id: int) -> None:
        with self._wake:
            self._pending += 1
        self._queues[kind_name].put((phase_id, time.monotonic() + STARTS_AFTER_S))

    def sweep_at(self, moment: dt.datetime) -> None:
        """Sweep at ``moment`` (a pause ends then) if none comes before."""
        with self._wake:
            self._asked_sweep = min(self._asked_sweep or moment, moment)
            self._wake.notify_all()

    def stop(self) -> None:
        """Stop the threads once they finish what they compute, and wait for them (tests)."""
        with self._wake:
            self.serving = False
            self._wake.notify_all()
        for work in self._queues.values():
            work.put(None)
        for thread in self._threads:
            thread.join()

    def idle(self, timeout_s: float) -> bool:
        """Wait until nothing handed over is left to compute (tests, benchmarks)."""
        with self._wake:
            return self._wake.wait_for(lambda: self._pending == 0, timeout=timeout_s)

    def _compute(self, kind_name: str) -> None:
        while (item := self._queues[kind_name].get()) is not None:
            phase_id, starts_at = item
            time.sleep(max(0.0, starts_at - time.monotonic()))
            try:
                compute(kind_name, phase_id)
            except Exception:
                logger.exception("the %s of phase %s failed", kind_name, phase_id)
                KINDS[kind_name].model.objects.filter(phase_id=phase_id).update(requested_at=None)
            finally:
                connections.close_all()  # this thread's, not a request's
                with self._wake:
                    self._pending -= 1
                    self._wake.notify_all()

    def _sweep(self, started: dt.datetime) -> None:
        lost = True
        while self.serving:
            try:
                if lost:
                    for kind in KINDS.values():
                        kind.model.objects.filter(requested_at__lt=started).update(requested_at=None)
                    lost = False
                sweep()
            except Exception:
                logger.exception("the sweep of derived results failed; it runs again")
            finally:
                connections.close_all()
            with self._wake:
                regular = timezone.now() + dt.timedelta(seconds=settings.RECOVERY_EVERY_S)
                while self.serving:
                    wait_s = (min(regular, self._asked_sweep or regular) - timezone.now()).total_seconds()
                    if wait_s <= 0:
                        break
                    self._wake.wait(timeout=wait_s)
                if self._asked_sweep is not None and self._asked_sweep <= timezone.now():
                    self._asked_sweep = None


RUNNER = Runner()
"""This process's runner (started by :func:`leaderboard.startup.prepare` on the embedded set-up)."""
