"""Cached results pages: keys that change whenever what a page shows changes.

A page's cache key holds the phase's own settings (id, gold version, counting policy, the part
of a split test set it shows now, which changes at the close, and the split) and its
task's (primary metric, labels), the page's parameters, and a *stamp* of the phase's scores read
from the database on every request: the number of scored submissions, their latest
``scored_at`` and ``disqualified_at``, the sum of their ``score_count`` and their highest id;
the task's teams (id, name, submission chosen in the phase, removal); the baselines' count and highest
id. A new score, a re-score, a new or renamed team, a changed choice or new baselines make a
new key, so nothing stale is ever served and nothing needs invalidating; old
entries simply expire. Works with any cache backend (keys are hashed: no length or character
limits to meet).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.db.models import Count, Max, OuterRef, Subquery, Sum

from leaderboard.models import Baseline, Phase, Submission, Team

CACHE_TIMEOUT_S = 60 * 60
"""Entries never go stale (their keys change instead); this only bounds the memory they hold."""
KEY_PREFIX = "leaderboard:page:v3:"

T = TypeVar("T")


def _aggregate(queryset, **aggregates) -> dict[str, Subquery]:
    """One scalar subquery per aggregate of ``queryset`` (filtered on the outer phase)."""
    grouped = queryset.filter(phase=OuterRef("pk")).order_by().values("phase")
    return {name: Subquery(grouped.annotate(value=aggregate).values("value")) for name, aggregate in aggregates.items()}


def scores_stamp(phase: Phase) -> str:
    """What the phase's results pages depend on in the database, in two small queries."""
    scored = Submission.objects.filter(status=Submission.Status.SCORED)
    counts = (
        Phase.objects.filter(pk=phase.pk)
        .annotate(
            **_aggregate(
                scored,
                n_scored=Count("pk"),
                last_scored_at=Max("scored_at"),
                score_writes=Sum("score_count"),
                last_scored_id=Max("pk"),
                last_disqualified_at=Max("disqualified_at"),
            ),
            **_aggregate(Baseline.objects.all(), n_baselines=Count("pk"), last_baseline_id=Max("pk")),
        )
        .values(
            "n_scored",
            "last_scored_at",
            "score_writes",
            "last_scored_id",
            "last_disqualified_at",
            "n_baselines",
            "last_baseline_id",
        )
        .get()
    )
    chosen = Submission.objects.filter(phase=phase, team=OuterRef("pk"), chosen=True).values("pk")[:1]
    teams = list(
        Team.objects.filter(task=phase.task_id)
        .annotate(chosen_id=Subquery(chosen))
        .order_by("pk")
        .values_list("pk", "name", "chosen_id", "removed_at")
    )
    return repr((sorted(counts.items()), teams))


def _digest(phase: Phase, stamp: str, parts: tuple) -> str:
    task = phase.task
    settings = (
        phase.pk,
        phase.gold_version,
        phase.counting,
        phase.shown_part(),
        phase.private_percent,
        phase.split_seed,
        task.primary_metric,
        list(task.labels),
    )
    return hashlib.sha256(repr((settings, parts, stamp)).encode()).hexdigest()


def page_key(phase: Phase, stamp: str, *parts: object) -> str:
    """The cache key of one page (or piece of a page) of ``phase`` under ``stamp``."""
    return f"{KEY_PREFIX}{phase.pk}:{_digest(phase, stamp, parts)}"


def scores_digest(phase: Phase, stamp: str) -> str:
    """A 64-character digest of everything the phase's boards depend on (its settings and
    ``stamp``): what a result computed from the scores, such as the bootstrap intervals, is
    stored under in the database, to be compared with the digest of the scores now."""
    return _digest(phase, stamp, ("scores",))


def cached(phase: Phase, stamp: str, parts: tuple, build: Callable[[], T]) -> T:
    """The cached value of ``parts`` for ``phase`` under ``stamp``, built and stored if missing."""
    key = page_key(phase, stamp, *parts)
    value = cache.get(key)
    if value is None:
        value = build()
        cache.set(key, value, CACHE_TIMEOUT_S)
    return value
