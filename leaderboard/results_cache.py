"""The one cache of results pages: keyed by the task's version, invalidated on write.

What a results page shows (a board's rows, the disagreement analysis, a what-if, a shake-up) is
costly to compute and the same for everybody who may see it, at one state of the task. It is
computed once and kept in Django's cache under a key that names

- the task and its ``results_version``, which every service that changes something a results
  page shows raises inside its own transaction (:func:`results_changed`): a disqualification, a
  team's name, a phase's dates, visibility or gold file, the task's title, a chosen run. The
  request reads the task anyway, to decide who may see the page, so the first request after
  the change's commit finds a new key: no page is older than such a change committed before it
  was asked for, and no list of fields to watch can forget one;
- the phase and whether it has opened and closed (the only changes that come with time, not
  with a write);
- the piece of the page and the parameters the page reads, parsed (an unknown query parameter
  such as ``?x=123`` names the same entry).

A new score (or new bootstrap intervals) raises the task's ``scores_version`` instead
(``results_changed(..., scores_only=True)``), and the entry under a key names the
``scores_version`` it was computed at. A deadline brings a score every few milliseconds, and
recomputing every page for each would leave readers waiting on a busy machine, so an entry of
older scores is served

- while it is less than ``RESULTS_SCORES_FRESH_S`` (1 s) old;
- while it is less than twice that old, once more, to the reader who finds it so: its new
  entry is computed once that reader's response has been sent (:class:`ComputeAfterResponse`),
  so that no reader waits for a page of a score that came a second ago;
- while another request computes its successor.

A new score is on every results page within two such windows and the time one request takes to
compute the page; an older entry (a board read once a minute) is computed for its reader; every
other change shows at once. An entry computed from another (a board's page from the board's
data) is as old as the oldest it read, so that a page never shows older scores than its entry
says.

A view asks who may see the page before it asks this cache for anything, on every request
(:func:`leaderboard.views.boards.board_view`); the pieces hold nothing of one visitor, and the
page around them (the header, the visitor's team, the forms) is rendered per request.

Entries of an older ``results_version`` are never read again and simply expire. While one
request computes an entry, others asking for it get the latest of older scores, or wait for it
(up to ``BUILD_WAIT_S``) if there is none, rather than computing it too. If the cache cannot be
reached (Redis down, see :mod:`leaderboard.cache_backend`) every request computes what it shows
from the database: slower, never an error.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.core.signals import request_finished
from django.db import close_old_connections
from django.db.models import F, Q
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

from leaderboard.models import Phase, Task

T = TypeVar("T")
logger = logging.getLogger(__name__)

TIMEOUT_S = 60 * 60
"""Entries are never stale (their keys change instead); this only bounds the memory they hold."""
BUILD_LOCK_S = 30
"""A computation's claim expires after this, should its process die before it lets go."""
BUILD_WAIT_S = 30.0
"""How long a request waits for the computation another request has under way."""
BUILD_POLL_S = 0.02
KEY_PREFIX = "results:v3"


def results_changed(task: Task | int, *, scores_only: bool = False) -> None:
    """Something every results page of ``task`` (and of its subtasks) may show has changed:
    raise their versions. Call it inside the transaction of the change (the version and the
    change commit together). ``scores_only``: a new score or new intervals, nothing else (see
    the module: shown within twice ``RESULTS_SCORES_FRESH_S``)."""
    task_id = task if isinstance(task, int) else task.pk
    family = Q(pk=task_id) | Q(parent_id=task_id)  # a team's change shows on every subtask's boards
    version = "scores_version" if scores_only else "results_version"
    Task.objects.filter(family).update(**{version: F(version) + 1})


def entry_key(phase: Phase, piece: str, params: tuple = ()) -> str:
    """The key of ``piece`` (with ``params``) of ``phase``'s results pages at the task's
    ``results_version`` as it was read for this request (``phase.task``); the entry under it
    names the ``scores_version`` it was computed at."""
    task = phase.task
    named = repr((piece, params)).encode()
    return (
        f"{KEY_PREFIX}:{task.pk}:{task.results_version}:{phase.pk}:{int(phase.has_opened())}{int(phase.is_closed())}:"
        f"{hashlib.sha256(named).hexdigest()}"
    )


Entry = tuple[int, float, object]
"""What the cache holds: the scores version and the time (``time.time()``) of the oldest
scores the value was computed from, and the value."""
Age = tuple[int, float]

_oldest: ContextVar[Age | None] = ContextVar("results_oldest", default=None)
"""The oldest scores (version, time) of the entries read so far by this request, or by the
computation under way: whatever is computed from here on may have been passed one of them (a
board's rows are computed from the board's data), so it is taken to be as old."""
_after_response: ContextVar[list[Callable[[], None]] | None] = ContextVar("results_after_response", default=None)
"""While a request is answered, the entries to compute once its response has been sent."""


def cached(
    phase: Phase, piece: str, params: tuple, compute: Callable[[], T], *, update: Callable[[T], T] | None = None
) -> T:
    """``piece`` of ``phase``'s results pages for ``params``, computed by ``compute`` once per
    version of the task, a new score aside (see the module). ``update``: how to compute it
    from its entry of older scores, when there is one (cheaper than anew: only new scores
    differ, since anything else names another entry)."""
    key, version = entry_key(phase, piece, params), phase.task.scores_version
    entry = cache.get(key)
    age = time.time() - entry[1] if entry is not None else None
    if age is None or (entry[0] < version and age >= settings.RESULTS_SCORES_FRESH_S):
        later = age is not None and age < 2 * settings.RESULTS_SCORES_FRESH_S
        if update is not None and entry is not None:
            compute = functools.partial(update, entry[2])
        entry = _computed(key, version, compute, latest=entry, later=later)
    _oldest.set(_older(_oldest.get(), entry[:2]))
    return entry[2]


def _older(first: Age | None, second: Age) -> Age:
    return second if first is None else (min(first[0], second[0]), min(first[1], second[1]))


def _computed(key: str, version: int, compute: Callable[[], T], *, latest: Entry | None, later: bool) -> Entry:
    """The entry at ``key`` computed now at ``version``; or, while another request computes it,
    the ``latest`` entry, or the other's once it is done if there is none. ``later``: the
    ``latest`` entry will do for this request, and the new one is computed once its response
    has been sent (if there is a request)."""
    claim: str | None = f"{key}:computing"
    if not cache.add(claim, 1, BUILD_LOCK_S):
        entry = latest or _computed_by_another(key, claim)
        if entry is not None:
            return entry
        claim = None  # the other request gave up or is slow: computed here too, its claim left alone
    pending = _after_response.get()
    if later and latest is not None and pending is not None:
        pending.append(lambda: _compute(key, version, compute, claim))
        return latest
    return _compute(key, version, compute, claim)


def _compute(key: str, version: int, compute: Callable[[], T], claim: str | None) -> Entry:
    """Compute the entry at ``key`` at ``version``, store it and let go of ``claim`` (if this
    request holds it). The entry is as old as the oldest entry read before or while it was
    computed (one served within its window, or while another request computed it): never newer
    than what it shows."""
    token = _oldest.set(_older(_oldest.get(), (version, time.time())))
    try:
        value = compute()
        entry = (*_oldest.get(), value)
        cache.set(key, entry, TIMEOUT_S)
    finally:
        _oldest.reset(token)
        if claim is not None:
            cache.delete(claim)
    return entry


def _computed_by_another(key: str, claim: str) -> Entry | None:
    """Wait for the entry another request is computing; ``None`` if it gave up or took longer
    than :data:`BUILD_WAIT_S` (the caller then computes it itself)."""
    deadline = time.monotonic() + BUILD_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(BUILD_POLL_S)
        entry = cache.get(key)
        if entry is not None or cache.get(claim) is None:
            return entry
    return None


class ComputeAfterResponse:
    """Middleware: the entries a request finds a little old (see the module) are computed once
    its response has been sent, by :func:`compute_after_response`."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        _after_response.set([])
        _oldest.set(None)
        return self.get_response(request)


LATER_QUEUED_MAX = 4
"""The requests' entries that may wait for :data:`_later` at once; a request that finds it this
busy computes its own in its thread, so that readers asking for page after page cannot queue
work without waiting for any of it."""
_later = ThreadPoolExecutor(max_workers=1, thread_name_prefix="results-after-response")
"""The thread of this process that computes the entries readers found a little old, one after
another (``RESULTS_AFTER_RESPONSE_IN = "thread"``)."""
_later_places = threading.BoundedSemaphore(LATER_QUEUED_MAX)


@receiver(request_finished, dispatch_uid="results_cache.compute_after_response")
def compute_after_response(**kwargs: object) -> None:
    """The response has been sent (Django's ``request_finished``: the server closed it). The
    entries are computed in this process's thread for them, not in the request's: the server
    reads the next request of the reader's connection (kept open, as a browser keeps it for the
    page's style sheet and scripts) only once this returns (``"request"``, the tests', or that
    thread's queue full: computed here)."""
    pending, _ = _after_response.get(), _after_response.set(None)
    if not pending:
        return
    if settings.RESULTS_AFTER_RESPONSE_IN == "thread" and _later_places.acquire(blocking=False):
        _later.submit(_compute_later, pending)
    else:
        _compute_pending(pending)


def _compute_later(pending: list[Callable[[], None]]) -> None:
    try:
        close_old_connections()  # one the last computation or the database's restart left broken
        _compute_pending(pending)
    finally:
        close_old_connections()  # kept no longer than a request's (CONN_MAX_AGE)
        _later_places.release()


def _compute_pending(pending: list[Callable[[], None]]) -> None:
    for compute in pending:
        _oldest.set(None)  # computed afresh, whatever the request read
        try:
            compute()
        except Exception:  # the reader has its page; the next reader computes the entry instead
            logger.exception("computing a results page after its response failed")
