"""Values, ranks and marks as HTML, on top of the engine's text formatting
(:mod:`scoring.engine.formatting`). The template tags and the board's row builder
(:mod:`leaderboard.pages.board_rows`) both render through here, so a cell looks the same everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

from scoring.engine.formatting import UNDEFINED, VALUE_DIGITS, as_number, mass_text, rho_text, value_text

UNDEFINED_HTML = mark_safe(f'<span class="undefined">{UNDEFINED}</span>')
NO_RANK_BADGE = mark_safe('<span class="rank rank-none" title="no rank: undefined">–</span>')


def value_html(value: Any, digits: int = VALUE_DIGITS) -> SafeString | str:
    """A value for a page: fixed decimals, or "undefined" in muted italic.

    Text that is not a number (a string slipped into a score dict) is escaped and shown as it
    is rather than formatted.
    """
    if isinstance(value, str):
        return conditional_escape(value)
    return UNDEFINED_HTML if as_number(value) is None else value_text(value, digits)


def rho_html(value: Any) -> SafeString | str:
    """A rank correlation for a page (see :func:`scoring.engine.formatting.rho_text`)."""
    return UNDEFINED_HTML if as_number(value) is None else rho_text(value)


def mass_html(value: Any) -> SafeString | str:
    """A count or soft mass for a page (see :func:`scoring.engine.formatting.mass_text`)."""
    return UNDEFINED_HTML if as_number(value) is None else mass_text(value)


def rank_badge(rank: int | None) -> SafeString:
    """A team's rank as a badge (podium places coloured), or a dash when it has none."""
    if rank is None:
        return NO_RANK_BADGE
    podium = f" rank-{rank}" if rank <= 3 else ""
    return format_html('<span class="rank{}" title="rank {}">{}</span>', podium, rank, rank)


def property_mark(holds: bool | None) -> SafeString:
    """A property of Table 5 (paper 000): holds, does not hold, or not analysed."""
    if holds is None:
        return mark_safe('<span class="prop prop-unknown">not analysed</span>')
    if holds:
        return mark_safe('<span class="prop prop-yes">✓ holds</span>')
    return mark_safe('<span class="prop prop-no">✗ does not hold</span>')


def shift_arrow(shift: int | None) -> SafeString:
    """A rank move: ▲ up (better under the second metric), ▼ down, = unchanged."""
    if shift is None:
        return mark_safe('<span class="shift shift-none">–</span>')
    places = abs(int(shift))  # an integer: nothing to escape (a page holds thousands of these)
    if shift > 0:
        return mark_safe(f'<span class="shift shift-up" title="climbs {places} places">▲ {places}</span>')
    if shift < 0:
        return mark_safe(f'<span class="shift shift-down" title="drops {places} places">▼ {places}</span>')
    return mark_safe('<span class="shift shift-same" title="same place">=</span>')


def rank_cells(today: Sequence[int], at_target: Sequence[int]) -> SafeString:
    """A row of table cells, one per column: the rank at the target (0: undefined, shown "—"),
    with an arrow where it moved from today's; written here, not in a template, because a page
    holds thousands of them."""
    cells = []
    for before, after in zip(today, at_target, strict=True):
        text = str(after) if after else "—"
        if before and after and before != after:
            cells.append(f'<td class="num moved">{text} {shift_arrow(int(before - after))}</td>')
        else:
            cells.append(f'<td class="num">{text}</td>')
    return mark_safe("".join(cells))  # integers and the arrows' fixed markup: nothing to escape


def organiser_banner(phase_name: str, closes_at, feedback: str) -> SafeString:
    """The banner an organiser sees on the pages of a phase whose results are hidden."""
    return format_html(
        '<p class="banner banner-organiser" role="note"><strong>Only organisers see this.</strong> '
        "Results of the {} phase are hidden from participants until {} UTC; meanwhile a team sees of "
        "its own submissions: {}.</p>",
        phase_name,
        closes_at.strftime("%Y-%m-%d %H:%M"),
        feedback,
    )


def rank_interval_html(rank: list[int] | None, *, stale: bool = False, tied: bool = False) -> SafeString:
    """A team's 95 % bootstrap rank interval as ``[best, worst]``, with a mark when it includes
    rank 1 but the team is not first on the board (statistically tied with the leader); a dash
    when it has none. A stale interval (from older scores) is drawn apart and says so."""
    if rank is None:
        return mark_safe('<span class="interval interval-none" title="no interval">–</span>')
    title = f"95% bootstrap interval of the rank: best {rank[0]}, worst {rank[1]}"
    if stale:
        title += " (from the previous scores; being recomputed)"
    mark = format_html(
        ' <span class="tag tag-tied{}" title="its rank interval includes 1">tied with #1</span>',
        " tag-stale" if stale else "",
    )
    return format_html(
        '<span class="interval{}" title="{}">[{}, {}]</span>{}',
        " interval-stale" if stale else "",
        title,
        rank[0],
        rank[1],
        mark if tied else "",
    )


def score_interval_text(score: list[float] | None, digits: int = VALUE_DIGITS) -> str:
    """A 95 % score interval as ``[lo, hi]`` in the values' digits; "undefined" when it is."""
    if score is None:
        return UNDEFINED
    return f"[{value_text(score[0], digits)}, {value_text(score[1], digits)}]"
