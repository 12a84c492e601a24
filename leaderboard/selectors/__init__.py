"""Selectors: every function that reads for a page, an export or a chart.

``boards`` and ``participation`` read rows; ``pages`` assembles what one page shows (a board's
rows, a metric's page, the disagreement analysis, a submission's scorecard), cached where it
is costly.
"""

from leaderboard.selectors.boards import (
    Board,
    Comparison,
    Correlations,
    Entry,
    column_by_id,
    columns_of,
    compare_columns,
    compare_values,
    correlations_of,
    counting_submissions,
    leaderboard,
    paired_columns,
    primary_column,
    rank_correlations,
    sorted_by,
    team_values,
)
from leaderboard.selectors.notifications import (
    email_confirmation_claim,
    email_is_confirmed,
    notifications_of,
    unread_count,
)
from leaderboard.selectors.participation import phase_of, team_of, visible_submissions

__all__ = [
    "Board",
    "Comparison",
    "Correlations",
    "Entry",
    "column_by_id",
    "columns_of",
    "compare_columns",
    "compare_values",
    "correlations_of",
    "counting_submissions",
    "email_confirmation_claim",
    "email_is_confirmed",
    "leaderboard",
    "notifications_of",
    "paired_columns",
    "phase_of",
    "primary_column",
    "rank_correlations",
    "sorted_by",
    "team_of",
    "team_values",
    "unread_count",
    "visible_submissions",
]
