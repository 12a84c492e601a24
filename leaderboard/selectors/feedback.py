"""What a person sees of a submission's scores: its phase's feedback policy (DESIGN, contract).

Organisers, and everyone once results are public, see everything. While results are hidden a
team sees its own submissions as the phase's policy says: *full* (every metric, four decimals, on
the page and in the API alike),
*primary score only* (rounded to two decimals) or *validated only* (the file was valid and has
been scored). Confusion matrices and per-class tables, exact per-item-derived numbers, are
never shown to a team while results are hidden: they leak the gold. Every page, status answer
and export reads the level from here.
"""

from __future__ import annotations

from enum import StrEnum

from leaderboard.models import Feedback, Phase, Submission
from scoring.engine.formatting import VALUE_DIGITS, value_text

PRIMARY_DIGITS = 2
"""Decimals of the primary score under the "primary score only" policy."""


class Level(StrEnum):
    ALL = "all"
    FULL = Feedback.FULL.value
    PRIMARY = Feedback.PRIMARY.value
    VALIDATED = Feedback.VALIDATED.value

    @property
    def shows_metrics(self) -> bool:
        return self in (Level.ALL, Level.FULL)

    @property
    def shows_matrices(self) -> bool:
        return self is Level.ALL

    def shown(self, value: float | None) -> float | None:
        """A score as this level shows it on every channel (page, API, exports): while results
        are hidden, with the page's precision (a full-precision score of a probability file is
        a gold oracle: its last bits can hold one label each); otherwise as stored."""
        if value is None or self is Level.ALL:
            return value
        return round(value, VALUE_DIGITS)


def feedback_level(*, phase: Phase, user) -> Level:
    """How much of its submissions' scores in this phase this person may see."""
    if phase.results_public() or phase.task.is_organiser(user):
        return Level.ALL
    return Level(phase.feedback)


def primary_text(submission: Submission, level: Level) -> str | None:
    """The primary score of a scored submission as this level shows it, or ``None``."""
    if submission.status != Submission.Status.SCORED or level is Level.VALIDATED:
        return None
    scores = submission.shown_scores()
    value = ((scores.metrics if scores else None) or {}).get(submission.task.primary_metric)
    return value_text(value, PRIMARY_DIGITS) if level is Level.PRIMARY else value_text(value)
