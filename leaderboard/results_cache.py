"""The one cache of results pages: keyed by the task's versions, invalidated on write.

What a results page shows (a board's rows, the disagreement analysis, a what-if, a shake-up) is
costly to compute and the same for everybody who may see it, at one state of the task. It is
computed once and kept in Django's cache under a key that names

- the task and its ``results_version``, which every service that changes something a results
  page shows raises inside its own transaction (:func:`results_changed`): a disqualification, a
  team's name, a phase's dates, visibility or gold file, the task's title, a chosen run. The
  request reads the task anyway, to decide who may see the page, so the first request after
  the change's commit finds a new key: no page is older than such a change committed before it
  was asked for, and no list of fields to watch can forget one;
- the task's ``scores_version``, which a new score and new bootstrap intervals raise
  (``results_changed(..., scores_only=True)``). A deadline brings a score every few
  milliseconds, and recomputing every page for each would leave readers waiting on a busy
  machine: an entry computed less than ``RESULTS_SCORES_FRESH_S`` (1 s) ago at an older
  ``scores_version`` of the same ``results_version`` is served instead, and so is the latest
  entry while another request computes the current one. A new score is on every results page
  within that second; every other change, at once;
- the phase and whether it has opened and closed (the only changes that come with time, not
  with a write);
- the piece of the page and the parameters the page reads, parsed (an unknown query parameter
  such as ``?x=123`` names the same entry).

A view asks who may see the page before it asks this cache for anything, on every request
(:func:`leaderboard.views.boards.board_view`); the pieces hold nothing of one visitor, and the
page around them (the header, the visitor's team, the forms) is rendered per request.

Entries of older versions are never read again (but as said above) and simply expire. While one
request computes an entry, others asking for the same one get the latest of an older score, or
wait for it (up to ``BUILD_WAIT_S``) rather than computing it too. If the cache cannot be
reached (Redis down, see :mod:`leaderboard.cache_backend`) every request computes what it shows
from the database: slower, never an error.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Q

from leaderboard.models import Phase, Task

T = TypeVar("T")

TIMEOUT_S = 60 * 60
"""Entries are never stale (their keys change instead); this only bounds the memory they hold."""
BUILD_LOCK_S = 120
"""A computation's claim expires after this, should its process die before it lets go."""
BUILD_WAIT_S = 30.0
"""How long a request waits for the computation another request has under way."""
BUILD_POLL_S = 0.02
KEY_PREFIX = "results:v1"


def results_changed(task: Task | int, *, scores_only: bool = False) -> None:
    """Something every results page of ``task`` (and of its subtasks) may show has changed:
    raise their versions. Call it inside the transaction of the change (the version and the
    change commit together). ``scores_only``: a new score or new intervals, nothing else (see
    the module: shown within ``RESULTS_SCORES_FRESH_S``)."""
    task_id = task if isinstance(task, int) else task.pk
    family = Q(pk=task_id) | Q(parent_id=task_id)  # a team's change shows on every subtask's boards
    version = "scores_version" if scores_only else "results_version"
    Task.objects.filter(family).update(**{version: F(version) + 1})


def _base_key(phase: Phase, piece: str, params: tuple) -> str:
    """The key of ``piece`` (with ``params``) of ``phase``'s results pages at the task's
    ``results_version`` as it was read for this request (``phase.task``), any score."""
    task = phase.task
    named = repr((piece, params)).encode()
    return (
        f"{KEY_PREFIX}:{task.pk}:{task.results_version}:{phase.pk}:{int(phase.has_opened())}{int(phase.is_closed())}:"
        f"{hashlib.sha256(named).hexdigest()}"
    )


def entry_key(phase: Phase, piece: str, params: tuple = ()) -> str:
    """The key of ``piece`` (with ``params``) of ``phase``'s results pages at the versions of the
    task as it was read for this request (``phase.task``)."""
    return f"{_base_key(phase, piece, params)}:{phase.task.scores_version}"


def cached(phase: Phase, piece: str, params: tuple, compute: Callable[[], T]) -> T:
    """``piece`` of ``phase``'s results pages for ``params``, computed by ``compute`` once per
    version of the task, a new score aside (see the module)."""
    base = _base_key(phase, piece, params)
    key = f"{base}:{phase.task.scores_version}"
    value = cache.get(key)
    if value is not None:
        return value
    latest = cache.get(f"{base}:latest")  # (scores version, when it was computed)
    if latest is not None and time.time() - latest[1] < settings.RESULTS_SCORES_FRESH_S:
        value = cache.get(f"{base}:{latest[0]}")
        if value is not None:
            return value
    claim = f"{key}:computing"
    if not cache.add(claim, 1, BUILD_LOCK_S):
        value = cache.get(f"{base}:{latest[0]}") if latest is not None else None
        if value is None:
            value = _computed_by_another(key, claim)
        if value is not None:
            return value
    try:
        value = compute()
        cache.set(key, value, TIMEOUT_S)
        cache.set(f"{base}:latest", (phase.task.scores_version, time.time()), TIMEOUT_S)
    finally:
        cache.delete(claim)
    return value


def _computed_by_another(key: str, claim: str) -> object | None:
    """Wait for the entry another request is computing; ``None`` if it gave up or took longer
    than :data:`BUILD_WAIT_S` (the caller then computes it itself)."""
    deadline = time.monotonic() + BUILD_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(BUILD_POLL_S)
        value = cache.get(key)
        if value is not None or cache.get(claim) is None:
            return value
    return None
