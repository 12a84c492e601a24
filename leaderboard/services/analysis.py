"""Writes about a phase's analysis: publishing its hardest items (the analysis itself is computed
by :mod:`leaderboard.analysis`)."""

from __future__ import annotations

from django.db import transaction

from leaderboard import errors
from leaderboard.models import Phase
from leaderboard.permissions import phase_using_gold
from leaderboard.results_cache import results_changed


@transaction.atomic
def hardest_publish(*, phase: Phase, published: bool) -> Phase:
    """Show the phase's hardest items, with their gold labels, to everyone who sees its board
    (``published``), or to its organisers only again. Refused while a phase that uses the same
    gold file has not closed (:data:`~leaderboard.errors.HARDEST_GOLD_IN_USE`); a phase that
    starts using it later hides them again until it closes
    (:func:`~leaderboard.permissions.can_view_hardest_items`)."""
    using = phase_using_gold(phase) if published else None
    if using is not None:
        raise errors.HARDEST_GOLD_IN_USE.error(
            None, phase=using.name, task=using.task.full_title, closes_at=using.closes_at
        )
    Phase.objects.filter(pk=phase.pk).update(hardest_published=published)
    phase.hardest_published = published
    results_changed(phase.task_id)
    return phase
